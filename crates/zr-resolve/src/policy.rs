//! The resolver's policy: lazy loading, derived and background lists, delegation.

use zr_types::{BuiltinName, ToolName};

/// When connection (MCP) tools are deferred to `FindTool` (R8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum LazyPolicy {
    /// Every connection tool is deferred (unless its own setting says not).
    #[default]
    Always,
    /// No connection tool is deferred (unless its own setting says so).
    Never,
    /// Connection tools are deferred once their serialised definitions
    /// together exceed this many bytes.
    Auto {
        /// The limit in bytes.
        bytes: usize,
    },
}

/// What the resolver applies beyond an agent's capabilities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvePolicy {
    /// When connection tools are deferred.
    pub lazy: LazyPolicy,
    /// Tools no derived agent gets, whatever their origin (R4).
    pub derived_blocklist: Vec<ToolName>,
    /// The only builtins a background derived agent keeps (R5).
    pub background_allowlist: Vec<ToolName>,
    /// Whether the root may delegate at all (R7).
    pub delegation: bool,
    /// How many levels of subagents a session may have (`[subagents]
    /// max_depth`, 1 by default: only the root delegates). R4 keeps Task
    /// and MultiTask for an agent whose level is below it (and below its
    /// own [`crate::Depth::ceiling`]).
    pub max_depth: u32,
}

fn names(list: &[BuiltinName]) -> Vec<ToolName> {
    list.iter().map(|n| n.tool_name()).collect()
}

impl ResolvePolicy {
    /// The default derived block list: asking the user, changing
    /// configuration and scheduling work are beyond one delegated task.
    #[must_use]
    pub fn default_derived_blocklist() -> Vec<ToolName> {
        names(&[
            BuiltinName::AskUserQuestion,
            BuiltinName::Config,
            BuiltinName::CronCreate,
            BuiltinName::CronDelete,
            BuiltinName::CronList,
        ])
    }

    /// The default background allow list.
    #[must_use]
    pub fn default_background_allowlist() -> Vec<ToolName> {
        names(&[
            BuiltinName::Bash,
            BuiltinName::Read,
            BuiltinName::Write,
            BuiltinName::Edit,
            BuiltinName::Glob,
            BuiltinName::Grep,
            BuiltinName::WebFetch,
            BuiltinName::WebSearch,
            BuiltinName::TodoWrite,
            BuiltinName::Skill,
            BuiltinName::FindTool,
        ])
    }
}

impl Default for ResolvePolicy {
    fn default() -> Self {
        Self {
            lazy: LazyPolicy::Always,
            derived_blocklist: Self::default_derived_blocklist(),
            background_allowlist: Self::default_background_allowlist(),
            delegation: true,
            max_depth: 1,
        }
    }
}
