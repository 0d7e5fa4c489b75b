//! The root agent of a session and its queries.

pub(crate) mod cron;
pub(crate) mod host_task;
pub(crate) mod preview;
pub(crate) mod resume;
pub(crate) mod snapshot;

use std::collections::BTreeSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, UNIX_EPOCH};

use futures_util::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use zr_caps::AgentCapabilities;
use zr_types::{AgentId, Message, SessionId, ToolName, Usage, error_chain};

use crate::config::AgentConfig;
use crate::delegate::background;
use crate::delegate::task::Subagents;
use crate::error::EngineError;
use crate::error::panic_message;
use crate::event::{Event, EventSink};
use crate::history::Opening;
use crate::meta::AgentMeta;
use crate::model::agent_model::effort;
use crate::model::budget::{BudgetEnded, TreeBudget};
use crate::model::structured::Structured;
use crate::outcome::{TaskResult, TaskStatus};
use crate::policy::hooks::{AgentHooks, HookAgent, SessionEndReason, SessionSource};
use crate::runtime::RuntimeEnvironment;
use crate::session::pools::{root_system_prompt, root_tools};
use crate::session::registry::BackgroundAgent;
use crate::session::{Cleanup, QueryCtx, Session};
use crate::sync::lock;
use crate::telemetry::in_span::in_span;
use crate::telemetry::{self, Traced};
use crate::tools::catalog::RootReload;
use crate::turn::agent_run::{AgentRun, Resumption};

/// Per-query changes to the root (C1: a set field replaces the
/// constructor's).
#[derive(Debug, Clone, Default)]
pub struct QueryOverrides {
    /// Capabilities fields that replace the root's for this query.
    pub capabilities: Option<AgentCapabilities>,
    /// The turn limit of this query.
    pub max_turns: Option<u32>,
    /// The model of this query.
    pub model: Option<String>,
    /// The JSON Schema the root's answer to this query must match
    /// (replaces [`AgentConfig::output_schema`]); see
    /// [`QueryResult::value`].
    pub output_schema: Option<serde_json::Value>,
    /// What this query's whole tree may spend (replaces
    /// [`AgentConfig::budget`]).
    pub budget: Option<TreeBudget>,
}

/// How a query ended.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// `completed`, `max_turns` (the output is the root's summary),
    /// `denied` (the root was stopped for too many permission denials; the
    /// output is what it wrote, the reasons came as
    /// [`EventKind::PermissionDenied`](crate::EventKind::PermissionDenied)
    /// events) or `stopped` (a hook stopped it; the reason came as
    /// [`EventKind::HookStopped`](crate::EventKind::HookStopped)); a root
    /// that fails is an [`EngineError`] instead.
    pub status: TaskStatus,
    /// The root's final answer.
    pub output: String,
    /// The root's model requests.
    pub turns: u32,
    /// The root's own usage.
    pub usage: Usage,
    /// The usage of every agent of the query, the root included.
    pub total_usage: Usage,
    /// What `total_usage` cost, in US dollars, each agent's tokens at its
    /// model's price ([`price_of`](crate::price_of)); `None` when a model
    /// of the query is not in the table.
    pub cost_usd: Option<f64>,
    /// Wall time.
    pub duration: Duration,
    /// The subagents of this query that ended `failed` (a model request
    /// that failed for good, a model that stopped without an answer, a
    /// worktree that could not be made), in the order they ended. The root
    /// got each one's result and may have answered anyway; hosts show
    /// these so that a `completed` root does not hide them.
    pub failed_subagents: Vec<TaskResult>,
    /// With an output schema ([`AgentConfig::output_schema`] or
    /// [`QueryOverrides::output_schema`]): the root's answer, parsed and
    /// valid (`output` is its text). `None` without a schema, or when the
    /// root stopped at its turn limit. An answer that does not match after
    /// one repair turn is [`EngineError::InvalidAnswer`].
    pub value: Option<serde_json::Value>,
    /// The tree budget ([`AgentConfig::budget`],
    /// [`QueryOverrides::budget`]) that ended the query; then `status` is
    /// `budget_exhausted` and `output` the root's summary.
    pub budget_ended: Option<BudgetEnded>,
}

/// What the root keeps between queries.
#[derive(Debug, Default)]
struct RootState {
    history: Vec<Message>,
    loaded: Vec<ToolName>,
    /// The number of the query that runs, if one does.
    running: Option<u64>,
    /// Numbers queries.
    queries: u64,
    /// Set by [`Agent::resume`] until a query takes it: the calls the
    /// transcript recorded as started (the first query goes on from the
    /// transcript).
    resumed: Option<BTreeSet<String>>,
    /// The SessionStart hooks due at the next query (taken by it).
    start: Option<SessionSource>,
    /// Whether a query ran the SessionStart hooks: SessionEnd is due.
    began: bool,
}

/// The root agent of a session. Each [`Agent::query`] continues its
/// conversation; the tools it loaded through FindTool stay loaded.
///
/// Built complete from a runtime and a configuration:
///
/// ```
/// # use std::sync::Arc;
/// # use zr_caps::RuntimeSettings;
/// # use zr_engine::{Agent, AgentConfig, RuntimeEnvironment, ScriptedProvider};
/// # use zr_tools::BuiltinTools;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let script = r#"{"agents": {"root": [{"turns": [{"text": "Hello."}]}]}}"#;
/// let provider = Arc::new(ScriptedProvider::from_json(script)?);
/// let settings = RuntimeSettings { model: "scripted".into(), cwd: dir.path().into(), env: Default::default() };
/// let runtime = RuntimeEnvironment::new(provider, settings, BuiltinTools::new(dir.path().join("cron.json")));
/// let agent = Agent::new(Arc::new(runtime), AgentConfig::new("You are helpful."));
/// let result = agent.prompt("Say hello").await?;
/// assert_eq!(result.output, "Hello.");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Agent {
    session: Arc<Session>,
    state: Arc<Mutex<RootState>>,
    /// The session's span, the root of its trace: it ends when the agent
    /// is dropped (and its background agents' spans have ended).
    span: Traced,
}

fn new_session_id(runtime: &RuntimeEnvironment) -> SessionId {
    let millis = runtime
        .effects()
        .now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    SessionId::from_parts(millis, fastrand::u32(..))
}

impl Agent {
    /// A root agent of a new session.
    #[must_use]
    pub fn new(runtime: Arc<RuntimeEnvironment>, config: AgentConfig) -> Self {
        let session = new_session_id(&runtime);
        Self::with_session_id(runtime, config, session)
    }

    /// A root agent of a new session with the id `session` chosen by the
    /// host (a durable backend keys the session by it) instead of a fresh
    /// one. Its transcripts go to the same `sessions_dir/{session}` folder
    /// a fresh id's would.
    #[must_use]
    pub fn with_session_id(
        runtime: Arc<RuntimeEnvironment>,
        config: AgentConfig,
        session: SessionId,
    ) -> Self {
        Self {
            span: telemetry::session_span(runtime.tracer(), &session),
            session: Arc::new(Session::new(session, runtime, config)),
            state: Arc::new(Mutex::new(RootState {
                start: Some(SessionSource::Startup),
                ..RootState::default()
            })),
        }
    }

    /// The session's id.
    #[must_use]
    pub fn session_id(&self) -> &SessionId {
        &self.session.id
    }

    /// The configuration the agent runs with: the one it was built from,
    /// with `policy.delegation` set from `subagent.enabled` and
    /// `subagent.max_concurrent` at least 1. Its `sub_agents` are the types
    /// that Task and MultiTask can start (as the session was built: with a
    /// [`types_source`](AgentConfig::types_source), the types changed
    /// since are not in it).
    #[must_use]
    pub fn config(&self) -> &AgentConfig {
        &self.session.config
    }

    /// The conversation so far: what the queries that returned a
    /// [`QueryResult`] added (a cancelled or failed query adds nothing).
    #[must_use]
    pub fn history(&self) -> Vec<Message> {
        lock(&self.state).history.clone()
    }

    /// Sends `prompt` and returns the stream of the query's events. The
    /// query runs on the Tokio runtime whether or not the stream is polled;
    /// [`Query::finish`] waits for its result. Dropping the [`Query`] (or
    /// [`Query::cancel`]) stops every agent under it and kills the
    /// processes their tool calls started; the conversation then stays as
    /// it was before the query. The root's background commands (Bash
    /// `run_in_background`) belong to the root and end when the [`Agent`]
    /// is dropped.
    ///
    /// Must be called within a Tokio runtime; otherwise the query fails
    /// with [`EngineError::NoRuntime`].
    pub fn query(&self, prompt: impl Into<String>, overrides: QueryOverrides) -> Query {
        self.start(Some(prompt.into()), overrides)
    }

    /// A query with `prompt`, or with none: the root continues its history
    /// (see [`Agent::continue_interrupted`]).
    pub(crate) fn start(&self, prompt: Option<String>, overrides: QueryOverrides) -> Query {
        self.start_as(prompt, overrides, true)
    }

    /// [`Agent::start`]; `heard: false` when nobody reads the query's
    /// events (they are not made).
    fn start_as(&self, prompt: Option<String>, overrides: QueryOverrides, heard: bool) -> Query {
        let (tx, rx) = mpsc::unbounded_channel();
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return Query::failed(rx, EngineError::NoRuntime);
        };
        let (history, loaded, number, resumed) = {
            let mut state = lock(&self.state);
            if state.running.is_some() {
                return Query::failed(
                    rx,
                    EngineError::Busy {
                        agent: AgentId::root(),
                    },
                );
            }
            state.queries += 1;
            state.running = Some(state.queries);
            let resumed = state.resumed.take();
            let start = state.start.take();
            state.began |= start.is_some();
            (
                state.history.clone(),
                state.loaded.clone(),
                state.queries,
                (resumed, start),
            )
        };
        let busy = BusyGuard {
            state: Arc::clone(&self.state),
            query: number,
        };
        let release = busy.clone();
        self.session.router.query_started(number, tx.clone());
        let sink = if heard {
            EventSink::new(Instant::now(), tx)
        } else {
            EventSink::unheard(Instant::now(), tx)
        };
        let budget = overrides.budget.unwrap_or(self.session.config.budget);
        let ctx = QueryCtx::new(Arc::clone(&self.session), sink).with_budget(budget);
        let state = Arc::clone(&self.state);
        // Made outside the task: dropped with it even if it never ran.
        let ending = QueryEnd {
            ctx: ctx.clone(),
            query: number,
            kept: false,
        };
        let session_span = self.span.clone();
        let task = handle.spawn(async move {
            let guard = busy;
            // The whole guard moves in (a use of one field alone would
            // move only that field's copy).
            let mut ending = ending;
            let (resumed, session_start) = resumed;
            let start = RootStart {
                history,
                loaded,
                prompt,
                resumed,
                session_start,
            };
            let result = run_root(&ctx, &session_span, start, overrides).await;
            if result.is_err() {
                // A failed query adds nothing to the history, nor in the
                // transcript.
                let kept = lock(&state).history.clone();
                ctx.session.transcripts.forget_query(&ctx.sink, &kept);
            }
            result.map(|(result, history, loaded)| {
                let mut state = lock(&state);
                // A query dropped by its host keeps nothing (another may
                // have started since).
                if state.running == Some(guard.query) {
                    state.history = history;
                    state.loaded = loaded;
                    ending.kept = true;
                }
                result
            })
        });
        Query {
            rx,
            task: Some(task),
            early: None,
            session: Some(Arc::clone(&self.session)),
            release: Some(release),
        }
    }

    /// Ends the session for its hooks: runs the SessionEnd hooks with
    /// `reason`, once, if a query of this agent ran the SessionStart
    /// hooks (a later call does nothing). Dropping the agent does not run
    /// them (hooks are awaited, and a drop cannot wait): a host calls this
    /// before it lets the agent go.
    pub async fn end(&self, reason: SessionEndReason) {
        let began = std::mem::take(&mut lock(&self.state).began);
        if !began {
            return;
        }
        let session = &self.session;
        let root = root_meta(session, None, None, None);
        let view = || HookAgent::of(&session.id, &root, session.transcripts.path(&root.id));
        AgentHooks::new(&session.config.hooks, None, view, None)
            .session_end(reason)
            .await;
    }

    /// Sends `prompt` and waits for the answer.
    ///
    /// # Errors
    ///
    /// - [`EngineError::Resolve`] or [`EngineError::MissingHandler`]: the
    ///   root's pool cannot be resolved, or a tool in it has no handler
    ///   (checked before the first model request);
    /// - [`EngineError::Busy`]: another query of this agent runs;
    /// - [`EngineError::Provider`]: a model request of the root failed for
    ///   good (a subagent's failure is its task's result, not an error);
    /// - [`EngineError::NoAnswer`]: the root's model stopped with neither
    ///   text nor a tool call, for a reason other than ending its turn;
    /// - [`EngineError::NoRuntime`]: called outside a Tokio runtime;
    /// - [`EngineError::Panicked`]: the engine itself panicked (a bug).
    pub async fn prompt(&self, prompt: impl Into<String>) -> Result<QueryResult, EngineError> {
        // Its events would be discarded unread: none is made.
        self.start_as(Some(prompt.into()), QueryOverrides::default(), false)
            .finish()
            .await
    }

    /// A root agent of the existing session `session` with `history` and
    /// the tools it `loaded`.
    /// `started`: the calls its transcript recorded as started, when its
    /// first query goes on from a transcript (`None`: the history ends
    /// with a finished query). `start`: the SessionStart hooks its first
    /// query runs (`None`: the session started before).
    pub(crate) fn restored(
        session: Session,
        history: Vec<Message>,
        loaded: Vec<ToolName>,
        started: Option<BTreeSet<String>>,
        start: Option<SessionSource>,
    ) -> Self {
        Self {
            span: telemetry::session_span(session.runtime.tracer(), &session.id),
            session: Arc::new(session),
            state: Arc::new(Mutex::new(RootState {
                history,
                loaded,
                resumed: started,
                start,
                ..RootState::default()
            })),
        }
    }

    /// The history and loaded tools of the root (a copy), or `None` while
    /// a query runs.
    pub(crate) fn kept(&self) -> Option<(Vec<Message>, Vec<ToolName>)> {
        let state = lock(&self.state);
        state
            .running
            .is_none()
            .then(|| (state.history.clone(), state.loaded.clone()))
    }

    /// The session every agent of this root shares.
    pub(crate) fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// The number of the next call a host makes through
    /// [`Agent::run_task`] (shared with the queries' numbers: unique in the
    /// agent).
    pub(crate) fn next_host_call(&self) -> u64 {
        let mut state = lock(&self.state);
        state.queries += 1;
        state.queries
    }

    /// The tools the root loaded through FindTool.
    pub(crate) fn loaded(&self) -> Vec<ToolName> {
        lock(&self.state).loaded.clone()
    }
}

impl Agent {
    /// The session's background agents (running and finished), by id.
    #[must_use]
    pub fn background_agents(&self) -> Vec<BackgroundAgent> {
        self.session.background.list()
    }

    /// One background agent: its progress while it runs, its result once
    /// it finished.
    #[must_use]
    pub fn background_agent(&self, id: &AgentId) -> Option<BackgroundAgent> {
        self.session.background.get(id)
    }

    /// Stops a running background agent and waits until its tools and
    /// processes are gone. It ends with status `cancelled` and what it
    /// wrote so far; its parent is told at its next turn. Returns `false`
    /// if no such agent runs.
    pub async fn stop_background(&self, id: &AgentId) -> bool {
        let Some(task) = self.session.background.take_task(id) else {
            return false;
        };
        task.abort();
        let _ = task.await;
        self.session.wait_cleanups().await;
        true
    }

    /// Waits until no background agent of the session runs: each one has
    /// ended, its processes are gone and its SubagentStop hooks returned.
    pub async fn wait_background(&self) {
        self.session.background.wait_idle().await;
        self.session.wait_cleanups().await;
    }

    /// The events of the session's background agents from now on, also
    /// between queries (while a query runs, they come through its stream
    /// too). Each call is a new subscriber; dropping it unsubscribes.
    #[must_use]
    pub fn background_events(&self) -> BackgroundEvents {
        BackgroundEvents {
            rx: self.session.router.subscribe(),
        }
    }
}

/// The events of a session's background agents
/// ([`Agent::background_events`]); ends when the [`Agent`] is dropped,
/// after the `SubagentFinished` events (status `cancelled`) of the
/// background agents that stopped with it. (A [`Query`] still held keeps
/// the session, and the stream, open.)
#[derive(Debug)]
pub struct BackgroundEvents {
    rx: mpsc::UnboundedReceiver<Event>,
}

impl Stream for BackgroundEvents {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.rx.poll_recv(cx)
    }
}

/// Ends a query's ties to the session however its task ends: the router
/// lets go of its stream (so that the stream closes), and notifications it
/// took are queued again unless the query kept its conversation.
struct QueryEnd {
    ctx: QueryCtx,
    query: u64,
    kept: bool,
}

impl Drop for QueryEnd {
    fn drop(&mut self) {
        self.ctx.session.router.query_ended(self.query);
        let delivered = self.ctx.take_delivered();
        if !self.kept && !delivered.is_empty() {
            self.ctx.session.background.requeue(delivered);
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // Background agents and the root's background commands end with
        // the session.
        self.session.background.abort_all();
        drop(Cleanup::new(Arc::clone(&self.session), AgentId::root()));
    }
}

/// Marks the root free again however query number `query` ends: its task
/// is dropped, or the host dropped its [`Query`] (the aborted task is
/// dropped later, by the runtime; the root must not stay busy until then).
#[derive(Debug, Clone)]
struct BusyGuard {
    state: Arc<Mutex<RootState>>,
    query: u64,
}

impl BusyGuard {
    fn release(&self) {
        let mut state = lock(&self.state);
        if state.running == Some(self.query) {
            state.running = None;
        }
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.release();
    }
}

/// What a root query starts from.
struct RootStart {
    history: Vec<Message>,
    loaded: Vec<ToolName>,
    prompt: Option<String>,
    /// The first query after [`Agent::resume`]: the calls recorded as
    /// started.
    resumed: Option<BTreeSet<String>>,
    /// The session's first query: the SessionStart hooks to run.
    session_start: Option<SessionSource>,
}

async fn run_root(
    ctx: &QueryCtx,
    session_span: &Traced,
    start_from: RootStart,
    overrides: QueryOverrides,
) -> Result<(QueryResult, Vec<Message>, Vec<ToolName>), EngineError> {
    let RootStart {
        mut history,
        loaded,
        prompt,
        resumed,
        session_start,
    } = start_from;
    let start = Instant::now();
    let session = &ctx.session;
    let config = &session.config;
    let root = AgentId::root();
    let tools = root_tools(
        session,
        &session.catalog.current(),
        overrides.capabilities.as_ref(),
        &loaded,
    )?;
    if let Some(observer) = session.runtime.observer() {
        observer.agent_started(&session.id, &root, tools.pool());
    }
    for id in session.take_found_background() {
        background::revive(ctx, &id, &tools, Arc::new(Subagents));
    }
    let output = match overrides
        .output_schema
        .as_ref()
        .or(config.output_schema.as_ref())
    {
        Some(schema) => {
            Some(
                Structured::compile(schema).map_err(|message| EngineError::OutputSchema {
                    agent: root.clone(),
                    from: "the query's output schema".to_owned(),
                    message,
                })?,
            )
        }
        None => None,
    };
    let meta = root_meta(session, overrides.model, overrides.max_turns, output);
    let opening = opening(session, &meta, session_start, prompt).await?;
    let resumption = match resumed {
        Some(started) => Some(Resumption { started, opening }),
        None => {
            opening.open(&mut history);
            None
        }
    };
    let reload = RootReload {
        capabilities: overrides.capabilities,
    };
    let mut run = AgentRun::new(meta, tools, history)
        .with_delegate(Arc::new(Subagents))
        .with_reload(reload);
    run.resumed = resumption;
    let span = telemetry::agent_span(
        session.runtime.tracer(),
        session_span,
        &run.meta,
        &session.id,
        session.runtime.provider().name(),
        None,
    );
    let outcome = in_span(run.run(ctx), span.clone()).await;
    telemetry::record_end(&span, outcome.status, outcome.turns, outcome.usage, None);
    if let Some(source) = outcome.error {
        telemetry::record_failure(&span, "provider_error", &error_chain(&source));
        return Err(EngineError::Provider {
            agent: root,
            source,
        });
    }
    if let Some(message) = outcome.invalid {
        return Err(EngineError::InvalidAnswer {
            agent: root,
            message,
        });
    }
    if let Some(stop_reason) = outcome.no_answer {
        telemetry::record_failure(&span, "no_answer", stop_reason.as_str());
        return Err(EngineError::NoAnswer {
            agent: root,
            stop_reason,
        });
    }
    let result = QueryResult {
        status: outcome.status,
        output: outcome.output,
        turns: outcome.turns,
        usage: outcome.usage,
        total_usage: ctx.total_usage(),
        cost_usd: ctx.total_cost(),
        duration: start.elapsed(),
        failed_subagents: ctx.failed_subagents(),
        value: outcome.value,
        budget_ended: ctx.budget_ended(),
    };
    Ok((result, outcome.history, outcome.loaded))
}

/// What the root's query opens with: the SessionStart hooks' context (the
/// session's first query), the prompt, the UserPromptSubmit hooks'
/// context; or why the prompt is not sent.
async fn opening(
    session: &Session,
    root: &AgentMeta,
    session_start: Option<SessionSource>,
    prompt: Option<String>,
) -> Result<Opening, EngineError> {
    let view = || HookAgent::of(&session.id, root, session.transcripts.path(&root.id));
    let hooks = AgentHooks::new(&session.config.hooks, None, view, None);
    let refused = |event: &'static str| {
        move |reason| EngineError::PromptBlocked {
            event: event.to_owned(),
            reason,
        }
    };
    let before = match session_start {
        Some(source) => hooks
            .session_start(source)
            .await
            .map_err(refused("SessionStart"))?,
        None => Vec::new(),
    };
    let after = match &prompt {
        Some(prompt) => hooks
            .user_prompt_submit(prompt)
            .await
            .map_err(refused("UserPromptSubmit"))?,
        None => Vec::new(),
    };
    Ok(Opening {
        before,
        prompt,
        after,
    })
}

/// The root of `session` as the stores see it, with the query's `model`
/// and turn limit (`None`: the session's) and the schema of its answer.
pub(crate) fn root_meta(
    session: &Session,
    model: Option<String>,
    max_turns: Option<u32>,
    output: Option<Arc<Structured>>,
) -> AgentMeta {
    let settings = session.runtime.settings();
    let config = &session.config;
    AgentMeta {
        id: AgentId::root(),
        agent_type: Arc::from("root"),
        parent: None,
        mode: config.permission_mode,
        background: false,
        cwd: Arc::from(settings.cwd.as_path()),
        worktree: None,
        memory: None,
        reads_only: false,
        // The user's own agent: its commands write where it may.
        writes: true,
        narrowing: None,
        model: model.map_or_else(|| Arc::from(settings.model.as_str()), Arc::from),
        system: root_system_prompt(
            &config.system_prompt,
            session.catalog.current().instructions.as_deref(),
        ),
        max_turns: max_turns.unwrap_or(config.max_turns),
        output,
        effort: config.effort.map(effort),
        task: None,
        depth: zr_resolve::Depth::root(config.policy.max_depth),
    }
}

/// A running query: a stream of [`Event`]s, ending when the query ends.
#[derive(Debug)]
pub struct Query {
    rx: mpsc::UnboundedReceiver<Event>,
    task: Option<JoinHandle<Result<QueryResult, EngineError>>>,
    early: Option<EngineError>,
    session: Option<Arc<Session>>,
    /// Frees the root when the query is dropped before its task ends.
    release: Option<BusyGuard>,
}

/// The result of a run spawned as `task` whose events come through `rx`
/// (a [`Query`], a host's [`TaskRun`](crate::agent::host_task::TaskRun)):
/// `early`'s error if it failed before starting, else the task's once
/// the channel has closed (the events not read are discarded as they come,
/// so none pile up); a panic is [`EngineError::Panicked`], an aborted task
/// [`EngineError::Cancelled`].
pub(crate) async fn join_spawned<T>(
    early: &mut Option<EngineError>,
    rx: &mut mpsc::UnboundedReceiver<Event>,
    task: &mut Option<JoinHandle<Result<T, EngineError>>>,
) -> Result<T, EngineError> {
    if let Some(error) = early.take() {
        return Err(error);
    }
    // The channel closes when the task ends.
    while rx.recv().await.is_some() {}
    let Some(running) = task.as_mut() else {
        return Err(EngineError::Cancelled);
    };
    let result = running.await;
    *task = None;
    match result {
        Ok(result) => result,
        Err(join) if join.is_panic() => Err(EngineError::Panicked {
            message: panic_message(join.into_panic().as_ref()),
        }),
        Err(_) => Err(EngineError::Cancelled),
    }
}

impl Query {
    /// A query running as `task`, its events coming through `rx`.
    pub(crate) fn spawned(
        rx: mpsc::UnboundedReceiver<Event>,
        task: JoinHandle<Result<QueryResult, EngineError>>,
        session: Arc<Session>,
    ) -> Self {
        Self {
            rx,
            task: Some(task),
            early: None,
            session: Some(session),
            release: None,
        }
    }

    pub(crate) fn failed(rx: mpsc::UnboundedReceiver<Event>, error: EngineError) -> Self {
        Self {
            rx,
            task: None,
            early: Some(error),
            session: None,
            release: None,
        }
    }

    /// Waits for the query's result, discarding the events not yet read
    /// (as they come, so that none pile up).
    ///
    /// # Errors
    ///
    /// As [`Agent::prompt`]; [`EngineError::Cancelled`] if the query's task
    /// was aborted.
    pub async fn finish(mut self) -> Result<QueryResult, EngineError> {
        join_spawned(&mut self.early, &mut self.rx, &mut self.task).await
    }

    /// Stops every agent of the query and waits until their tools and
    /// processes are gone (and the observer heard `agent_finished` for
    /// each subagent). The root's conversation stays as it was before the
    /// query.
    pub async fn cancel(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
        if let Some(session) = self.session.take() {
            session.wait_cleanups().await;
        }
    }
}

/// What the cron scheduler needs of the root and its queries.
impl Agent {
    /// The runtime the session runs on.
    pub(crate) fn runtime(&self) -> &Arc<RuntimeEnvironment> {
        &self.session.runtime
    }
}

impl Query {
    /// The error of a query that could not start (the root was busy, no
    /// runtime), taken out of it; `None` for a query that started.
    pub(crate) fn take_early_error(&mut self) -> Option<EngineError> {
        self.early.take()
    }
}

impl Stream for Query {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for Query {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        // The aborted task is dropped later by the runtime; the root is
        // free for a new query now.
        if let Some(release) = self.release.take() {
            release.release();
        }
    }
}
