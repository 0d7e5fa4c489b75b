//! [`RemoteAgents`]: the effects of a session that runs locally while its
//! subagents of a type that says `isolation: remote` run on the workers
//! of a Restate server: each is a one-way send of the subagent object
//! ([`AGENT_OBJECT`], keyed `{session}/{agent id}`, its description the
//! input) through the server's ingress, then an attach to it for its end
//! (the subagent's result and what its subtree spent). Restate runs it on
//! any worker, journals its steps there, and moves it to another worker
//! when its worker dies: its effects happen once, as for a durable
//! session's child. Everything else is the inner effects'.

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use zr_engine::{
    Effects, ModelProvider, ModelRequest, ModelStream, RemoteEnd, SubagentSpec, TaskResult,
};
use zr_types::{AgentId, BoxFuture, ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput};

use crate::http::{DEFAULT_TIMEOUT, authority, get, post_json};
use crate::keys::{AGENT_OBJECT, agent_key};

/// Local effects that run `isolation: remote` subagents on a Restate
/// server's workers.
#[derive(Debug)]
pub struct RemoteAgents {
    inner: Arc<dyn Effects>,
    ingress: String,
}

impl RemoteAgents {
    /// `inner`'s effects, but for the remote subagents, sent to the
    /// server whose ingress is `ingress` (`http://HOST:8080`).
    pub fn new(inner: Arc<dyn Effects>, ingress: impl Into<String>) -> Self {
        Self {
            inner,
            ingress: ingress.into(),
        }
    }
}

impl Effects for RemoteAgents {
    fn model_request(
        &self,
        provider: &Arc<dyn ModelProvider>,
        request: ModelRequest,
    ) -> ModelStream {
        self.inner.model_request(provider, request)
    }

    fn tool_call<'a>(
        &'a self,
        handler: &'a Arc<dyn ToolHandler>,
        call: &'a ToolCall,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.inner.tool_call(handler, call, ctx)
    }

    fn subagent<'a>(
        &'a self,
        agent: &'a AgentId,
        run: BoxFuture<'a, TaskResult>,
    ) -> BoxFuture<'a, TaskResult> {
        self.inner.subagent(agent, run)
    }

    fn remote_subagent(
        &self,
        spec: &SubagentSpec,
    ) -> Option<BoxFuture<'static, Result<RemoteEnd, String>>> {
        if !spec.remote {
            return self.inner.remote_subagent(spec);
        }
        let ingress = self.ingress.clone();
        let Some(session) = &spec.session else {
            return Some(Box::pin(std::future::ready(Err(format!(
                "the remote agent {} has no session in its description",
                spec.agent
            )))));
        };
        let key = agent_key(session, spec);
        let input = serde_json::to_value(spec).ok()?;
        let run = async move { run_remote(&ingress, &key, &input).await };
        if spec.background {
            // Started now, before its call returns.
            let started = tokio::spawn(run);
            return Some(Box::pin(async move {
                started
                    .await
                    .map_err(|e| format!("the remote agent's request stopped: {e}"))?
            }));
        }
        Some(Box::pin(run))
    }

    fn now(&self) -> SystemTime {
        self.inner.now()
    }

    fn sleep_until(
        &self,
        agent: &AgentId,
        deadline: tokio::time::Instant,
    ) -> BoxFuture<'static, ()> {
        self.inner.sleep_until(agent, deadline)
    }
}

/// Sends the subagent object `key` its description `input` through
/// `ingress` and waits for its end.
async fn run_remote(ingress: &str, key: &str, input: &Value) -> Result<RemoteEnd, String> {
    let failed = |what: String| format!("the remote agent {key} on {ingress}: {what}");
    authority(ingress).map_err(|e| failed(e.to_string()))?;
    let path = format!("/{AGENT_OBJECT}/{}/run/send", key.replace('/', "%2F"));
    let invocation = match post_json(ingress, &path, input, DEFAULT_TIMEOUT).await {
        Ok((200..300, body)) => serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["invocationId"].as_str().map(str::to_owned))
            .ok_or_else(|| failed(format!("no invocation id in {body}")))?,
        Ok((status, body)) => return Err(failed(format!("HTTP {status}: {body}"))),
        Err(e) => return Err(failed(zr_types::error_chain(&e))),
    };
    tracing::info!(agent = key, %invocation, "the remote agent was sent");
    let path = format!("/restate/invocation/{invocation}/attach");
    // No limit but the connection's: an agent takes as long as it takes.
    match get(ingress, &path, None).await {
        Ok((200, body)) => serde_json::from_str(&body).map_err(|e| failed(format!("{e}: {body}"))),
        Ok((status, body)) => Err(failed(format!("HTTP {status}: {body}"))),
        Err(e) => Err(failed(zr_types::error_chain(&e))),
    }
}
