//! Claude Code's tool names that zr knows under another name, or not at
//! all: the one table that agent files' `tools` and `disallowedTools` are
//! read through (and that the README prints).

use zr_types::BuiltinName;

/// A Claude Code tool name and what zr makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaudeCodeTool {
    /// The name as Claude Code's files write it.
    pub name: &'static str,
    /// zr's tool of the same use, or `None` when zr has none (the entry is
    /// dropped).
    pub zr: Option<&'static str>,
    /// Why, as a clause for the warning and the README.
    pub why: &'static str,
}

const fn maps(name: &'static str, zr: BuiltinName, why: &'static str) -> ClaudeCodeTool {
    ClaudeCodeTool {
        name,
        zr: Some(zr.as_str()),
        why,
    }
}

const fn drops(name: &'static str, why: &'static str) -> ClaudeCodeTool {
    ClaudeCodeTool {
        name,
        zr: None,
        why,
    }
}

/// Claude Code's tool names that zr spells differently or does not have.
///
/// Every entry of `tools` and `disallowedTools` with one of these names
/// (exactly as written) is read as the zr name, or dropped, with a warning
/// naming the file, the line and both names. A mapped name never gives
/// an agent more than Claude Code's tool did in kind: each zr tool does
/// the same job (`MultiEdit`'s edits are `Edit` calls, `LS`'s listing is a
/// `Glob`). Names not in this table pass through unchanged (the resolver
/// warns about a name that matches no tool).
pub const CLAUDE_CODE_TOOLS: &[ClaudeCodeTool] = &[
    maps(
        "Agent",
        BuiltinName::Task,
        "Claude Code's later name for Task",
    ),
    maps(
        "MultiEdit",
        BuiltinName::Edit,
        "zr makes several edits as several Edit calls",
    ),
    maps(
        "LS",
        BuiltinName::Glob,
        "Glob lists a folder's files with the pattern DIR/*",
    ),
    maps(
        "NotebookRead",
        BuiltinName::Read,
        "Read reads notebooks as text",
    ),
    maps(
        "TodoRead",
        BuiltinName::TodoWrite,
        "TodoWrite returns the whole list",
    ),
    maps(
        "SlashCommand",
        BuiltinName::Skill,
        "zr runs commands of that kind as skills",
    ),
    drops(
        "NotebookEdit",
        "zr has no notebook editor; list Edit to edit notebooks as JSON text",
    ),
    drops(
        "BashOutput",
        "zr's Bash writes a background command's output to a log file that Read reads",
    ),
    drops(
        "KillShell",
        "zr stops an agent's background commands when the agent ends",
    ),
    drops(
        "KillBash",
        "zr stops an agent's background commands when the agent ends",
    ),
    drops(
        "ExitPlanMode",
        "plan is a permission mode in zr, set with permissionMode: plan",
    ),
    drops(
        "EnterPlanMode",
        "plan is a permission mode in zr, set with permissionMode: plan",
    ),
    drops(
        "ListMcpResourcesTool",
        "zr offers an MCP server's tools, not its resources",
    ),
    drops(
        "ReadMcpResourceTool",
        "zr offers an MCP server's tools, not its resources",
    ),
];

/// The table's entry for `name`, if any.
#[must_use]
pub(super) fn lookup(name: &str) -> Option<&'static ClaudeCodeTool> {
    CLAUDE_CODE_TOOLS.iter().find(|t| t.name == name)
}
