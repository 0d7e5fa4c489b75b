// The official TypeScript MCP SDK's client calling `echo` on server-everything
// over stdio: the baseline for zr-mcp's echo benchmark (BENCHMARKS.md).
//
// usage: node echo_bench.mjs [--calls N] [--concurrency K] [--server-bin PATH]
// Without --server-bin the server is server-everything; with it, the binary
// at PATH (the rmcp echo server, `zr-echo-server`). Prints one JSON line per
// mode:
//   {"client":"ts-sdk","mode":"sequential","calls":N,"seconds":S,"calls_per_second":R,"cpu_us_per_call":C}
// where C is this process's CPU time (user + system) per call.
// Packages come from $ZR_DEPS_DIR (default: <workspace>/.deps), installed by
// `cargo xtask deps`.

import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const deps = process.env.ZR_DEPS_DIR ?? resolve(here, "../../../../.deps");
const modules = join(deps, "node/node_modules");
const sdk = join(modules, "@modelcontextprotocol/sdk/dist/esm");

const { Client } = await import(pathToFileURL(join(sdk, "client/index.js")));
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, "client/stdio.js")));

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value <= 0) {
    throw new Error(`${name} takes a positive integer, got ${process.argv[at + 1]}`);
  }
  return value;
}

const calls = option("--calls", 2000);
const concurrency = option("--concurrency", 16);

const serverAt = process.argv.indexOf("--server-bin");
const serverBin = serverAt < 0 ? null : process.argv[serverAt + 1];
const transport = new StdioClientTransport(
  serverBin
    ? { command: serverBin, args: [], stderr: "ignore" }
    : {
        command: process.execPath,
        args: [join(modules, "@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
        stderr: "ignore",
      },
);
const client = new Client({ name: "zr-echo-bench-ts", version: "0.1.0" });
await client.connect(transport);

async function echo(i) {
  const result = await client.callTool({ name: "echo", arguments: { message: `hello ${i}` } });
  const text = result.content?.[0]?.text ?? "";
  if (!text.includes(`hello ${i}`)) {
    throw new Error(`echo ${i} answered ${JSON.stringify(result)}`);
  }
}

function cpuMicros() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function report(mode, seconds, cpu) {
  console.log(
    JSON.stringify({
      client: "ts-sdk",
      mode,
      calls,
      concurrency: mode === "sequential" ? 1 : concurrency,
      seconds,
      calls_per_second: calls / seconds,
      cpu_us_per_call: cpu / calls,
    }),
  );
}

// Warm-up: the server's and V8's first calls are slower.
for (let i = 0; i < 100; i++) await echo(i);

let start = process.hrtime.bigint();
let cpu = cpuMicros();
for (let i = 0; i < calls; i++) await echo(i);
report("sequential", Number(process.hrtime.bigint() - start) / 1e9, cpuMicros() - cpu);

start = process.hrtime.bigint();
cpu = cpuMicros();
let next = 0;
async function worker() {
  while (next < calls) {
    const i = next++;
    await echo(i);
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
report("concurrent", Number(process.hrtime.bigint() - start) / 1e9, cpuMicros() - cpu);

await client.close();
