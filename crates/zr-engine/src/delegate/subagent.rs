//! The one subagent lifecycle, for foreground (Task, MultiTask), background
//! and resumed subagents alike. In order:
//!
//! 1. [`started`]: `SubagentStarted` (the caller, at once: a background
//!    agent's is in the stream before its call returns);
//! 2. the observer's `agent_started`, then the [`Scope`] armed (cleanup and
//!    worktree, settled on every path from here on);
//! 3. the SubagentStart hooks;
//! 4. a slot of the call and the deadline checked (a foreground task
//!    waits in its call's queue), the worktree made, `SubagentRunning`,
//!    the loop (beside it, a background agent's progress ticker);
//! 5. the result: the outcome, or what it wrote by the deadline;
//! 6. the scope finished: cleanup (background commands killed, state
//!    dropped, the observer's `agent_finished`), then the worktree settled;
//! 7. the SubagentStop hooks;
//! 8. the result published ([`End::publish`]: `SubagentFinished`, and for a
//!    background agent its registry entry and its parent's notification).
//!
//! Steps 2 to 7 run inside [`Effects::subagent`](crate::effects::Effects::subagent).
//!
//! The three kinds differ only in their parameters: a foreground task has
//! its call's slot and deadline ([`Limits`]), a background agent neither
//! but a progress ticker beside its loop, a resumed subagent the
//! `subagent.timeout` budget from its start and no worktree (it works in
//! its recorded folder). Where the three used to differ in order, this is
//! the order kept:
//!
//! - the observer hears `agent_started` before the scope is armed (as the
//!   foreground did; the background did it after, with nothing between
//!   them that could fail or wait);
//! - the result is published after the SubagentStop hooks, for background
//!   agents too (they used to publish first): a parent, a host and a hook
//!   see a subagent end in the same order whatever its kind. A background
//!   agent stopped while its SubagentStop hooks run keeps its settled
//!   result (it is not turned into `cancelled`) and its hooks are not
//!   called twice;
//! - a resumed subagent's budget counts from its start, SubagentStart
//!   hooks included, as a call's budget does (it used to count from the
//!   loop's start).

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use zr_caps::Isolation;
use zr_types::{AgentId, BoxFuture, error_chain};

use crate::delegate::worktree::Scope;
use crate::effects::Deadline;
use crate::effects::remote::{RemoteEnd, SubagentSpec};
use crate::error::EngineError;
use crate::event::EventKind;
use crate::model::price::cost_of;
use crate::outcome::{Progress, TaskResult, TaskStatus, fill_from_outcome, fill_from_progress};
use crate::policy::hooks::HookAgent;
use crate::session::QueryCtx;
use crate::session::slots::{SlotHold, TreeSlots};
use crate::telemetry::in_span::in_span;
use crate::telemetry::{self, Traced};
use crate::turn::agent_run::AgentRun;

/// A subagent built and announced, with the result its task starts from
/// (index, id, type, description).
#[derive(Debug)]
pub(crate) struct Subagent {
    pub(crate) run: AgentRun,
    pub(crate) result: TaskResult,
    pub(crate) isolation: Isolation,
    /// Where its duration counts from (a foreground task: its call's start).
    pub(crate) start: Instant,
    /// Its run elsewhere, when the effects run it there
    /// ([`Effects::remote_subagent`](crate::Effects::remote_subagent)):
    /// then steps 2 to 7 are the other side's.
    pub(crate) remote: Option<Remote>,
}

/// A subagent's whole lifecycle run elsewhere, ending with its result
/// (`Err`: the remote run failed for good).
pub(crate) struct Remote(pub(crate) BoxFuture<'static, Result<RemoteEnd, String>>);

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Remote(..)")
    }
}

/// Asks the effects whether the subagent `spec` describes runs elsewhere
/// (where its lifecycle's steps 2 to 7 are the other side's). A
/// background one starts there now: this is called when its task starts
/// it, in its parent's order, before the call returns.
pub(crate) fn placed(ctx: &QueryCtx, spec: Option<&SubagentSpec>) -> Option<Remote> {
    let effects = ctx.session.runtime.effects();
    spec.and_then(|spec| effects.remote_subagent(spec))
        .map(Remote)
}

/// What bounds a subagent's run: a slot of the tree's (foreground tasks
/// queue beyond `max_concurrent`, `session/slots.rs`) and a deadline.
pub(crate) struct Limits<'a> {
    pub(crate) slots: Option<&'a TreeSlots>,
    pub(crate) deadline: Option<Deadline>,
    /// The error of a run the deadline stopped; `true` when it had
    /// started (not only waited in the queue).
    pub(crate) timed_out: &'a (dyn Fn(bool) -> String + Sync),
}

impl Limits<'_> {
    /// No slot, no deadline (a background agent).
    pub(crate) const NONE: Limits<'static> = Limits {
        slots: None,
        deadline: None,
        timed_out: &no_deadline,
    };
}

/// The timeout error of a run without a deadline: never used.
fn no_deadline(_: bool) -> String {
    String::new()
}

/// How a lifecycle's caller hears of its steps.
pub(crate) trait End: Send {
    /// The SubagentStart hooks ran for `agent`: the SubagentStop ones are
    /// due.
    fn armed(&mut self, agent: &HookAgent) {
        let _ = agent;
    }

    /// `result` is settled; the SubagentStop hooks run next.
    fn settled(&mut self, result: &TaskResult) {
        let _ = result;
    }

    /// Publishes the final `result` (after the SubagentStop hooks).
    fn publish(&mut self, ctx: &QueryCtx, agent_type: &Arc<str>, result: TaskResult) -> TaskResult;
}

/// The foreground's and a resumed subagent's end: `SubagentFinished` in
/// the query's stream.
#[derive(Debug)]
pub(crate) struct Announce;

impl End for Announce {
    fn publish(&mut self, ctx: &QueryCtx, agent_type: &Arc<str>, result: TaskResult) -> TaskResult {
        finished(ctx, agent_type, &result);
        result
    }
}

/// Sends `SubagentFinished` for `result`.
pub(crate) fn finished(ctx: &QueryCtx, agent_type: &Arc<str>, result: &TaskResult) {
    if let Some(id) = &result.agent_id
        && ctx.sink.heard()
    {
        ctx.sink.send(
            id,
            agent_type,
            EventKind::SubagentFinished {
                result: Box::new(result.clone()),
            },
        );
    }
}

/// Step 1: announces `run`, started by its parent for task `index`.
pub(crate) fn started(ctx: &QueryCtx, run: &AgentRun, description: &str, index: usize) {
    ctx.sink
        .emit_with(&run.meta, || EventKind::SubagentStarted {
            parent: run.meta.parent.clone().unwrap_or_else(AgentId::root),
            description: description.to_owned(),
            index,
            background: run.meta.background,
        });
}

/// Steps 2 to 8: runs `subagent` to its result within `limits`, with
/// `beside` polled alongside its loop (a future that ends only when it has
/// nothing to do), and tells `end`.
pub(crate) async fn live(
    ctx: &QueryCtx,
    mut subagent: Subagent,
    limits: Limits<'_>,
    beside: impl Future<Output = ()> + Send,
    end: &mut dyn End,
) -> TaskResult {
    if let Some(Remote(remote)) = subagent.remote.take() {
        return elsewhere(ctx, subagent, &limits, remote, end).await;
    }
    let effects = Arc::clone(ctx.session.runtime.effects());
    let id = subagent.run.meta.id.clone();
    let agent_type = Arc::clone(&subagent.run.meta.agent_type);
    // A child of the current span: the `execute_tool` of the call that
    // started it (a background agent's task carries that span).
    let span = telemetry::agent_span(
        ctx.session.runtime.tracer(),
        &Traced::current(),
        &subagent.run.meta,
        &ctx.session.id,
        ctx.session.runtime.provider().name(),
        Some(&subagent.result.description),
    );
    let steps = &mut *end;
    let frame = async move {
        let Subagent {
            mut run,
            mut result,
            isolation,
            start,
            remote: _,
        } = subagent;
        let session = &ctx.session;
        let id = run.meta.id.clone();
        let parent = run.meta.parent.clone().unwrap_or_else(AgentId::root);
        if let Some(observer) = session.runtime.observer() {
            observer.agent_started(&session.id, &id, run.tools.pool());
        }
        let scope = Scope::new(session, &id, isolation);
        // After the cleanup is armed: a query dropped during a slow hook still
        // ends the agent for the observer.
        let hook_agent = HookAgent::of(&session.id, &run.meta, session.transcripts.path(&id));
        let hooks = &session.config.hooks;
        run.hooks(session).subagent_start(&parent).await;
        steps.armed(&hook_agent);
        let progress = Arc::clone(&run.progress);
        let model = run.meta.model.clone();
        // Its own calls' deadlines are never later than its own.
        run.deadline.clone_from(&limits.deadline);
        let hold = Arc::clone(&run.slot);
        let work = {
            let scope = &scope;
            async move {
                scope.enter(&mut run.meta).await?;
                ctx.sink.emit(&run.meta, EventKind::SubagentRunning);
                // Boxed: the loop's state is large, and held inline it
                // would be copied by every move of this frame (into its
                // span, into the effects' box) and of the task around it.
                let mut work = Box::pin(run.run(ctx));
                Ok::<_, EngineError>(tokio::select! {
                    outcome = &mut work => outcome,
                    // `beside` ends only when it has nothing to do.
                    () = beside => work.await,
                })
            }
        };
        let ended = {
            // Pinned here and lent: `bounded` holding `work` by value made
            // it (and this frame) several times `work`'s size.
            let work = std::pin::pin!(work);
            bounded(&limits, &hold, work).await
        };
        match ended {
            Bounded::Done(Err(error)) => result.error = Some(error_chain(&error)),
            Bounded::Done(Ok(outcome)) => fill_from_outcome(&mut result, outcome),
            Bounded::Stopped { ran } => stopped(&mut result, &progress, &limits, ran),
        }
        result.cost_usd = cost_of(&model, &result.usage);
        result.worktree = scope.finish().await;
        result.duration = start.elapsed();
        steps.settled(&result);
        hooks.subagent_stop(&hook_agent, &result).await;
        result
    };
    let result = effects
        .subagent(&id, Box::pin(in_span(frame, span.clone())))
        .await;
    telemetry::record_task(&span, &result);
    end.publish(ctx, &agent_type, result)
}

/// How a run bounded by its [`Limits`] ended.
enum Bounded<T> {
    /// It finished.
    Done(T),
    /// The deadline stopped it; `ran`: it had started (not only waited in
    /// its call's queue).
    Stopped { ran: bool },
}

/// Runs `work` within `limits`: in a slot of the tree's, which `hold`
/// keeps (a foreground task waits in the queue; the agent lends the slot
/// to its children while it waits on them), by the call's deadline. The
/// one copy of a task's limits, for a run here and a run elsewhere.
async fn bounded<T>(
    limits: &Limits<'_>,
    hold: &SlotHold,
    work: impl Future<Output = T>,
) -> Bounded<T> {
    let ran = AtomicBool::new(false);
    let gated = async {
        if let Some(slots) = limits.slots {
            slots.take(hold).await;
        }
        // The deadline's timer is polled after this future: a slot freed
        // by a task stopped at the deadline must not start a queued one
        // after the budget is spent.
        if limits.deadline.as_ref().is_some_and(Deadline::passed) {
            return None;
        }
        ran.store(true, Ordering::Relaxed);
        Some(work.await)
    };
    let ended = match &limits.deadline {
        Some(deadline) => deadline.until(gated).await.flatten(),
        None => gated.await,
    };
    hold.end();
    match ended {
        Some(value) => Bounded::Done(value),
        None => Bounded::Stopped {
            ran: ran.load(Ordering::Relaxed),
        },
    }
}

/// `result` of a run the deadline stopped: what it wrote by then.
fn stopped(result: &mut TaskResult, progress: &Mutex<Progress>, limits: &Limits<'_>, ran: bool) {
    fill_from_progress(result, progress);
    result.status = TaskStatus::TimedOut;
    result.error = Some((limits.timed_out)(ran));
}

/// Steps 2 to 7 elsewhere (`remote`: the subagent's whole lifecycle in
/// another worker), within `limits` here; step 8 here. A run the deadline
/// stopped is dropped (which stops it there) and is `timed_out`, with
/// nothing of its output. A background agent's `beside` (its progress
/// ticker) does not run: its conversation is the other side's.
async fn elsewhere(
    ctx: &QueryCtx,
    subagent: Subagent,
    limits: &Limits<'_>,
    remote: futures_util::future::BoxFuture<'static, Result<RemoteEnd, String>>,
    end: &mut dyn End,
) -> TaskResult {
    let Subagent {
        run,
        mut result,
        start,
        ..
    } = subagent;
    match bounded(limits, &SlotHold::default(), remote).await {
        Bounded::Done(Ok(done)) => {
            // Its subtree's requests were not booked here: they count for
            // the query's total and tree budget now.
            ctx.add_spent(done.usage, done.cost_usd);
            result = done.result;
        }
        Bounded::Done(Err(reason)) => result.error = Some(reason),
        Bounded::Stopped { ran } => stopped(&mut result, &run.progress, limits, ran),
    }
    result.duration = start.elapsed();
    end.settled(&result);
    end.publish(ctx, &run.meta.agent_type, result)
}
