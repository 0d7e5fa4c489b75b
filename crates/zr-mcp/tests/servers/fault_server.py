"""An MCP server over stdio that misbehaves on purpose, for zr-mcp's fault tests.

Built on the official Python SDK (`mcp` 2.x), installed by `cargo xtask deps`
into `.deps/venv`. Tools:

- `echo(text)`: answers `text`; proves the connection still works.
- `crash(status=3, stamp="")`: the process exits with `status` in the middle of
  the call, without answering. With `stamp`, it first writes the time of its
  exit there (CLOCK_MONOTONIC, nanoseconds) so tests can measure how fast the
  client notices.
- `hang()`: never answers (until cancelled or killed).
- `garbage(lines=3)`: writes `lines` non-JSON lines straight to stdout (the
  protocol stream), then answers "survived".
- `huge(bytes=20_000_000)`: answers one text of `bytes` characters.
- `flood(bytes=1_000_000, delay_ms=200)`: answers "flooding", then after
  `delay_ms` writes one non-JSON line of `bytes` characters to stdout, when no
  call is waiting for an answer.
- `pid()`: answers the server's process id, so tests can count processes.
- `fail(message)`: answers with `isError: true`.
- `fleeting()`: answers "still here"; listed only when the file named by the
  variable `ZR_FAULT_FLEETING` exists at start-up, so a restarted server can
  lose it.

Every line the server writes to stderr starts with "fault_server:" so tests
can check that it reaches `tracing`, not our stdout.
"""

import asyncio
import os
import sys
import threading
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("zr-fault-server")

# A copy of the protocol stream (stdout) taken before the SDK diverts it, as a
# careless library that printed to stdout would hold.
WIRE = os.dup(1)


@server.tool()
def echo(text: str) -> str:
    """Answers the text it was given."""
    return text


@server.tool()
def crash(status: int = 3, stamp: str = "") -> str:
    """Exits the whole process with `status` before answering."""
    sys.stderr.write(f"fault_server: crashing with status {status}\n")
    sys.stderr.flush()
    if stamp:
        with open(stamp, "w") as f:
            f.write(str(time.clock_gettime_ns(time.CLOCK_MONOTONIC)))
    os._exit(status)


@server.tool()
async def hang() -> str:
    """Never answers."""
    sys.stderr.write("fault_server: hanging\n")
    sys.stderr.flush()
    await asyncio.Event().wait()
    return "unreachable"


@server.tool()
def garbage(lines: int = 3) -> str:
    """Writes non-JSON lines to stdout, then answers normally."""
    # The SDK diverts descriptor 1 to stderr while it serves stdio, so write
    # to the copy of the protocol stream taken at start-up.
    for i in range(lines):
        os.write(WIRE, f"this is not JSON-RPC, line {i}\n".encode())
    return "survived"


@server.tool()
def huge(bytes: int = 20_000_000) -> str:
    """Answers one very long text."""
    return "x" * bytes


@server.tool()
def flood(bytes: int = 1_000_000, delay_ms: int = 200) -> str:
    """Answers, then writes one very long line to the protocol stream."""

    def later() -> None:
        time.sleep(delay_ms / 1000)
        os.write(WIRE, b"y" * bytes + b"\n")

    threading.Thread(target=later, daemon=True).start()
    return "flooding"


@server.tool()
def pid() -> str:
    """Answers this server's process id."""
    return str(os.getpid())


@server.tool()
def fail(message: str = "the tool failed on purpose") -> str:
    """Answers with isError: true."""
    raise ToolError(message)


if os.path.exists(os.environ.get("ZR_FAULT_FLEETING", "")):

    @server.tool()
    def fleeting() -> str:
        """Exists only while the file named by ZR_FAULT_FLEETING does."""
        return "still here"


if __name__ == "__main__":
    sys.stderr.write("fault_server: started\n")
    sys.stderr.flush()
    server.run("stdio")
