//! Claude Code's tool names read as zr's, in `[tools]` lists and in
//! permission rules (`Agent` is `Task`, `MultiEdit(src/**)` is
//! `Edit(src/**)`, a tool zr does not have is left out): the pure half of
//! `permission_names.rs`, which zr.toml and the settings files both use.

use zr_caps::{CLAUDE_CODE_TOOLS, ClaudeCodeTool};

/// A `[tools]` list as zr reads it: Claude Code's names replaced by zr's,
/// the tools zr does not have left out (`permission_names::warnings` says so).
pub(crate) fn tools_list(list: Option<&[String]>) -> Option<Vec<String>> {
    list.map(|list| {
        list.iter()
            .filter_map(|entry| match claude_code(entry) {
                Some(tool) => tool.zr.map(str::to_owned),
                None => Some(entry.clone()),
            })
            .collect()
    })
}

/// A `[permissions]` rule as zr reads it: its tool's Claude Code name
/// replaced by zr's (`MultiEdit(src/**)` is `Edit(src/**)`), `None` for a
/// tool zr does not have (`permission_names::warnings` says so).
pub(crate) fn rule_text(entry: &str) -> Option<String> {
    let (tool, rest) = entry
        .split_once('(')
        .map_or((entry.trim(), None), |(t, r)| (t.trim(), Some(r)));
    match (claude_code(tool), rest) {
        (None, _) => Some(entry.to_owned()),
        (Some(t), None) => t.zr.map(str::to_owned),
        (Some(t), Some(rest)) => t.zr.map(|zr| format!("{zr}({rest}")),
    }
}

/// Claude Code's tool of that exact name, when zr spells it differently.
pub(crate) fn claude_code(entry: &str) -> Option<&'static ClaudeCodeTool> {
    CLAUDE_CODE_TOOLS.iter().find(|t| t.name == entry)
}
