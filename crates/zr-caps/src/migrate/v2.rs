//! The 2.x configuration shapes, as 2.x read them from JSON (camelCase keys).
//!
//! Only [`crate::migrate_v2`] and [`crate::migrate`] give these meaning; the
//! 2.x semantics they assume are:
//!
//! - the [`AgentEnvironment`] was inherited by every agent: its
//!   `customTools` and `mcpTools` went to the root and, unless a definition
//!   said `inheritTools: false`, to every subagent;
//! - `allowedTools` (of the environment and of a definition; `tools` is the
//!   older spelling) constrained **every** tool, builtin, custom and MCP,
//!   and both lists applied to a subagent;
//! - `disallowedTools` removed tools from the whole pool; the environment's
//!   list applied to every agent;
//! - a subagent without `skills` got the environment's `availableSkills`
//!   (every registry skill when that was unset).
//!
//! Every key not listed here is refused by name.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;
use zr_types::{AgentName, ServerName, SkillName, ToolName};

use crate::pattern::ToolPattern;
use crate::permission::PermissionMode;

/// A whole 2.x configuration: `{"environment": ..., "agents": {name: ...}}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Document {
    /// The environment every agent inherited.
    pub environment: AgentEnvironment,
    /// The subagent definitions, in file order.
    #[serde(default, deserialize_with = "zr_types::ordered_entries")]
    pub agents: Vec<(AgentName, AgentDefinition)>,
}

/// The 2.x environment: runtime settings mixed with inherited tool sources.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentEnvironment {
    /// The model id.
    pub model: String,
    /// The working directory (`.` when unset).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Environment variables of child processes.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Tools the host defined, inherited by every agent.
    #[serde(default)]
    pub custom_tools: Vec<CustomTool>,
    /// MCP tools, inherited by every agent.
    #[serde(default)]
    pub mcp_tools: Vec<McpTool>,
    /// Skills of the registry that agents could use; unset is all of them.
    #[serde(default)]
    pub available_skills: Option<Vec<SkillName>>,
    /// Allow list over every tool, for every agent.
    #[serde(default)]
    pub allowed_tools: Option<Vec<ToolPattern>>,
    /// Deny list over every tool, for every agent.
    #[serde(default)]
    pub disallowed_tools: Option<Vec<ToolPattern>>,
}

/// A 2.x custom tool.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomTool {
    /// Its name.
    pub name: ToolName,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its input's JSON Schema (an empty object schema when unset).
    #[serde(default)]
    pub input_schema: Option<Value>,
    /// Whether it only reads.
    #[serde(default)]
    pub read_only_hint: bool,
}

/// A 2.x MCP tool, already listed from its server.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpTool {
    /// The server.
    pub server: ServerName,
    /// The tool's name on that server.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its input's JSON Schema (an empty object schema when unset).
    #[serde(default)]
    pub input_schema: Option<Value>,
    /// MCP tool annotations.
    #[serde(default)]
    pub annotations: Option<McpAnnotations>,
}

/// MCP tool annotations as 2.x stored them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpAnnotations {
    /// A display title (not carried over).
    #[serde(default)]
    pub title: Option<String>,
    /// `readOnlyHint`.
    #[serde(default)]
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`.
    #[serde(default)]
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`.
    #[serde(default)]
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`.
    #[serde(default)]
    pub open_world_hint: Option<bool>,
}

/// A 2.x subagent definition.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentDefinition {
    /// When to use it.
    pub description: String,
    /// Its system prompt.
    pub prompt: String,
    /// The older spelling of `allowedTools`.
    #[serde(default)]
    pub tools: Option<Vec<ToolPattern>>,
    /// Allow list over every tool.
    #[serde(default)]
    pub allowed_tools: Option<Vec<ToolPattern>>,
    /// Deny list over every tool.
    #[serde(default)]
    pub disallowed_tools: Option<Vec<ToolPattern>>,
    /// `inherit` or a model id.
    #[serde(default)]
    pub model: Option<String>,
    /// Its permission mode.
    #[serde(default)]
    pub permission_mode: Option<PermissionMode>,
    /// Its turn limit.
    #[serde(default)]
    pub max_turns: Option<NonZeroU32>,
    /// Whether it inherited the environment's custom and MCP tools.
    #[serde(default = "yes")]
    pub inherit_tools: bool,
    /// Its skills; unset inherited `availableSkills`.
    #[serde(default)]
    pub skills: Option<Vec<SkillName>>,
}

fn yes() -> bool {
    true
}
