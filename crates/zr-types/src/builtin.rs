//! The default builtin registry: names, order and flags of the builtin
//! tools, written once in [`builtins!`]'s table, from which both the
//! typed names ([`BuiltinName`]) and the registry ([`DEFAULT_BUILTINS`])
//! are made: a builtin named anywhere in zr is a variant, checked by the
//! compiler, never a string that may drift.

use std::fmt;
use std::str::FromStr;

use crate::name::ToolName;

/// One entry of the builtin registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinSpec {
    /// The tool's name ([`BuiltinName::as_str`] of [`BuiltinSpec::builtin`]).
    pub name: &'static str,
    /// The tool's typed name.
    pub builtin: BuiltinName,
    /// A one-line description.
    pub description: &'static str,
    /// Whether the tool is read-only.
    pub read_only: bool,
    /// Whether the tool is deferred (found through `FindTool`).
    pub deferred: bool,
}

/// The one table: `Name: "description", read_only, deferred;` in
/// registry order.
macro_rules! builtins {
    ($($(#[$doc:meta])* $name:ident: $description:literal, $read_only:literal, $deferred:literal;)*) => {
        /// The name of a builtin tool, one variant per entry of
        /// [`DEFAULT_BUILTINS`], in registry order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum BuiltinName {
            $($(#[$doc])* #[doc = $description] $name,)*
        }

        impl BuiltinName {
            /// Every builtin, in registry order.
            pub const ALL: &'static [Self] = &[$(Self::$name),*];

            /// The name as the model and the configuration spell it.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$name => stringify!($name),)*
                }
            }
        }

        /// The default builtins in registry order, the same set and order
        /// as the TypeScript SDK that zr's design follows. The resolver
        /// assembles pools in this order; `zr-tools` implements each entry.
        pub const DEFAULT_BUILTINS: &[BuiltinSpec] = &[$(BuiltinSpec {
            name: stringify!($name),
            builtin: BuiltinName::$name,
            description: $description,
            read_only: $read_only,
            deferred: $deferred,
        }),*];
    };
}

builtins! {
    Bash: "Run a shell command in the working directory.", false, false;
    Read: "Read a file or list a directory.", true, false;
    Write: "Create or overwrite a file.", false, false;
    Edit: "Replace exact text in a file.", false, false;
    Glob: "Find files by glob pattern.", true, false;
    Grep: "Search file contents with a regular expression.", true, false;
    WebFetch: "Fetch a web page as Markdown.", true, false;
    WebSearch: "Search the web.", true, false;
    Task: "Delegate one task to a subagent.", false, false;
    MultiTask: "Delegate several tasks to subagents in parallel.", false, false;
    AskUserQuestion: "Ask the user a question.", true, true;
    FindTool: "Find and load deferred tools by name or keyword.", true, false;
    CronCreate: "Schedule a prompt with a cron expression.", false, true;
    CronDelete: "Delete a scheduled prompt.", false, true;
    CronList: "List scheduled prompts.", true, true;
    Config: "Read or change the runtime configuration.", false, true;
    TodoWrite: "Keep this agent's todo list.", false, false;
    /// Read-only: it only reads a skill's body, so Explore and Plan
    /// agents keep their skills (DESIGN section 4).
    Skill: "Load a skill's instructions.", true, false;
}

impl BuiltinName {
    /// Its registry entry (read-only and deferred flags, one-line
    /// description).
    #[must_use]
    pub const fn spec(self) -> &'static BuiltinSpec {
        // The table makes the variants and the entries in one order.
        &DEFAULT_BUILTINS[self as usize]
    }

    /// Its name as a [`ToolName`].
    #[must_use]
    pub fn tool_name(self) -> ToolName {
        self.as_str()
            .parse()
            .expect("a builtin's name is a valid tool name (a test checks every one)")
    }

    /// Whether `name` is this builtin's name.
    #[must_use]
    pub fn is(self, name: &str) -> bool {
        self.as_str() == name
    }
}

impl fmt::Display for BuiltinName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no builtin's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a builtin tool")]
pub struct NotBuiltin(pub String);

impl FromStr for BuiltinName {
    type Err = NotBuiltin;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        builtin_spec(s)
            .map(|spec| spec.builtin)
            .ok_or_else(|| NotBuiltin(s.to_owned()))
    }
}

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
pub const RESERVED_TOOL_NAMES: &[&str] = &[
    BuiltinName::Task.as_str(),
    BuiltinName::MultiTask.as_str(),
    BuiltinName::FindTool.as_str(),
    BuiltinName::Skill.as_str(),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_variant_and_entry() {
        assert_eq!(BuiltinName::ALL.len(), DEFAULT_BUILTINS.len());
        for (&name, spec) in BuiltinName::ALL.iter().zip(DEFAULT_BUILTINS) {
            assert_eq!(name.as_str().parse::<BuiltinName>(), Ok(name));
            assert_eq!(name.spec(), spec);
            assert_eq!(name.tool_name().as_str(), spec.name);
        }
        assert_eq!(
            "Agent".parse::<BuiltinName>(),
            Err(NotBuiltin("Agent".to_owned()))
        );
    }
}
