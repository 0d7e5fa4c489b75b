//! The bridge between the engine and a Restate invocation.
//!
//! The engine runs as ordinary async Rust in its own tasks; a Restate
//! context lives in the invocation's handler and cannot leave it. Each
//! journaled effect is a [`Step`] sent from the engine to the handler,
//! which makes one command of it (a `ctx.run`, a call of a child
//! invocation, a one-way send), in the order the steps arrive (the engine's own,
//! deterministic order: see zr-engine's `Effects`). The work of a
//! `ctx.run` stays on the engine's side:
//!
//! - first run: the handler's `ctx.run` closure asks the engine to do the
//!   work (`go`), journals what comes back, and hands the journaled value
//!   to the engine (`done`);
//! - replay: Restate has the step's result, the closure never runs, `go`
//!   is dropped unanswered and the engine gets the journaled value
//!   without doing the work.
//!
//! The engine always continues from the journaled value (not from its own
//! copy), so a first run and a replay see the same thing.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// How a step's work ended on the engine's side, before the journal.
pub(crate) type Work = Result<Value, String>;

/// One effect to journal, in the engine's order.
#[derive(Debug)]
pub(crate) enum Step {
    /// A `ctx.run` of work done on the engine's side.
    Run(Run),
    /// A call of a child invocation.
    Call(Call),
    /// A one-way send of a child invocation (a background agent), then
    /// an attach to it for its answer.
    Send(OneWay),
    /// A durable timer.
    Sleep(Sleep),
    /// The engine let call or send `n` go before its answer (its budget
    /// ran out, or its background agent was stopped): the child is
    /// cancelled. Sent on the same channel as the steps, so the cancel
    /// takes its place in the engine's order.
    Cancel(u64),
    /// The turn answered and waits only for its background agents: their
    /// ends may be awaited now (the engine makes no further command of
    /// its own).
    Idle,
}

/// A durable timer: Restate keeps the wake-up time of its first attempt.
#[derive(Debug)]
pub(crate) struct Sleep {
    /// How long from now (on a replay, Restate's journaled wake-up time
    /// counts instead).
    pub(crate) duration: std::time::Duration,
    /// Told when the timer fires; dropped by the engine when it no longer
    /// waits (the call ended first).
    pub(crate) fired: oneshot::Sender<()>,
}

/// Work to journal as one `ctx.run`.
#[derive(Debug)]
pub(crate) struct Run {
    /// The journal entry's name (`model root #3`, `tool toolu_01`,
    /// `subagent {session}/{agent}`); names make a replay that took
    /// another path fail loudly instead of reading the wrong result.
    pub(crate) name: String,
    /// Answered by the handler when the work must be done now.
    pub(crate) go: oneshot::Sender<oneshot::Sender<Work>>,
    /// The journaled value (or the terminal error once retries ran out).
    pub(crate) done: oneshot::Sender<Result<Value, String>>,
    /// How many times the step is tried before it fails for good.
    pub(crate) attempts: u32,
}

/// A request-response call of a child invocation: the object `object`
/// keyed `key`, handler `run`, with `input`.
#[derive(Debug)]
pub(crate) struct Call {
    /// The call's number in this invocation (for [`Step::Cancel`]).
    pub(crate) n: u64,
    pub(crate) object: &'static str,
    pub(crate) key: String,
    pub(crate) input: Value,
    /// Its answer, or its terminal error's message.
    pub(crate) done: oneshot::Sender<Result<Value, String>>,
}

/// A one-way send of a child invocation: the object `object` keyed
/// `key`, handler `run`, with `input`; the child runs on its own (its
/// parent's invocation may end first), and the handler attaches to it
/// for its answer.
#[derive(Debug)]
pub(crate) struct OneWay {
    /// The send's number in this invocation (for [`Step::Cancel`]),
    /// shared with the calls'.
    pub(crate) n: u64,
    pub(crate) object: &'static str,
    pub(crate) key: String,
    pub(crate) input: Value,
    /// How the child ended.
    pub(crate) done: oneshot::Sender<Sent>,
}

/// How a child sent one way ended.
#[derive(Debug)]
pub(crate) enum Sent {
    /// Its answer.
    Answered(Value),
    /// It was cancelled (Restate's cancellation: the admin API, or its
    /// parent let it go); the text says by whom, as Restate does.
    Cancelled(String),
    /// Its terminal error's message.
    Failed(String),
}

/// The engine's end of the bridge.
#[derive(Debug, Clone)]
pub(crate) struct Journal {
    steps: mpsc::UnboundedSender<Step>,
    /// The number of the next call.
    calls: Arc<AtomicU64>,
}

/// The handler's end: the steps in arrival order.
pub(crate) type Steps = mpsc::UnboundedReceiver<Step>;

impl Journal {
    /// A bridge and the handler's end of it.
    pub(crate) fn new() -> (Self, Steps) {
        let (steps, rx) = mpsc::unbounded_channel();
        let calls = Arc::default();
        (Self { steps, calls }, rx)
    }

    /// Journals `work` as the step `name`: runs it only when the journal
    /// has no result for the step, and returns the journaled result.
    /// `Err(text)` from `work` is not journaled: the step is tried again
    /// (up to `attempts` times, then the step fails with that text).
    ///
    /// When the invocation is gone (its attempt failed, the worker is
    /// shutting down), this never returns: the engine's run is dropped
    /// with the attempt, and nothing it would do next is real.
    pub(crate) async fn step<T, W>(&self, name: String, attempts: u32, work: W) -> Result<T, String>
    where
        T: Serialize + DeserializeOwned,
        W: Future<Output = Result<T, String>>,
    {
        let (go, asked) = oneshot::channel();
        let (done, journaled) = oneshot::channel();
        let step = Step::Run(Run {
            name,
            go,
            done,
            attempts,
        });
        if self.steps.send(step).is_err() {
            return std::future::pending().await;
        }
        if let Ok(reply) = asked.await {
            let outcome = work
                .await
                .and_then(|value| serde_json::to_value(value).map_err(|e| e.to_string()));
            // The handler may have gone meanwhile; the journal decides.
            let _ = reply.send(outcome);
        }
        match journaled.await {
            Ok(Ok(value)) => read(value),
            Ok(Err(terminal)) => Err(terminal),
            Err(_) => std::future::pending().await,
        }
    }

    /// A durable timer of `duration` from now (on a replay, from when the
    /// first attempt set it). Never returns when the invocation is gone.
    pub(crate) async fn sleep(&self, duration: std::time::Duration) {
        let (fired, rx) = oneshot::channel();
        if self
            .steps
            .send(Step::Sleep(Sleep { duration, fired }))
            .is_err()
            || rx.await.is_err()
        {
            std::future::pending::<()>().await;
        }
    }

    /// Calls the child invocation `object`/`key` with `input` and waits
    /// for its answer (`Err`: its terminal error). Dropping the future
    /// before the answer cancels the child. Never returns when the
    /// invocation is gone.
    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        object: &'static str,
        key: String,
        input: Value,
    ) -> Result<T, String> {
        let (done, rx) = oneshot::channel();
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let call = Call {
            n,
            object,
            key,
            input,
            done,
        };
        if self.steps.send(Step::Call(call)).is_err() {
            return std::future::pending().await;
        }
        let mut unanswered = Unanswered {
            steps: self.steps.clone(),
            n: Some(n),
        };
        let answer = rx.await;
        unanswered.n = None;
        match answer {
            Ok(Ok(value)) => read(value),
            Ok(Err(terminal)) => Err(terminal),
            Err(_) => std::future::pending().await,
        }
    }
}

impl Journal {
    /// Sends the child invocation `object`/`key` `input` one way, now:
    /// the step is on its way when this returns (the send takes its place
    /// in the engine's order here, not when the future is first polled).
    /// The future is the child's end. Dropping it before the end cancels
    /// the child; it never returns when the invocation is gone.
    pub(crate) fn send(
        &self,
        object: &'static str,
        key: String,
        input: Value,
    ) -> impl Future<Output = Sent> + use<> {
        let (done, rx) = oneshot::channel();
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let send = OneWay {
            n,
            object,
            key,
            input,
            done,
        };
        if self.steps.send(Step::Send(send)).is_err() {
            return futures_util::future::Either::Left(std::future::pending());
        }
        // Made now: dropped unpolled, the future still cancels the child.
        let unanswered = Unanswered {
            steps: self.steps.clone(),
            n: Some(n),
        };
        futures_util::future::Either::Right(async move {
            // The whole guard moves in (not only the field it clears).
            let mut unanswered = unanswered;
            let ended = rx.await;
            unanswered.n = None;
            match ended {
                Ok(sent) => sent,
                Err(_) => std::future::pending().await,
            }
        })
    }
}

impl Journal {
    /// Tells the handler that the turn answered and waits only for its
    /// background agents ([`Step::Idle`]).
    pub(crate) fn idle(&self) {
        let _ = self.steps.send(Step::Idle);
    }
}

/// Cancels call or send `n` when dropped before its answer.
struct Unanswered {
    steps: mpsc::UnboundedSender<Step>,
    n: Option<u64>,
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some(n) = self.n {
            let _ = self.steps.send(Step::Cancel(n));
        }
    }
}

/// A journaled value as the engine's type.
fn read<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value)
        .map_err(|e| format!("the journal holds a value this worker cannot read: {e}"))
}
