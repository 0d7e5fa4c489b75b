//! The host's answers: the permission handler that asks the host about
//! the calls zr.toml's rules leave open (`can_use_tool`), and the hook
//! that calls the host at the events it set.

use std::collections::BTreeSet;
use std::sync::Arc;

use zr_engine::{
    Decision, Hook, HookAgent, HookReply, PermissionHandler, PermissionRequest, TaskResult,
    ToolPermission,
};
use zr_protocol::{
    HookDecision, HookEvent, HookSpec, HookVerdict, HostMessage, PermissionDecision, ZrMessage,
};
use zr_types::{AgentId, BoxFuture, ToolCall, ToolOutput};

use super::wire::Wire;
use crate::hook_matcher::Matcher;
use crate::permissions::ConfigPermissions;

/// Decides what the rules leave open: the host when it answers
/// `can_use_tool`; otherwise a host tool runs and anything else is
/// decided as `zr run` without a terminal does.
#[derive(Debug)]
pub(crate) struct HostPermissions {
    pub(crate) wire: Arc<Wire>,
    pub(crate) ask_host: bool,
    pub(crate) host_tools: BTreeSet<String>,
    pub(crate) config: ConfigPermissions,
}

impl PermissionHandler for HostPermissions {
    fn can_use_tool<'a>(&'a self, request: &'a PermissionRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            if !self.ask_host {
                return if self.host_tools.contains(request.tool.as_str())
                    && request.crossing.is_none()
                {
                    Decision::Allow
                } else {
                    self.config.decide(request.tool.as_str(), Some(request))
                };
            }
            let answer = self
                .wire
                .ask(|id| ZrMessage::CanUseTool {
                    id,
                    agent: request.agent.to_string(),
                    agent_type: request.agent_type.clone(),
                    tool: request.tool.to_string(),
                    input: request.input.clone(),
                    crossing: request.crossing.clone(),
                })
                .await;
            match answer {
                Some(HostMessage::PermissionAnswer { decision, .. }) => match decision {
                    PermissionDecision::Allow { for_session: true } => Decision::AllowForSession,
                    PermissionDecision::Allow { .. } => Decision::Allow,
                    PermissionDecision::Deny { message } => Decision::Deny(if message.is_empty() {
                        "the host's can_use_tool said no".to_owned()
                    } else {
                        message
                    }),
                    _ => Decision::Deny("the host's answer is not one zr knows".to_owned()),
                },
                _ => Decision::Deny("the host did not answer the permission question".to_owned()),
            }
        })
    }
}

/// Calls the host at the events its hooks are set for.
#[derive(Debug)]
pub(crate) struct HostHook {
    wire: Arc<Wire>,
    hooks: Vec<(HookEvent, Matcher)>,
}

impl HostHook {
    /// A hook for `specs`; `None` when there is none.
    pub(crate) fn new(wire: Arc<Wire>, specs: &[HookSpec]) -> Result<Option<Self>, String> {
        let hooks = specs
            .iter()
            .map(|s| {
                Matcher::parse(s.matcher.as_deref())
                    .map(|m| (s.event, m))
                    .map_err(|e| {
                        format!("hook matcher '{}': {e}", s.matcher.as_deref().unwrap_or(""))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((!hooks.is_empty()).then_some(Self { wire, hooks }))
    }

    fn wants(&self, event: HookEvent, tool: Option<&str>) -> bool {
        self.hooks
            .iter()
            .any(|(e, m)| *e == event && tool.is_none_or(|t| m.matches(t)))
    }

    async fn call(
        &self,
        event: HookEvent,
        agent: &HookAgent,
        tool: Option<&ToolCall>,
        output: Option<String>,
    ) -> HookDecision {
        if !self.wants(event, tool.map(|c| c.name.as_str())) {
            return HookDecision::default();
        }
        let answer = self
            .wire
            .ask(|id| ZrMessage::HookCall {
                id,
                event,
                session: agent.session.to_string(),
                agent: agent.agent.to_string(),
                agent_type: agent.agent_type.clone(),
                tool: tool.map(|c| c.name.clone()),
                input: tool.map(|c| c.input.clone()),
                output,
            })
            .await;
        match answer {
            Some(HostMessage::HookAnswer { answer, .. }) => answer,
            _ => HookDecision::default(),
        }
    }
}

impl Hook for HostHook {
    fn subagent_start<'a>(&'a self, agent: &'a HookAgent, _: &'a AgentId) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.call(HookEvent::SubagentStart, agent, None, None).await;
        })
    }

    fn subagent_stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        result: &'a TaskResult,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let output = Some(result.output.clone());
            self.call(HookEvent::SubagentStop, agent, None, output)
                .await;
        })
    }

    fn pre_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            let answer = self
                .call(HookEvent::PreToolUse, agent, Some(call), None)
                .await;
            let mut reply = HookReply::proceed();
            match answer.decision {
                Some(HookVerdict::Deny) => reply.block = Some(answer.reason.unwrap_or_default()),
                Some(HookVerdict::Allow) => reply.permission = Some(ToolPermission::Allow),
                _ => {}
            }
            reply.input = answer.updated_input;
            reply
        })
    }

    fn post_tool_use<'a>(
        &'a self,
        agent: &'a HookAgent,
        call: &'a ToolCall,
        output: &'a ToolOutput,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            let text: String = output
                .content
                .iter()
                .filter_map(|c| match c {
                    zr_types::ToolResultContent::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            let answer = self
                .call(HookEvent::PostToolUse, agent, Some(call), Some(text))
                .await;
            blocked(&answer)
        })
    }

    fn stop<'a>(
        &'a self,
        agent: &'a HookAgent,
        answer: &'a str,
        _active: bool,
    ) -> BoxFuture<'a, HookReply> {
        Box::pin(async move {
            let answer = self
                .call(HookEvent::Stop, agent, None, Some(answer.to_owned()))
                .await;
            blocked(&answer)
        })
    }
}

/// A host's answer at PostToolUse or Stop: `deny` blocks (the reason goes
/// to the model, as a command hook's exit code 2 does); anything else says
/// nothing.
fn blocked(answer: &HookDecision) -> HookReply {
    let mut reply = HookReply::proceed();
    if answer.decision == Some(HookVerdict::Deny) {
        reply.block = Some(answer.reason.clone().unwrap_or_default());
    }
    reply
}
