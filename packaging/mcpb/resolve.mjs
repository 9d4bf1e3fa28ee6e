// Prints the command a host such as Claude Desktop would start for an
// unpacked bundle, given the values typed into the bundle's settings form.
// It calls getMcpConfigForManifest from @anthropic-ai/mcpb, the code the
// package describes as what Claude for macOS and Windows uses, so verify.sh
// tests the manifest's `${__dirname}` and `${user_config.*}` substitution
// with the real rules instead of a copy of them.
//
//   node resolve.mjs MCPB_PACKAGE_DIR BUNDLE_DIR HOME [USER_CONFIG_JSON]
//
// MCPB_PACKAGE_DIR is the installed package (…/node_modules/@anthropic-ai/mcpb),
// BUNDLE_DIR the unpacked bundle, HOME the home folder to substitute for
// ${HOME}. Prints {"command": …, "args": […], "env": {…}} as JSON.

import { readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, bundleDir, home, userConfigJson] = process.argv.slice(2);
if (!packageDir || !bundleDir || !home) {
  console.error("usage: node resolve.mjs MCPB_PACKAGE_DIR BUNDLE_DIR HOME [USER_CONFIG_JSON]");
  process.exit(2);
}

const mcpb = await import(pathToFileURL(join(packageDir, "dist", "index.js")).href);
const manifest = JSON.parse(readFileSync(join(bundleDir, "manifest.json"), "utf8"));
const warnings = [];
const config = await mcpb.getMcpConfigForManifest({
  manifest,
  extensionPath: bundleDir,
  systemDirs: {
    HOME: home,
    DESKTOP: join(home, "Desktop"),
    DOCUMENTS: join(home, "Documents"),
    DOWNLOADS: join(home, "Downloads"),
  },
  userConfig: userConfigJson ? JSON.parse(userConfigJson) : {},
  pathSeparator: sep,
  logger: { warn: (message) => warnings.push(message) },
});
if (!config) {
  console.error(`no launch configuration: ${warnings.join("; ") || "the manifest has no mcp_config"}`);
  process.exit(1);
}
const { command, args = [], env = {} } = config;
console.log(JSON.stringify({ command, args, env }));
