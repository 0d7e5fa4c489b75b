//! MCP tools of two servers that come out under one name: `trusted_` +
//! `x` and `trusted` + `_x` both make `mcp__trusted___x`, and one would
//! silently shadow the other. The server written first in `.mcp.json`
//! keeps the name; a later server's tool is renamed with a stable suffix
//! ([`ToolName::mcp_distinct`]), and a warning names both servers.

use std::collections::BTreeMap;

use zr_mcp::McpTool;
use zr_types::{ServerName, ToolName};

/// Renames, in `tools` (by server name), every tool whose name a tool of
/// a server earlier in `order` has; one `warning: ...` line per renamed
/// tool. The same servers and tools always give the same names.
pub(crate) fn distinct(
    order: &[ServerName],
    tools: &mut BTreeMap<String, Vec<McpTool>>,
) -> Vec<String> {
    // Each name taken so far: its server and the tool's own name.
    let mut owners: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut warnings = Vec::new();
    for server in order {
        let Some(list) = tools.get_mut(server.as_str()) else {
            continue;
        };
        for tool in list.iter_mut() {
            let name = tool.definition.name.to_string();
            let remote = tool.handler.remote_name().to_owned();
            let Some((first, first_remote)) = owners.get(&name).cloned() else {
                owners.insert(name, (server.to_string(), remote));
                continue;
            };
            let Ok(renamed) = ToolName::mcp_distinct(server, &remote) else {
                continue;
            };
            warnings.push(format!(
                "warning: MCP servers '{first}' and '{server}' both make the tool name {name}: '{first}''s tool '{first_remote}' keeps it, '{server}''s tool '{remote}' is named {renamed}"
            ));
            *tool = tool.renamed(renamed.clone());
            owners.insert(renamed.to_string(), (server.to_string(), remote));
        }
    }
    warnings
}
