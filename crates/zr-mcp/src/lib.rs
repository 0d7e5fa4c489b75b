//! MCP client bridge: `.mcp.json`, a shared connection hub, tool materialisation and calls.
