"""An MCP server whose tools are given on its command line, for zr-cli's
tests of names and annotations.

Built on the official Python SDK (`mcp` 2.x in `.deps/venv`). Arguments:
a folder, then one JSON object per tool:
`{"name": "x", "annotations": {"readOnlyHint": true}}`. Each tool takes no
input, writes a file named after the tool into the folder (so a test sees
that it ran) and answers "NAME ran".
"""

import json
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("zr-tools")
folder = sys.argv[1]


def tool(name: str):
    def run() -> str:
        with open(os.path.join(folder, f"{name}.ran"), "w") as f:
            f.write("ran")
        return f"{name} ran"

    return run


for spec in sys.argv[2:]:
    spec = json.loads(spec)
    annotations = spec.get("annotations")
    server.add_tool(
        tool(spec["name"]),
        name=spec["name"],
        description=f"The tool {spec['name']}.",
        annotations=ToolAnnotations(**annotations) if annotations else None,
    )

if __name__ == "__main__":
    server.run("stdio")
