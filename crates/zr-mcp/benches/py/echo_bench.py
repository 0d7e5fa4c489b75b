"""The official Python MCP SDK's client calling `echo` over stdio: the
second baseline for zr-mcp's echo benchmark (BENCHMARKS.md).

usage: python echo_bench.py [--calls N] [--concurrency K] [--server-bin PATH]

Without --server-bin the server is server-everything (Node); with it, the
binary at PATH (the rmcp echo server, `zr-echo-server`). Prints one JSON
line per mode, the same shape as `../echo.rs` and `../ts/echo_bench.mjs`:
  {"client":"python-sdk","mode":"sequential","calls":N,"concurrency":1,
   "seconds":S,"calls_per_second":R,"cpu_us_per_call":C}
where C is this client process's CPU time (user + system) per call.
Packages come from $ZR_DEPS_DIR (default: <workspace>/.deps), installed by
`cargo xtask deps`; run it with .deps/venv/bin/python.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
DEPS = Path(os.environ.get("ZR_DEPS_DIR", HERE / "../../../../.deps"))
WARM_UP_CALLS = 100


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"takes a positive integer, got {text}")
    return value


def server(server_bin):
    if server_bin:
        return StdioServerParameters(command=server_bin)
    everything = DEPS / "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    if not everything.exists():
        sys.exit(f"{everything} is missing: run `cargo xtask deps` first (or set ZR_DEPS_DIR)")
    return StdioServerParameters(command="node", args=[str(everything), "stdio"])


async def echo(session, i):
    message = f"hello {i}"
    result = await session.call_tool("echo", {"message": message})
    text = result.content[0].text if result.content else ""
    if result.is_error or message not in text:
        raise RuntimeError(f"echo {i} answered {result!r}")


def report(mode, calls, concurrency, seconds, cpu):
    print(
        json.dumps(
            {
                "client": "python-sdk",
                "mode": mode,
                "calls": calls,
                "concurrency": concurrency,
                "seconds": seconds,
                "calls_per_second": calls / seconds,
                "cpu_us_per_call": cpu * 1e6 / calls,
            }
        ),
        flush=True,
    )


async def main(args):
    with open(os.devnull, "w") as quiet:
        async with stdio_client(server(args.server_bin), errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for i in range(WARM_UP_CALLS):
                    await echo(session, i)

                start, cpu = time.perf_counter(), time.process_time()
                for i in range(args.calls):
                    await echo(session, i)
                report("sequential", args.calls, 1, time.perf_counter() - start, time.process_time() - cpu)

                next_call = 0

                async def worker():
                    nonlocal next_call
                    while next_call < args.calls:
                        i = next_call
                        next_call += 1
                        await echo(session, i)

                start, cpu = time.perf_counter(), time.process_time()
                async with anyio.create_task_group() as group:
                    for _ in range(args.concurrency):
                        group.start_soon(worker)
                report(
                    "concurrent",
                    args.calls,
                    args.concurrency,
                    time.perf_counter() - start,
                    time.process_time() - cpu,
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=positive, default=2000)
    parser.add_argument("--concurrency", type=positive, default=16)
    parser.add_argument("--server-bin", default=None)
    anyio.run(main, parser.parse_args())
