//! An agent's runnable tools: its resolved pool joined with the handlers,
//! and the engine's own tools (Task, MultiTask, FindTool), `Task` listing
//! the subagent types ([`crate::tools::type_listing`]).

pub(crate) mod catalog;
pub(crate) mod find_tool;
pub(crate) mod skill_listing;
pub(crate) mod type_listing;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::json;
use zr_caps::AgentDefinition;
use zr_resolve::ResolvedPool;
use zr_types::{
    AgentId, AgentName, Annotations, BuiltinName, ToolDefinition, ToolHandler, ToolName, ToolOrigin,
};

use crate::error::EngineError;
use crate::runtime::RuntimeEnvironment;
use crate::tools::skill_listing::SkillListing;

/// How a tool call is carried out: the map from a pool's definition to
/// what runs it, made once when a pool is joined ([`Joined::new`]), so
/// that the call path dispatches on this and never on a tool's name.
#[derive(Debug, Clone)]
pub(crate) enum Runner {
    /// One of the engine's own tools.
    Engine(EngineTool),
    /// A handler runs it: zr-tools' builtins, `Skill`, custom and MCP
    /// tools.
    Handler(Arc<dyn ToolHandler>),
}

/// The engine's own tools, which no handler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EngineTool {
    /// Delegates one task (through the agent's `Delegate`).
    Task,
    /// Delegates several tasks in parallel (through the agent's `Delegate`).
    MultiTask,
    /// Searches the agent's FindTool directory ([`find_tool`]).
    FindTool,
}

/// The definitions of the engine's own tools, made once per session.
#[derive(Debug)]
pub(crate) struct EngineTools {
    pub(crate) task: Arc<ToolDefinition>,
    pub(crate) multi_task: Arc<ToolDefinition>,
    /// `MultiTask` as an agent whose pool has no `Task` is shown it: the
    /// type listing in its own description.
    multi_task_alone: Arc<ToolDefinition>,
    pub(crate) find_tool: Arc<ToolDefinition>,
    /// How the `Skill` tool's description lists skills
    /// ([`crate::tools::skill_listing`]).
    pub(crate) skill_listing: SkillListing,
}

/// One of the engine's own tools, its read-only and deferred flags from the
/// builtin registry ([`zr_types::builtin_spec`]), as every builtin's.
fn builtin(
    name: BuiltinName,
    description: String,
    schema: serde_json::Value,
) -> Arc<ToolDefinition> {
    let spec = name.spec();
    let name = name.tool_name();
    let annotations = Annotations {
        read_only: spec.read_only,
        ..Annotations::default()
    };
    Arc::new(
        ToolDefinition::new(name, description, ToolOrigin::Builtin)
            .with_schema(schema)
            .with_annotations(annotations)
            .with_defer(spec.deferred.then_some(true)),
    )
}

fn task_properties(types: &BTreeMap<AgentName, AgentDefinition>) -> serde_json::Value {
    let mut properties = json!({
        "description": {"type": "string", "description": "A short (3-5 word) description of the task."},
        "prompt": {"type": "string", "description": "The complete task. The subagent sees nothing else of this conversation (unless forked), so include every detail it needs."},
        "output_schema": {"type": "object", "description": "A JSON Schema the subagent's answer must match (it replaces its type's). Its result then carries the parsed answer as `value`; an answer that does not match after one repair turn is `failed` with the validation error."}
    });
    // Without types every task is a fork. The names are no `enum`: the
    // listing holds them once, an `enum` would repeat them in both tools
    // without bound, and one of the listed names only would forbid the
    // others, which stay reachable by name.
    if !types.is_empty() {
        properties["subagent_type"] = json!({
            "type": "string",
            "description": "The type of agent to run, one of the subagent types. Leave it out to fork: a copy of you with this conversation so far, which cannot delegate further."
        });
        properties["model"] = json!({
            "type": "string",
            "description": "Optional model for this subagent instead of its type's: an alias (sonnet, opus, haiku) or PROVIDER:model-id. Only with subagent_type (a fork runs on your model). Prefer a small model for quick, simple tasks."
        });
    }
    properties
}

/// What `MultiTask`'s description says of the types when `Task`'s lists
/// them.
const SEE_TASK: &str = "\n\nThe subagent types are those listed in the Task tool's description.";

impl EngineTools {
    pub(crate) fn new(
        types: &BTreeMap<AgentName, AgentDefinition>,
        listed_first: &[AgentName],
        max_concurrent: usize,
        skill_listing: SkillListing,
        type_listing_chars: usize,
    ) -> Self {
        let first: BTreeSet<&AgentName> = listed_first.iter().collect();
        let mut seen = BTreeSet::new();
        let ordered = listed_first
            .iter()
            .filter(|name| seen.insert(*name))
            .filter_map(|name| types.get_key_value(name))
            .chain(types.iter().filter(|(name, _)| !first.contains(name)));
        let listing = type_listing::listing(ordered, type_listing_chars);
        let properties = task_properties(types);
        let mut task_properties = properties.clone();
        task_properties["run_in_background"] = json!({
            "type": "boolean",
            "description": "Run it in the background: the call returns the agent's id at once and its result comes to you in a message when it finishes. Use it for long work you need not wait for."
        });
        let task = builtin(
            BuiltinName::Task,
            format!(
                "Delegate one task to a subagent, which works with its own context and tools and returns only its conclusion.{listing}"
            ),
            json!({
                "type": "object",
                "properties": task_properties,
                "required": ["description", "prompt"],
                "additionalProperties": false
            }),
        );
        let multi_base = format!(
            "Delegate 1 to 10 independent tasks to subagents that run in parallel ({max_concurrent} at a time; the rest wait their turn). Returns one result per task, in order."
        );
        let multi_task = builtin(
            BuiltinName::MultiTask,
            format!("{multi_base}{SEE_TASK}"),
            json!({
                "type": "object",
                "properties": {
                    "tasks": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 10,
                        "items": {
                            "type": "object",
                            "properties": properties,
                            "required": ["description", "prompt"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["tasks"],
                "additionalProperties": false
            }),
        );
        let mut alone = ToolDefinition::clone(&multi_task);
        alone.description = format!("{multi_base}{listing}");
        let multi_task_alone = Arc::new(alone);
        let find_tool = builtin(
            BuiltinName::FindTool,
            "Find and load deferred tools. `select:A,B` loads those exact names; otherwise the lowercase keywords of the query are matched against each deferred tool's name and description. Loaded tools can be called from your next turn on.".to_owned(),
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "`select:Name1,Name2` or keywords."},
                    "max_results": {"type": "integer", "minimum": 1, "default": 5}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        );
        Self {
            task,
            multi_task,
            multi_task_alone,
            find_tool,
            skill_listing,
        }
    }

    /// The builtin definitions in registry order: zr-tools' tools, the
    /// runtime's Skill tool if it has one, and the engine's own.
    pub(crate) fn builtins(&self, runtime: &RuntimeEnvironment) -> Vec<Arc<ToolDefinition>> {
        zr_types::DEFAULT_BUILTINS
            .iter()
            .filter_map(|spec| match spec.builtin {
                BuiltinName::Task => Some(Arc::clone(&self.task)),
                BuiltinName::MultiTask => Some(Arc::clone(&self.multi_task)),
                BuiltinName::FindTool => Some(Arc::clone(&self.find_tool)),
                name => runtime
                    .builtin_handlers()
                    .find(|(definition, _)| name.is(definition.name.as_str()))
                    .map(|(definition, _)| Arc::clone(definition)),
            })
            .collect()
    }

    fn runner(
        &self,
        runtime: &RuntimeEnvironment,
        definition: &Arc<ToolDefinition>,
    ) -> Option<Runner> {
        let engine = [
            (&self.task, EngineTool::Task),
            (&self.multi_task, EngineTool::MultiTask),
            (&self.find_tool, EngineTool::FindTool),
        ];
        if let Some((_, tool)) = engine.iter().find(|(d, _)| Arc::ptr_eq(d, definition)) {
            return Some(Runner::Engine(*tool));
        }
        runtime
            .builtin_handlers()
            .find(|(d, _)| Arc::ptr_eq(d, definition))
            .map(|(_, handler)| Runner::Handler(Arc::clone(handler)))
            .or_else(|| runtime.tools().handler(definition).map(Runner::Handler))
    }
}

/// One tool an agent can call.
#[derive(Debug, Clone)]
pub(crate) struct Callable {
    pub(crate) definition: Arc<ToolDefinition>,
    pub(crate) runner: Runner,
}

impl Callable {
    /// Whether a call of it may run beside the other calls of its turn:
    /// a read-only tool, or a delegation (Task and MultiTask calls of one
    /// turn start together; their subagents share the agent's
    /// `max_concurrent` slots).
    pub(crate) fn runs_beside(&self) -> bool {
        self.definition.is_read_only()
            || matches!(
                self.runner,
                Runner::Engine(EngineTool::Task | EngineTool::MultiTask)
            )
    }

    /// Whether a call of it may change something outside the engine: a
    /// handler's tool that is not read-only. Such a call gets a
    /// `call_started` record before it runs, and is never run twice.
    pub(crate) fn has_effects(&self) -> bool {
        matches!(self.runner, Runner::Handler(_)) && !self.definition.is_read_only()
    }
}

/// A pool joined with its handlers: the same for every agent of that pool
/// in a catalog, so agents of one pool share one ([`crate::session::pools`]).
#[derive(Debug)]
pub(crate) struct Joined {
    pool: Arc<ResolvedPool>,
    /// The pool's advertised tools as the model sees them: the same
    /// definitions, the `Skill` one with the pool's skills listed.
    pool_advertised: Vec<Arc<ToolDefinition>>,
    /// Keyed by the pool's own names (a pointer copy each, no new string).
    executable: BTreeMap<ToolName, Callable>,
    directory: Vec<Callable>,
}

impl Joined {
    /// Joins `pool` with the handlers; every tool an agent of it could
    /// ever run must have one (else the error names `agent`).
    pub(crate) fn new(
        agent: &AgentId,
        pool: Arc<ResolvedPool>,
        engine: &EngineTools,
        runtime: &RuntimeEnvironment,
    ) -> Result<Self, EngineError> {
        let callable = |definition: &Arc<ToolDefinition>| {
            engine
                .runner(runtime, definition)
                .map(|runner| Callable {
                    definition: Arc::clone(definition),
                    runner,
                })
                .ok_or_else(|| EngineError::MissingHandler {
                    agent: agent.clone(),
                    tool: definition.name.clone(),
                })
        };
        let executable = pool
            .executable()
            .iter()
            .map(|d| Ok((d.name.clone(), callable(d)?)))
            .collect::<Result<_, EngineError>>()?;
        let directory = pool
            .deferred()
            .iter()
            .map(callable)
            .collect::<Result<_, EngineError>>()?;
        let has_task = pool
            .advertised()
            .iter()
            .any(|d| Arc::ptr_eq(d, &engine.task));
        let pool_advertised = pool
            .advertised()
            .iter()
            .map(|d| {
                // Without `Task`, `MultiTask` carries the type listing.
                if !has_task && Arc::ptr_eq(d, &engine.multi_task) {
                    return Arc::clone(&engine.multi_task_alone);
                }
                skill_listing::advertised(d, pool.skills(), &engine.skill_listing)
            })
            .collect();
        Ok(Self {
            pool,
            pool_advertised,
            executable,
            directory,
        })
    }

    /// The pool joined.
    pub(crate) fn pool(&self) -> &Arc<ResolvedPool> {
        &self.pool
    }
}

/// What one agent can run: its executable pool, its FindTool directory and
/// what it loaded from there.
#[derive(Debug, Clone)]
pub(crate) struct AgentTools {
    /// Its pool with the handlers, shared with the other agents of the
    /// pool.
    joined: Arc<Joined>,
    loaded: Vec<Callable>,
    /// Advertised after the pool's tools, in order: what was loaded, and
    /// for a fork what its parent had loaded (even a tool the fork may not
    /// run, to keep the parent's prefix).
    shown: Vec<Arc<ToolDefinition>>,
}

impl AgentTools {
    /// An agent of `joined`'s pool that loaded nothing yet.
    pub(crate) fn new(joined: Arc<Joined>) -> Self {
        Self {
            joined,
            loaded: Vec::new(),
            shown: Vec::new(),
        }
    }

    pub(crate) fn pool(&self) -> &Arc<ResolvedPool> {
        &self.joined.pool
    }

    /// What the model is shown: the advertised pool (the `Skill` entry
    /// listing the agent's skills), then the loaded tools in the order they
    /// were loaded.
    pub(crate) fn advertised(&self) -> Vec<Arc<ToolDefinition>> {
        self.joined
            .pool_advertised
            .iter()
            .cloned()
            .chain(self.shown.iter().cloned())
            .collect()
    }

    /// The tool the model may call under `name`: an executable one or a
    /// loaded one. `None` for anything else.
    pub(crate) fn get(&self, name: &str) -> Option<&Callable> {
        self.joined.executable.get(name).or_else(|| {
            self.loaded
                .iter()
                .find(|c| c.definition.name.as_str() == name)
        })
    }

    /// Whether `name` waits in the directory, not yet loaded.
    pub(crate) fn in_directory(&self, name: &str) -> bool {
        self.joined
            .directory
            .iter()
            .any(|c| c.definition.name.as_str() == name)
            && !self.is_loaded(name)
    }

    fn is_loaded(&self, name: &str) -> bool {
        self.loaded
            .iter()
            .any(|c| c.definition.name.as_str() == name)
    }

    pub(crate) fn directory(&self) -> &[Callable] {
        &self.joined.directory
    }

    /// Loads tools of the directory by name (names already loaded or not in
    /// the directory are skipped).
    pub(crate) fn load(&mut self, names: &[ToolName]) {
        for name in names {
            if self.is_loaded(name.as_str()) {
                continue;
            }
            if let Some(c) = self
                .joined
                .directory
                .iter()
                .find(|c| &c.definition.name == name)
            {
                self.shown.push(Arc::clone(&c.definition));
                self.loaded.push(c.clone());
            }
        }
    }

    /// A fork's start: advertises what `parent` advertises beyond its pool,
    /// in the same order (the fork's advertised tools equal its parent's),
    /// and may run those of them that are in its own directory.
    pub(crate) fn inherit_loaded(&mut self, parent: &Self) {
        for definition in &parent.shown {
            let name = definition.name.as_str();
            if self.shown.iter().any(|d| d.name.as_str() == name) {
                continue;
            }
            self.shown.push(Arc::clone(definition));
            if let Some(c) = self
                .joined
                .directory
                .iter()
                .find(|c| c.definition.name.as_str() == name)
            {
                self.loaded.push(c.clone());
            }
        }
    }

    /// The names loaded so far, in order.
    pub(crate) fn loaded_names(&self) -> Vec<ToolName> {
        self.loaded
            .iter()
            .map(|c| c.definition.name.clone())
            .collect()
    }
}
