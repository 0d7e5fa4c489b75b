//! The handler's side of the bridge: each [`Step`] the engine sends
//! becomes one command of the invocation's journal, and its result goes
//! back to the engine.
//!
//! The child calls and timers in flight are awaited together, through the
//! SDK's one combinator over durable futures (`DurableFuturesUnordered`):
//! an SDK future awaited on its own reads the invocation's input only for
//! itself, and a completion another one read would never wake it.
//! `ctx.run` steps run beside them. A call or timer the engine let go
//! stays in the set (the SDK's set cannot drop one) but is awaited only
//! beside one the engine still waits for: during a replay, a timer that
//! never fired would otherwise be awaited alone while commands remain.
//!
//! During a replay, awaiting a completion the journal does not hold while
//! the journal still holds commands fails the attempt (Restate calls it a
//! changed code path). The engine makes its next command in its own task
//! a moment after it hears of a completion (a freed slot starts the next
//! queued task), so during a replay the calls are awaited again only once
//! the engine has been quiet for [`QUIET`] after a completion was handed
//! to it. Past the replay (a step's work ran here: Restate's state machine
//! asks for a step's work only once every command of the journal was
//! replayed) there is no journal left to contradict, and the calls are
//! awaited at once: a fan-out's children are heard of as they end, not
//! one per quiet window.
//!
//! A background agent's child is sent one way, and an attach to it (its
//! answer) joins the set. The engine does not wait for it while it works
//! on, so during a replay nothing guarantees that the journal holds its
//! end while it still holds later commands: the attach is awaited only
//! beside calls the engine waits for (it makes no command of its own
//! meanwhile), once the attempt is past its replay (a step's work ran
//! here: Restate asks for the work of a step only then), or once the turn
//! answered and waits only for its background agents ([`Step::Idle`]).
//! During a replay the engine therefore may hear of a background agent's
//! end later than its first attempt did (at a later model request): the
//! requests it replays are answered from the journal all the same.
//!
//! A cancelled invocation (through the admin API, or a parent that
//! cancelled it) ends at the first command that hears of it: the handler
//! returns Restate's cancellation (409), the engine's run is dropped with
//! it (its tools and processes stop), and the SDK cancels the child
//! invocations it was waiting for. The children it sent one way are not
//! Restate's to cancel: the handler cancels every one still running when
//! it ends, however it ends (a turn that answered has waited for them).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use restate_sdk::context::{CallFuture as _, DurableFuture, RequestTarget};
use restate_sdk::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::journal::{Call, OneWay, Run, Sent, Sleep, Step, Steps};

/// The code of Restate's cancellation.
const CANCELLED: u16 = 409;

/// A terminal error of a command: the invocation's cancellation ends the
/// handler (`Err`); any other is the step's result (`Ok`).
fn terminal(error: TerminalError) -> Result<String, HandlerError> {
    if error.code() == CANCELLED {
        Err(error.into())
    } else {
        Ok(error.message().to_owned())
    }
}

/// Journals `run`; `live` is set when its work is done here (Restate
/// asks for a step's work only once the attempt's replay is over).
async fn journal_run(
    ctx: &ObjectContext<'_>,
    run: Run,
    live: Arc<AtomicBool>,
) -> Result<(), HandlerError> {
    let Run {
        name,
        go,
        done,
        attempts,
    } = run;
    let policy = RunRetryPolicy::default()
        .initial_delay(std::time::Duration::from_millis(200))
        .max_attempts(attempts.max(1));
    let run = ctx
        .run(move || async move {
            live.store(true, Ordering::Relaxed);
            let (reply, outcome) = tokio::sync::oneshot::channel();
            if go.send(reply).is_err() {
                return Err(HandlerError::from("the engine stopped before the step ran"));
            }
            match outcome.await {
                Ok(Ok(value)) => Ok(Json(value)),
                Ok(Err(message)) => Err(HandlerError::from(message)),
                Err(_) => Err(HandlerError::from("the engine dropped the step")),
            }
        })
        .name(name)
        .retry_policy(policy);
    let outcome = match run.await {
        Ok(Json(value)) => Ok(value),
        Err(error) => Err(terminal(error)?),
    };
    let _ = done.send(outcome);
    Ok(())
}

/// How long the engine must have sent no step, after a completion was
/// handed to it, before the calls are awaited again.
const QUIET: Duration = Duration::from_millis(25);

/// How a call or a timer ended.
enum Ended {
    Answered(Result<Json<Value>, TerminalError>),
    Fired(Result<(), TerminalError>),
}

/// A call's or a timer's command, awaited with the others.
type Waiting<'ctx> = Pin<Box<dyn DurableFuture<Output = Ended> + Send + 'ctx>>;

/// Who hears of a call or a timer.
enum Waiter {
    /// A call's engine side, and the child (cancelled when the engine
    /// lets the call go).
    Call {
        done: oneshot::Sender<Result<Value, String>>,
        child: InvocationHandle,
    },
    /// A timer's engine side.
    Timer(oneshot::Sender<()>),
    /// A background agent's engine side, and its child (cancelled when
    /// the engine lets it go, or the invocation ends before it).
    Sent {
        done: oneshot::Sender<Sent>,
        child: InvocationHandle,
    },
}

impl Waiter {
    /// Whether the engine still waits for it; a background agent's end
    /// counts only when `free` (the journal may not hold it: see the
    /// module's comment).
    fn wanted(&self, free: bool) -> bool {
        match self {
            Self::Call { done, .. } => !done.is_closed(),
            Self::Timer(fired) => !fired.is_closed(),
            Self::Sent { done, .. } => free && !done.is_closed(),
        }
    }
}

/// The calls and timers in flight. One the engine let go stays in the
/// set until it ends (a cancelled child answers); nobody hears of it.
struct Durable<'ctx> {
    set: DurableFuturesUnordered<Waiting<'ctx>>,
    waiters: BTreeMap<usize, Waiter>,
    /// The engine's call numbers: their place in the set.
    calls: BTreeMap<u64, usize>,
}

impl<'ctx> Durable<'ctx> {
    fn new() -> Self {
        Self {
            set: DurableFuturesUnordered::new(),
            waiters: BTreeMap::new(),
            calls: BTreeMap::new(),
        }
    }

    /// Makes the command of a call.
    ///
    /// # Errors
    ///
    /// The invocation was cancelled, or its attempt ends.
    async fn call(&mut self, ctx: &'ctx ObjectContext<'_>, call: Call) -> Result<(), HandlerError> {
        let Call {
            n,
            object,
            key,
            input,
            done,
        } = call;
        let target = RequestTarget::object(object, key, "run");
        let call = ctx.request::<_, Json<Value>>(target, Json(input)).call();
        // Awaited alone, at once: the child's id, to cancel it.
        let child = call.invocation_handle().await?;
        let i = self.set.push(Box::pin(call.map(Ended::Answered)));
        self.waiters.insert(i, Waiter::Call { done, child });
        self.calls.insert(n, i);
        Ok(())
    }

    /// Makes the command of a one-way send and of the attach to its
    /// child, one after the other.
    ///
    /// # Errors
    ///
    /// The invocation was cancelled, or its attempt ends.
    async fn send(
        &mut self,
        ctx: &'ctx ObjectContext<'_>,
        send: OneWay,
    ) -> Result<(), HandlerError> {
        let OneWay {
            n,
            object,
            key,
            input,
            done,
        } = send;
        let target = RequestTarget::object(object, key, "run");
        // Awaited alone, at once: the child's id, to attach and cancel.
        let child = ctx.request::<_, ()>(target, Json(input)).send().await?;
        let answer = child.attach::<Json<Value>>();
        let i = self.set.push(Box::pin(answer.map(Ended::Answered)));
        self.waiters.insert(i, Waiter::Sent { done, child });
        self.calls.insert(n, i);
        Ok(())
    }

    /// Makes the command of a timer.
    fn sleep(&mut self, ctx: &'ctx ObjectContext<'_>, sleep: Sleep) {
        let timer = ctx.sleep(sleep.duration).map(Ended::Fired);
        let i = self.set.push(Box::pin(timer));
        self.waiters.insert(i, Waiter::Timer(sleep.fired));
    }

    /// Cancels the child of call or send `n`, which the engine let go.
    fn cancel(&mut self, n: u64) {
        let Some(i) = self.calls.remove(&n) else {
            return;
        };
        match self.waiters.remove(&i) {
            Some(Waiter::Call { child, .. }) => {
                tracing::info!(
                    child = child.invocation_id(),
                    "the engine let the call go (its budget ran out): cancelling the child"
                );
                child.cancel();
            }
            Some(Waiter::Sent { child, .. }) => {
                tracing::info!(
                    child = child.invocation_id(),
                    "the engine let the background agent go (stopped): cancelling the child"
                );
                child.cancel();
            }
            _ => {}
        }
    }

    /// Cancels every child sent one way that has not ended: the
    /// invocation ends, and nobody would hear of them.
    fn cancel_sent(&mut self) {
        for waiter in self.waiters.values() {
            if let Waiter::Sent { child, .. } = waiter {
                tracing::info!(
                    child = child.invocation_id(),
                    "the invocation ends before its background agent: cancelling the child"
                );
                child.cancel();
            }
        }
    }

    /// Whether the engine waits for a call, timer or (when `free`) a
    /// background agent in flight: only then is the set awaited.
    fn wanted(&self, free: bool) -> bool {
        self.waiters.values().any(|w| w.wanted(free))
    }

    /// The next call or timer to end: its place in the set and how.
    ///
    /// # Errors
    ///
    /// The invocation was cancelled, or its attempt ends.
    async fn next(&mut self) -> Result<(usize, Ended), HandlerError> {
        match self.set.next().await? {
            Some(ended) => Ok(ended),
            None => std::future::pending().await,
        }
    }

    /// Hands the end of call `i` to the engine; `false` when the engine
    /// had let it go.
    ///
    /// # Errors
    ///
    /// A child that answered with Restate's cancellation while its
    /// parent still waited for it: the parent was cancelled (or the
    /// child, through the admin API), and so is this invocation.
    fn settle(&mut self, i: usize, ended: Ended) -> Result<bool, HandlerError> {
        match (self.waiters.remove(&i), ended) {
            (Some(Waiter::Call { done, .. }), Ended::Answered(outcome)) => {
                let outcome = match outcome {
                    Ok(Json(value)) => Ok(value),
                    Err(error) => Err(terminal(error)?),
                };
                let _ = done.send(outcome);
                Ok(true)
            }
            (Some(Waiter::Sent { done, .. }), Ended::Answered(outcome)) => {
                let sent = match outcome {
                    Ok(Json(value)) => Sent::Answered(value),
                    // The child's own cancellation: this invocation's
                    // would have ended the await itself.
                    Err(error) if error.code() == CANCELLED => {
                        Sent::Cancelled(error.message().to_owned())
                    }
                    Err(error) => Sent::Failed(error.message().to_owned()),
                };
                let _ = done.send(sent);
                Ok(true)
            }
            (Some(Waiter::Timer(fired)), Ended::Fired(outcome)) => {
                if let Err(error) = outcome {
                    terminal(error)?;
                }
                let _ = fired.send(());
                Ok(true)
            }
            // Let go by the engine.
            _ => Ok(false),
        }
    }
}

/// The `ctx.run` steps being journaled, in the order they were made.
type Running<'a> = Vec<Pin<Box<dyn Future<Output = Result<(), HandlerError>> + Send + 'a>>>;

/// Polls every running step, in order, each time the handler's task
/// wakes: the SDK wakes only the step that last read the invocation's
/// input, which may have read another step's completion (a
/// `FuturesUnordered` would leave that other step asleep for good). The
/// order matters too: a step's command is made at its first poll.
fn poll_all(running: &mut Running<'_>, cx: &mut Context<'_>) -> Poll<Result<(), HandlerError>> {
    let mut progressed = false;
    let mut i = 0;
    while i < running.len() {
        match running[i].as_mut().poll(cx) {
            Poll::Ready(ended) => {
                drop(running.remove(i));
                ended?;
                progressed = true;
            }
            Poll::Pending => i += 1,
        }
    }
    if progressed {
        Poll::Ready(Ok(()))
    } else {
        Poll::Pending
    }
}

/// Runs `turn` to its end while journaling the steps it sends. The
/// children it sent one way and that still run when it ends are
/// cancelled.
///
/// # Errors
///
/// The invocation was cancelled (Restate's 409), or a command could not
/// be journaled for a reason worth retrying, which ends the attempt
/// (Restate retries the invocation and replays it).
pub(crate) async fn drive<T>(
    ctx: &ObjectContext<'_>,
    mut steps: Steps,
    turn: impl Future<Output = T>,
) -> Result<T, HandlerError> {
    let mut turn = pin!(turn);
    // Set once a step's work ran in this attempt: its replay is over.
    let live = Arc::new(AtomicBool::new(false));
    let mut running: Running<'_> = Vec::new();
    let mut calls = Durable::new();
    // Set when a completion was handed to the engine, until it is quiet.
    let quiet = tokio::time::sleep(Duration::ZERO);
    let mut quiet = pin!(quiet);
    let mut settling = false;
    // Set when the turn answered and waits only for its background agents.
    let mut idle = false;
    let ended: Result<T, HandlerError> = async {
        loop {
            let past_replay = live.load(Ordering::Relaxed);
            // Whether a background agent's end may be awaited now.
            let free = past_replay || (idle && running.is_empty());
            // Past the replay no await can come before a command the
            // journal holds: the calls need not wait for the engine.
            let settled = past_replay || !settling;
            tokio::select! {
                biased;
                Some(step) = steps.recv() => {
                    let now = tokio::time::Instant::now();
                    if settling {
                        quiet.as_mut().reset(now + QUIET);
                    }
                    match step {
                        Step::Run(run) => {
                            running.push(Box::pin(journal_run(ctx, run, Arc::clone(&live))));
                        }
                        Step::Call(call) => calls.call(ctx, call).await?,
                        Step::Send(send) => calls.send(ctx, send).await?,
                        Step::Sleep(sleep) => calls.sleep(ctx, sleep),
                        Step::Cancel(n) => calls.cancel(n),
                        Step::Idle => idle = true,
                    }
                }
                ended = std::future::poll_fn(|cx| poll_all(&mut running, cx)), if !running.is_empty() => ended?,
                () = &mut quiet, if !settled => settling = false,
                ended = calls.next(), if settled && calls.wanted(free) => {
                    let (i, ended) = ended?;
                    if calls.settle(i, ended)? && !live.load(Ordering::Relaxed) {
                        settling = true;
                        quiet.as_mut().reset(tokio::time::Instant::now() + QUIET);
                    }
                }
                value = &mut turn => return Ok(value),
            }
        }
    }
    .await;
    calls.cancel_sent();
    ended
}
