//! Calling one agent's hooks at an event ([`AgentHooks`]): the session's,
//! then those of the agent's type, each within its timeout; their answers
//! folded into what the event does, as [`HookReply`]'s table says. A
//! `halt` answer is kept in the agent's [`Halt`], which the loop reads.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zr_types::{AgentId, ToolCall, ToolOutput};

use super::reply::{CompactTrigger, Notice, SessionEndReason, SessionSource, ToolPermission};
use super::{Hook, HookAgent, Hooks, guarded};
use crate::error::reason_of;
use crate::outcome::TaskResult;
use crate::sync::lock;

/// A hook with the timeout of each of its calls.
type Timed = (Arc<dyn Hook>, Duration);

/// Why a hook stopped an agent (`"continue": false`), once one did.
#[derive(Debug, Default)]
pub(crate) struct Halt(Mutex<Option<String>>);

impl Halt {
    /// Stops the agent for `reason` (the first reason stays).
    fn set(&self, reason: String) {
        lock(&self.0).get_or_insert(reason);
    }

    /// Why a hook stopped the agent, if one did.
    pub(crate) fn reason(&self) -> Option<String> {
        lock(&self.0).clone()
    }
}

/// A call that passes PreToolUse: the call to go on with (its input
/// rewritten or not) and how a hook wants it permitted.
#[derive(Debug, Clone)]
pub(crate) struct Admitted<'a> {
    /// Borrowed from the model's call unless a hook changed its input.
    pub(crate) call: Cow<'a, ToolCall>,
    /// `Ask` wins over `Allow`; `None`: no hook said.
    pub(crate) permission: Option<ToolPermission>,
}

/// One agent's hooks, ready to be called at its events.
#[derive(Debug)]
pub(crate) struct AgentHooks<'a> {
    session: &'a Hooks,
    /// Those of the agent's type ([`super::TypeHooks`]).
    own: Option<&'a Hooks>,
    /// The agent as hooks see it; `None` when there are no hooks to call.
    agent: Option<HookAgent>,
    /// Where a `halt` goes; `None` before the agent runs (SessionStart,
    /// UserPromptSubmit: a halt refuses the prompt instead).
    halt: Option<&'a Halt>,
}

impl<'a> AgentHooks<'a> {
    /// The `session`'s hooks and the agent's `own` for the agent `view`
    /// makes (made only when there are hooks), its halts kept in `halt`.
    pub(crate) fn new(
        session: &'a Hooks,
        own: Option<&'a Hooks>,
        view: impl FnOnce() -> HookAgent,
        halt: Option<&'a Halt>,
    ) -> Self {
        let any = !(session.is_empty() && own.is_none_or(Hooks::is_empty));
        Self {
            session,
            own,
            agent: any.then(view),
            halt,
        }
    }

    /// The agent and every hook in order, when there are hooks.
    fn each(&self) -> Option<(&HookAgent, impl Iterator<Item = &Timed>)> {
        let agent = self.agent.as_ref()?;
        let own = self.own.into_iter().flat_map(|h| &h.hooks);
        Some((agent, self.session.hooks.iter().chain(own)))
    }

    /// Keeps `reason` from the `event` hook as why the agent stops; the
    /// words that follow "agent X was".
    fn halted(&self, event: &str, reason: &str) -> String {
        let reason = format!("stopped by a {event} hook: {}", reason_of(reason, "hook"));
        tracing::info!(hook = event, %reason, "hook stopped the agent");
        if let Some(halt) = self.halt {
            halt.set(reason.clone());
        }
        reason
    }

    /// PreToolUse: the call to go on with, or why it must not run.
    pub(crate) async fn pre_tool_use<'c>(
        &self,
        call: &'c ToolCall,
    ) -> Result<Admitted<'c>, String> {
        let mut admitted = Admitted {
            call: Cow::Borrowed(call),
            permission: None,
        };
        let Some((agent, hooks)) = self.each() else {
            return Ok(admitted);
        };
        let refused = |why: String| format!("tool '{}' was not run: {why}", call.name);
        for (hook, timeout) in hooks {
            let now = &admitted.call;
            let reply = guarded("PreToolUse", *timeout, || hook.pre_tool_use(agent, now))
                .await
                .map_err(refused)?;
            if let Some(reason) = reply.halt {
                let why = self.halted("PreToolUse", &reason);
                return Err(refused(format!("agent {} was {why}", agent.agent)));
            }
            if let Some(reason) = reply.block {
                return Err(refused(format!(
                    "a PreToolUse hook denied it: {}",
                    reason_of(&reason, "hook")
                )));
            }
            if let Some(input) = reply.input {
                admitted.call.to_mut().input = input;
            }
            match reply.permission {
                Some(ToolPermission::Ask(reason)) => {
                    admitted.permission = Some(ToolPermission::Ask(reason));
                }
                Some(ToolPermission::Allow) if admitted.permission.is_none() => {
                    admitted.permission = Some(ToolPermission::Allow);
                }
                _ => {}
            }
        }
        Ok(admitted)
    }

    /// PostToolUse: what the hooks tell the model with the result (their
    /// block reasons and contexts, in order).
    pub(crate) async fn post_tool_use(&self, call: &ToolCall, output: &ToolOutput) -> Vec<String> {
        let mut notes = Vec::new();
        let Some((agent, hooks)) = self.each() else {
            return notes;
        };
        for (hook, timeout) in hooks {
            let Ok(reply) = guarded("PostToolUse", *timeout, || {
                hook.post_tool_use(agent, call, output)
            })
            .await
            else {
                continue;
            };
            if let Some(reason) = reply.block {
                notes.push(format!(
                    "PostToolUse hook feedback:\n{}",
                    reason_of(&reason, "hook")
                ));
            }
            if let Some(context) = reply.context.filter(|c| !c.trim().is_empty()) {
                notes.push(format!("PostToolUse hook additional context:\n{context}"));
            }
            if let Some(reason) = reply.halt {
                self.halted("PostToolUse", &reason);
            }
        }
        notes
    }

    /// Stop (the root) or SubagentStop (a subagent): `Some(reason)` when a
    /// hook keeps the agent working (the reasons of every blocking hook,
    /// one per line); `None` lets it stop. `active`: a block kept it
    /// working before.
    pub(crate) async fn stop(&self, answer: &str, active: bool) -> Option<String> {
        let (agent, hooks) = self.each()?;
        let event = if agent.is_root() {
            "Stop"
        } else {
            "SubagentStop"
        };
        let mut reasons = Vec::new();
        for (hook, timeout) in hooks {
            let Ok(reply) = guarded(event, *timeout, || hook.stop(agent, answer, active)).await
            else {
                continue;
            };
            if let Some(reason) = reply.halt {
                // `continue: false` wins over any block: the agent stops,
                // with the answer it gave.
                tracing::info!(hook = event, reason = %reason_of(&reason, "hook"), "a hook stopped the agent at its stop");
                return None;
            }
            if let Some(reason) = reply.block {
                reasons.push(reason_of(&reason, "hook").into_owned());
            }
        }
        (!reasons.is_empty()).then(|| reasons.join("\n"))
    }

    /// UserPromptSubmit: the contexts to add after `prompt`, or why it is
    /// refused.
    pub(crate) async fn user_prompt_submit(&self, prompt: &str) -> Result<Vec<String>, String> {
        let mut contexts = Vec::new();
        let Some((agent, hooks)) = self.each() else {
            return Ok(contexts);
        };
        for (hook, timeout) in hooks {
            let Ok(reply) = guarded("UserPromptSubmit", *timeout, || {
                hook.user_prompt_submit(agent, prompt)
            })
            .await
            else {
                continue;
            };
            if let Some(reason) = reply.halt.or(reply.block) {
                return Err(reason_of(&reason, "hook").into_owned());
            }
            contexts.extend(reply.context.filter(|c| !c.trim().is_empty()));
        }
        Ok(contexts)
    }

    /// SessionStart: the contexts to add before the first prompt, or why
    /// the prompt is not sent.
    pub(crate) async fn session_start(&self, source: SessionSource) -> Result<Vec<String>, String> {
        let mut contexts = Vec::new();
        let Some((agent, hooks)) = self.each() else {
            return Ok(contexts);
        };
        for (hook, timeout) in hooks {
            let Ok(reply) = guarded("SessionStart", *timeout, || {
                hook.session_start(agent, source)
            })
            .await
            else {
                continue;
            };
            if let Some(reason) = reply.halt {
                return Err(reason_of(&reason, "hook").into_owned());
            }
            contexts.extend(reply.context.filter(|c| !c.trim().is_empty()));
        }
        Ok(contexts)
    }

    /// PreCompact.
    pub(crate) async fn pre_compact(&self, trigger: CompactTrigger) {
        if let Some((agent, hooks)) = self.each() {
            for (hook, timeout) in hooks {
                let _ = guarded("PreCompact", *timeout, || hook.pre_compact(agent, trigger)).await;
            }
        }
    }

    /// Notification.
    pub(crate) async fn notification(&self, notice: &Notice) {
        if let Some((agent, hooks)) = self.each() {
            for (hook, timeout) in hooks {
                let _ = guarded("Notification", *timeout, || {
                    hook.notification(agent, notice)
                })
                .await;
            }
        }
    }

    /// SubagentStart.
    pub(crate) async fn subagent_start(&self, parent: &AgentId) {
        if let Some((agent, hooks)) = self.each() {
            for (hook, timeout) in hooks {
                let _ = guarded("SubagentStart", *timeout, || {
                    hook.subagent_start(agent, parent)
                })
                .await;
            }
        }
    }

    /// SessionEnd.
    pub(crate) async fn session_end(&self, reason: SessionEndReason) {
        if let Some((agent, hooks)) = self.each() {
            for (hook, timeout) in hooks {
                let _ = guarded("SessionEnd", *timeout, || hook.session_end(agent, reason)).await;
            }
        }
    }
}

impl Hooks {
    /// SubagentStop as an agent ended (the session's hooks only; see
    /// [`Hook::subagent_stop`]).
    pub(crate) async fn subagent_stop(&self, agent: &HookAgent, result: &TaskResult) {
        for (hook, timeout) in &self.hooks {
            let _ = guarded("SubagentStop", *timeout, || {
                hook.subagent_stop(agent, result)
            })
            .await;
        }
    }
}
