//! Background subagents: started by `Task` with `run_in_background` (or a
//! type whose definition says `background: true`), they run on after the
//! call returns, bound to the session rather than the turn that started
//! them. Their parent hears of their end at its next turn; a progress
//! summary is produced every interval; the host lists, inspects, stops and
//! waits for them.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;
use zr_caps::Isolation;
use zr_providers::{ModelEvent, ModelRequest, RequestOrigin, ToolChoice};
use zr_types::{AgentId, Message, Usage, error_chain, texts};

use crate::event::EventKind;
use crate::hooks::{self, HookAgent};
use crate::run::{AgentRun, Progress, push_user_text};
use crate::session::{QueryCtx, Session};
use crate::sync::lock;
use crate::task::{self, TaskResult, TaskStatus};
use crate::worktree::Scope;

/// What the progress side request asks.
const PROGRESS_REQUEST: &str = "Do not call any tools and do not continue the task. In at most eight words, say what you are doing right now, e.g. \"Reading the parser's tests\".";

/// A progress summary is skipped while the agent's conversation has fewer
/// messages than this (the prompt and one answer say nothing new).
const MIN_MESSAGES_FOR_PROGRESS: usize = 3;

/// A background agent as the host sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundAgent {
    /// Its id (its path).
    pub id: AgentId,
    /// `fork` or its type's name.
    pub agent_type: String,
    /// The task's short description.
    pub description: String,
    /// The agent that started it.
    pub parent: AgentId,
    /// Time since it was started (until it finished, once it has).
    pub elapsed: Duration,
    /// Model requests made so far.
    pub turns: u32,
    /// Tokens used so far.
    pub usage: Usage,
    /// The latest progress summary.
    pub progress: Option<String>,
    /// Its result, once it finished (also when it was stopped).
    pub result: Option<TaskResult>,
}

impl BackgroundAgent {
    /// Whether it still runs.
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.result.is_none()
    }
}

/// A finished background agent's result, waiting for its parent's next
/// turn.
#[derive(Debug, Clone)]
pub(crate) struct Notification {
    parent: AgentId,
    text: String,
}

#[derive(Debug)]
struct Entry {
    agent_type: String,
    description: String,
    parent: AgentId,
    started: Instant,
    progress: Arc<Mutex<Progress>>,
    summary: Option<String>,
    result: Option<TaskResult>,
    task: Option<JoinHandle<()>>,
}

/// The session's background agents and the notifications not yet
/// delivered.
#[derive(Debug)]
pub(crate) struct Registry {
    entries: Mutex<BTreeMap<AgentId, Entry>>,
    notifications: Mutex<Vec<Notification>>,
    /// How many agents' tasks are not over yet (their cleanup and
    /// SubagentStop hooks included).
    running: watch::Sender<usize>,
    /// Set when the session ends: an agent launched later is stopped at
    /// once (a query may outlive its [`crate::Agent`]).
    closed: AtomicBool,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            entries: Mutex::default(),
            notifications: Mutex::default(),
            running: watch::Sender::new(0),
            closed: AtomicBool::new(false),
        }
    }
}

impl Registry {
    /// Every background agent of the session, by id.
    pub(crate) fn list(&self) -> Vec<BackgroundAgent> {
        lock(&self.entries)
            .iter()
            .map(|(id, entry)| view(id, entry))
            .collect()
    }

    /// One background agent.
    pub(crate) fn get(&self, id: &AgentId) -> Option<BackgroundAgent> {
        lock(&self.entries).get(id).map(|entry| view(id, entry))
    }

    /// Takes the task of a running agent, to stop it.
    pub(crate) fn take_task(&self, id: &AgentId) -> Option<JoinHandle<()>> {
        lock(&self.entries).get_mut(id).and_then(|e| e.task.take())
    }

    /// Stops every background agent, and those launched from now on (the
    /// session ends).
    pub(crate) fn abort_all(&self) {
        let mut entries = lock(&self.entries);
        self.closed.store(true, Ordering::Relaxed);
        for entry in entries.values_mut() {
            if let Some(task) = entry.task.take() {
                task.abort();
            }
        }
    }

    /// Waits until no background agent runs: each one's task is over, its
    /// cleanup and SubagentStop hooks done (or, for a task that was
    /// stopped, spawned as session cleanups).
    pub(crate) async fn wait_idle(&self) {
        let mut running = self.running.subscribe();
        // `wait_for` fails only when the sender is gone, and the registry
        // owns it.
        let _ = running.wait_for(|n| *n == 0).await;
    }

    /// Takes the notifications waiting for `parent`, oldest first.
    pub(crate) fn take_notifications(&self, parent: &AgentId) -> Vec<Notification> {
        let mut all = lock(&self.notifications);
        let (mine, others): (Vec<_>, Vec<_>) = all.drain(..).partition(|n| &n.parent == parent);
        *all = others;
        mine
    }

    /// Puts notifications back (the query that took them did not keep its
    /// conversation), ahead of newer ones.
    pub(crate) fn requeue(&self, mut notifications: Vec<Notification>) {
        let mut all = lock(&self.notifications);
        notifications.append(&mut all);
        *all = notifications;
    }

    fn set_summary(&self, id: &AgentId, summary: &str) {
        if let Some(entry) = lock(&self.entries).get_mut(id) {
            entry.summary = Some(summary.to_owned());
        }
    }

    /// Records `result` as the end of `id` and queues its notification.
    /// Only the first end counts.
    fn finish(&self, result: &TaskResult, parent: &AgentId) -> bool {
        let Some(id) = result.agent_id.as_ref() else {
            return false;
        };
        {
            let mut entries = lock(&self.entries);
            let Some(entry) = entries.get_mut(id) else {
                return false;
            };
            if entry.result.is_some() {
                return false;
            }
            entry.result = Some(result.clone());
            entry.task = None;
        }
        lock(&self.notifications).push(Notification {
            parent: parent.clone(),
            text: notification_text(result),
        });
        true
    }
}

impl Notification {
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

fn view(id: &AgentId, entry: &Entry) -> BackgroundAgent {
    let (turns, usage) = {
        let progress = lock(&entry.progress);
        (progress.turns, progress.usage)
    };
    BackgroundAgent {
        id: id.clone(),
        agent_type: entry.agent_type.clone(),
        description: entry.description.clone(),
        parent: entry.parent.clone(),
        elapsed: entry
            .result
            .as_ref()
            .map_or_else(|| entry.started.elapsed(), |r| r.duration),
        turns: entry.result.as_ref().map_or(turns, |r| r.turns),
        usage: entry.result.as_ref().map_or(usage, |r| r.usage),
        progress: entry.summary.clone(),
        result: entry.result.clone(),
    }
}

/// The message that tells a parent a background agent ended.
fn notification_text(result: &TaskResult) -> String {
    let json = serde_json::to_string(result).unwrap_or_default();
    format!(
        "<background-task-finished>\nThe background agent {} ({}) finished with status {}. Its result:\n{json}\n</background-task-finished>",
        result
            .agent_id
            .as_ref()
            .map_or_else(String::new, ToString::to_string),
        result.description,
        result.status.as_str(),
    )
}

/// Starts `run` in the background and returns the call's result for it at
/// once (status [`TaskStatus::Background`]). `result` holds the task's
/// index, id, type and description.
pub(crate) fn launch(
    ctx: &QueryCtx,
    mut run: AgentRun,
    mut result: TaskResult,
    isolation: Isolation,
) -> TaskResult {
    let session = Arc::clone(&ctx.session);
    let id = run.id.clone();
    let parent = run.parent.clone().unwrap_or_else(AgentId::root);
    let started = Instant::now();
    let registry = &session.background;
    lock(&registry.entries).insert(
        id.clone(),
        Entry {
            agent_type: result.agent_type.clone(),
            description: result.description.clone(),
            parent: parent.clone(),
            started,
            progress: Arc::clone(&run.progress),
            summary: None,
            result: None,
            task: None,
        },
    );
    registry.running.send_modify(|n| *n += 1);
    let running = Running(Arc::clone(&session));
    let ctx = QueryCtx::new(
        Arc::clone(&session),
        ctx.sink.background(Arc::clone(&session.router)),
    );
    let mut finisher = Finisher {
        ctx: ctx.clone(),
        template: result.clone(),
        progress: Arc::clone(&run.progress),
        agent_type: Arc::clone(&run.agent_type),
        parent,
        started,
        done: false,
        hook_agent: None,
    };
    let work = async move {
        // Cleanup and worktree, settled on every path (also when this task
        // is dropped).
        let scope = Scope::new(&ctx.session, &run.id, isolation);
        if let Some(observer) = ctx.session.runtime.observer() {
            observer.agent_started(&ctx.session.id, &run.id, run.tools.pool());
        }
        let hook_agent = hooks::agent_of(&ctx, &run);
        hooks::subagent_start(&ctx, &hook_agent, &finisher.parent).await;
        finisher.hook_agent = Some(hook_agent.clone());
        if let Err(error) = scope.enter(&mut run).await {
            let mut result = finisher.template.clone();
            result.error = Some(error_chain(&error));
            result.worktree = scope.finish().await;
            let result = finisher.end(result);
            hooks::subagent_stop(&ctx, &hook_agent, &result).await;
            return;
        }
        ctx.sink
            .send(&run.id, &run.agent_type, EventKind::SubagentRunning);
        let ticker = ProgressTicker::new(&ctx, &run);
        let work = run.run(&ctx);
        tokio::pin!(work);
        let outcome = tokio::select! {
            outcome = &mut work => outcome,
            // The ticker ends only when it has nothing to do.
            () = ticker.run() => work.await,
        };
        let mut result = finisher.template.clone();
        task::fill_from_outcome(&mut result, outcome);
        // Its processes are gone and its worktree settled before its
        // parent hears of its end.
        result.worktree = scope.finish().await;
        let result = finisher.end(result);
        hooks::subagent_stop(&ctx, &hook_agent, &result).await;
    };
    let tracked = Tracked {
        work: Box::pin(work),
        _running: running,
    };
    let mut entries = lock(&registry.entries);
    if registry.closed.load(Ordering::Relaxed) {
        drop(entries);
        // The session ended while the query that launched it ran on: it
        // ends (cancelled) before it starts.
        drop(tracked);
    } else {
        // Under the lock: `abort_all` sees the task, and the agent cannot
        // have ended (`finish` takes the lock).
        let task = tokio::spawn(tracked);
        if let Some(entry) = entries.get_mut(&id) {
            entry.task = Some(task);
        }
    }
    result.status = TaskStatus::Background;
    result.output = format!(
        "Started in the background as {id}. Its result will come to you in a message when it finishes; do not wait or poll for it."
    );
    result
}

/// A background agent's task: `work`, counted as running until it is
/// over or dropped. Fields drop in order: whatever dropping `work` leaves
/// to the session (the cleanup, the SubagentStop hooks of a stopped agent)
/// is pushed before the count goes down.
struct Tracked {
    work: Pin<Box<dyn Future<Output = ()> + Send>>,
    _running: Running,
}

impl Future for Tracked {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.work.as_mut().poll(cx)
    }
}

/// Counts one background agent out of [`Registry::running`] when dropped.
struct Running(Arc<Session>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0
            .background
            .running
            .send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Ends a background agent exactly once: normally with its result; when
/// its task is dropped (stopped by the host, the session ended) with
/// status `cancelled` and what it wrote so far.
struct Finisher {
    ctx: QueryCtx,
    template: TaskResult,
    progress: Arc<Mutex<Progress>>,
    agent_type: Arc<str>,
    parent: AgentId,
    started: Instant,
    done: bool,
    /// Set once the SubagentStart hooks ran: the SubagentStop ones are due.
    hook_agent: Option<HookAgent>,
}

impl Finisher {
    fn end(&mut self, mut result: TaskResult) -> TaskResult {
        self.done = true;
        result.duration = self.started.elapsed();
        let session = &self.ctx.session;
        if session.background.finish(&result, &self.parent)
            && let Some(id) = &result.agent_id
        {
            self.ctx.sink.send(
                id,
                &self.agent_type,
                EventKind::SubagentFinished {
                    result: Box::new(result.clone()),
                },
            );
        }
        result
    }
}

impl Drop for Finisher {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut result = self.template.clone();
        task::fill_from_progress(&mut result, &self.progress);
        result.status = TaskStatus::Cancelled;
        result.error = Some(
            "stopped before it finished (by the host, or the session ended); the output is what it wrote so far".to_owned(),
        );
        let result = self.end(result);
        if let Some(agent) = self.hook_agent.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let ctx = self.ctx.clone();
            let task = handle.spawn(async move {
                hooks::subagent_stop(&ctx, &agent, &result).await;
            });
            self.ctx.session.push_cleanup(task);
        }
    }
}

/// Produces a progress summary of a background agent every interval.
struct ProgressTicker<'a> {
    ctx: &'a QueryCtx,
    id: AgentId,
    agent_type: Arc<str>,
    model: String,
    system: String,
    progress: Arc<Mutex<Progress>>,
}

impl<'a> ProgressTicker<'a> {
    fn new(ctx: &'a QueryCtx, run: &AgentRun) -> Self {
        Self {
            ctx,
            id: run.id.clone(),
            agent_type: Arc::clone(&run.agent_type),
            model: run.model.clone(),
            system: run.system.clone(),
            progress: Arc::clone(&run.progress),
        }
    }

    async fn run(self) {
        let Some(every) = self.ctx.session.config.subagent.progress_interval else {
            return;
        };
        let every = every.max(Duration::from_millis(1));
        let mut last_len = 0;
        loop {
            tokio::time::sleep(every).await;
            let Some((history, tools)) = lock(&self.progress).snapshot.clone() else {
                continue;
            };
            if history.len() < MIN_MESSAGES_FOR_PROGRESS || history.len() == last_len {
                continue;
            }
            last_len = history.len();
            match self.summarise(history, tools).await {
                Some(summary) => {
                    self.ctx.session.background.set_summary(&self.id, &summary);
                    self.ctx.sink.send(
                        &self.id,
                        &self.agent_type,
                        EventKind::SubagentProgress { summary },
                    );
                }
                None => continue,
            }
        }
    }

    /// One tools-disabled side request, the agent's latest request (its
    /// `messages` and `tools`) plus the question, so that a provider's
    /// cache serves the prefix; `None` when it fails (the agent
    /// runs on; the next tick tries again).
    async fn summarise(
        &self,
        mut messages: Vec<Message>,
        tools: Vec<Arc<zr_types::ToolDefinition>>,
    ) -> Option<String> {
        use futures_util::StreamExt as _;
        push_user_text(&mut messages, PROGRESS_REQUEST);
        let turn = lock(&self.progress).turns;
        let request = ModelRequest {
            model: self.model.clone(),
            system: self.system.clone(),
            tools,
            messages,
            max_tokens: 64,
            tool_choice: ToolChoice::None,
            // The last block's breakpoint finds the agent's own cached
            // conversation, one block back.
            cache_prefix: None,
            origin: RequestOrigin {
                agent: self.id.clone(),
                agent_type: self.agent_type.to_string(),
                turn,
            },
        };
        let mut stream = self.ctx.session.runtime.provider().stream(request);
        while let Some(event) = stream.next().await {
            match event {
                Ok(ModelEvent::Completed(response)) => {
                    {
                        let mut progress = lock(&self.progress);
                        progress.usage = progress.usage.plus(response.usage);
                    }
                    self.ctx.add_usage(response.usage);
                    let text: String = texts(&response.content).collect();
                    let text = text.trim();
                    return (!text.is_empty()).then(|| text.to_owned());
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::info!(agent = %self.id, %error, "progress summary failed");
                    return None;
                }
            }
        }
        None
    }
}
