//! A session's shared state, its configuration and the context of one
//! query.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;
use zr_caps::{AgentCapabilities, AgentDefinition, AgentOptions, ModelAliases, PermissionMode};
use zr_resolve::ResolvePolicy;
use zr_types::{AgentId, AgentName, SessionId, SkillDefinition, Usage};

use crate::background::{Notification, Registry};
use crate::catalog::{AgentTypes, AgentTypesSource, Catalog, Catalogs};
use crate::compact::{CompactionConfig, Spill};
use crate::event::{EventRouter, EventSink};
use crate::hooks::Hooks;
use crate::permission::{Grants, PermissionConfig};
use crate::runtime::RuntimeEnvironment;
use crate::skill_listing::DEFAULT_SKILL_LISTING_CHARS;
use crate::task::{TaskResult, TaskStatus};
use crate::transcript::Transcripts;

/// The root's turn limit unless set otherwise.
pub const DEFAULT_MAX_TURNS: u32 = 100;

/// Limits of delegation (the `subagent` configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentConfig {
    /// Whether the root may delegate at all; `false` removes Task and
    /// MultiTask from its pool (R7).
    pub enabled: bool,
    /// How many subagents of one call run at once (0 counts as 1); the
    /// others wait in a queue inside the call's time budget.
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
    /// The host's hooks (SubagentStart, SubagentStop, PreToolUse,
    /// PostToolUse).
    pub hooks: Hooks,
    /// When agents compact their history, and how large a tool result may
    /// be before it is cut ([`CompactionConfig::default`]).
    pub compaction: CompactionConfig,
}

impl AgentConfig {
    /// A root with `system_prompt`, no subagent types, no extra tools, and
    /// the default limits.
    #[must_use]
    pub fn new(system_prompt: impl Into<String>) -> Self {
        Self {
            system_prompt: system_prompt.into(),
            max_turns: DEFAULT_MAX_TURNS,
            options: AgentOptions::default(),
            capabilities: AgentCapabilities::default(),
            sub_agents: BTreeMap::new(),
            subagent: SubagentConfig::default(),
            policy: ResolvePolicy::default(),
            skills: Vec::new(),
            skill_listing_chars: DEFAULT_SKILL_LISTING_CHARS,
            model_aliases: ModelAliases::default(),
            types_source: None,
            permission_mode: PermissionMode::default(),
            sessions_dir: None,
            permissions: PermissionConfig::default(),
            hooks: Hooks::default(),
            compaction: CompactionConfig::default(),
        }
    }

    /// Adds a subagent type under its name.
    #[must_use]
    pub fn with_sub_agent(mut self, definition: AgentDefinition) -> Self {
        self.sub_agents.insert(definition.name.clone(), definition);
        self
    }
}

/// What every agent of a session shares.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) id: SessionId,
    pub(crate) runtime: Arc<RuntimeEnvironment>,
    pub(crate) config: AgentConfig,
    /// The agent types, skills and builtin definitions now (hot reload
    /// replaces them between the root's turns).
    pub(crate) catalog: Catalogs,
    child_seq: AtomicU32,
    cleanups: Mutex<Vec<JoinHandle<()>>>,
    /// The session's background agents.
    pub(crate) background: Registry,
    /// Where background agents' events go.
    pub(crate) router: Arc<EventRouter>,
    /// What the host approved for the rest of the session.
    pub(crate) grants: Grants,
    /// Where cut tool results are written in full.
    pub(crate) spill: Spill,
    pub(crate) transcripts: Transcripts,
}

impl Session {
    pub(crate) fn new(
        id: SessionId,
        runtime: Arc<RuntimeEnvironment>,
        mut config: AgentConfig,
    ) -> Self {
        config.policy.delegation = config.subagent.enabled;
        config.subagent.max_concurrent = config.subagent.max_concurrent.max(1);
        let types = AgentTypes {
            sub_agents: config.sub_agents.clone(),
            skills: config.skills.clone(),
        };
        let catalog = Catalogs::new(Catalog::new(types, &runtime, &config));
        let spill = Spill::new(&id, config.sessions_dir.as_deref());
        Self {
            id,
            runtime,
            config,
            catalog,
            child_seq: AtomicU32::new(0),
            cleanups: Mutex::new(Vec::new()),
            background: Registry::default(),
            router: Arc::new(EventRouter::default()),
            grants: Grants::default(),
            spill,
            transcripts: Transcripts::default(),
        }
    }

    /// Where `agent`'s transcript is written, when transcripts are on.
    pub(crate) fn transcript_path(&self, agent: &AgentId) -> Option<PathBuf> {
        self.config
            .sessions_dir
            .as_ref()
            .map(|dir| dir.join(self.id.as_str()).join(format!("{agent}.jsonl")))
    }

    /// The next subagent number of the session (1, 2, ...).
    pub(crate) fn next_child(&self) -> u32 {
        self.child_seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Numbers the next subagents after `seq` (a resumed session's
    /// existing ones).
    pub(crate) fn skip_children(&self, seq: u32) {
        self.child_seq.fetch_max(seq, Ordering::Relaxed);
    }

    /// Forgets everything kept for `agent`: kills its background shells,
    /// drops its read ledger and todo list, tells the observer.
    pub(crate) async fn agent_finished(&self, agent: &AgentId) {
        self.runtime
            .builtin_tools()
            .agent_finished(&self.id, agent)
            .await;
        if let Some(observer) = self.runtime.observer() {
            observer.agent_finished(&self.id, agent);
        }
        self.transcripts.close(agent);
    }

    /// Remembers a cleanup started from a destructor, so that
    /// [`Session::wait_cleanups`] can wait for it.
    pub(crate) fn push_cleanup(&self, handle: JoinHandle<()>) {
        let mut cleanups = crate::sync::lock(&self.cleanups);
        cleanups.retain(|h| !h.is_finished());
        cleanups.push(handle);
    }

    /// Waits for every cleanup started from a destructor.
    pub(crate) async fn wait_cleanups(&self) {
        let handles = std::mem::take(&mut *crate::sync::lock(&self.cleanups));
        for handle in handles {
            let _ = handle.await;
        }
    }
}

/// Runs [`Session::agent_finished`] for an agent on every exit path: by
/// [`Cleanup::run`] on the normal ones, from `Drop` (in a spawned task)
/// when the agent's future is dropped.
#[derive(Debug)]
pub(crate) struct Cleanup {
    session: Arc<Session>,
    agent: Option<AgentId>,
}

impl Cleanup {
    pub(crate) fn new(session: Arc<Session>, agent: AgentId) -> Self {
        Self {
            session,
            agent: Some(agent),
        }
    }

    pub(crate) async fn run(mut self) {
        if let Some(agent) = self.agent.clone() {
            self.session.agent_finished(&agent).await;
            // Disarmed only once done: if this future is dropped while it
            // waits (the query cancelled during the grace period of the
            // agent's background commands), `Drop` finishes the cleanup and
            // the observer still hears of the agent's end.
            self.agent = None;
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let Some(agent) = self.agent.take() else {
            return;
        };
        let session = Arc::clone(&self.session);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let task = handle.spawn({
                    let session = Arc::clone(&session);
                    async move { session.agent_finished(&agent).await }
                });
                session.push_cleanup(task);
            }
            Err(_) => {
                tracing::warn!(%agent, "no async runtime to clean up after the agent; its background commands end with the process");
            }
        }
    }
}

/// The context of one query: the session, the event sink, the usage of
/// every agent under the query.
#[derive(Debug, Clone)]
pub(crate) struct QueryCtx {
    pub(crate) session: Arc<Session>,
    pub(crate) sink: EventSink,
    total: Arc<Mutex<Usage>>,
    /// Notifications of background agents put into this query's
    /// conversation: queued again if the query keeps nothing.
    delivered: Arc<Mutex<Vec<Notification>>>,
    /// Subagents of the query that ended `failed`.
    failed: Arc<Mutex<Vec<TaskResult>>>,
}

impl QueryCtx {
    pub(crate) fn new(session: Arc<Session>, sink: EventSink) -> Self {
        Self {
            session,
            sink,
            total: Arc::new(Mutex::new(Usage::default())),
            delivered: Arc::default(),
            failed: Arc::default(),
        }
    }

    /// Remembers a subagent's result if it `failed`, for the query's
    /// result.
    pub(crate) fn note_result(&self, result: &TaskResult) {
        if result.status == TaskStatus::Failed {
            crate::sync::lock(&self.failed).push(result.clone());
        }
    }

    /// The subagents of the query that failed so far.
    pub(crate) fn failed_subagents(&self) -> Vec<TaskResult> {
        crate::sync::lock(&self.failed).clone()
    }

    /// Takes the notifications waiting for `agent`, remembering them until
    /// the query keeps its conversation ([`QueryCtx::take_delivered`]).
    pub(crate) fn notifications_for(&self, agent: &AgentId) -> Vec<String> {
        let taken = self.session.background.take_notifications(agent);
        let texts = taken.iter().map(|n| n.text().to_owned()).collect();
        crate::sync::lock(&self.delivered).extend(taken);
        texts
    }

    /// The notifications delivered so far, forgotten here.
    pub(crate) fn take_delivered(&self) -> Vec<Notification> {
        std::mem::take(&mut *crate::sync::lock(&self.delivered))
    }

    /// Adds `usage` to the query's total and returns the new total.
    pub(crate) fn add_usage(&self, usage: Usage) -> Usage {
        let mut total = crate::sync::lock(&self.total);
        *total = total.plus(usage);
        *total
    }

    pub(crate) fn total_usage(&self) -> Usage {
        *crate::sync::lock(&self.total)
    }
}
