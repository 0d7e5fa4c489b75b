//! The effects seam: every effect the engine has on the world outside its
//! own memory (a model request, a tool call, a subagent's run, reading the
//! clock, sleeping) goes through one [`Effects`] object, held by the
//! [`RuntimeEnvironment`](crate::RuntimeEnvironment). [`LocalEffects`],
//! the default, does each of them here and now; a durable backend
//! journals them instead, so that a replayed run takes a finished effect's
//! result from its journal without forking the loop.

pub(crate) mod remote;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::FutureExt as _;
use futures_util::future::Shared;
use zr_types::{AgentId, BoxFuture, ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput};

use crate::effects::remote::{RemoteEnd, SubagentSpec};
use crate::outcome::TaskResult;
use zr_providers::{ModelProvider, ModelRequest, ModelStream};

/// The engine's effects. Every method has a default, today's local
/// behaviour, so an implementation overrides only what it journals.
///
/// # Ordering
///
/// The engine calls these in its own, deterministic order for one agent:
/// one model request at a time, then the calls of that turn (each run of
/// consecutive read-only, Task and MultiTask calls side by side, every
/// other call alone, in call order), then the next request. Agents of one
/// MultiTask call, and of the Task and MultiTask calls of one turn, run
/// side by side: their effects interleave, but each agent's own effects
/// keep that order, so a journal keyed by agent id and position in that
/// agent's sequence (or by the call ids that requests and results carry)
/// replays them.
///
/// # Errors
///
/// Errors are data, as the inner effect returns them: a model request's
/// stream yields `Err(ProviderError)` (after the provider's own retries),
/// a tool call returns `Err(ToolError)`. The engine turns them into a
/// failed agent or an error result for the model; an implementation must
/// not invent new failures for a journal it cannot write (it may panic:
/// the engine catches a tool call's panic as a failed call, and any other
/// panic as [`EngineError::Panicked`](crate::EngineError::Panicked)).
///
/// # Cancellation
///
/// Every future and stream here may be dropped at any await point (a
/// cancelled query, a call's time budget, a background agent stopped by
/// the host). Dropping must stop the effect, or leave it to finish
/// harmlessly: the engine never resumes a dropped one. A journal must
/// therefore record an effect only once its result is complete.
///
/// # Retries
///
/// The engine itself retries nothing here. A model request may be sent
/// again (providers are stateless); a tool call whose definition is
/// read-only may be run again; any other tool call must not be repeated
/// once it may have started (side-effecting tools get the idempotency key
/// `{session}/{call id}` from their context); a subagent's run is one unit,
/// keyed by its id.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use zr_engine::{Effects, ModelProvider, ModelRequest, ModelStream};
///
/// /// Counts the model requests, and otherwise does what the engine does.
/// #[derive(Debug, Default)]
/// struct Counting(AtomicUsize);
///
/// impl Effects for Counting {
///     fn model_request(&self, provider: &Arc<dyn ModelProvider>, request: ModelRequest) -> ModelStream {
///         self.0.fetch_add(1, Ordering::Relaxed);
///         provider.stream(request)
///     }
/// }
/// ```
///
/// Wrong: a journal that records a tool call before its result came back
/// would, after a crash, replay a call that never finished as if it had.
pub trait Effects: Send + Sync + fmt::Debug {
    /// Sends one model request to `provider` and returns its stream (the
    /// request is sent when the stream is first polled). Every request of
    /// the engine comes here: turns, and the tools-disabled side requests
    /// (turn-limit summary, compaction, progress summaries).
    fn model_request(
        &self,
        provider: &Arc<dyn ModelProvider>,
        request: ModelRequest,
    ) -> ModelStream {
        provider.stream(request)
    }

    /// Runs one tool call with its handler. Only calls that passed the
    /// pool, the hooks and the permission check come here; the engine's
    /// own tools (Task, MultiTask, FindTool) do not (a subagent is
    /// [`Effects::subagent`]).
    fn tool_call<'a>(
        &'a self,
        handler: &'a Arc<dyn ToolHandler>,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        handler.call(call, ctx)
    }

    /// Runs the subagent `agent` to its result: `run` is its whole
    /// lifecycle (worktree, hooks, loop, cleanup), and the result is what
    /// its parent gets. A durable backend runs it as a child invocation
    /// keyed by the agent's id.
    fn subagent<'a>(
        &'a self,
        agent: &'a AgentId,
        run: BoxFuture<'a, TaskResult>,
    ) -> BoxFuture<'a, TaskResult> {
        let _ = agent;
        run
    }

    /// Runs the subagent `spec` describes somewhere else, or `None` (the
    /// default): it runs here, through [`Effects::subagent`]. The engine
    /// asks only for a fresh, typed subagent (not a fork or a resumed one)
    /// of the root or of a subagent that runs from a description itself
    /// (whose parent is not in a worktree), when its task starts it, in
    /// its parent's order. The future's end carries what the subagent's
    /// whole subtree spent, which the engine books into the query's total
    /// and tree budget.
    ///
    /// - A foreground one (`!spec.background`): the engine polls the
    ///   future once the task holds a slot of its call (the remote run
    ///   must start only then), bounds it by the call's budget, and
    ///   publishes its result as for a local run.
    /// - A background one (`spec.background`): the remote run starts now,
    ///   before this returns (its call returns at once, and nothing is
    ///   awaited in between); the future is its end, which the engine
    ///   awaits in the agent's background task and publishes as a local
    ///   background agent's (its parent hears of it at its next model
    ///   request; the host sees it in
    ///   [`Agent::background_agents`](crate::Agent::background_agents)).
    ///   It has no progress summaries here.
    ///
    /// What runs elsewhere is the same lifecycle, from `spec`
    /// ([`Agent::run_described`](crate::Agent::run_described)): its hooks,
    /// worktree, loop and transcript are the other side's.
    ///
    /// # Errors
    ///
    /// `Err(reason)`: the remote run failed for good (not its task: its
    /// run, e.g. a description the other side refuses); the task is then
    /// `failed` with `reason`, as a local one that could not start.
    ///
    /// # Cancellation
    ///
    /// Dropping the future (the call's budget ran out, the query was
    /// cancelled, the host stopped the background agent or the session
    /// ended) must stop the remote run.
    fn remote_subagent(
        &self,
        spec: &SubagentSpec,
    ) -> Option<BoxFuture<'static, Result<RemoteEnd, String>>> {
        let _ = spec;
        None
    }

    /// The wall clock (session ids, transcript headers).
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    /// Waits until `deadline` on the runtime's timer, for `agent`: the end
    /// of a call's time budget (`agent` made the call; one timer per call,
    /// asked for when the call starts and first polled once its first task
    /// holds a slot) or a background agent's progress tick (`agent` is
    /// that agent). A durable backend makes the budget of the agent whose
    /// journal it keeps a durable timer: a worker that takes the run over
    /// keeps the first attempt's deadline.
    fn sleep_until(
        &self,
        agent: &AgentId,
        deadline: tokio::time::Instant,
    ) -> BoxFuture<'static, ()> {
        let _ = agent;
        Box::pin(tokio::time::sleep_until(deadline))
    }
}

/// The default [`Effects`]: each effect done here and now.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalEffects;

impl Effects for LocalEffects {}

/// When a call with budget `timeout` must end; a budget too large for the
/// clock (a host's "no limit") means in about thirty years.
pub(crate) fn deadline_after(timeout: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(Duration::from_secs(30 * 365 * 24 * 3600)))
        .unwrap_or(now)
}

/// The end of a time budget: its instant, and the one timer of the
/// effects that fires at it (every task of a call waits on the same one).
#[derive(Clone)]
pub(crate) struct Deadline {
    at: tokio::time::Instant,
    timer: Shared<BoxFuture<'static, ()>>,
}

impl fmt::Debug for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deadline")
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

impl Deadline {
    /// The budget `timeout` of `agent`, from now, on `effects`' timer.
    pub(crate) fn after(effects: &dyn Effects, agent: &AgentId, timeout: Duration) -> Self {
        let at = deadline_after(timeout);
        Self {
            at,
            timer: effects.sleep_until(agent, at).shared(),
        }
    }

    /// When it ends.
    pub(crate) fn at(&self) -> tokio::time::Instant {
        self.at
    }

    /// Whether the budget is spent: its instant passed, or its timer
    /// fired.
    pub(crate) fn passed(&self) -> bool {
        tokio::time::Instant::now() >= self.at || self.timer.peek().is_some()
    }

    /// Runs `work` until the deadline: `None` when the deadline came
    /// first. `work` is polled before the timer (as
    /// `tokio::time::timeout_at` does).
    pub(crate) async fn until<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        let timer = self.timer.clone();
        tokio::select! {
            biased;
            value = work => Some(value),
            () = timer => None,
        }
    }
}
