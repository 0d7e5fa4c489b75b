//! Unit tests of command hooks: matchers, and what a command's exit code
//! and output answer at each event.

use serde_json::json;
use zr_engine::{HookReply, ToolPermission};

use super::spawn::Ran;
use super::{Event, file_hooks, reply};
use crate::hook_matcher::Matcher;

fn ran(code: Option<i32>, stdout: &str, stderr: &str) -> Ran {
    Ran {
        code,
        stdout: stdout.to_owned(),
        stderr: stderr.to_owned(),
    }
}

fn pre(code: Option<i32>, stdout: &str, stderr: &str) -> HookReply {
    reply(Event::PreToolUse, "cmd", &ran(code, stdout, stderr))
}

#[test]
fn matchers_take_names_alternatives_regular_expressions_and_all() {
    let m = |t: Option<&str>| Matcher::parse(t).unwrap();
    for all in [None, Some(""), Some("*")] {
        assert!(m(all).matches("Bash") && m(all).matches("mcp__gh__x"));
    }
    let names = m(Some("Write|Edit"));
    assert!(names.matches("Write") && names.matches("Edit"));
    assert!(!names.matches("Bash") && !names.matches("WriteX"));
    let re = m(Some("mcp__gh__.*"));
    assert!(re.matches("mcp__gh__create") && !re.matches("xmcp__gh__create"));
    assert!(m(Some("mcp__memory__create_entities")).matches("mcp__memory__create_entities"));
    assert!(m(Some("Notebook.*")).matches("NotebookEdit"));
    assert!(Matcher::parse(Some("Bash(")).is_err());
}

#[test]
fn exit_code_two_blocks_with_standard_error_and_other_codes_go_on() {
    assert_eq!(
        pre(Some(2), "", "no rm -rf here\n"),
        HookReply::block("no rm -rf here")
    );
    let reason = pre(Some(2), "", "").block.unwrap();
    assert!(reason.contains("code 2"), "{reason}");
    for code in [Some(1), Some(0), None] {
        assert_eq!(pre(code, "not json", "oops"), HookReply::proceed());
    }
    // Exit code 2 ignores what is on standard output.
    assert_eq!(
        pre(Some(2), r#"{"decision": "approve"}"#, "no"),
        HookReply::block("no")
    );
}

#[test]
fn exit_code_two_blocks_only_where_the_event_can_be_blocked() {
    for event in [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::Stop,
        Event::SubagentStop,
        Event::UserPromptSubmit,
    ] {
        assert_eq!(
            reply(event, "cmd", &ran(Some(2), "", "why")),
            HookReply::block("why"),
            "{}",
            event.name()
        );
    }
    for event in [
        Event::SessionStart,
        Event::SessionEnd,
        Event::PreCompact,
        Event::Notification,
        Event::SubagentStart,
    ] {
        assert_eq!(
            reply(event, "cmd", &ran(Some(2), "", "why")),
            HookReply::proceed(),
            "{}",
            event.name()
        );
    }
}

#[test]
fn a_json_answer_denies_allows_asks_or_rewrites_in_claude_codes_shape() {
    let answer = |v: serde_json::Value| pre(Some(0), &v.to_string(), "");
    let specific = |v: serde_json::Value| {
        let mut out = json!({"hookEventName": "PreToolUse"});
        out.as_object_mut()
            .unwrap()
            .extend(v.as_object().unwrap().clone());
        json!({ "hookSpecificOutput": out })
    };
    assert_eq!(
        answer(specific(
            json!({"permissionDecision": "deny", "permissionDecisionReason": "not on main"})
        )),
        HookReply::block("not on main")
    );
    assert_eq!(
        answer(specific(json!({"permissionDecision": "allow"}))),
        HookReply::allow()
    );
    assert_eq!(
        answer(specific(
            json!({"permissionDecision": "allow", "updatedInput": {"command": "ls"}})
        )),
        HookReply::allow().with_input(json!({"command": "ls"}))
    );
    assert_eq!(
        answer(specific(json!({"updatedInput": {"command": "ls -a"}}))),
        HookReply::proceed().with_input(json!({"command": "ls -a"}))
    );
    assert_eq!(
        answer(specific(
            json!({"permissionDecision": "ask", "permissionDecisionReason": "look first"})
        ))
        .permission,
        Some(ToolPermission::Ask("look first".to_owned()))
    );
    assert_eq!(
        answer(json!({"decision": "block", "reason": "old style"})),
        HookReply::block("old style")
    );
    assert_eq!(answer(json!({"decision": "approve"})), HookReply::allow());
}

#[test]
fn continue_false_halts_and_wins_whatever_else_is_said() {
    let r = reply(
        Event::Stop,
        "cmd",
        &ran(
            Some(0),
            r#"{"continue": false, "stopReason": "enough", "decision": "block", "reason": "more", "suppressOutput": true, "systemMessage": "bye"}"#,
            "",
        ),
    );
    assert_eq!(r.halt.as_deref(), Some("enough"));
    // The block is kept; the engine lets the halt win.
    assert_eq!(r.block.as_deref(), Some("more"));
}

#[test]
fn stop_post_and_prompt_answers_block_with_their_reason_and_add_context() {
    let json = |event, v: serde_json::Value| reply(event, "cmd", &ran(Some(0), &v.to_string(), ""));
    assert_eq!(
        json(
            Event::Stop,
            json!({"decision": "block", "reason": "tests fail"})
        ),
        HookReply::block("tests fail")
    );
    assert_eq!(
        json(
            Event::PostToolUse,
            json!({"decision": "block", "reason": "lint", "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "ctx"}})
        ),
        HookReply::block("lint").with_context("ctx")
    );
    // A block where nothing can be blocked is ignored.
    assert_eq!(
        json(
            Event::SessionStart,
            json!({"decision": "block", "reason": "x"})
        ),
        HookReply::proceed()
    );
    // Plain standard output is context at SessionStart and
    // UserPromptSubmit only.
    for (event, context) in [
        (Event::SessionStart, Some("branch main")),
        (Event::UserPromptSubmit, Some("branch main")),
        (Event::PostToolUse, None),
        (Event::Stop, None),
    ] {
        assert_eq!(
            reply(event, "cmd", &ran(Some(0), "branch main\n", ""))
                .context
                .as_deref(),
            context,
            "{}",
            event.name()
        );
    }
}

#[test]
fn an_agent_files_hooks_take_its_own_events_and_refuse_session_events() {
    let root = (
        std::path::Path::new("/tmp"),
        &std::sync::Arc::new(Vec::new()),
    );
    let ok = json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 5}]}]
    });
    assert_eq!(file_hooks(&ok, root).unwrap().len(), 2);
    let session = json!({"SessionStart": [{"hooks": [{"type": "command", "command": "true"}]}]});
    let error = file_hooks(&session, root).unwrap_err();
    assert!(error.contains("SessionStart"), "{error}");
    let bad = json!({"Stop": [{"hooks": [{"type": "prompt", "command": "x"}]}]});
    let error = file_hooks(&bad, root).unwrap_err();
    assert!(error.contains("unknown hook type"), "{error}");
    let unknown = json!({"Stopp": []});
    assert!(file_hooks(&unknown, root).is_err());
    // A group without commands (a stub) is no error.
    let stub = json!({"PreToolUse": [{"matcher": "Bash"}]});
    assert!(file_hooks(&stub, root).unwrap().is_empty());
}
