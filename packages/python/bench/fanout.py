"""The 1,000-subagent fan-out driven from Python (through the installed
package) and from the zr command (`zr run --json`), and 1,000 calls of a
Python host tool in one root turn, on the scripted provider (no network).

    python fanout.py PATH/TO/zr     # the zr that the package runs too

Prints (median, min, max) seconds of 5 runs each, and the messages the
Python side received."""

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from zr import Options, query, tool

PROJ = tempfile.mkdtemp(prefix="zr-bench-")
os.environ.setdefault("HOME", PROJ)
os.environ["ZR_BINARY"] = sys.argv[1]

FANOUT = {"agents": {
    "root": [{"turns": [
        {"tool_calls": [{"name": "MultiTask", "input": {"tasks": [
            {"description": f"t{i}-{j}", "prompt": f"task {i}-{j}", "subagent_type": "general-purpose"}
            for j in range(10)]}} for i in range(100)]},
        {"text": "done"}]}],
    "general-purpose": [{"turns": [{"text": "ok"}]}],
}}
PINGS = {"agents": {"root": [{"turns": [
    {"tool_calls": [{"name": "ping", "input": {"n": i}} for i in range(1000)]},
    {"text": "done"}]}]}}
NONE = {"agents": {"root": [{"turns": [{"text": "done"}]}]}}


def use(script):
    json.dump(script, open(f"{PROJ}/script.json", "w"))
    open(f"{PROJ}/zr.toml", "w").write('[model]\nprovider = "scripted"\nscript = "script.json"\n')


async def from_python(options):
    n = 0
    async for m in query("go", options=options):
        n += 1
    assert m.status == "completed", m
    return n


def timed(f, reps=5):
    times, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return round(statistics.median(times), 3), round(min(times), 3), round(max(times), 3), out


def from_cli():
    subprocess.run([sys.argv[1], "run", "--json", "go"], cwd=PROJ,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)


@tool(read_only=True)
def ping(n: int) -> str:
    """Answers pong."""
    return "pong"


use(FANOUT)
print("fan-out 1,000, zr run --json ", timed(from_cli))
print("fan-out 1,000, from Python   ", timed(lambda: asyncio.run(from_python(Options(cwd=PROJ)))))
use(PINGS)
print("1,000 host tool calls, Python", timed(lambda: asyncio.run(from_python(Options(cwd=PROJ, tools=[ping])))))
use(NONE)
print("no calls, Python (baseline)  ", timed(lambda: asyncio.run(from_python(Options(cwd=PROJ, tools=[ping])))))
