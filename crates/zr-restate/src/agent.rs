//! A subagent of a durable session as its own Restate invocation: the
//! virtual object [`AGENT_OBJECT`](crate::AGENT_OBJECT), keyed
//! `{session}/{agent id}`, which a parent's invocation (the root's, or a
//! subagent's that delegates in turn) calls for each of its typed
//! foreground subagents and sends one way for each of its typed
//! background ones. Its answer is the subagent's result and what its
//! whole subtree spent (`RemoteEnd`). Restate runs each on any worker of the deployment;
//! the worker rebuilds the subagent from its description with its own
//! project (a background one as a background agent), and journals the
//! subagent's own model requests and tool calls one by one.

use std::sync::Arc;

use restate_sdk::prelude::*;
use zr_engine::{RemoteEnd, SubagentSpec};
use zr_types::SessionId;

use crate::drive::drive;
use crate::keys::agent_key;
use crate::object::{SessionHost, attempt};

/// The virtual object of subagents a worker serves.
#[derive(Debug)]
pub struct AgentObject {
    host: Arc<dyn SessionHost>,
}

impl AgentObject {
    /// Subagents of `host`'s project.
    pub fn new(host: Arc<dyn SessionHost>) -> Self {
        Self { host }
    }
}

#[restate_sdk::object(name = "ZrAgent")]
impl AgentObject {
    /// Runs the subagent `spec` describes, of the session the key names,
    /// to its result.
    #[handler]
    async fn run(
        &self,
        ctx: ObjectContext<'_>,
        spec: Json<SubagentSpec>,
    ) -> HandlerResult<Json<RemoteEnd>> {
        let Json(spec) = spec;
        let key = ctx.key().to_owned();
        let session: SessionId = key
            .split_once('/')
            .and_then(|(session, _)| session.parse().ok())
            .ok_or_else(|| TerminalError::new(format!("'{key}' is not a SESSION/AGENT key")))?;
        if agent_key(&session, &spec) != key {
            return Err(TerminalError::new(format!(
                "the key '{key}' does not name the agent {} it describes",
                spec.agent
            ))
            .into());
        }
        let agent = spec.agent.clone();
        let (agent, steps, _) = attempt(&*self.host, session, &agent, None)?;
        let run = agent.run_described(spec).finish_remote();
        let result = drive(&ctx, steps, run)
            .await?
            .map_err(|e| TerminalError::new(zr_types::error_chain(&e)))?;
        Ok(Json(result))
    }
}
