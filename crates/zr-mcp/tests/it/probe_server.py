"""A small MCP server for zr-mcp's tests of list changes and cancellation.

Built on the official Python SDK (`mcp` 2.x in `.deps/venv`). Tools:

- `add_tool(name)`: registers a tool `name` that answers "I am NAME", then
  sends `notifications/tools/list_changed`.
- `wait_for_cancel(path)`: writes "started" to `PATH.started`, then never
  answers; when the client cancels the request (`notifications/cancelled`),
  writes "cancelled" to `path`. (A cancellation that arrives before the
  handler starts stops it before it runs, so tests wait for `PATH.started`.)
- `shout(text)`: writes "probe: TEXT" to stderr and answers "shouted".
- `request_meta()`: answers the request's `_meta` as JSON (sorted keys;
  `{}` when there is none).
"""

import asyncio
import json
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("zr-probe")


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Adds a tool called `name` and tells the client its list changed."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description=f"Added at run time: {name}")
    await ctx.session.send_tool_list_changed()
    return "added"


@server.tool()
async def wait_for_cancel(path: str) -> str:
    """Waits until cancelled, then records the cancellation in `path`."""
    with open(f"{path}.started", "w") as f:
        f.write("started")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        with open(path, "w") as f:
            f.write("cancelled")
        raise
    return "unreachable"


@server.tool()
def shout(text: str) -> str:
    """Writes a line to stderr."""
    sys.stderr.write(f"probe: {text}\n")
    sys.stderr.flush()
    return "shouted"


@server.tool()
def request_meta(ctx: Context) -> str:
    """Answers the `_meta` object of this request as JSON."""
    meta = ctx.request_context.meta or {}
    return json.dumps(dict(meta), sort_keys=True)


if __name__ == "__main__":
    server.run("stdio")
