//! The builtin registry: one definition and one handler per tool, in the
//! order of `zr_types::DEFAULT_BUILTINS`, and the per-agent lifecycle.

use std::path::PathBuf;
use std::sync::Arc;

use zr_types::{AgentId, DEFAULT_BUILTINS, SessionId, ToolDefinition, ToolHandler, ToolName};

use crate::ask_user::{AskUserQuestionTool, AskUserService};
use crate::bash::{BashState, BashTool, stop_all};
use crate::config::{ConfigService, ConfigTool};
use crate::cron::{CronCreateTool, CronDeleteTool, CronListTool, CronStore};
use crate::edit::EditTool;
use crate::glob::GlobTool;
use crate::grep::GrepTool;
use crate::ledger::ReadLedger;
use crate::read::ReadTool;
use crate::state::{AgentKey, AgentStates};
use crate::todo::{TodoItem, TodoList, TodoWriteTool};
use crate::toolkit::entry;
use crate::web_fetch::{WebFetchLimits, WebFetchPolicy, WebFetchTool};
use crate::web_search::{WebSearchService, WebSearchTool};
use crate::write::WriteTool;

/// The builtin tools of one runtime, sharing per-agent state and host
/// services.
///
/// Each kind of per-agent state has its own map, owned by the tools that
/// keep it: the read ledger (Read, Write, Edit), the todo list
/// (TodoWrite) and the background commands (Bash).
///
/// Build one per runtime (it is cheap to clone), hand
/// [`BuiltinTools::tools`] to the engine, and call
/// [`BuiltinTools::agent_finished`] when an agent ends.
#[derive(Debug, Clone)]
pub struct BuiltinTools {
    ledgers: Arc<AgentStates<ReadLedger>>,
    todo_lists: Arc<AgentStates<TodoList>>,
    shells: Arc<AgentStates<BashState>>,
    cron: Arc<CronStore>,
    web_search: Option<Arc<dyn WebSearchService>>,
    ask_user: Option<Arc<dyn AskUserService>>,
    config: Option<Arc<dyn ConfigService>>,
    web_fetch: WebFetchLimits,
    web_fetch_policy: WebFetchPolicy,
    cron_note: Option<Arc<str>>,
}

impl BuiltinTools {
    /// Builtin tools whose cron schedules live in the JSON file
    /// `cron_store` (created on the first `CronCreate`). No web search,
    /// ask-user or configuration service: those tools answer with an error
    /// until one is given.
    #[must_use]
    pub fn new(cron_store: impl Into<PathBuf>) -> Self {
        Self {
            ledgers: Arc::default(),
            todo_lists: Arc::default(),
            shells: Arc::default(),
            cron: Arc::new(CronStore::new(cron_store.into())),
            web_search: None,
            ask_user: None,
            config: None,
            web_fetch: WebFetchLimits::default(),
            web_fetch_policy: WebFetchPolicy::default(),
            cron_note: None,
        }
    }

    /// Sets the line `CronCreate` adds to its answer to say when stored
    /// prompts fire on this host (the store only keeps them; a scheduler
    /// of the host fires them), e.g. that a scheduler command must run.
    #[must_use]
    pub fn with_cron_note(mut self, note: impl Into<String>) -> Self {
        self.cron_note = Some(Arc::from(note.into()));
        self
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

    /// Sets which non-public addresses `WebFetch` may reach. The default
    /// reaches public internet addresses only: loopback, private,
    /// link-local and the other ranges of [`WebFetchPolicy`] are refused,
    /// also when a name resolves to them.
    #[must_use]
    pub fn with_web_fetch_policy(mut self, policy: WebFetchPolicy) -> Self {
        self.web_fetch_policy = policy;
        self
    }

    /// Every builtin this crate implements, in registry order, as the
    /// definition the model is told about and its handler. `Task`,
    /// `MultiTask`, `FindTool` (the engine's) and `Skill` (zr-skills') are
    /// not among them.
    #[must_use]
    pub fn tools(&self) -> Vec<(ToolDefinition, Arc<dyn ToolHandler>)> {
        let ledgers = &self.ledgers;
        let mut all = vec![
            entry(BashTool::new(Arc::clone(&self.shells))),
            entry(ReadTool::new(Arc::clone(ledgers))),
            entry(WriteTool::new(Arc::clone(ledgers))),
            entry(EditTool::new(Arc::clone(ledgers))),
            entry(GlobTool),
            entry(GrepTool),
            entry(WebFetchTool::new(
                self.web_fetch.clone(),
                self.web_fetch_policy.clone(),
            )),
            entry(WebSearchTool::new(self.web_search.clone())),
            entry(AskUserQuestionTool::new(self.ask_user.clone())),
            entry(CronCreateTool::new(
                Arc::clone(&self.cron),
                self.cron_note.clone(),
            )),
            entry(CronDeleteTool::new(Arc::clone(&self.cron))),
            entry(CronListTool::new(Arc::clone(&self.cron))),
            entry(ConfigTool::new(self.config.clone())),
            entry(TodoWriteTool::new(Arc::clone(&self.todo_lists))),
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

    /// The builtins whose host service was not given, in registry order
    /// (`WebSearch`, `AskUserQuestion`, `Config`, each without its
    /// service). The engine hands them to the resolver
    /// (`ResolveInput::no_service`), which leaves them out of every pool:
    /// a tool that can only fail is never offered.
    #[must_use]
    pub fn no_service(&self) -> Vec<ToolName> {
        self.unserviced(false)
    }

    /// [`BuiltinTools::no_service`] for a background agent: the ask-user
    /// service never serves one (nobody watches it; its permission
    /// prompts are denied), so `AskUserQuestion` is always among them.
    #[must_use]
    pub fn no_service_in_background(&self) -> Vec<ToolName> {
        self.unserviced(true)
    }

    fn unserviced(&self, background: bool) -> Vec<ToolName> {
        [
            ("WebSearch", self.web_search.is_none()),
            ("AskUserQuestion", background || self.ask_user.is_none()),
            ("Config", self.config.is_none()),
        ]
        .into_iter()
        .filter(|(_, missing)| *missing)
        .map(|(name, _)| {
            name.parse()
                .expect("the builtin names above are valid tool names")
        })
        .collect()
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
        self.todo_lists
            .peek(&AgentKey::new(session, agent), |s| s.items.clone())
            .unwrap_or_default()
    }

    /// The number of background commands `agent` still owns (running or
    /// finished but not yet collected).
    #[must_use]
    pub fn background_count(&self, session: &SessionId, agent: &AgentId) -> usize {
        self.shells
            .peek(&AgentKey::new(session, agent), |s| s.background.len())
            .unwrap_or(0)
    }

    /// Ends an agent's tool state: its background commands get SIGTERM,
    /// then (after a grace of up to two seconds) SIGKILL to their whole
    /// process group; its read ledger and todo list are dropped. Returns the
    /// number of background commands that were stopped. Safe to call for an
    /// agent that never used a tool.
    pub async fn agent_finished(&self, session: &SessionId, agent: &AgentId) -> usize {
        let key = AgentKey::new(session, agent);
        self.ledgers.remove(&key);
        self.todo_lists.remove(&key);
        let Some(shells) = self.shells.remove(&key) else {
            return 0;
        };
        stop_all(shells.background).await
    }
}

#[cfg(test)]
mod tests;
