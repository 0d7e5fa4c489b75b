//! The builtin registry: one definition and one handler per tool, in the
//! order of `zr_types::DEFAULT_BUILTINS`, and the per-agent lifecycle.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use zr_types::{
    AgentId, Annotations, BoxFuture, BuiltinSpec, DEFAULT_BUILTINS, SessionId, ToolCall,
    ToolContext, ToolDefinition, ToolError, ToolHandler, ToolName, ToolOrigin, ToolOutput,
};

use crate::ask_user::{AskUserQuestionTool, AskUserService};
use crate::bash::BashTool;
use crate::config::{ConfigService, ConfigTool};
use crate::cron::{CronCreateTool, CronDeleteTool, CronListTool, CronStore};
use crate::edit::EditTool;
use crate::glob::GlobTool;
use crate::grep::GrepTool;
use crate::input;
use crate::read::ReadTool;
use crate::state::{AgentKey, AgentStates};
use crate::todo::{TodoItem, TodoWriteTool};
use crate::web_fetch::{WebFetchLimits, WebFetchTool};
use crate::web_search::{WebSearchService, WebSearchTool};
use crate::write::WriteTool;

/// Behavioural hints beyond `read_only` (which comes from the registry).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hints {
    pub(crate) destructive: Option<bool>,
    pub(crate) idempotent: Option<bool>,
    pub(crate) open_world: Option<bool>,
}

impl Hints {
    /// Stays on this machine; nothing else stated (tools that only look).
    pub(crate) const LOCAL: Self = Self {
        destructive: None,
        idempotent: None,
        open_world: Some(false),
    };
    /// Reaches outside the machine (the network, the user); nothing else stated.
    pub(crate) const OPEN_WORLD: Self = Self {
        open_world: Some(true),
        ..Self::LOCAL
    };

    /// Changes something on this machine: whether it may destroy data and
    /// whether a second identical call has no further effect.
    pub(crate) const fn local_change(destructive: bool, idempotent: bool) -> Self {
        Self {
            destructive: Some(destructive),
            idempotent: Some(idempotent),
            open_world: Some(false),
        }
    }
}

/// One builtin tool: a typed input and a run function. [`Handler`] turns it
/// into a [`ToolHandler`] that parses the model's input first.
pub(crate) trait Builtin: Send + Sync + fmt::Debug + 'static {
    /// The typed input; its JSON Schema is the tool's input schema.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// The tool's name, as in `DEFAULT_BUILTINS`.
    const NAME: &'static str;
    /// Hints beyond read-only.
    const HINTS: Hints;
    /// What the model is told about the tool beyond the registry's
    /// one-line description, which comes first in the tool's description.
    fn details(&self) -> String;
    /// Runs one call with parsed input.
    fn run<'a>(
        &'a self,
        input: Self::Input,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// Runs blocking work (file system walks, reads, the cron file) off the
/// async threads; a panic in it becomes `ToolError::Failed` for `tool`.
pub(crate) async fn blocking<R: Send + 'static>(
    tool: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|source| tool_failed(tool, source))
}

/// `ToolError::Failed` of `tool`, caused by `source`.
pub(crate) fn tool_failed(
    tool: &str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> ToolError {
    ToolError::Failed {
        tool: tool.to_owned(),
        source: Box::new(source),
    }
}

/// Adapts a [`Builtin`] to the [`ToolHandler`] contract.
#[derive(Debug)]
pub(crate) struct Handler<T>(pub(crate) T);

impl<T: Builtin> ToolHandler for Handler<T> {
    fn call<'a>(
        &'a self,
        call: ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            match input::parse::<T::Input>(T::NAME, &call.input) {
                Ok(parsed) => self.0.run(parsed, ctx).await,
                Err(output) => Ok(output),
            }
        })
    }
}

/// The registry entry of `name`; every tool of this crate has one (a test
/// checks it), and an unknown name gets the safe flags (not read-only, not
/// deferred).
fn spec_of(name: &str) -> BuiltinSpec {
    DEFAULT_BUILTINS
        .iter()
        .find(|s| s.name == name)
        .copied()
        .unwrap_or(BuiltinSpec {
            name: "",
            description: "",
            read_only: false,
            deferred: false,
        })
}

fn entry<T: Builtin>(tool: T) -> (ToolDefinition, Arc<dyn ToolHandler>) {
    let spec = spec_of(T::NAME);
    let hints = T::HINTS;
    let name: ToolName = T::NAME
        .parse()
        .expect("builtin tool names are constants that meet the ToolName rules");
    let description = format!("{} {}", spec.description, tool.details());
    let definition = ToolDefinition::new(name, description, ToolOrigin::Builtin)
        .with_schema(input::schema_for::<T::Input>())
        .with_annotations(Annotations {
            read_only: spec.read_only,
            destructive: hints.destructive,
            idempotent: hints.idempotent,
            open_world: hints.open_world,
        })
        .with_defer(spec.deferred.then_some(true));
    (definition, Arc::new(Handler(tool)))
}

/// The builtin tools of one runtime, sharing per-agent state and host
/// services.
///
/// Build one per runtime (it is cheap to clone), hand
/// [`BuiltinTools::tools`] to the engine, and call
/// [`BuiltinTools::agent_finished`] when an agent ends.
#[derive(Debug, Clone)]
pub struct BuiltinTools {
    states: Arc<AgentStates>,
    cron: Arc<CronStore>,
    web_search: Option<Arc<dyn WebSearchService>>,
    ask_user: Option<Arc<dyn AskUserService>>,
    config: Option<Arc<dyn ConfigService>>,
    web_fetch: WebFetchLimits,
}

impl BuiltinTools {
    /// Builtin tools whose cron schedules live in the JSON file
    /// `cron_store` (created on the first `CronCreate`). No web search,
    /// ask-user or configuration service: those tools answer with an error
    /// until one is given.
    #[must_use]
    pub fn new(cron_store: impl Into<PathBuf>) -> Self {
        Self {
            states: Arc::default(),
            cron: Arc::new(CronStore::new(cron_store.into())),
            web_search: None,
            ask_user: None,
            config: None,
            web_fetch: WebFetchLimits::default(),
        }
    }

    /// Sets the web search service behind `WebSearch`.
    #[must_use]
    pub fn with_web_search(mut self, service: Arc<dyn WebSearchService>) -> Self {
        self.web_search = Some(service);
        self
    }

    /// Sets the service behind `AskUserQuestion`.
    #[must_use]
    pub fn with_ask_user(mut self, service: Arc<dyn AskUserService>) -> Self {
        self.ask_user = Some(service);
        self
    }

    /// Sets the configuration service behind `Config`.
    #[must_use]
    pub fn with_config(mut self, service: Arc<dyn ConfigService>) -> Self {
        self.config = Some(service);
        self
    }

    /// Sets the limits of `WebFetch`.
    #[must_use]
    pub fn with_web_fetch_limits(mut self, limits: WebFetchLimits) -> Self {
        self.web_fetch = limits;
        self
    }

    /// Every builtin this crate implements, in registry order, as the
    /// definition the model is told about and its handler. `Task`,
    /// `MultiTask`, `FindTool` (the engine's) and `Skill` (zr-skills') are
    /// not among them.
    #[must_use]
    pub fn tools(&self) -> Vec<(ToolDefinition, Arc<dyn ToolHandler>)> {
        let states = &self.states;
        let mut all = vec![
            entry(BashTool::new(Arc::clone(states))),
            entry(ReadTool::new(Arc::clone(states))),
            entry(WriteTool::new(Arc::clone(states))),
            entry(EditTool::new(Arc::clone(states))),
            entry(GlobTool),
            entry(GrepTool),
            entry(WebFetchTool::new(self.web_fetch.clone())),
            entry(WebSearchTool::new(self.web_search.clone())),
            entry(AskUserQuestionTool::new(self.ask_user.clone())),
            entry(CronCreateTool::new(Arc::clone(&self.cron))),
            entry(CronDeleteTool::new(Arc::clone(&self.cron))),
            entry(CronListTool::new(Arc::clone(&self.cron))),
            entry(ConfigTool::new(self.config.clone())),
            entry(TodoWriteTool::new(Arc::clone(states))),
        ];
        let rank = |d: &ToolDefinition| {
            DEFAULT_BUILTINS
                .iter()
                .position(|s| s.name == d.name.as_str())
                .unwrap_or(usize::MAX)
        };
        all.sort_by_key(|(d, _)| rank(d));
        all
    }

    /// The service behind `AskUserQuestion`, if one was given (the engine
    /// asks permission prompts through it).
    #[must_use]
    pub fn ask_user(&self) -> Option<&Arc<dyn AskUserService>> {
        self.ask_user.as_ref()
    }

    /// The durable cron store, for the engine's scheduler
    /// ([`CronStore::due`], [`CronStore::mark_fired`]).
    #[must_use]
    pub fn cron(&self) -> &CronStore {
        &self.cron
    }

    /// The todo list of an agent (empty when it has none).
    #[must_use]
    pub fn todos(&self, session: &SessionId, agent: &AgentId) -> Vec<TodoItem> {
        self.states
            .peek(&AgentKey::new(session, agent), |s| s.todos.clone())
            .unwrap_or_default()
    }

    /// The number of background commands `agent` still owns (running or
    /// finished but not yet collected).
    #[must_use]
    pub fn background_count(&self, session: &SessionId, agent: &AgentId) -> usize {
        self.states
            .peek(&AgentKey::new(session, agent), |s| s.background.len())
            .unwrap_or(0)
    }

    /// Ends an agent's tool state: its background commands get SIGTERM,
    /// then (after a grace of up to two seconds) SIGKILL to their whole
    /// process group; its read ledger and todo list are dropped. Returns the
    /// number of background commands that were stopped. Safe to call for an
    /// agent that never used a tool.
    pub async fn agent_finished(&self, session: &SessionId, agent: &AgentId) -> usize {
        let Some(state) = self.states.remove(&AgentKey::new(session, agent)) else {
            return 0;
        };
        crate::bash::stop_all(state.background).await
    }
}

#[cfg(test)]
mod tests;
