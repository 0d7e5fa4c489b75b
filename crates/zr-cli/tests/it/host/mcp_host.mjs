// A real MCP host for `zr mcp serve`: the official TypeScript SDK's client
// starts the server over stdio, lists its tools, calls one with a progress
// token, and (mode `cancel`) cancels a call while its subagent runs a
// command, then checks that the command is gone while the server still
// serves, and that a later call still works; (mode `nested`) calls the
// `lead` type, whose subagents delegate further.
//
// usage: node mcp_host.mjs ZR PROJECT SCRIPT call|cancel|nested
// Prints one JSON object on standard output. Packages come from
// $ZR_DEPS_DIR (default: <workspace>/.deps), installed by `cargo xtask deps`.

import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const deps = process.env.ZR_DEPS_DIR ?? resolve(here, "../../../../../.deps");
const sdk = join(deps, "node/node_modules/@modelcontextprotocol/sdk/dist/esm");
const { Client } = await import(pathToFileURL(join(sdk, "client/index.js")));
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, "client/stdio.js")));

const [zr, project, script, mode] = process.argv.slice(2);
if (!zr || !project || !script || !["call", "cancel", "nested"].includes(mode)) {
  throw new Error("usage: node mcp_host.mjs ZR PROJECT SCRIPT call|cancel|nested");
}

const transport = new StdioClientTransport({
  command: zr,
  args: ["mcp", "serve", "--provider", "scripted", "--script", script],
  cwd: project,
  env: { HOME: process.env.HOME ?? "/nonexistent", PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1" },
  stderr: "inherit",
});
const client = new Client({ name: "zr-test-host", version: "1.0.0" });
await client.connect(transport);

const out = { server: client.getServerVersion() };
const listed = await client.listTools();
out.tools = listed.tools.map((t) => ({ name: t.name, title: t.title, schema: t.inputSchema }));

/// The pids whose command line holds `marker`.
function running(marker) {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmdline.includes(marker) && !cmdline.includes("mcp_host.mjs")) pids.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return pids;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (mode === "call") {
  const progress = [];
  const result = await client.callTool(
    { name: "code_reviewer", arguments: { prompt: "Review the greeting in hello.txt", description: "review hello" } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  out.progress = progress;
  out.result = result;
  // A type with an output schema: the SDK checks structuredContent
  // against the tool's outputSchema.
  out.structured = await client.callTool({ name: "counter", arguments: { prompt: "Count the lines of hello.txt" } });
  out.counter_tool = listed.tools.find((t) => t.name === "counter");
} else if (mode === "nested") {
  const progress = [];
  out.result = await client.callTool(
    { name: "lead", arguments: { prompt: "lead the job", description: "split the job" } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 60000 },
  );
  out.progress = progress;
} else {
  const marker = "sleep 31.4159";
  const controller = new AbortController();
  const progress = [];
  const call = client
    .callTool(
      { name: "code_reviewer", arguments: { prompt: "Run the slow check" } },
      undefined,
      { onprogress: (p) => progress.push(p), signal: controller.signal, timeout: 60000 },
    )
    .then(() => "answered", (e) => `rejected: ${e.message}`);
  // Until the subagent's command runs.
  let seen = [];
  for (let i = 0; i < 200 && seen.length === 0; i++) {
    await sleep(50);
    seen = running(marker);
  }
  out.command_seen = seen.length > 0;
  controller.abort("the host changed its mind");
  out.call = await call;
  let left = seen;
  for (let i = 0; i < 100 && left.length > 0; i++) {
    await sleep(50);
    left = running(marker);
  }
  out.command_left = left.length;
  out.progress_before_cancel = progress.length;
  const after = await client.callTool({ name: "code_reviewer", arguments: { prompt: "Review the greeting in hello.txt" } });
  out.after = after;
}

await client.close();
console.log(JSON.stringify(out));
