//! The session as a Restate virtual object keyed by session id: one
//! exclusive turn at a time, each effect of the turn journaled.

use std::fmt;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use zr_engine::{Agent, AgentConfig, QueryOverrides, RuntimeEnvironment, TaskStatus};
use zr_types::{AgentId, SessionId};

use crate::effects::DurableEffects;
use crate::journal::{Journal, Step, Steps};

/// The Restate name of the session object.
pub const SESSION_OBJECT: &str = "ZrSession";

/// What a worker needs to run a session of its project: a fresh runtime
/// and the root's configuration, for every attempt of every turn (an
/// attempt's runtime is dropped with it).
pub trait SessionHost: Send + Sync + fmt::Debug + 'static {
    /// The runtime (provider, tools, MCP handlers) and the root's
    /// configuration; the runtime's effects are replaced by the journal's.
    ///
    /// # Errors
    ///
    /// What keeps the project from running (a bad configuration file): the
    /// turn fails at once, without retries.
    fn open(&self) -> Result<(RuntimeEnvironment, AgentConfig), String>;
}

/// One turn of a session: the prompt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TurnRequest {
    /// What the user asks.
    pub prompt: String,
}

/// A turn's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnAnswer {
    /// `completed`, `max_turns`, ... (zr-engine's `TaskStatus`).
    pub status: TaskStatus,
    /// The root's final text.
    pub output: String,
    /// The root's model requests.
    pub turns: u32,
}

/// The virtual object a worker serves.
#[derive(Debug)]
pub struct SessionObject {
    host: Arc<dyn SessionHost>,
}

impl SessionObject {
    /// Sessions of `host`'s project.
    pub fn new(host: Arc<dyn SessionHost>) -> Self {
        Self { host }
    }
}

/// Makes the `ctx.run` of `step` and hands its result to the engine.
///
/// # Errors
///
/// A step that could not be journaled for a reason worth retrying ends
/// the attempt (Restate retries the invocation and replays it).
async fn journal_step(ctx: &ObjectContext<'_>, step: Step) -> Result<(), HandlerError> {
    let Step {
        name,
        go,
        done,
        attempts,
    } = step;
    let policy = RunRetryPolicy::default()
        .initial_delay(std::time::Duration::from_millis(200))
        .max_attempts(attempts.max(1));
    let run = ctx
        .run(move || async move {
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
    match run.await {
        Ok(Json(value)) => {
            let _ = done.send(Ok(value));
            Ok(())
        }
        Err(terminal) => {
            let _ = done.send(Err(terminal.message().to_owned()));
            Ok(())
        }
    }
}

/// The steps being journaled, in the order they were made.
type Running<'a> = Vec<Pin<Box<dyn Future<Output = Result<(), HandlerError>> + Send + 'a>>>;

/// Polls every running step, in order, each time the handler's task
/// wakes: the SDK wakes only the step that last read the invocation's
/// input, which may have read another step's completion (a
/// `FuturesUnordered` would leave that other step asleep for good). The
/// order matters too: a step's journal entry is made at its first poll.
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

/// Runs `turn` to its end while journaling the steps it sends.
async fn drive<T>(
    ctx: &ObjectContext<'_>,
    mut steps: Steps,
    turn: impl Future<Output = T>,
) -> Result<T, HandlerError> {
    let mut turn = pin!(turn);
    let mut running: Running<'_> = Vec::new();
    loop {
        tokio::select! {
            biased;
            Some(step) = steps.recv() => running.push(Box::pin(journal_step(ctx, step))),
            ended = std::future::poll_fn(|cx| poll_all(&mut running, cx)), if !running.is_empty() => ended?,
            value = &mut turn => return Ok(value),
        }
    }
}

#[restate_sdk::object(name = "ZrSession")]
impl SessionObject {
    /// Runs one turn of the session `ctx.key()`.
    #[handler]
    async fn run(
        &self,
        ctx: ObjectContext<'_>,
        request: Json<TurnRequest>,
    ) -> HandlerResult<Json<TurnAnswer>> {
        let Json(request) = request;
        let session: SessionId = ctx
            .key()
            .parse()
            .map_err(|e| TerminalError::new(format!("'{}' is not a session id: {e}", ctx.key())))?;
        let (runtime, config) = self.host.open().map_err(TerminalError::new)?;
        let (journal, steps) = Journal::new();
        let folder = config
            .sessions_dir
            .as_ref()
            .map(|dir| dir.join(session.as_str()));
        let effects = Arc::new(DurableEffects::new(session.clone(), journal, folder));
        // Every attempt replays the root from its start and writes its
        // transcript again: no record twice. A subagent's transcript is
        // written by the attempt that runs it (see `DurableEffects`).
        effects.forget(&AgentId::root());
        let runtime = Arc::new(runtime.with_effects(effects));
        let agent = Agent::with_session_id(runtime, config, session);
        let turn = agent
            .query(request.prompt, QueryOverrides::default())
            .finish();
        let result = drive(&ctx, steps, turn)
            .await?
            .map_err(|e| TerminalError::new(zr_types::error_chain(&e)))?;
        Ok(Json(TurnAnswer {
            status: result.status,
            output: result.output,
            turns: result.turns,
        }))
    }
}
