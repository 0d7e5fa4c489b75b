//! What a command's exit code and output mean at its event, in Claude
//! Code's format: one [`HookReply`] for the engine.
//!
//! - Exit code 2 blocks where the event can be blocked (PreToolUse,
//!   PostToolUse, Stop, SubagentStop, UserPromptSubmit), with standard
//!   error as the reason; elsewhere standard error is shown to the user.
//! - Exit code 0: a JSON object on standard output is read (`continue`,
//!   `stopReason`, `systemMessage`, `suppressOutput`, `decision`, `reason`,
//!   `hookSpecificOutput` with `permissionDecision`,
//!   `permissionDecisionReason`, `updatedInput`, `additionalContext`);
//!   other output is context for the model at SessionStart and
//!   UserPromptSubmit, and ignored elsewhere.
//! - Any other code is a non-blocking error (the command's runner warns).

use serde_json::{Map, Value};
use zr_engine::HookReply;

use super::Event;
use super::spawn::Ran;

/// What `ran`, a command of `event` (the `command` as written, for
/// warnings), answers.
pub(crate) fn reply(event: Event, command: &str, ran: &Ran) -> HookReply {
    match ran.code {
        Some(2) => {
            let reason = ran.stderr.trim();
            if event.blocks() {
                HookReply::block(if reason.is_empty() {
                    "the hook exited with code 2 and wrote no reason on standard error"
                } else {
                    reason
                })
            } else {
                if !reason.is_empty() {
                    tracing::warn!("the {} hook `{command}`: {reason}", event.name());
                }
                HookReply::proceed()
            }
        }
        Some(0) => {
            let out = ran.stdout.trim();
            match serde_json::from_str::<Value>(out) {
                Ok(Value::Object(answer)) => from_json(event, command, &answer),
                _ if event.takes_plain_context() && !out.is_empty() => {
                    HookReply::proceed().with_context(out)
                }
                _ => HookReply::proceed(),
            }
        }
        _ => HookReply::proceed(),
    }
}

/// The reply a JSON answer of `event` gives.
fn from_json(event: Event, command: &str, answer: &Map<String, Value>) -> HookReply {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
    if let Some(message) = answer.get("systemMessage").and_then(Value::as_str) {
        tracing::warn!("the {} hook `{command}`: {message}", event.name());
    }
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |name: &str| specific.and_then(|s| s.get(name));
    if let Some(named) = field("hookEventName").and_then(Value::as_str)
        && named != event.name()
    {
        tracing::warn!(
            "the {} hook `{command}` answered hookSpecificOutput for {named}; it is read as the {}'s",
            event.name(),
            event.name()
        );
    }
    let mut reply = HookReply::proceed();
    if answer.get("continue").and_then(Value::as_bool) == Some(false) {
        reply.halt = Some(text(answer.get("stopReason")));
    }
    let reason = text(answer.get("reason"));
    match answer.get("decision").and_then(Value::as_str) {
        Some("block") if event.blocks() => reply.block = Some(reason.clone()),
        // The older PreToolUse answer.
        Some("approve") if event == Event::PreToolUse => {
            reply.permission = Some(zr_engine::ToolPermission::Allow);
        }
        _ => {}
    }
    if let Some(context) = field("additionalContext").and_then(Value::as_str) {
        reply.context = Some(context.to_owned());
    }
    if event == Event::PreToolUse {
        reply.input = field("updatedInput").filter(|v| v.is_object()).cloned();
        let why = match field("permissionDecisionReason") {
            Some(reason) => text(Some(reason)),
            None => reason,
        };
        match field("permissionDecision").and_then(Value::as_str) {
            Some("deny") => reply.block = Some(why),
            Some("allow") => reply.permission = Some(zr_engine::ToolPermission::Allow),
            Some("ask") => reply.permission = Some(zr_engine::ToolPermission::Ask(why)),
            _ => {}
        }
    }
    reply
}
