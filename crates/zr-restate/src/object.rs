//! The session as a Restate virtual object keyed by session id: one
//! exclusive turn at a time, each effect of the turn journaled.

use std::fmt;
use std::sync::Arc;

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use zr_engine::{Agent, AgentConfig, QueryOverrides, RuntimeEnvironment, TaskStatus};
use zr_types::{AgentId, SessionId};

use crate::drive::drive;
use crate::effects::DurableEffects;
use crate::journal::{Journal, Steps};

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

/// One attempt of an invocation of `session` whose journal holds the
/// effects of `agent` (the root's turn, or one subagent): the project
/// opened afresh with the journal's effects, and the handler's end of the
/// journal. Every attempt runs the agent from its start (its finished
/// steps from the journal) and writes its transcript again, the old file
/// removed first: no record twice.
///
/// # Errors
///
/// The project does not open (a terminal error: no retry helps).
pub(crate) fn attempt(
    host: &dyn SessionHost,
    session: SessionId,
    agent: &AgentId,
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
    effects.forget(agent);
    let runtime = Arc::new(runtime.with_effects(effects));
    Ok((
        Agent::with_session_id(runtime, config, session),
        steps,
        journal,
    ))
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
        let (agent, steps, journal) = attempt(&*self.host, session, &AgentId::root())?;
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
        Ok(Json(TurnAnswer {
            status: result.status,
            output: result.output,
            turns: result.turns,
        }))
    }
}
