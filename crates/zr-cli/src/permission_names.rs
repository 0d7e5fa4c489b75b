//! `[permissions]` entries that match no tool zr knows, as warnings with
//! the closest name: `allow = ["Bsh"]` would otherwise be accepted
//! silently and the call refused later without a word about the typo.
//!
//! Known are the builtins (every one, configured or not) and, for
//! `mcp__SERVER...` entries, the servers of `.mcp.json` (their tools are
//! not known before the servers start, so only the server is checked).
//! `*` and prefix patterns that reach a known name are fine.

use zr_types::DEFAULT_BUILTINS;

use crate::config::closest;
use crate::config_key::config_key_error;
use crate::project::Project;

/// One `warning: zr.toml:LINE:COLUMN: permissions.KEY: ...` text (with its
/// `help:` line) per entry that names nothing.
pub(crate) fn warnings(project: &Project) -> Vec<String> {
    let p = &project.config.permissions;
    let builtins: Vec<&str> = DEFAULT_BUILTINS.iter().map(|b| b.name).collect();
    let servers: Vec<String> = project
        .mcp
        .servers()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    let mut out = Vec::new();
    for (key, list) in [
        ("permissions.allow", &p.allow),
        ("permissions.ask", &p.ask),
        ("permissions.deny", &p.deny),
    ] {
        for entry in list.iter().flatten() {
            // A rule's tool: `Bash` of `Bash(npm run test:*)`.
            let tool = entry
                .split_once('(')
                .map_or(entry.as_str(), |(t, _)| t.trim());
            if let Some((message, help)) = unknown(tool, &builtins, &servers) {
                out.push(format!(
                    "warning: {}",
                    config_key_error(project, key, message, &help)
                ));
            }
        }
    }
    out
}

/// What is wrong with `entry` and what to write instead, if it names no
/// known tool.
fn unknown(entry: &str, builtins: &[&str], servers: &[String]) -> Option<(String, String)> {
    if entry == "*" {
        return None;
    }
    if let Some(rest) = entry.strip_prefix("mcp__") {
        let server = rest.split("__").next().unwrap_or_default();
        let prefix = server.strip_suffix('*');
        let known = servers.iter().any(|s| match prefix {
            Some(p) => s.starts_with(p),
            None => s == server,
        });
        if known {
            return None;
        }
        let names: Vec<&str> = servers.iter().map(String::as_str).collect();
        let help = match (closest(server, &names), names.is_empty()) {
            (Some(best), _) => format!(
                "did you mean mcp__{best}? the servers of .mcp.json are: {}",
                names.join(", ")
            ),
            (None, true) => "add the server to .mcp.json, or remove the entry".to_owned(),
            (None, false) => format!("the servers of .mcp.json are: {}", names.join(", ")),
        };
        return Some((
            format!("\"{entry}\" names the MCP server '{server}', which .mcp.json does not define"),
            help,
        ));
    }
    let matches = match entry.strip_suffix('*') {
        Some(prefix) => builtins.iter().any(|b| b.starts_with(prefix)),
        None => builtins.contains(&entry),
    };
    if matches {
        return None;
    }
    let help = match closest(entry.trim_end_matches('*'), builtins) {
        Some(best) => format!(
            "did you mean \"{best}\"? tool names are case-sensitive: {}",
            builtins.join(", ")
        ),
        None => format!(
            "write a builtin ({}) or mcp__SERVER__TOOL for a tool of .mcp.json",
            builtins.join(", ")
        ),
    };
    Some((format!("\"{entry}\" matches no tool"), help))
}
