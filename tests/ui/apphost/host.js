// A host of MCP Apps built on the official SDK's AppBridge, as
// examples/basic-host of the ext-apps repository builds one: it lists the
// server's tools, calls the one with `_meta.ui.resourceUri`, reads that
// resource, renders it in a sandboxed iframe (through a sandbox proxy on
// another origin) and lets the AppBridge carry the View's requests to the
// server. The test drives it through `window.host`.
import { AppBridge, PostMessageTransport, getToolUiResourceUri, isToolVisibilityAppOnly, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/app-bridge";

const SANDBOX_PORT = new URLSearchParams(location.search).get("sandbox");

async function rpc(method, params) {
  const response = await fetch("/rpc", { method: "POST", body: JSON.stringify({ method, params }) });
  const answer = await response.json();
  if (answer.error) throw new Error(answer.error.message);
  return answer.result;
}

const state = { tools: [], calls: [], sizes: [], initialized: false, theme: "light" };

async function open(theme) {
  state.theme = theme || "light";
  const { tools } = await rpc("tools/list", {});
  state.tools = tools;
  const opener = tools.find((tool) => getToolUiResourceUri(tool));
  const uri = getToolUiResourceUri(opener);
  const result = rpc("tools/call", { name: opener.name, arguments: { view: "catalog" } });
  const resource = await rpc("resources/read", { uri });
  const content = resource.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error("not an MCP App: " + content.mimeType);

  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  document.getElementById("frame").replaceChildren(iframe);
  const ready = new Promise((resolve) => {
    window.addEventListener("message", function listener(event) {
      if (event.source === iframe.contentWindow && event.data && event.data.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", listener);
        resolve();
      }
    });
  });
  iframe.src = `http://127.0.0.1:${SANDBOX_PORT}/sandbox.html`;
  await ready;

  const bridge = new AppBridge(null, { name: "apps-test-host", version: "1.0.0" }, { serverTools: {}, serverResources: {}, logging: {} }, {
    hostContext: { theme: state.theme, displayMode: "inline", platform: "web", containerDimensions: { maxHeight: 600 } },
  });
  // Calls from the View go to the server, as a host proxies them; the host
  // keeps apps to the app-visible tools of this server, as the extension
  // asks.
  bridge.oncalltool = async (params) => {
    const tool = state.tools.find((t) => t.name === params.name);
    const visibility = (tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility) || ["model", "app"];
    if (!tool || !visibility.includes("app")) throw new Error(`tool ${params.name} is not callable by apps`);
    state.calls.push(params.name);
    return rpc("tools/call", params);
  };
  bridge.onreadresource = async (params) => rpc("resources/read", params);
  bridge.onsizechange = ({ height }) => {
    state.sizes.push(height);
    if (height) iframe.style.height = Math.min(height, 1200) + "px";
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      state.initialized = true;
      resolve();
    };
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await bridge.sendSandboxResourceReady({ html: content.text, csp: content._meta?.ui?.csp });
  await initialized;
  bridge.sendToolInput({ arguments: { view: "catalog" } });
  result.then((r) => bridge.sendToolResult(r));
  state.bridge = bridge;
  state.html = content.text;
  return { tools: tools.map((t) => ({ name: t.name, appOnly: isToolVisibilityAppOnly(t), ui: t._meta && t._meta.ui })) };
}

// What a model could send: the host's own tools/call, outside any View.
async function modelCall(name, args) {
  try {
    return await rpc("tools/call", { name, arguments: args });
  } catch (error) {
    return { error: error.message };
  }
}

async function teardown() {
  return state.bridge.teardownResource({ reason: "test" });
}

window.host = { open, modelCall, teardown, state };
document.getElementById("log").textContent = "ready";
