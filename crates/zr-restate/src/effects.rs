//! [`DurableEffects`]: the engine's effects seam journaled through a
//! Restate invocation, the root's (`ZrSession`) or one subagent's
//! (`ZrAgent`): the invocation's agent.
//!
//! What is a command of the invocation's journal:
//!
//! - each model request of the invocation's agent: one step (`model
//!   AGENT #N`), the whole answer (a durable request streams no deltas);
//! - each tool call of that agent that reaches a handler: one step (`tool
//!   CALL_ID`), in call order, its context carrying the idempotency key
//!   `{session}/{call id}`;
//! - each subagent of the invocation's agent that the engine may run
//!   elsewhere (typed, fresh; at any depth): for a foreground one, a call of the child invocation
//!   `ZrAgent` `{session}/{agent id}`, made once the task holds a slot of
//!   its call; for a background one, a one-way send of that invocation,
//!   made when its `Task` call starts it (in the engine's order), and an
//!   attach to it, whose answer is the agent's end (its parent hears of
//!   it as locally, in a message at its next model request);
//! - the time budget of a call of that agent: one durable timer per call
//!   (Restate keeps its first wake-up time, so a worker that takes the
//!   turn over keeps the deadline); a child still running when it fires
//!   is cancelled;
//! - any other subagent (a fork, in the foreground or the background):
//!   one step (`subagent {session}/{agent id}`) holding its `TaskResult`;
//!   its own requests and calls run inside that step.
//!
//! On a replay the finished commands are read from the journal (no
//! request is sent, no tool runs again, a finished child is not called
//! again, a child sent one way is not sent again); the first unfinished
//! one runs again. A subagent run inside a step and cut short runs again
//! from its start.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt;
use zr_engine::{
    Effects, LocalEffects, ModelEvent, ModelProvider, ModelRequest, ModelResponse, ModelStream,
    ProviderError, RemoteEnd, SubagentSpec, TaskResult, TaskStatus,
};
use zr_types::{
    AgentId, BoxFuture, SessionId, ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput,
};

use crate::journal::{Journal, Sent};
use crate::keys::{AGENT_OBJECT, agent_key};
use crate::record::{ModelRecord, ToolRecord, journaled_failure, retryable};

/// Tries of a model request whose failure may pass (429, 5xx, transport)
/// before the failure is journaled; the provider's own retries come on
/// top of these.
const MODEL_ATTEMPTS: u32 = 3;

/// Tries of a tool call that panicked or whose step could not be written.
const TOOL_ATTEMPTS: u32 = 3;

/// The effects of one invocation of a durable session.
#[derive(Debug)]
pub(crate) struct DurableEffects {
    session: SessionId,
    /// The agent whose effects are this invocation's commands.
    agent: AgentId,
    journal: Journal,
    /// The session's transcript folder, when transcripts are on.
    folder: Option<PathBuf>,
}

impl DurableEffects {
    pub(crate) fn new(
        session: SessionId,
        agent: AgentId,
        journal: Journal,
        folder: Option<PathBuf>,
    ) -> Self {
        Self {
            session,
            agent,
            journal,
            folder,
        }
    }

    /// Removes what an earlier attempt wrote of `agent`'s transcript: the
    /// run about to start writes it again from its start.
    pub(crate) fn forget(&self, agent: &AgentId) {
        if let Some(folder) = &self.folder {
            let _ = std::fs::remove_file(folder.join(format!("{agent}.jsonl")));
        }
    }
}

/// The whole answer of `stream`: its `Completed` response.
async fn complete(mut stream: ModelStream) -> Result<ModelResponse, ProviderError> {
    while let Some(event) = stream.next().await {
        if let ModelEvent::Completed(response) = event? {
            return Ok(response);
        }
    }
    Err(ProviderError::Protocol {
        provider: "engine",
        message: "the stream ended without a complete answer".to_owned(),
    })
}

impl Effects for DurableEffects {
    fn model_request(
        &self,
        provider: &Arc<dyn ModelProvider>,
        request: ModelRequest,
    ) -> ModelStream {
        if request.origin.agent != self.agent {
            return LocalEffects.model_request(provider, request);
        }
        let name = format!("model {} #{}", request.origin.agent, request.origin.turn);
        let journal = self.journal.clone();
        let provider = Arc::clone(provider);
        let step = async move {
            let work = async move {
                match complete(provider.stream(request)).await {
                    Err(error) if retryable(&error) => Err(zr_types::error_chain(&error)),
                    outcome => Ok(ModelRecord::of(outcome)),
                }
            };
            match journal.step(name, MODEL_ATTEMPTS, work).await {
                Ok(record) => record.into_outcome().map(ModelEvent::Completed),
                Err(message) => Err(journaled_failure(message)),
            }
        };
        Box::pin(futures_util::stream::once(step))
    }

    fn tool_call<'a>(
        &'a self,
        handler: &'a Arc<dyn ToolHandler>,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        if ctx.agent != self.agent {
            return handler.call(call, ctx);
        }
        Box::pin(async move {
            let name = format!("tool {}", call.id);
            let tool = call.name.clone();
            let work = async { Ok(ToolRecord::of(&call.name, handler.call(call, ctx).await)) };
            match self.journal.step(name, TOOL_ATTEMPTS, work).await {
                Ok(record) => record.into_outcome(),
                Err(reason) => Err(ToolError::Unavailable { tool, reason }),
            }
        })
    }

    fn subagent<'a>(
        &'a self,
        agent: &'a AgentId,
        run: BoxFuture<'a, TaskResult>,
    ) -> BoxFuture<'a, TaskResult> {
        if *agent == self.agent {
            // The invocation's own agent: its lifecycle is the invocation.
            return run;
        }
        Box::pin(async move {
            let name = format!("subagent {}/{agent}", self.session);
            let work = async move {
                self.forget(agent);
                Ok::<_, String>(run.await)
            };
            match self.journal.step(name, 1, work).await {
                Ok(result) => result,
                // A subagent's run is never an error; a journal that cannot
                // hold its result leaves the attempt to Restate's retry.
                Err(message) => {
                    panic!("the subagent {agent}'s result was not journaled: {message}")
                }
            }
        })
    }

    fn sleep_until(
        &self,
        agent: &AgentId,
        deadline: tokio::time::Instant,
    ) -> BoxFuture<'static, ()> {
        if *agent != self.agent {
            return LocalEffects.sleep_until(agent, deadline);
        }
        let journal = self.journal.clone();
        let duration = deadline.saturating_duration_since(tokio::time::Instant::now());
        Box::pin(async move { journal.sleep(duration).await })
    }

    fn remote_subagent(
        &self,
        spec: &SubagentSpec,
    ) -> Option<BoxFuture<'static, Result<RemoteEnd, String>>> {
        // Only the invocation's own agent's children: a grandchild's
        // parent runs in its own invocation, which calls it.
        if spec.parents.last() != Some(&self.agent) {
            return None;
        }
        let journal = self.journal.clone();
        let key = agent_key(&self.session, spec);
        let input = serde_json::to_value(spec).ok()?;
        if spec.background {
            // Sent now, in the engine's order; the future is its end.
            let sent = journal.send(AGENT_OBJECT, key, input);
            let spec = spec.clone();
            return Some(Box::pin(async move {
                match sent.await {
                    Sent::Answered(value) => serde_json::from_value(value).map_err(|e| {
                        format!("the background agent's answer is not a task result: {e}")
                    }),
                    Sent::Cancelled(message) => Ok(RemoteEnd {
                        result: cancelled(&spec, &message),
                        usage: zr_types::Usage::default(),
                        cost_usd: 0.0,
                    }),
                    Sent::Failed(message) => Err(message),
                }
            }));
        }
        // `Err`: the child invocation failed for good (not its task).
        Some(Box::pin(async move {
            journal.call(AGENT_OBJECT, key, input).await
        }))
    }
}

/// The result of the background agent `spec` whose invocation Restate
/// cancelled (through its admin API) with `message`: `cancelled`, as a
/// background agent a host stops, without what it wrote (that stays in its
/// transcript, on its worker).
fn cancelled(spec: &SubagentSpec, message: &str) -> TaskResult {
    TaskResult {
        index: spec.index,
        agent_id: Some(spec.agent.clone()),
        agent_type: spec.subagent_type.as_str().to_owned(),
        description: spec.description.clone(),
        status: TaskStatus::Cancelled,
        output: String::new(),
        value: None,
        turns: 0,
        usage: zr_types::Usage::default(),
        cost_usd: None,
        duration: std::time::Duration::ZERO,
        error: Some(format!(
            "its invocation was cancelled through Restate before it finished ({message})"
        )),
        worktree: None,
    }
}
