//! The default builtin registry: names, order and flags of the builtin tools.

/// One entry of the builtin registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinSpec {
    /// The tool's name.
    pub name: &'static str,
    /// A one-line description.
    pub description: &'static str,
    /// Whether the tool is read-only.
    pub read_only: bool,
    /// Whether the tool is deferred (found through `FindTool`).
    pub deferred: bool,
}

const fn spec(
    name: &'static str,
    description: &'static str,
    read_only: bool,
    deferred: bool,
) -> BuiltinSpec {
    BuiltinSpec {
        name,
        description,
        read_only,
        deferred,
    }
}

/// The default builtins in registry order, the same set and order as the
/// TypeScript SDK that zr's design follows. The resolver assembles pools in
/// this order; `zr-tools` implements each entry.
pub const DEFAULT_BUILTINS: &[BuiltinSpec] = &[
    spec(
        "Bash",
        "Run a shell command in the working directory.",
        false,
        false,
    ),
    spec("Read", "Read a file or list a directory.", true, false),
    spec("Write", "Create or overwrite a file.", false, false),
    spec("Edit", "Replace exact text in a file.", false, false),
    spec("Glob", "Find files by glob pattern.", true, false),
    spec(
        "Grep",
        "Search file contents with a regular expression.",
        true,
        false,
    ),
    spec("WebFetch", "Fetch a web page as Markdown.", true, false),
    spec("WebSearch", "Search the web.", true, false),
    spec("Task", "Delegate one task to a subagent.", false, false),
    spec(
        "MultiTask",
        "Delegate several tasks to subagents in parallel.",
        false,
        false,
    ),
    spec("AskUserQuestion", "Ask the user a question.", true, true),
    spec(
        "FindTool",
        "Find and load deferred tools by name or keyword.",
        true,
        false,
    ),
    spec(
        "CronCreate",
        "Schedule a prompt with a cron expression.",
        false,
        true,
    ),
    spec("CronDelete", "Delete a scheduled prompt.", false, true),
    spec("CronList", "List scheduled prompts.", true, true),
    spec(
        "Config",
        "Read or change the runtime configuration.",
        false,
        true,
    ),
    spec("TodoWrite", "Keep this agent's todo list.", false, false),
    // Read-only: it only reads a skill's body, so Explore and Plan agents
    // keep their skills (DESIGN section 4).
    spec("Skill", "Load a skill's instructions.", true, false),
];

/// The registry entry of the builtin `name`, if it is one. Every builtin
/// definition (zr-tools' tools, zr-skills' `Skill`, the engine's `Task`,
/// `MultiTask` and `FindTool`, the resolver's default registry) takes its
/// read-only and deferred flags from here, so the resolver and the engine
/// cannot disagree about them.
#[must_use]
pub fn builtin_spec(name: &str) -> Option<&'static BuiltinSpec> {
    DEFAULT_BUILTINS.iter().find(|s| s.name == name)
}

/// Tool names that only the runtime may define: custom and connection tools
/// cannot take them.
pub const RESERVED_TOOL_NAMES: &[&str] = &["Task", "MultiTask", "FindTool", "Skill"];
