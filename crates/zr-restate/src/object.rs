//! The session as a Restate virtual object keyed by session id: one
//! exclusive turn at a time, each effect of the turn journaled.

use std::fmt;
use std::sync::Arc;

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use zr_engine::{Agent, AgentConfig, QueryOverrides, RootSnapshot, RuntimeEnvironment, TaskStatus};
use zr_types::{AgentId, SessionId};

use crate::drive::drive;
use crate::effects::DurableEffects;
use crate::journal::{Journal, Steps};

/// The Restate name of the session object.
pub const SESSION_OBJECT: &str = "ZrSession";

/// The session object's state key holding what the root carries from one
/// turn to the next (`zr_engine::RootSnapshot`): its conversation, the
/// tools it loaded through FindTool and the number of its last subagent.
/// Set once at the end of each turn that returned an answer (a value that
/// comes from the journal alone, so that a replay sets the same); the
/// next turn, on any worker, starts from it.
pub const ROOT_STATE: &str = "root";

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

/// One attempt of an invocation of `session` whose journal holds the
/// effects of `agent` (the root's turn, or one subagent): the project
/// opened afresh with the journal's effects, and the handler's end of the
/// journal. Every attempt runs the agent from its start (its finished
/// steps from the journal) and writes its transcript again: a root's turn
/// goes on from `root`, the session's state (its transcript cut back to
/// where the last turn left it, or written anew from the state:
/// `Agent::from_snapshot`); a subagent's transcript is removed first. No
/// record twice.
///
/// # Errors
///
/// The project does not open (a terminal error: no retry helps).
pub(crate) fn attempt(
    host: &dyn SessionHost,
    session: SessionId,
    agent: &AgentId,
    root: Option<RootSnapshot>,
) -> Result<(Agent, Steps, Journal), TerminalError> {
    let (runtime, config) = host.open().map_err(TerminalError::new)?;
    let (journal, steps) = Journal::new();
    let folder = config
        .sessions_dir
        .as_ref()
        .map(|dir| dir.join(session.as_str()));
    let effects = Arc::new(DurableEffects::new(
        session.clone(),
        agent.clone(),
        journal.clone(),
        folder,
    ));
    let agent = match root {
        Some(snapshot) => {
            let runtime = Arc::new(runtime.with_effects(effects));
            Agent::from_snapshot(runtime, config, session, snapshot)
        }
        None => {
            effects.forget(agent);
            let runtime = Arc::new(runtime.with_effects(effects));
            Agent::with_session_id(runtime, config, session)
        }
    };
    Ok((agent, steps, journal))
}

#[restate_sdk::object(name = "ZrSession")]
impl SessionObject {
    /// Runs one turn of the session `ctx.key()`, going on from the
    /// conversation of its earlier turns ([`ROOT_STATE`]).
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
        let saved: Option<Json<RootSnapshot>> = ctx.get(ROOT_STATE).await?;
        let saved = saved.map(|Json(saved)| saved).unwrap_or_default();
        let (agent, steps, journal) = attempt(&*self.host, session, &AgentId::root(), Some(saved))?;
        let query = agent
            .query(request.prompt, QueryOverrides::default())
            .finish();
        let turn = async {
            let result = query.await;
            if result.is_ok() {
                // As `zr run`: the turn ends once its background agents
                // did (a cancelled turn cancels them).
                journal.idle();
                agent.wait_background().await;
            }
            result
        };
        let result = drive(&ctx, steps, turn)
            .await?
            .map_err(|e| TerminalError::new(zr_types::error_chain(&e)))?;
        // The query has returned: the root is idle, and has a snapshot.
        let snapshot = agent
            .snapshot()
            .ok_or_else(|| HandlerError::from("the root still ran after its turn ended"))?;
        ctx.set(ROOT_STATE, Json(snapshot));
        Ok(Json(TurnAnswer {
            status: result.status,
            output: result.output,
            turns: result.turns,
        }))
    }
}
