//! Hot reload for `zr run` and `zr resume`: the engine asks before each
//! model request of the root whether the agent types, skills or
//! instruction files changed, and this source answers from zr-skills'
//! registries, whose `view()` re-reads only the files that changed and
//! returns the same `Arc` when none did (so an unchanged project costs one
//! stat per file and three pointer comparisons).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use zr_caps::AgentDefinition;
use zr_engine::{AgentTypes, AgentTypesSource};
use zr_mcp::{McpTool, ServerConfig};
use zr_skills::{
    AgentRegistry, AgentSource, AgentTypeEntry, AgentTypesView, InstructionRegistry,
    InstructionsView, Scope, SkillRegistry, SkillsView,
};
use zr_types::{AgentName, SkillName, ToolDefinition};

use crate::project::Project;

/// Each MCP server's tool definitions, by server name, and which servers
/// an agent file defines inline (those go to agents of that type only).
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerDefinitions {
    tools: BTreeMap<String, Vec<Arc<ToolDefinition>>>,
    /// Inline servers: server name -> the agent type whose file defines it.
    owners: BTreeMap<String, AgentName>,
}

/// The definitions of `tools`, by server; `inline` are the servers agent
/// files define, with their types.
pub(crate) fn server_definitions(
    tools: &BTreeMap<String, Vec<McpTool>>,
    inline: &[(AgentName, ServerConfig)],
) -> ServerDefinitions {
    ServerDefinitions {
        tools: tools
            .iter()
            .map(|(server, tools)| {
                let definitions = tools.iter().map(|t| Arc::clone(&t.definition)).collect();
                (server.clone(), definitions)
            })
            .collect(),
        owners: inline
            .iter()
            .map(|(agent, config)| (config.name.to_string(), agent.clone()))
            .collect(),
    }
}

/// The names of the project's own types (files in its roots), in the
/// order given: the type listing names them first.
pub(crate) fn project_types(types: &[Arc<AgentTypeEntry>]) -> Vec<AgentName> {
    types
        .iter()
        .filter(|entry| {
            matches!(
                entry.source,
                AgentSource::File {
                    scope: Scope::Project,
                    ..
                }
            )
        })
        .map(|entry| entry.name().clone())
        .collect()
}

/// The names of the project's own skills (found in its roots), by name:
/// the `Skill` listing names them first.
pub(crate) fn project_skills(skills: &SkillsView) -> Vec<SkillName> {
    skills
        .skills()
        .iter()
        .filter(|skill| skill.root.scope == Scope::Project)
        .map(|skill| skill.name().clone())
        .collect()
}

/// The subagent type of `entry` as the session runs it: the servers it
/// names (`mcpServers`) become its connection tools; a server another
/// type's file defines inline is not among them (it is that type's own).
pub(crate) fn type_definition(
    entry: &AgentTypeEntry,
    servers: &ServerDefinitions,
) -> AgentDefinition {
    let mut definition: AgentDefinition = (*entry.definition).clone();
    if inherits_every_tool(entry) {
        // Claude Code's reading of a file without `tools`: every tool,
        // MCP included (the `.mcp.json` servers'; inline ones stay their
        // own types').
        let every: Vec<Arc<ToolDefinition>> = servers
            .tools
            .iter()
            .filter(|(name, _)| !servers.owners.contains_key(name.as_str()))
            .flat_map(|(_, tools)| tools.iter().map(Arc::clone))
            .collect();
        definition.capabilities.connection_tools = Some(every);
    }
    if let Some(names) = &definition.mcp_servers {
        let tools: Vec<Arc<ToolDefinition>> = names
            .iter()
            .filter(|s| {
                servers
                    .owners
                    .get(s.as_str())
                    .is_none_or(|owner| owner == &definition.name)
            })
            .flat_map(|s| servers.tools.get(s.as_str()).into_iter().flatten())
            .map(Arc::clone)
            .collect();
        let mut connection = definition
            .capabilities
            .connection_tools
            .take()
            .unwrap_or_default();
        connection.extend(tools);
        definition.capabilities.connection_tools = Some(connection);
    }
    definition
}

/// Whether `entry` is a Claude Code agent file (in a `.claude/agents`
/// folder) that says nothing of its tools (no `tools`, no `mcpServers`):
/// as in Claude Code, it gets every tool, the `.mcp.json` servers' too. A
/// `.zr/agents` file without `tools` gets the builtins only, and MCP
/// tools only of the servers it names (no fallback).
pub(crate) fn inherits_every_tool(entry: &AgentTypeEntry) -> bool {
    let AgentSource::File { path, .. } = &entry.source else {
        return false;
    };
    let claude = path.ancestors().any(|dir| dir.ends_with(".claude/agents"));
    claude
        && entry.definition.capabilities.allowed_tools.is_none()
        && entry.definition.mcp_servers.is_none()
}

/// The views last seen, compared by pointer.
#[derive(Debug)]
struct Seen {
    agents: Arc<AgentTypesView>,
    skills: Arc<SkillsView>,
    instructions: Arc<InstructionsView>,
}

/// zr-skills' registries as the engine's [`AgentTypesSource`].
#[derive(Debug)]
pub(crate) struct RegistrySource {
    agents: Arc<AgentRegistry>,
    skills: Arc<SkillRegistry>,
    instructions: Arc<InstructionRegistry>,
    servers: ServerDefinitions,
    root: PathBuf,
    seen: Mutex<Seen>,
}

impl RegistrySource {
    /// A source over `project`'s registries; what the session was built
    /// from (the project's views) is the baseline.
    pub(crate) fn new(project: &Project, servers: ServerDefinitions) -> Self {
        Self {
            agents: Arc::clone(&project.agent_registry),
            skills: Arc::clone(&project.skills),
            instructions: Arc::clone(&project.instructions),
            servers,
            root: project.root.clone(),
            seen: Mutex::new(Seen {
                agents: Arc::clone(&project.agents),
                skills: Arc::clone(&project.skills_view),
                instructions: Arc::clone(&project.instructions_view),
            }),
        }
    }

    /// Logs the diagnostics of `view` that `before` did not have.
    fn log_new_diagnostics(&self, before: &[zr_skills::Diagnostic], now: &[zr_skills::Diagnostic]) {
        for d in now.iter().filter(|d| !before.contains(d)) {
            tracing::warn!(
                "{} (seen while the session runs)",
                d.display_relative(&self.root)
            );
        }
    }
}

impl AgentTypesSource for RegistrySource {
    fn changed(&self) -> Option<AgentTypes> {
        let agents = self.agents.view();
        let skills = self.skills.view();
        let instructions = self.instructions.view();
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if Arc::ptr_eq(&agents, &seen.agents)
            && Arc::ptr_eq(&skills, &seen.skills)
            && Arc::ptr_eq(&instructions, &seen.instructions)
        {
            return None;
        }
        self.log_new_diagnostics(seen.agents.diagnostics(), agents.diagnostics());
        self.log_new_diagnostics(seen.skills.diagnostics(), skills.diagnostics());
        let types = AgentTypes {
            sub_agents: agents
                .types()
                .iter()
                .map(|entry| {
                    let definition = type_definition(entry, &self.servers);
                    (definition.name.clone(), definition)
                })
                .collect(),
            skills: skills.definitions().to_vec(),
            listed_first: project_types(agents.types()),
            instructions: instructions.prompt().map(Arc::from),
            skills_listed_first: project_skills(&skills),
        };
        *seen = Seen {
            agents,
            skills,
            instructions,
        };
        Some(types)
    }
}
