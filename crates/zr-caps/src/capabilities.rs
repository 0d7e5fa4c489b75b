//! Agent capabilities (agent-local, never inherited) and top-level options.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zr_types::{SkillName, ToolDefinition};

use crate::pattern::ToolPattern;

/// What one agent may use beyond the runtime's builtins.
///
/// Each field is an `Option` so that "unset" and "empty" differ: for the
/// root an unset field falls back to the top-level options (C1); for a
/// subagent an unset list is empty (C2), and an unset allow list means "no
/// constraint on builtins". Nothing here is ever inherited from a parent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentCapabilities {
    /// MCP tools, already materialised as definitions.
    pub connection_tools: Option<Vec<Arc<ToolDefinition>>>,
    /// Tools the host defined in code.
    pub custom_tools: Option<Vec<Arc<ToolDefinition>>>,
    /// Names of the registry's skills the agent gets.
    pub skills: Option<Vec<SkillName>>,
    /// The allow list: constrains builtins only.
    pub allowed_tools: Option<Vec<ToolPattern>>,
    /// The deny list: applies to the whole pool.
    pub disallowed_tools: Option<Vec<ToolPattern>>,
}

impl AgentCapabilities {
    /// `self` with every field that `over` sets replaced by `over`'s value
    /// (the field-by-field `query()` override of C1).
    #[must_use]
    pub fn overridden_by(&self, over: &Self) -> Self {
        Self {
            connection_tools: over
                .connection_tools
                .clone()
                .or_else(|| self.connection_tools.clone()),
            custom_tools: over
                .custom_tools
                .clone()
                .or_else(|| self.custom_tools.clone()),
            skills: over.skills.clone().or_else(|| self.skills.clone()),
            allowed_tools: over
                .allowed_tools
                .clone()
                .or_else(|| self.allowed_tools.clone()),
            disallowed_tools: over
                .disallowed_tools
                .clone()
                .or_else(|| self.disallowed_tools.clone()),
        }
    }
}

/// The top-level options of a session: the host's tool sources and lists.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentOptions {
    /// Tools the host defined in code, for the root.
    pub custom_tools: Vec<Arc<ToolDefinition>>,
    /// The top-level MCP pool's tools, for the root.
    pub mcp_tools: Vec<Arc<ToolDefinition>>,
    /// The root's allow list when its capabilities set none.
    pub allowed_tools: Option<Vec<ToolPattern>>,
    /// Session-wide deny list: applies to the root **and every subagent**,
    /// and capabilities can add to it but never lift it.
    pub disallowed_tools: Option<Vec<ToolPattern>>,
}

/// Which of the registry's skills an agent has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillView {
    /// Every skill of the registry (the root with no `skills` set).
    All,
    /// Exactly these, in this order.
    Only(Vec<SkillName>),
}

/// A list of tool definitions that agents and resolved pools share: one
/// reference count for the list, not one per tool. A pool of 20,000
/// tools holds the lists it was resolved from and positions into them, so
/// resolving and dropping it touches no definition's count
/// (`Vec::into` or `collect` make one).
pub type ToolList = Arc<[Arc<ToolDefinition>]>;

/// The capabilities the resolver works from: every fallback applied, every
/// list concrete.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectiveCapabilities {
    /// Custom tools, in source order (top level first). Names may repeat:
    /// R1 keeps the first position and the last definition, and records it.
    pub custom_tools: ToolList,
    /// Connection tools, in source order (top level first); names may
    /// repeat, as for `custom_tools`.
    pub connection_tools: ToolList,
    /// The skills view.
    pub skills: SkillView,
    /// The allow list for builtins; `None` is no constraint.
    pub allowed_tools: Option<Vec<ToolPattern>>,
    /// The agent's own deny list.
    pub disallowed_tools: Vec<ToolPattern>,
    /// The session-wide deny list from [`AgentOptions::disallowed_tools`].
    pub session_disallowed_tools: Vec<ToolPattern>,
}

/// The plain-data part of the runtime environment, shared by every agent of
/// a session: model id, working directory, child-process environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeSettings {
    /// The model id agents use unless their definition names another.
    pub model: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// The environment of child processes (only these variables).
    pub env: BTreeMap<String, String>,
}
