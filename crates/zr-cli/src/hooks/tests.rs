//! Unit tests of `[hooks]`: matchers and the answers of PreToolUse
//! commands.

use serde_json::json;
use zr_engine::PreToolUse;

use super::{Matcher, Ran, pre_tool_use_answer};

fn ran(code: Option<i32>, stdout: &str, stderr: &str) -> Ran {
    Ran {
        code,
        stdout: stdout.to_owned(),
        stderr: stderr.to_owned(),
    }
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
    assert!(Matcher::parse(Some("Bash(")).is_err());
}

#[test]
fn exit_code_two_blocks_with_standard_error_and_other_codes_go_on() {
    assert_eq!(
        pre_tool_use_answer(&ran(Some(2), "", "no rm -rf here\n")),
        PreToolUse::Deny("no rm -rf here".to_owned())
    );
    let PreToolUse::Deny(reason) = pre_tool_use_answer(&ran(Some(2), "", "")) else {
        panic!("exit code 2 blocks");
    };
    assert!(reason.contains("code 2"), "{reason}");
    for code in [Some(1), Some(0), None] {
        assert_eq!(
            pre_tool_use_answer(&ran(code, "not json", "oops")),
            PreToolUse::Continue
        );
    }
}

#[test]
fn a_json_answer_denies_allows_or_rewrites_in_claude_codes_shape() {
    let answer = |v: serde_json::Value| pre_tool_use_answer(&ran(Some(0), &v.to_string(), ""));
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
        PreToolUse::Deny("not on main".to_owned())
    );
    assert_eq!(
        answer(specific(json!({"permissionDecision": "allow"}))),
        PreToolUse::Allow(None)
    );
    assert_eq!(
        answer(specific(
            json!({"permissionDecision": "allow", "updatedInput": {"command": "ls"}})
        )),
        PreToolUse::Allow(Some(json!({"command": "ls"})))
    );
    assert_eq!(
        answer(specific(json!({"updatedInput": {"command": "ls -a"}}))),
        PreToolUse::Rewrite(json!({"command": "ls -a"}))
    );
    assert_eq!(
        answer(specific(json!({"permissionDecision": "ask"}))),
        PreToolUse::Continue
    );
    assert_eq!(
        answer(json!({"decision": "block", "reason": "old style"})),
        PreToolUse::Deny("old style".to_owned())
    );
    assert_eq!(
        answer(json!({"decision": "approve"})),
        PreToolUse::Allow(None)
    );
}
