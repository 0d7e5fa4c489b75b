//! The 2.x -> 3.0 migration (rule C5): nothing is inherited after it.
//!
//! 2.x mixed runtime settings and tool sources in one inherited
//! `AgentEnvironment`. 3.0 splits them into [`RuntimeSettings`] (still
//! inherited), [`AgentOptions`] (the root's tool sources, and the
//! session-wide deny list) and per-agent [`AgentCapabilities`] (never
//! inherited). The migration keeps 2.x behaviour where 3.0 can express it,
//! by writing out what used to be inherited, and reports every change of
//! meaning as a [`MigrationChange`].

mod change;
pub mod v2;

use std::path::PathBuf;
use std::sync::Arc;

use zr_types::{Annotations, ToolDefinition, ToolName, ToolOrigin};

use crate::capabilities::{AgentCapabilities, AgentOptions, RuntimeSettings};
use crate::definition::{AgentDefinition, AgentType, ModelChoice};
use crate::error::MigrateError;
use crate::pattern::{PatternKind, ToolPattern};
use crate::permission::PermissionMode;

pub use change::MigrationChange;

/// A 2.x configuration in 3.0 terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Migration {
    /// Model, working directory and environment variables.
    pub settings: RuntimeSettings,
    /// The root's tool sources and lists; the session-wide deny list.
    pub options: AgentOptions,
    /// The root's capabilities.
    pub root: AgentCapabilities,
    /// The subagents, in file order, each with everything it gets listed.
    pub agents: Vec<AgentDefinition>,
    /// Every change of meaning, in the order they were made.
    pub changes: Vec<MigrationChange>,
}

/// Reads a 2.x configuration (JSON) and converts it with [`migrate`].
///
/// ```
/// let json = r#"{"environment": {"model": "m", "customTools": [{"name": "search"}]},
///               "agents": {"scout": {"description": "d", "prompt": "p"}}}"#;
/// let migration = zr_caps::migrate_v2(json).unwrap();
/// let scout = &migration.agents[0].capabilities;
/// assert_eq!(scout.custom_tools.as_ref().unwrap()[0].name.as_str(), "search");
/// assert!(!migration.changes.is_empty());
/// ```
///
/// # Errors
///
/// [`MigrateError::Json`] for a syntax error, a missing field, a wrong type
/// or an unknown key (named, with its JSON path, line and column); the
/// others as [`migrate`] says.
pub fn migrate_v2(json: &str) -> Result<Migration, MigrateError> {
    let mut de = serde_json::Deserializer::from_str(json);
    let document: v2::Document =
        serde_path_to_error::deserialize(&mut de).map_err(|e| MigrateError::Json {
            path: e.path().to_string(),
            source: e.into_inner(),
        })?;
    de.end().map_err(|source| MigrateError::Json {
        path: ".".to_owned(),
        source,
    })?;
    migrate(&document)
}

/// Converts a 2.x document to 3.0.
///
/// # Errors
///
/// [`MigrateError::McpToolName`] when an MCP tool's name is empty;
/// [`MigrateError::ConflictingAllowLists`] when a definition sets both
/// `tools` and `allowedTools`.
pub fn migrate(document: &v2::Document) -> Result<Migration, MigrateError> {
    let env = &document.environment;
    let mut changes = Vec::new();

    let custom: Vec<Arc<ToolDefinition>> = env.custom_tools.iter().map(custom_tool).collect();
    let mcp = env
        .mcp_tools
        .iter()
        .map(mcp_tool)
        .collect::<Result<Vec<_>, _>>()?;
    let named: Vec<ToolName> = names(&custom).into_iter().chain(names(&mcp)).collect();

    // The environment's allow list hid custom and MCP tools from everyone.
    let env_allows = |t: &Arc<ToolDefinition>| {
        env.allowed_tools
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|p| p.matches(t)))
    };
    let (custom, hidden): (Vec<_>, Vec<_>) = custom.into_iter().partition(env_allows);
    let (mcp, hidden_mcp): (Vec<_>, Vec<_>) = mcp.into_iter().partition(env_allows);
    for tool in hidden.iter().chain(&hidden_mcp) {
        changes.push(MigrationChange::HiddenByEnvironmentAllowList {
            tool: tool.name.clone(),
        });
    }
    let env_allow = env.allowed_tools.as_ref().map(|allow| {
        let (builtin, moved) = split_allow_list(allow, &named);
        if !moved.is_empty() {
            changes.push(MigrationChange::EnvironmentAllowListBuiltinsOnly { entries: moved });
        }
        builtin
    });
    if let Some(deny) = env.disallowed_tools.as_ref().filter(|d| !d.is_empty()) {
        changes.push(MigrationChange::EnvironmentDenyIsSessionWide {
            patterns: deny.clone(),
        });
    }
    if let Some(skills) = &env.available_skills {
        changes.push(MigrationChange::AvailableSkillsRootOnly {
            skills: skills.clone(),
        });
    }

    let context = Context {
        env,
        custom: &custom,
        mcp: &mcp,
        named: &named,
        env_allow: env_allow.as_deref(),
    };
    let agents = document
        .agents
        .iter()
        .map(|(name, def)| context.agent(name, def, &mut changes))
        .collect::<Result<Vec<_>, _>>()?;

    Ok(Migration {
        settings: RuntimeSettings {
            model: env.model.clone(),
            cwd: env.cwd.clone().unwrap_or_else(|| PathBuf::from(".")),
            env: env.env.clone(),
        },
        root: AgentCapabilities {
            skills: env.available_skills.clone(),
            ..AgentCapabilities::default()
        },
        options: AgentOptions {
            custom_tools: custom,
            mcp_tools: mcp,
            allowed_tools: env_allow,
            disallowed_tools: env.disallowed_tools.clone(),
        },
        agents,
        changes,
    })
}

/// What every agent's conversion needs from the environment.
struct Context<'a> {
    env: &'a v2::AgentEnvironment,
    /// The environment's custom tools its allow list let through.
    custom: &'a [Arc<ToolDefinition>],
    /// The environment's MCP tools its allow list let through.
    mcp: &'a [Arc<ToolDefinition>],
    /// Every custom and MCP tool name of the environment.
    named: &'a [ToolName],
    /// The builtin part of the environment's allow list.
    env_allow: Option<&'a [ToolPattern]>,
}

impl Context<'_> {
    fn agent(
        &self,
        name: &zr_types::AgentName,
        def: &v2::AgentDefinition,
        changes: &mut Vec<MigrationChange>,
    ) -> Result<AgentDefinition, MigrateError> {
        let agent = || name.clone();
        let kind = AgentType::for_name(name);
        if !matches!(kind, AgentType::Custom(_)) {
            changes.push(MigrationChange::BuiltinKindFromName {
                agent: agent(),
                kind: kind.clone(),
            });
        }
        let own_allow = match (&def.tools, &def.allowed_tools) {
            (Some(_), Some(_)) => {
                return Err(MigrateError::ConflictingAllowLists { agent: agent() });
            }
            (Some(tools), None) => {
                changes.push(MigrationChange::ToolsKeyRenamed { agent: agent() });
                Some(tools)
            }
            (None, allow) => allow.as_ref(),
        };

        // Inherited tools, filtered by the agent's own allow list as in 2.x.
        let mut granted: Vec<Arc<ToolDefinition>> = Vec::new();
        let mut inherit = |pool: &[Arc<ToolDefinition>], is_mcp: bool| {
            if !def.inherit_tools || pool.is_empty() {
                return None;
            }
            let (kept, hidden): (Vec<_>, Vec<_>) = pool
                .iter()
                .cloned()
                .partition(|t| own_allow.is_none_or(|allow| allow.iter().any(|p| p.matches(t))));
            if !hidden.is_empty() {
                changes.push(MigrationChange::HiddenByAgentAllowList {
                    agent: agent(),
                    tools: names(&hidden),
                });
            }
            if kept.is_empty() {
                return None;
            }
            let tools = names(&kept);
            changes.push(if is_mcp {
                MigrationChange::InheritedMcpTools {
                    agent: agent(),
                    tools,
                }
            } else {
                MigrationChange::InheritedCustomTools {
                    agent: agent(),
                    tools,
                }
            });
            granted.extend(kept.iter().cloned());
            Some(kept)
        };
        let custom_tools = inherit(self.custom, false);
        let connection_tools = inherit(self.mcp, true);

        let own_builtin = own_allow.map(|allow| {
            let (builtin, moved) = split_allow_list(allow, self.named);
            if !moved.is_empty() {
                let granted = granted
                    .iter()
                    .filter(|t| moved.iter().any(|p| p.matches(t)))
                    .map(|t| t.name.clone())
                    .collect();
                changes.push(MigrationChange::AgentAllowListBuiltinsOnly {
                    agent: agent(),
                    entries: moved,
                    granted,
                });
            }
            builtin
        });
        let allowed_tools = match (self.env_allow, own_builtin) {
            (None, own) => own,
            (Some(env), None) => {
                changes.push(MigrationChange::EnvironmentAllowListCopied {
                    agent: agent(),
                    patterns: env.to_vec(),
                });
                Some(env.to_vec())
            }
            (Some(env), Some(own)) => {
                let patterns = intersect(&own, env);
                changes.push(MigrationChange::AllowListsIntersected {
                    agent: agent(),
                    patterns: patterns.clone(),
                });
                Some(patterns)
            }
        };

        let skills = match (&def.skills, &self.env.available_skills) {
            (Some(own), _) => Some(own.clone()),
            (None, Some(available)) => {
                changes.push(MigrationChange::InheritedSkills {
                    agent: agent(),
                    skills: available.clone(),
                });
                Some(available.clone())
            }
            (None, None) => {
                changes.push(MigrationChange::SkillsNoLongerInherited { agent: agent() });
                None
            }
        };

        if let Some(mode) = def.permission_mode.filter(|m| *m > PermissionMode::Default) {
            changes.push(MigrationChange::PermissionModeClamped {
                agent: agent(),
                mode,
            });
        }

        let mut out = AgentDefinition::new(name.clone(), &def.description, &def.prompt)
            .with_type(kind)
            .with_capabilities(AgentCapabilities {
                connection_tools,
                custom_tools,
                skills,
                allowed_tools,
                disallowed_tools: def.disallowed_tools.clone(),
            });
        out.model = def
            .model
            .as_deref()
            .map_or(ModelChoice::Inherit, ModelChoice::parse);
        out.permission_mode = def.permission_mode;
        out.max_turns = def.max_turns.map(std::num::NonZeroU32::get);
        Ok(out)
    }
}

fn custom_tool(tool: &v2::CustomTool) -> Arc<ToolDefinition> {
    let mut def = ToolDefinition::new(tool.name.clone(), &tool.description, ToolOrigin::Custom);
    if let Some(schema) = &tool.input_schema {
        def = def.with_schema(schema.clone());
    }
    if tool.read_only_hint {
        def = def.with_annotations(Annotations::read_only());
    }
    Arc::new(def)
}

fn mcp_tool(tool: &v2::McpTool) -> Result<Arc<ToolDefinition>, MigrateError> {
    let name =
        ToolName::mcp(&tool.server, &tool.name).map_err(|source| MigrateError::McpToolName {
            server: tool.server.clone(),
            source,
        })?;
    let hints = tool.annotations.clone().unwrap_or_default();
    let origin = ToolOrigin::Connection {
        server: tool.server.clone(),
    };
    let mut def =
        ToolDefinition::new(name, &tool.description, origin).with_annotations(Annotations {
            read_only: hints.read_only_hint.unwrap_or(false),
            destructive: hints.destructive_hint,
            idempotent: hints.idempotent_hint,
            open_world: hints.open_world_hint,
        });
    if let Some(schema) = &tool.input_schema {
        def = def.with_schema(schema.clone());
    }
    Ok(Arc::new(def))
}

fn names(tools: &[Arc<ToolDefinition>]) -> Vec<ToolName> {
    tools.iter().map(|t| t.name.clone()).collect()
}

/// Splits a 2.x allow list into the entries that concern builtins and the
/// ones that only named custom or MCP tools (by exact name, `mcp__server`
/// or an `mcp__` prefix).
fn split_allow_list(
    allow: &[ToolPattern],
    named: &[ToolName],
) -> (Vec<ToolPattern>, Vec<ToolPattern>) {
    allow.iter().cloned().partition(|p| match p.kind() {
        PatternKind::All => true,
        PatternKind::Server(_) => false,
        PatternKind::Prefix(prefix) => !prefix.starts_with("mcp__"),
        PatternKind::Exact(name) => {
            !name.starts_with("mcp__") && !named.iter().any(|n| n.as_str() == name)
        }
    })
}

/// The patterns matching, among builtin names, exactly what both lists
/// match.
fn intersect(first: &[ToolPattern], second: &[ToolPattern]) -> Vec<ToolPattern> {
    let mut out: Vec<ToolPattern> = Vec::new();
    for p in first {
        for q in second {
            if let Some(both) = meet(p, q)
                && !out.contains(&both)
            {
                out.push(both);
            }
        }
    }
    out
}

/// The pattern matching the builtin names both `p` and `q` match, if any
/// (two patterns' intersection is always one of them, or nothing).
fn meet(p: &ToolPattern, q: &ToolPattern) -> Option<ToolPattern> {
    use PatternKind::{All, Exact, Prefix, Server};
    match (p.kind(), q.kind()) {
        (Server(_), _) | (_, Server(_)) => None,
        (All, _) => Some(q.clone()),
        (_, All) => Some(p.clone()),
        (Exact(name), _) => q.matches_name(name).then(|| p.clone()),
        (_, Exact(name)) => p.matches_name(name).then(|| q.clone()),
        (Prefix(a), Prefix(b)) => {
            if a.starts_with(b) {
                Some(p.clone())
            } else if b.starts_with(a) {
                Some(q.clone())
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
