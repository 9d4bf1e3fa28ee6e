// The Node side of the test host: starts `skillserve` over stdio with the
// official MCP SDK's client (declaring the MCP Apps extension, as a host
// that renders apps does), and serves the host page to the browser on
// loopback. The page (host.js, built on the SDK's AppBridge) reaches the
// server through POST /rpc, which forwards one MCP request to the client.
//
//   node bridge.mjs SKILLSERVE_BINARY [skillserve args...]
//
// Prints "listening PORT SANDBOX_PORT" once ready. The sandbox proxy is
// served on a second port: a different origin from the host, as the
// extension requires of web hosts.
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const here = path.dirname(fileURLToPath(import.meta.url));
const [binary, ...args] = process.argv.slice(2);

const client = new Client(
  { name: "apps-test-host", version: "1.0.0" },
  { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } },
);
const transport = new StdioClientTransport({ command: binary, args, env: process.env, stderr: "inherit" });
await client.connect(transport);

function page(file, type) {
  return (response) => {
    response.writeHead(200, { "Content-Type": type, "Cache-Control": "no-store" });
    response.end(readFileSync(path.join(here, file)));
  };
}

const host = http.createServer(async (request, response) => {
  const url = new URL(request.url, "http://localhost");
  if (request.method === "GET" && url.pathname === "/") return page("host.html", "text/html")(response);
  if (request.method === "GET" && request.url === "/host.bundle.js") return page("host.bundle.js", "text/javascript")(response);
  if (request.method === "POST" && request.url === "/rpc") {
    let body = "";
    for await (const chunk of request) body += chunk;
    const { method, params } = JSON.parse(body);
    let answer;
    try {
      answer = { result: await client.request({ method, params }) };
    } catch (error) {
      answer = { error: { code: error.code ?? -32603, message: error.message } };
    }
    response.writeHead(200, { "Content-Type": "application/json" });
    return response.end(JSON.stringify(answer));
  }
  response.writeHead(404);
  response.end();
});
// The extension's default CSP for a View that declares no domains: the
// inner document written by the proxy inherits it.
const DEFAULT_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";
const sandbox = http.createServer((request, response) => {
  if (request.method === "GET" && request.url.startsWith("/sandbox.html")) {
    response.writeHead(200, { "Content-Type": "text/html", "Content-Security-Policy": DEFAULT_CSP, "Cache-Control": "no-store" });
    return response.end(readFileSync(path.join(here, "sandbox.html")));
  }
  response.writeHead(404);
  response.end();
});
await new Promise((resolve) => host.listen(0, "127.0.0.1", resolve));
await new Promise((resolve) => sandbox.listen(0, "127.0.0.1", resolve));
console.log(`listening ${host.address().port} ${sandbox.address().port}`);

const stop = async () => {
  host.close();
  sandbox.close();
  await client.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
