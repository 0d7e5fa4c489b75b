//! The configuration a root agent is built from: [`AgentConfig`] and the
//! delegation limits, [`SubagentConfig`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use zr_caps::{AgentCapabilities, AgentDefinition, AgentOptions, ModelAliases, PermissionMode};
use zr_resolve::ResolvePolicy;
use zr_types::{AgentName, SkillDefinition, SkillName, stable_hash};

use crate::history::compact::CompactionConfig;
use crate::policy::hooks::{Hooks, TypeHooks};
use crate::policy::permission::PermissionConfig;
use crate::tools::catalog::AgentTypesSource;
use crate::tools::skill_listing::DEFAULT_SKILL_LISTING_CHARS;
use crate::tools::type_listing::DEFAULT_TYPE_LISTING_CHARS;

/// The root's turn limit unless set otherwise.
pub const DEFAULT_MAX_TURNS: u32 = 100;

/// Limits of delegation (the `subagent` configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentConfig {
    /// Whether the root may delegate at all; `false` removes Task and
    /// MultiTask from its pool (R7).
    pub enabled: bool,
    /// How many subagents of the whole tree work at once (0 counts as
    /// 1); the others wait in a queue inside their call's time budget. A
    /// subagent waiting on its own children lends its slot to them.
    pub max_concurrent: usize,
    /// One budget for a whole Task or MultiTask call, all its tasks
    /// together, queueing included. Background agents are not bound by
    /// it: the call returns at once.
    pub timeout: Duration,
    /// How often a background agent's progress is summarised (a
    /// tools-disabled side request, skipped while its conversation is
    /// short or unchanged); `None` for never. Default 30 s.
    pub progress_interval: Option<Duration>,
}

impl Default for SubagentConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_concurrent: 3,
            timeout: Duration::from_secs(300),
            progress_interval: Some(Duration::from_secs(30)),
        }
    }
}

/// Everything a root agent is built from besides the runtime.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The root's system prompt.
    pub system_prompt: String,
    /// The project's instructions (the `zr` command: `CLAUDE.md`,
    /// `AGENTS.md`, `CLAUDE.local.md` and their imports, see zr-skills'
    /// `InstructionRegistry`), appended after a blank line to the system
    /// prompt of the root and of every typed subagent; a fork keeps its
    /// parent's system prompt byte for byte. The same text for every
    /// agent, so siblings of one type still share one cached prefix.
    /// Replaced while the session runs by [`AgentTypes::instructions`]
    /// (hot reload). Default `None`.
    ///
    /// [`AgentTypes::instructions`]: crate::AgentTypes::instructions
    pub instructions: Option<Arc<str>>,
    /// The root's turn limit per query; a subagent's default is half of it.
    pub max_turns: u32,
    /// The session's top-level tool sources and lists (C1).
    pub options: AgentOptions,
    /// The root's own capabilities (C1: a query may override fields).
    pub capabilities: AgentCapabilities,
    /// The subagent types that `Task` and `MultiTask` can start.
    pub sub_agents: BTreeMap<AgentName, AgentDefinition>,
    /// Delegation limits.
    pub subagent: SubagentConfig,
    /// The resolver's policy; `delegation` is taken from `subagent.enabled`.
    pub policy: ResolvePolicy,
    /// The skills registry's view, for the resolver.
    pub skills: Vec<Arc<SkillDefinition>>,
    /// The size limit, in characters, of the skill listing that each
    /// agent's `Skill` tool description carries (its own skills' names and
    /// descriptions); skills beyond it are left out and counted. Default
    /// [`DEFAULT_SKILL_LISTING_CHARS`].
    pub skill_listing_chars: usize,
    /// The size limit, in characters, of the listing of subagent types
    /// (names and descriptions) in the `Task` tool's description (and
    /// `MultiTask`'s, for an agent without `Task`). Past it descriptions
    /// are shortened, then the last types are left out and counted; they
    /// stay reachable by name. Default [`DEFAULT_TYPE_LISTING_CHARS`].
    pub type_listing_chars: usize,
    /// The types the listing names first, in this order (names that are
    /// no type are skipped); the others follow by name. The `zr` command
    /// puts the project's own types here, so that the cut, when there is
    /// one, falls on the user's and built-in types. Default: none.
    pub listed_first: Vec<AgentName>,
    /// The skills the `Skill` tool's listing names first, in this order
    /// (names an agent does not have are skipped); the others follow by
    /// name. The `zr` command puts the project's own skills here, so that
    /// when the listing must be shortened or cut, the project's skills
    /// keep their place. Default: none.
    pub skills_listed_first: Vec<SkillName>,
    /// Model aliases of subagent types (`model: sonnet`), resolved before
    /// any request. Default: the Anthropic column of
    /// [`zr_caps::MODEL_ALIASES`]; with an OpenAI-compatible provider use
    /// `ModelAliases::for_family(ModelFamily::OpenAiCompatible)` (no
    /// mapping: a Claude alias runs on the parent's model) plus your own.
    pub model_aliases: ModelAliases,
    /// Where the agent types and skills come from while the session runs
    /// (hot reload): asked before each model request of the root; `None`
    /// (the default) keeps `sub_agents` and `skills` for the whole session.
    pub types_source: Option<Arc<dyn AgentTypesSource>>,
    /// The root's permission mode; subagents get the stricter of it and
    /// their declared one (C4).
    pub permission_mode: PermissionMode,
    /// The sessions folder: each agent's transcript is
    /// `<dir>/<session>/<agent>.jsonl`. `None` (the default of
    /// [`AgentConfig::new`]) writes no transcripts; the `zr` command uses
    /// the project's `.zr/sessions`.
    pub sessions_dir: Option<PathBuf>,
    /// The host's permission callback and the denial limits (see
    /// [`PermissionConfig`] for the rules of each mode).
    pub permissions: PermissionConfig,
    /// The host's hooks, at every event of every agent ([`Hook`](crate::Hook)),
    /// and how many Stop blocks in a row they may give
    /// ([`Hooks::with_max_stop_blocks`]).
    pub hooks: Hooks,
    /// The hooks of each agent type (an agent file's `hooks`), run for
    /// the agents of that type only, after [`AgentConfig::hooks`]; `None`
    /// (the default): types have no hooks of their own.
    pub type_hooks: Option<Arc<dyn TypeHooks>>,
    /// When agents compact their history, and how large a tool result may
    /// be before it is cut ([`CompactionConfig::default`]).
    pub compaction: CompactionConfig,
    /// The JSON Schema the root's answers must match; a query may replace
    /// it ([`QueryOverrides::output_schema`](crate::QueryOverrides::output_schema)). Default `None`: free
    /// text. See [`QueryResult::value`](crate::QueryResult::value).
    pub output_schema: Option<serde_json::Value>,
    /// How much the root's model should reason (subagents: their type's
    /// `effort`; forks: their parent's). Default `None`: the API's
    /// default.
    pub effort: Option<zr_caps::Effort>,
    /// What each query's whole tree (root and every subagent together)
    /// may spend ([`TreeBudget`](crate::TreeBudget)); a query may replace
    /// it ([`QueryOverrides::budget`](crate::QueryOverrides::budget)).
    /// Default: no limit.
    pub budget: crate::model::budget::TreeBudget,
    /// The host's check of the model each typed subagent would run on
    /// (its type's, or its call's `model`), before its call starts
    /// anything: the `zr` command refuses a `NAME:model-id` whose `NAME`
    /// is no `[providers.NAME]`. Default `None`: every model is tried.
    pub model_check: Option<Arc<dyn crate::model::agent_model::ModelCheck>>,
}

impl AgentConfig {
    /// A root with `system_prompt`, no subagent types, no extra tools, and
    /// the default limits.
    #[must_use]
    pub fn new(system_prompt: impl Into<String>) -> Self {
        Self {
            system_prompt: system_prompt.into(),
            instructions: None,
            max_turns: DEFAULT_MAX_TURNS,
            options: AgentOptions::default(),
            capabilities: AgentCapabilities::default(),
            sub_agents: BTreeMap::new(),
            subagent: SubagentConfig::default(),
            policy: ResolvePolicy::default(),
            skills: Vec::new(),
            skill_listing_chars: DEFAULT_SKILL_LISTING_CHARS,
            type_listing_chars: DEFAULT_TYPE_LISTING_CHARS,
            listed_first: Vec::new(),
            skills_listed_first: Vec::new(),
            model_aliases: ModelAliases::default(),
            types_source: None,
            permission_mode: PermissionMode::default(),
            sessions_dir: None,
            permissions: PermissionConfig::default(),
            hooks: Hooks::default(),
            type_hooks: None,
            compaction: CompactionConfig::default(),
            output_schema: None,
            effort: None,
            budget: crate::model::budget::TreeBudget::default(),
            model_check: None,
        }
    }

    /// The hooks of the agents of `definition`'s type ([`TypeHooks`]);
    /// none for the root and forks (`None`).
    pub(crate) fn hooks_of_type(&self, definition: Option<&AgentDefinition>) -> Hooks {
        match (&self.type_hooks, definition) {
            (Some(source), Some(definition)) if definition.hooks.is_some() => {
                source.hooks(definition)
            }
            _ => Hooks::new(),
        }
    }

    /// Adds a subagent type under its name.
    #[must_use]
    pub fn with_sub_agent(mut self, definition: AgentDefinition) -> Self {
        self.sub_agents.insert(definition.name.clone(), definition);
        self
    }
}

/// The hash of a subagent type's definition that its transcript's header
/// records beside the definition: a resumed agent warns when its type's
/// changed, and one whose header holds the hash alone (the older format)
/// is refused then.
pub(crate) fn definition_hash(definition: &AgentDefinition) -> Option<String> {
    serde_json::to_vec(definition)
        .ok()
        .map(|json| format!("{:016x}", stable_hash(&json)))
}
