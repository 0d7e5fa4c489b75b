//! What a 2.x -> 3.0 migration changed, one sentence each.

use std::fmt;

use zr_types::{AgentName, SkillName, ToolName};

use crate::definition::AgentType;
use crate::pattern::ToolPattern;
use crate::permission::PermissionMode;

/// One change of meaning made by the migration (rule C5).
///
/// Its `Display` is a sentence for the person who reviews the migration.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MigrationChange {
    /// A tool of the environment was not matched by its `allowedTools`, so
    /// no agent could use it in 2.x; it is left out.
    HiddenByEnvironmentAllowList {
        /// The tool.
        tool: ToolName,
    },
    /// Entries of the environment's `allowedTools` that named custom or MCP
    /// tools were taken off the 3.0 allow list, which constrains builtins
    /// only; the tools they allowed stay in the options' tool lists.
    EnvironmentAllowListBuiltinsOnly {
        /// The entries taken off.
        entries: Vec<ToolPattern>,
    },
    /// The environment's `disallowedTools` is the session-wide deny list.
    EnvironmentDenyIsSessionWide {
        /// Its entries.
        patterns: Vec<ToolPattern>,
    },
    /// `availableSkills` became the root's `skills`.
    AvailableSkillsRootOnly {
        /// The skills.
        skills: Vec<SkillName>,
    },
    /// A definition's `tools` key is its allow list, `allowed_tools`.
    ToolsKeyRenamed {
        /// The agent.
        agent: AgentName,
    },
    /// The agent inherited the environment's custom tools; they are now
    /// listed in its capabilities.
    InheritedCustomTools {
        /// The agent.
        agent: AgentName,
        /// The tools now listed.
        tools: Vec<ToolName>,
    },
    /// The agent inherited the environment's MCP tools; they are now listed
    /// in its capabilities.
    InheritedMcpTools {
        /// The agent.
        agent: AgentName,
        /// The tools now listed.
        tools: Vec<ToolName>,
    },
    /// The agent's allow list hid some inherited tools in 2.x; they are not
    /// granted.
    HiddenByAgentAllowList {
        /// The agent.
        agent: AgentName,
        /// The tools left out.
        tools: Vec<ToolName>,
    },
    /// Entries of the agent's `allowedTools` that named custom or MCP tools
    /// were taken off its allow list, which constrains builtins only in 3.0.
    AgentAllowListBuiltinsOnly {
        /// The agent.
        agent: AgentName,
        /// The entries taken off.
        entries: Vec<ToolPattern>,
        /// The tools they allowed, now granted through its tool lists.
        granted: Vec<ToolName>,
    },
    /// The environment's allow list constrained the agent in 2.x; it is now
    /// set on the agent's capabilities.
    EnvironmentAllowListCopied {
        /// The agent.
        agent: AgentName,
        /// Its allow list now.
        patterns: Vec<ToolPattern>,
    },
    /// Both the environment's and the agent's allow lists constrained it in
    /// 2.x; its 3.0 allow list is their intersection.
    AllowListsIntersected {
        /// The agent.
        agent: AgentName,
        /// Its allow list now.
        patterns: Vec<ToolPattern>,
    },
    /// The agent inherited `availableSkills`; they are now listed.
    InheritedSkills {
        /// The agent.
        agent: AgentName,
        /// The skills now listed.
        skills: Vec<SkillName>,
    },
    /// The agent saw every registry skill in 2.x, which a 3.0 subagent
    /// cannot; it gets none unless they are listed.
    SkillsNoLongerInherited {
        /// The agent.
        agent: AgentName,
    },
    /// The agent is named like a built-in kind (`explore`, `plan`,
    /// `verification`, `general-purpose`), so it now has that kind; 2.x had
    /// no kinds. An `explore` or `plan` agent keeps only read-only tools and
    /// builtin Bash (R6); the other kinds resolve like a custom agent.
    BuiltinKindFromName {
        /// The agent.
        agent: AgentName,
        /// The kind it now has.
        kind: AgentType,
    },
    /// The agent declares a mode looser than `default`; 3.0 clamps it by the
    /// parent's (C4).
    PermissionModeClamped {
        /// The agent.
        agent: AgentName,
        /// Its declared mode.
        mode: PermissionMode,
    },
}

struct List<'a, T>(&'a [T]);

impl<T: fmt::Display> fmt::Display for List<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Display for MigrationChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HiddenByEnvironmentAllowList { tool } => write!(
                f,
                "tool '{tool}' was not matched by the environment allowedTools, so no agent could use it in 2.x; it is left out of the 3.0 options"
            ),
            Self::EnvironmentAllowListBuiltinsOnly { entries } => write!(
                f,
                "environment allowedTools constrained every tool in 2.x; in 3.0 options.allowed_tools constrains the root's builtins only, so its entries {} that named custom or MCP tools were taken off it (the tools they allowed stay in options.custom_tools / options.mcp_tools)",
                List(entries)
            ),
            Self::EnvironmentDenyIsSessionWide { patterns } => write!(
                f,
                "environment disallowedTools {} is now options.disallowed_tools, the session-wide deny list: it applies to the root and every subagent, and no agent's capabilities can lift it",
                List(patterns)
            ),
            Self::AvailableSkillsRootOnly { skills } => write!(
                f,
                "availableSkills {} now applies to the root only (root capabilities.skills); a subagent gets no skills unless its own skills lists them",
                List(skills)
            ),
            Self::ToolsKeyRenamed { agent } => write!(
                f,
                "agent '{agent}': 'tools' is now capabilities.allowed_tools"
            ),
            Self::InheritedCustomTools { agent, tools } => write!(
                f,
                "agent '{agent}' inherited custom tools {} from the environment in 2.x; they are now listed in its capabilities.custom_tools explicitly",
                List(tools)
            ),
            Self::InheritedMcpTools { agent, tools } => write!(
                f,
                "agent '{agent}' inherited MCP tools {} from the environment in 2.x; they are now listed in its capabilities.connection_tools explicitly",
                List(tools)
            ),
            Self::HiddenByAgentAllowList { agent, tools } => write!(
                f,
                "agent '{agent}': its allowedTools hid the environment's tools {} in 2.x; they are not granted in 3.0",
                List(tools)
            ),
            Self::AgentAllowListBuiltinsOnly {
                agent,
                entries,
                granted,
            } => {
                write!(
                    f,
                    "agent '{agent}': definition-level allowedTools constrained every tool in 2.x; in 3.0 the allow list constrains builtins only, so its entries {} were taken off it",
                    List(entries)
                )?;
                if granted.is_empty() {
                    f.write_str(" (they matched no tool the agent had)")
                } else {
                    write!(
                        f,
                        " and the tools they allowed, {}, are granted through its custom_tools / connection_tools",
                        List(granted)
                    )
                }
            }
            Self::EnvironmentAllowListCopied { agent, patterns } => write!(
                f,
                "agent '{agent}' was constrained by the environment allowedTools in 2.x; options.allowed_tools applies to the root only in 3.0, so its builtin entries {} are now set on the agent's capabilities.allowed_tools",
                List(patterns)
            ),
            Self::AllowListsIntersected { agent, patterns } => write!(
                f,
                "agent '{agent}' was constrained by both the environment allowedTools and its own in 2.x; its 3.0 allowed_tools is their intersection over builtins, {}",
                List(patterns)
            ),
            Self::InheritedSkills { agent, skills } => write!(
                f,
                "agent '{agent}' inherited availableSkills {} in 2.x; they are now listed in its capabilities.skills explicitly",
                List(skills)
            ),
            Self::SkillsNoLongerInherited { agent } => write!(
                f,
                "agent '{agent}' saw every registry skill in 2.x (availableSkills was unset); a 3.0 subagent gets no skills unless they are listed, so add the ones it needs to its capabilities.skills"
            ),
            Self::BuiltinKindFromName { agent, kind } => match kind {
                AgentType::Explore | AgentType::Plan => write!(
                    f,
                    "agent '{agent}' now has the built-in kind {kind}: it keeps only read-only tools and builtin Bash (R6); rename it to keep 2.x behaviour"
                ),
                AgentType::GeneralPurpose | AgentType::Verification | AgentType::Custom(_) => {
                    write!(
                        f,
                        "agent '{agent}' now has the built-in kind {kind} (2.x had no kinds); its tools are unchanged, since the resolver gives this kind no rule of its own, but rename it if it should stay a custom kind"
                    )
                }
            },
            Self::PermissionModeClamped { agent, mode } => write!(
                f,
                "agent '{agent}' declares permissionMode {mode}; in 3.0 a subagent's mode is the stricter of its parent's and its own, so it runs in {mode} only under a parent that has it"
            ),
        }
    }
}
