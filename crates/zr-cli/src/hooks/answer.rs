//! What a PreToolUse command's exit code and output mean for its call, in
//! Claude Code's format.

use serde_json::Value;
use zr_engine::PreToolUse;

use super::Ran;

/// The verdict of a PreToolUse command that ran: exit code 2 blocks with
/// standard error; exit code 0 may answer JSON (`hookSpecificOutput`'s
/// `permissionDecision`, `permissionDecisionReason` and `updatedInput`,
/// or the older `decision` and `reason`); anything else goes on.
pub(crate) fn pre_tool_use_answer(ran: &Ran) -> PreToolUse {
    match ran.code {
        Some(2) => {
            let reason = ran.stderr.trim();
            PreToolUse::Deny(if reason.is_empty() {
                "the hook exited with code 2 and wrote no reason on standard error".to_owned()
            } else {
                reason.to_owned()
            })
        }
        Some(0) => match serde_json::from_str::<Value>(ran.stdout.trim()) {
            Ok(Value::Object(answer)) => from_json(&answer),
            _ => PreToolUse::Continue,
        },
        _ => PreToolUse::Continue,
    }
}

fn from_json(answer: &serde_json::Map<String, Value>) -> PreToolUse {
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |name: &str| specific.and_then(|s| s.get(name));
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
    let updated = field("updatedInput").filter(|v| v.is_object()).cloned();
    let decision = field("permissionDecision")
        .and_then(Value::as_str)
        .or_else(|| match answer.get("decision").and_then(Value::as_str) {
            Some("block") => Some("deny"),
            Some("approve") => Some("allow"),
            _ => None,
        });
    let reason = match field("permissionDecisionReason") {
        Some(reason) => text(Some(reason)),
        None => text(answer.get("reason")),
    };
    match decision {
        Some("deny") => PreToolUse::Deny(reason),
        Some("allow") => PreToolUse::Allow(updated),
        _ => updated.map_or(PreToolUse::Continue, PreToolUse::Rewrite),
    }
}
