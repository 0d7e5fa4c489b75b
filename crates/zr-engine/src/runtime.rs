//! The runtime environment: what every agent of a session shares.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use zr_caps::RuntimeSettings;
use zr_resolve::ResolvedPool;
use zr_tools::BuiltinTools;
use zr_types::{AgentId, SessionId, ToolDefinition, ToolHandler};

use crate::effects::{Effects, LocalEffects};
use crate::telemetry::Tracer;
use zr_providers::ModelProvider;

/// The output-token limit of each model request unless set otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 8_192;

/// Learns when agents start and end, with their resolved pools.
///
/// This is how tools that live outside the engine keep per-agent state in
/// step with the resolver: the CLI grants each agent the skills of its pool
/// to the `Skill` tool when it starts and revokes them when it ends.
///
/// `agent_finished` is called once for every agent that started, on every
/// exit path (completed, failed, timed out, cancelled, the query dropped).
/// The root is started again (`agent_started` with its new pool) at every
/// query and whenever hot reload changed its pool (see
/// [`AgentTypesSource`](crate::AgentTypesSource)).
/// Both methods are called from async code and must not block.
pub trait AgentObserver: Send + Sync + fmt::Debug {
    /// `agent` starts with `pool`.
    fn agent_started(&self, session: &SessionId, agent: &AgentId, pool: &ResolvedPool);
    /// `agent` ended; forget what was kept for it.
    fn agent_finished(&self, session: &SessionId, agent: &AgentId);

    /// One record of `agent`'s transcript was written (its write
    /// returned: a kill of the process from here on does not lose it).
    /// Called while the transcript is locked: do not block. The default
    /// does nothing.
    fn record_written(&self, session: &SessionId, agent: &AgentId) {
        let _ = (session, agent);
    }
}

/// Handlers of the tools that are not the engine's own, keyed by the
/// identity of their definition (`Arc` pointer): two tools may share a name
/// (a sibling's custom `lint` and another's), and the definition the
/// resolver kept is the one whose handler runs.
#[derive(Debug, Default, Clone)]
pub(crate) struct ToolBox {
    by_definition: BTreeMap<usize, (Arc<ToolDefinition>, Arc<dyn ToolHandler>)>,
}

impl ToolBox {
    fn key(definition: &Arc<ToolDefinition>) -> usize {
        Arc::as_ptr(definition) as usize
    }

    fn insert(&mut self, definition: Arc<ToolDefinition>, handler: Arc<dyn ToolHandler>) {
        self.by_definition
            .insert(Self::key(&definition), (definition, handler));
    }

    /// The registered definition equal to `definition` (name,
    /// description, schema, annotations, origin, deferral): a copy read
    /// back from a transcript finds the one whose handler runs.
    pub(crate) fn registered(&self, definition: &ToolDefinition) -> Option<&Arc<ToolDefinition>> {
        self.by_definition
            .values()
            .map(|(registered, _)| registered)
            .find(|registered| ***registered == *definition)
    }

    pub(crate) fn handler(&self, definition: &Arc<ToolDefinition>) -> Option<Arc<dyn ToolHandler>> {
        self.by_definition
            .get(&Self::key(definition))
            .map(|(_, handler)| Arc::clone(handler))
    }
}

/// What every agent of a session shares: the model provider, the model,
/// the working directory and child-process environment, the builtin tools
/// (with their services: ask-user, web search, config, cron) and the
/// handlers of custom and MCP tools.
///
/// Built complete: there is no default runtime that fails later with
/// "provider not set".
///
/// ```
/// # use std::sync::Arc;
/// # use zr_caps::RuntimeSettings;
/// # use zr_engine::{RuntimeEnvironment, Script, ScriptedProvider};
/// # use zr_tools::BuiltinTools;
/// let dir = tempfile::tempdir().unwrap();
/// let settings = RuntimeSettings { model: "scripted".into(), cwd: dir.path().into(), env: Default::default() };
/// let provider = Arc::new(ScriptedProvider::new(Script::default()));
/// let runtime = RuntimeEnvironment::new(provider, settings, BuiltinTools::new(dir.path().join("cron.json")));
/// assert_eq!(runtime.settings().model, "scripted");
/// ```
/// Cloning is cheap (every part is shared): a durable worker starts each
/// attempt of a turn on a copy with its own effects.
#[derive(Debug, Clone)]
pub struct RuntimeEnvironment {
    provider: Arc<dyn ModelProvider>,
    settings: RuntimeSettings,
    builtin_tools: Arc<BuiltinTools>,
    builtin_definitions: Vec<(Arc<ToolDefinition>, Arc<dyn ToolHandler>)>,
    skill_tool: Option<(Arc<ToolDefinition>, Arc<dyn ToolHandler>)>,
    tools: ToolBox,
    observer: Option<Arc<dyn AgentObserver>>,
    tracer: Option<Arc<dyn Tracer>>,
    max_tokens: u32,
    effects: Arc<dyn Effects>,
}

impl RuntimeEnvironment {
    /// A runtime over `provider`, with `settings` (model, cwd, environment
    /// of child processes) and the builtin tools of zr-tools.
    #[must_use]
    pub fn new(
        provider: Arc<dyn ModelProvider>,
        settings: RuntimeSettings,
        builtin_tools: BuiltinTools,
    ) -> Self {
        let builtin_definitions = builtin_tools
            .tools()
            .into_iter()
            .map(|(definition, handler)| (Arc::new(definition), handler))
            .collect();
        Self {
            provider,
            settings,
            builtin_tools: Arc::new(builtin_tools),
            builtin_definitions,
            skill_tool: None,
            tools: ToolBox::default(),
            observer: None,
            tracer: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            effects: Arc::new(LocalEffects),
        }
    }

    /// Registers the handler of a custom or MCP tool. Put the same `Arc` in
    /// the options or capabilities that offer the tool: the engine finds
    /// the handler by the definition the resolver kept.
    #[must_use]
    pub fn with_tool(
        mut self,
        definition: Arc<ToolDefinition>,
        handler: Arc<dyn ToolHandler>,
    ) -> Self {
        self.tools.insert(definition, handler);
        self
    }

    /// Provides the `Skill` builtin (zr-skills' `SkillTool`). Without it no
    /// agent has `Skill`, and so no agent has skills (R7).
    #[must_use]
    pub fn with_skill_tool(
        mut self,
        definition: Arc<ToolDefinition>,
        handler: Arc<dyn ToolHandler>,
    ) -> Self {
        self.skill_tool = Some((definition, handler));
        self
    }

    /// Sets the observer of agent starts and ends.
    #[must_use]
    pub fn with_observer(mut self, observer: Arc<dyn AgentObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Sends every agent's spans (`invoke_agent`, `chat`, `execute_tool`
    /// in the OpenTelemetry GenAI conventions) to `tracer`: zr-telemetry's
    /// `Telemetry::tracer` exports them over OTLP. Without one nothing is
    /// recorded beyond the `tracing` spans of the log lines.
    #[must_use]
    pub fn with_tracer(mut self, tracer: Arc<dyn Tracer>) -> Self {
        self.tracer = Some(tracer);
        self
    }

    /// Routes the engine's effects (model requests, tool calls, subagent
    /// runs, the clock) through `effects` instead of [`LocalEffects`]: the
    /// seam of a durable backend (see [`Effects`] for the contract).
    #[must_use]
    pub fn with_effects(mut self, effects: Arc<dyn Effects>) -> Self {
        self.effects = effects;
        self
    }

    /// Sets the output-token limit of each model request.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The plain-data settings.
    #[must_use]
    pub fn settings(&self) -> &RuntimeSettings {
        &self.settings
    }

    /// The builtin tools (to read an agent's todo list, the cron store).
    #[must_use]
    pub fn builtin_tools(&self) -> &BuiltinTools {
        &self.builtin_tools
    }

    pub(crate) fn provider(&self) -> &Arc<dyn ModelProvider> {
        &self.provider
    }

    /// The effects every agent of the runtime goes through.
    pub(crate) fn effects(&self) -> &Arc<dyn Effects> {
        &self.effects
    }

    pub(crate) fn max_tokens(&self) -> u32 {
        self.max_tokens
    }

    pub(crate) fn builtin_handlers(
        &self,
    ) -> impl Iterator<Item = &(Arc<ToolDefinition>, Arc<dyn ToolHandler>)> {
        self.builtin_definitions
            .iter()
            .chain(self.skill_tool.iter())
    }

    pub(crate) fn tools(&self) -> &ToolBox {
        &self.tools
    }

    pub(crate) fn observer(&self) -> Option<&Arc<dyn AgentObserver>> {
        self.observer.as_ref()
    }

    pub(crate) fn tracer(&self) -> Option<&Arc<dyn Tracer>> {
        self.tracer.as_ref()
    }
}
