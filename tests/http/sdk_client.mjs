// The official MCP TypeScript SDK's Streamable HTTP client against
// `skillserve serve --http` (2025-11-25: the SDK's newest version): every
// surface, a change reaching the client as tools/list_changed on the session
// stream, and answers that name no server path.
//
// Usage: node sdk_client.mjs URL SKILLS_DIR TOKEN (run by tests/http/run.sh,
// with NODE_PATH pointing at the node_modules that hold the SDK).
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = join(process.env.NODE_PATH, "@modelcontextprotocol/sdk/dist/esm");
const load = (path) => import(pathToFileURL(join(sdk, path)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { ToolListChangedNotificationSchema } = await load("types.js");

const [url, skillsArg, token] = process.argv.slice(2);
const skillsDir = resolve(skillsArg);
const remoteBase =
  "Base directory: skill://pdf/ (this server is remote: read the skill's files with the skill tool's \"file\" argument)";

function check(condition, what) {
  if (!condition) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "skillserve-ts-check", version: "1.0.0" });
let changed;
const listChanged = new Promise((resolve) => (changed = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
await client.connect(transport);
check(transport.sessionId, "[2025-11-25] a session id");
check(client.getInstructions().includes("This server is remote"), "[2025-11-25] remote instructions");

const seen = [];
const tools = await client.listTools();
seen.push(tools);
check(tools.tools.length === 1 && tools.tools[0].name === "skill", "[2025-11-25] tools/list");
let result = await client.callTool({ name: "skill", arguments: { name: "pdf" } });
seen.push(result);
check(result.content[0].text.startsWith(`Loading: pdf\n${remoteBase}\n\n---\n`), "[2025-11-25] tools/call: Base directory names skill://");
result = await client.callTool({ name: "skill", arguments: { name: "pdf", file: "references/forms.md" } });
seen.push(result);
check(result.content[0].text.startsWith(`Loading: pdf/references/forms.md\n${remoteBase}\n\n`), "[2025-11-25] tools/call with file");
const prompts = await client.listPrompts();
seen.push(prompts);
check(prompts.prompts.some((p) => p.name === "pdf"), "[2025-11-25] prompts/list");
const prompt = await client.getPrompt({ name: "pdf", arguments: {} });
seen.push(prompt);
check(JSON.stringify(prompt).includes(remoteBase.replaceAll('"', '\\"')), "[2025-11-25] prompts/get");
const resources = await client.listResources();
seen.push(resources);
check(resources.resources.some((r) => r.uri === "skill://pdf/SKILL.md"), "[2025-11-25] resources/list");
const templates = await client.listResourceTemplates();
seen.push(templates);
check(templates.resourceTemplates.length > 0, "[2025-11-25] resources/templates/list");
const read = await client.readResource({ uri: "skill://pdf/SKILL.md" });
seen.push(read);
check(read.contents[0].text.includes("name: pdf"), "[2025-11-25] resources/read");
const completion = await client.complete({ ref: { type: "ref/prompt", name: "pdf" }, argument: { name: "task", value: "" } });
seen.push(completion);
check(Array.isArray(completion.completion.values), "[2025-11-25] completion/complete");
for (const item of seen) {
  check(!JSON.stringify(item).includes(skillsDir), "[2025-11-25] no server path in an answer");
}

mkdirSync(join(skillsDir, "fresh-ts"));
writeFileSync(join(skillsDir, "fresh-ts", "SKILL.md"), "---\nname: fresh-ts\ndescription: Added while serving.\n---\nbody\n");
const timeout = setTimeout(() => check(false, "[2025-11-25] tools/list_changed within 20 s"), 20000);
await listChanged;
clearTimeout(timeout);
check(true, "[2025-11-25] tools/list_changed on the session stream");
const after = await client.listTools();
check(after.tools[0].description.includes("- fresh-ts: Added while serving."), "[2025-11-25] the new skill is listed");
await transport.terminateSession();
await client.close();
console.log("typescript sdk: all checks passed");
