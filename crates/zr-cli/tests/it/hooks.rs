//! zr.toml `[hooks]` end to end: shell commands get each event as JSON on
//! standard input; exit code 2 blocks a call with standard error as the
//! reason the model reads; a JSON answer rewrites or allows; a command
//! slower than its timeout is killed and the call denied.

use serde_json::{Value, json};

use crate::loopback::run_against;
use crate::support::{TempProject, stderr};
use zr_test_support::loopback::{Reply, Server};

/// The tool results of the `n`th request the model API received.
pub(crate) fn tool_results(server: &Server, n: usize) -> Vec<(bool, String)> {
    let requests = server.requests();
    let body = &requests[n].body;
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                other => other.to_string(),
            };
            (b["is_error"].as_bool().unwrap_or(false), text)
        })
        .collect()
}

/// A server whose model calls Bash with `command`, then answers "done".
fn bash_then_done(command: &str) -> Server {
    Server::scripted(vec![
        Reply::anthropic(None, &[("call_1", "Bash", json!({"command": command}))]),
        Reply::anthropic(Some("done"), &[]),
    ])
}

const LOG_HOOK: &str = r#"cat >> hooks.log; echo >> hooks.log"#;

#[test]
fn a_pre_tool_use_hook_that_exits_2_blocks_the_call_and_the_model_reads_its_stderr() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        r#"[permissions]
allow = ["Bash"]

[[hooks.PreToolUse]]
matcher = "Bash"
hooks = [{ type = "command", command = "cat > seen.json; echo 'no network from here' >&2; exit 2" }]

[[hooks.PreToolUse]]
matcher = "Write|Edit"
hooks = [{ type = "command", command = "touch wrong-matcher" }]
"#,
    );
    let server = bash_then_done("curl example.org > made.txt");
    let out = run_against(&project, &server, false, "go");
    assert!(
        !project.path().join("made.txt").exists(),
        "{}",
        stderr(&out)
    );
    assert!(!project.path().join("wrong-matcher").exists());
    assert_eq!(
        tool_results(&server, 1),
        [(
            true,
            "tool 'Bash' was not run: a PreToolUse hook denied it: no network from here".to_owned()
        )]
    );
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["hook_event_name"], "PreToolUse");
    assert_eq!(seen["tool_name"], "Bash");
    assert_eq!(
        seen["tool_input"],
        json!({"command": "curl example.org > made.txt"})
    );
    assert_eq!(seen["tool_use_id"], "call_1");
    assert_eq!(seen["agent_id"], "root");
    assert_eq!(seen["permission_mode"], "default");
    assert!(seen["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        seen["transcript_path"]
            .as_str()
            .is_some_and(|p| p.ends_with("root.jsonl"))
    );
}

#[test]
fn a_json_answer_rewrites_the_input_or_allows_a_call_the_lists_would_refuse() {
    let project = TempProject::new();
    // Bash is not allowed in [permissions]: only the hook's "allow" lets
    // it run, with the input it rewrote.
    project.write(
        "zr.toml",
        r#"[[hooks.PreToolUse]]
matcher = "Bash"
hooks = [{ type = "command", command = '''echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "echo rewritten > made.txt"}}}' ''' }]
"#,
    );
    let server = bash_then_done("echo original > made.txt");
    run_against(&project, &server, false, "go");
    assert_eq!(
        std::fs::read_to_string(project.path().join("made.txt")).unwrap(),
        "rewritten\n"
    );
    let results = tool_results(&server, 1);
    assert_eq!(results.len(), 1);
    assert!(!results[0].0, "{results:?}");
}

#[test]
fn post_tool_use_subagent_and_stop_hooks_get_their_events_in_order() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        &format!(
            r#"[permissions]
allow = ["Bash"]

[hooks]
PostToolUse = [{{ matcher = "Bash", hooks = [{{ type = "command", command = "{LOG_HOOK}" }}] }}]
SubagentStart = [{{ hooks = [{{ type = "command", command = "{LOG_HOOK}" }}] }}]
SubagentStop = [{{ matcher = "general-purpose", hooks = [{{ type = "command", command = "{LOG_HOOK}" }}] }}]
Stop = [{{ hooks = [{{ type = "command", command = "{LOG_HOOK}" }}] }}]
"#
        ),
    );
    project.write(
        "s.json",
        r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "d", "prompt": "p", "subagent_type": "general-purpose"}}]},
    {"text": "root done"}]}],
  "general-purpose": [{"turns": [
    {"tool_calls": [{"name": "Bash", "input": {"command": "echo hi"}}]},
    {"text": "worker done"}]}]}}"#,
    );
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = std::fs::read_to_string(project.path().join("hooks.log")).unwrap();
    let events: Vec<Value> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["SubagentStart", "PostToolUse", "SubagentStop", "Stop"]
    );
    assert_eq!(events[0]["agent_type"], "general-purpose");
    assert_eq!(events[0]["parent_id"], "root");
    assert_eq!(events[1]["tool_name"], "Bash");
    assert_eq!(events[1]["tool_response"]["is_error"], false);
    assert_eq!(events[2]["last_assistant_message"], "worker done");
    // Its stop (which could have kept it working), not its end.
    assert_eq!(events[2]["stop_hook_active"], false);
    assert!(events[2].get("status").is_none());
    assert!(
        events[2]["agent_transcript_path"]
            .as_str()
            .is_some_and(|p| p.ends_with(".jsonl"))
    );
    assert_eq!(events[3]["last_assistant_message"], "root done");
    assert_eq!(events[3]["stop_hook_active"], false);
}

#[test]
fn a_hook_slower_than_its_timeout_is_killed_and_the_call_denied() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        r#"[permissions]
allow = ["Bash"]

[[hooks.PreToolUse]]
hooks = [{ type = "command", command = "sleep 30; touch late.txt", timeout = 1 }]
"#,
    );
    let server = bash_then_done("echo hi > made.txt");
    let start = std::time::Instant::now();
    run_against(&project, &server, false, "go");
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(
        tool_results(&server, 1),
        [(
            true,
            "tool 'Bash' was not run: the PreToolUse hook did not answer within 1 s (its timeout)"
                .to_owned()
        )]
    );
    assert!(!project.path().join("made.txt").exists());
    // The hook's shell and its sleep were killed: nothing touches the
    // file later.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let alive = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains("sleep 30; touch late.txt"));
    assert!(!alive, "the hook's process outlived its timeout");
}

#[test]
fn a_hook_that_exits_leaving_a_child_on_its_stdout_does_not_hold_the_call() {
    let project = TempProject::new();
    let sleeper = format!("sleep 31.{}", std::process::id());
    project.write(
        "zr.toml",
        &format!(
            r#"[permissions]
allow = ["Bash"]

[[hooks.PreToolUse]]
matcher = "Bash"
hooks = [{{ type = "command", command = "{sleeper} & echo '{{}}'", timeout = 60 }}]
"#
        ),
    );
    let server = bash_then_done("echo ran > made.txt");
    let start = std::time::Instant::now();
    run_against(&project, &server, false, "go");
    let took = start.elapsed();
    assert!(
        took < std::time::Duration::from_secs(10),
        "the call waited {took:?} for the hook's child"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("made.txt")).unwrap(),
        "ran\n"
    );
    let results = tool_results(&server, 1);
    assert!(results.len() == 1 && !results[0].0, "{results:?}");
    let left = crate::signal::with_cmdline(&sleeper);
    for (pid, _) in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(left.is_empty(), "the hook's child still runs: {left:?}");
}

#[test]
fn a_bad_hook_entry_is_refused_before_anything_runs() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash(\"\nhooks = [{ type = \"command\", command = \"true\" }]\n",
    );
    project.write(
        "s.json",
        r#"{"agents": {"root": [{"turns": [{"text": "x"}]}]}}"#,
    );
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("hooks.PreToolUse[0].matcher"), "{err}");
    assert!(err.contains("regular expression"), "{err}");
    project.write(
        "zr.toml",
        "[[hooks.Stop]]\nhooks = [{ type = \"http\", command = \"x\" }]\n",
    );
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown hook type \"http\""),
        "{}",
        stderr(&out)
    );
}
