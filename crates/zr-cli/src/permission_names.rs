//! `[permissions]` and `[tools]` entries that match no tool zr knows, as
//! warnings with the closest name: `allow = ["Bsh"]` or
//! `deny = ["bash"]` would otherwise be accepted silently and the call
//! refused (or run) later without a word about the typo.
//!
//! Known are the builtins (every one, configured or not) and, for
//! `mcp__SERVER...` entries, the servers of `.mcp.json` (their tools are
//! not known before the servers start, so only the server is checked).
//! `*` and prefix patterns that reach a known name are fine.
//!
//! `[tools]` lists and `[permissions]` rules are also read through
//! Claude Code's names, as agent files' `tools` are
//! (`claude_names.rs`): `Agent` is `Task`, `MultiEdit(src/**)` is
//! `Edit(src/**)`, a tool zr does not have is left out; each with a
//! warning.

use zr_caps::ClaudeCodeTool;
use zr_types::DEFAULT_BUILTINS;

use crate::claude_names::claude_code;
use crate::config::closest;
use crate::config_key::config_key_error;
use crate::project::Project;

/// One `warning: FILE:LINE:COLUMN: KEY: ...` text (with its `help:`
/// line) per entry of `[permissions]` or `[tools]` (or of a settings
/// file's `permissions`) that names nothing, and per Claude Code name
/// among them.
pub(crate) fn warnings(project: &Project) -> Vec<String> {
    let p = &project.config.permissions;
    let t = &project.config.tools;
    let builtins: Vec<&str> = DEFAULT_BUILTINS.iter().map(|b| b.name).collect();
    let servers: Vec<String> = project
        .mcp
        .servers()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    let mut out = Vec::new();
    // The settings files' entries, at their file, line and column. Claude
    // Code's own names are expected there (the file is Claude Code's too):
    // only names no tool has are warned about.
    for entry in &project.settings.rule_entries {
        let tool = entry
            .value
            .split_once('(')
            .map_or(entry.value.as_str(), |(t, _)| t.trim());
        if claude_code(tool).is_some() {
            continue;
        }
        if let Some((message, help)) = unknown(tool, &builtins, &servers) {
            let o = &entry.origin;
            let warning =
                crate::error::CliError::config(&o.path, (o.line, o.column), &o.key, message, help);
            out.push(format!("warning: {warning}"));
        }
    }
    for (key, list) in [
        ("permissions.allow", &p.allow),
        ("permissions.ask", &p.ask),
        ("permissions.deny", &p.deny),
        ("tools.allow", &t.allow),
        ("tools.deny", &t.deny),
    ] {
        for entry in list.iter().flatten() {
            // A rule's tool: `Bash` of `Bash(npm run test:*)`.
            let tool = entry
                .split_once('(')
                .map_or(entry.as_str(), |(t, _)| t.trim());
            if let Some(claude) = claude_code(tool) {
                let (message, help) = claude_code_warning(entry, claude);
                out.push(format!(
                    "warning: {}",
                    config_key_error(project, key, message, &help)
                ));
                continue;
            }
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

/// What zr makes of Claude Code's `tool`, written as `entry`, and why.
fn claude_code_warning(entry: &str, tool: &ClaudeCodeTool) -> (String, String) {
    match tool.zr {
        Some(zr) => (
            format!("\"{entry}\" is Claude Code's name for \"{zr}\"; zr reads it as \"{zr}\""),
            format!("{}; write \"{zr}\"", tool.why),
        ),
        None => (
            format!("\"{entry}\" is a Claude Code tool zr does not have; the entry is left out"),
            format!("{}; remove the entry", tool.why),
        ),
    }
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
