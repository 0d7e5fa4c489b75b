//! Background subagents: started by `Task` with `run_in_background` (or a
//! type whose definition says `background: true`), they run on after the
//! call returns, bound to the session rather than the turn that started
//! them, through the same lifecycle as any subagent (`subagent.rs`). Their
//! parent hears of their end at its next turn; a progress summary is
//! produced every interval; the host lists, inspects, stops and waits for
//! them (`registry.rs`). One the effects run elsewhere (a durable run's
//! child invocation, started when its call starts it) takes the same
//! path: its task awaits the remote end and publishes it as its own;
//! stopping it drops (and so cancels) the remote run; it has no progress
//! summaries here.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use zr_types::{AgentId, ToolDefinition};

use crate::delegate::revive::{self, Revive};
use crate::delegate::subagent::{self, End, Limits, Subagent};
use crate::effects::deadline_after;
use crate::event::EventKind;
use crate::history::push_user_text;
use crate::meta::AgentMeta;
use crate::model::price::cost_of;
use crate::outcome::{Progress, TaskResult, TaskStatus, fill_from_progress};
use crate::policy::hooks::HookAgent;
use crate::session::QueryCtx;
use crate::session::registry::{Entry, Running};
use crate::sync::lock;
use crate::telemetry::Traced;
use crate::telemetry::in_span::in_span;
use crate::tools::AgentTools;
use crate::turn::agent_run::AgentRun;
use crate::turn::run::model::{Ask, side_request};
use zr_caps::Isolation;
use zr_types::texts;

/// What the progress side request asks.
const PROGRESS_REQUEST: &str = "Do not call any tools and do not continue the task. In at most eight words, say what you are doing right now, e.g. \"Reading the parser's tests\".";

/// A progress summary is skipped while the agent's conversation has fewer
/// messages than this (the prompt and one answer say nothing new).
const MIN_MESSAGES_FOR_PROGRESS: usize = 3;

/// Starts `subagent` in the background and returns the call's result for
/// it at once (status [`TaskStatus::Background`]). Its result holds the
/// task's index, id, type and description.
pub(crate) fn launch(ctx: &QueryCtx, mut subagent: Subagent) -> TaskResult {
    let session = Arc::clone(&ctx.session);
    let run = &subagent.run;
    let id = run.meta.id.clone();
    let parent = run.meta.parent.clone().unwrap_or_else(AgentId::root);
    let registry = Arc::clone(&session.background);
    let running = registry.insert(
        id.clone(),
        Entry::new(
            subagent.result.agent_type.clone(),
            subagent.result.description.clone(),
            parent.clone(),
            Arc::clone(&run.progress),
        ),
    );
    let ctx = QueryCtx::new(
        Arc::clone(&session),
        ctx.sink.background(Arc::clone(&session.router)),
    );
    subagent.start = Instant::now();
    let mut finisher = Finisher {
        ctx: ctx.clone(),
        template: subagent.result.clone(),
        progress: Arc::clone(&run.progress),
        agent_type: Arc::clone(&run.meta.agent_type),
        model: run.meta.model.to_string(),
        parent,
        started: subagent.start,
        settled: None,
        done: false,
        hook_agent: None,
    };
    let mut result = subagent.result.clone();
    let work = async move {
        let ticker = ProgressTicker::new(&ctx, &subagent.run);
        subagent::live(&ctx, subagent, Limits::NONE, ticker.run(), &mut finisher).await;
    };
    let tracked = Tracked {
        // The task keeps the span of the call that launched it: the
        // agent's `invoke_agent` span is that call's child.
        work: Box::pin(in_span(work, Traced::current())),
        _running: running,
    };
    // The session may have ended while the query that launched it ran
    // on: then it ends (cancelled) before it starts.
    registry.adopt(&id, tracked, tokio::spawn);
    result.status = TaskStatus::Background;
    result.output = format!(
        "Started in the background as {id}. Its result will come to you in a message when it finishes; do not wait or poll for it."
    );
    result
}

/// Revives the background agent `id`, which a kill cut short after its
/// call had returned, from its transcript: it runs on in the background
/// as it was, through the same lifecycle, and its parent hears of its end
/// as of any background agent's. `parent` holds its parent's tools. A
/// transcript that cannot be revived is a warning, and the agent is
/// reported to its parent as failed. `delegate` carries out its Task and
/// MultiTask calls if its depth lets it delegate.
pub(crate) fn revive(
    ctx: &QueryCtx,
    id: &AgentId,
    parent: &AgentTools,
    delegate: Arc<dyn crate::turn::agent_run::Delegate>,
) {
    let session = &ctx.session;
    let how = Revive {
        parent,
        prompt: None,
        background: true,
        delegate: Some(delegate),
    };
    let revived =
        revive::load(session, id).and_then(|loaded| revive::rebuild(session, id, &loaded, how));
    let (run, warnings) = match revived {
        Ok(revived) => revived,
        Err(error) => {
            let why = zr_types::error_chain(&error);
            tracing::warn!(agent = %id, error = %why, "cannot revive the background agent");
            // Only the root delegates.
            let parent = AgentId::root();
            let mut result = TaskResult::pending(0, String::new(), String::new());
            result.agent_id = Some(id.clone());
            result.error = Some(format!("could not be resumed: {why}"));
            session.background.report(&result, &parent);
            return;
        }
    };
    for message in warnings {
        tracing::warn!(agent = %id, "{message}");
        ctx.sink
            .emit(&run.meta, EventKind::ResumeWarning { message });
    }
    let task = run.meta.task.clone().unwrap_or_default();
    let mut result = TaskResult::pending(
        task.index,
        run.meta.agent_type.to_string(),
        task.description.clone(),
    );
    result.agent_id = Some(id.clone());
    subagent::started(ctx, &run, &task.description, task.index);
    let subagent = Subagent {
        run,
        result,
        // It works in its recorded folder: a worktree is not made again.
        isolation: Isolation::None,
        start: Instant::now(),
        remote: None,
    };
    launch(ctx, subagent);
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

/// Ends a background agent exactly once: normally with its result; when
/// its task is dropped (stopped by the host, the session ended) with
/// status `cancelled` and what it wrote so far, or with its result when
/// only its SubagentStop hooks were left to run.
struct Finisher {
    ctx: QueryCtx,
    template: TaskResult,
    progress: Arc<Mutex<Progress>>,
    agent_type: Arc<str>,
    /// Its model, for the cost of what it used.
    model: String,
    parent: AgentId,
    started: Instant,
    /// Its result once settled (the SubagentStop hooks run next).
    settled: Option<TaskResult>,
    done: bool,
    /// Set once the SubagentStart hooks ran: the SubagentStop ones are due.
    hook_agent: Option<HookAgent>,
}

impl Finisher {
    /// Records `result` in the registry (queueing the parent's
    /// notification) and sends `SubagentFinished`, unless the agent ended
    /// already.
    fn end(&mut self, result: TaskResult) -> TaskResult {
        self.done = true;
        if self.ctx.session.background.finish(&result, &self.parent) {
            subagent::finished(&self.ctx, &self.agent_type, &result);
        }
        result
    }
}

impl End for Finisher {
    fn armed(&mut self, agent: &HookAgent) {
        self.hook_agent = Some(agent.clone());
    }

    fn settled(&mut self, result: &TaskResult) {
        self.settled = Some(result.clone());
    }

    fn publish(&mut self, _: &QueryCtx, _: &Arc<str>, result: TaskResult) -> TaskResult {
        self.end(result)
    }
}

impl Drop for Finisher {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Some(result) = self.settled.take() {
            // Stopped during its SubagentStop hooks: its result stands.
            self.end(result);
            return;
        }
        let mut result = self.template.clone();
        fill_from_progress(&mut result, &self.progress);
        result.cost_usd = cost_of(&self.model, &result.usage);
        result.status = TaskStatus::Cancelled;
        result.error = Some(
            "stopped before it finished (by the host, or the session ended); the output is what it wrote so far".to_owned(),
        );
        result.duration = self.started.elapsed();
        let result = self.end(result);
        if let Some(agent) = self.hook_agent.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let session = Arc::clone(&self.ctx.session);
            let task = handle.spawn(async move {
                session.config.hooks.subagent_stop(&agent, &result).await;
            });
            self.ctx.session.push_cleanup(task);
        }
    }
}

/// Produces a progress summary of a background agent every interval.
struct ProgressTicker<'a> {
    ctx: &'a QueryCtx,
    meta: AgentMeta,
    progress: Arc<Mutex<Progress>>,
}

impl<'a> ProgressTicker<'a> {
    fn new(ctx: &'a QueryCtx, run: &AgentRun) -> Self {
        Self {
            ctx,
            meta: run.meta.clone(),
            progress: Arc::clone(&run.progress),
        }
    }

    async fn run(self) {
        let Some(every) = self.ctx.session.config.subagent.progress_interval else {
            return;
        };
        let every = every.max(Duration::from_millis(1));
        let effects = self.ctx.session.runtime.effects();
        let mut last_len = 0;
        loop {
            effects
                .sleep_until(&self.meta.id, deadline_after(every))
                .await;
            let Some((history, tools)) = lock(&self.progress).snapshot.clone() else {
                continue;
            };
            if history.len() < MIN_MESSAGES_FOR_PROGRESS || history.len() == last_len {
                continue;
            }
            last_len = history.len();
            match self.summarise(history, tools).await {
                Some(summary) => {
                    let session = &self.ctx.session;
                    session.background.set_summary(&self.meta.id, &summary);
                    self.ctx
                        .sink
                        .emit(&self.meta, EventKind::SubagentProgress { summary });
                }
                None => continue,
            }
        }
    }

    /// One side request, the agent's latest request (its `messages` and
    /// `tools`) plus the question, so that a provider's cache serves the
    /// prefix; `None` when it fails (the agent runs on; the next tick
    /// tries again).
    async fn summarise(
        &self,
        mut messages: Vec<zr_types::Message>,
        tools: Vec<Arc<ToolDefinition>>,
    ) -> Option<String> {
        push_user_text(&mut messages, PROGRESS_REQUEST);
        let ask = Ask {
            meta: &self.meta,
            tools,
            messages: Arc::new(messages),
            max_tokens: 64,
            turn: lock(&self.progress).turns,
            // The last block's breakpoint finds the agent's own cached
            // conversation, one block back.
            cache_prefix: None,
        };
        match side_request(self.ctx, ask, None).await {
            Ok(Some(response)) => {
                {
                    let mut progress = lock(&self.progress);
                    progress.usage = progress.usage.plus(response.usage);
                }
                self.ctx.add_usage(&self.meta.model, response.usage);
                let text: String = texts(&response.content).collect();
                let text = text.trim();
                (!text.is_empty()).then(|| text.to_owned())
            }
            Ok(None) => None,
            Err(error) => {
                tracing::info!(agent = %self.meta.id, %error, "progress summary failed");
                None
            }
        }
    }
}
