//! Bash on real processes: exit codes, stderr, timeouts that kill the whole
//! group, output bounding, environment isolation, background commands,
//! cancellation.

use std::time::Duration;

use serde_json::json;
use zr_types::{AgentId, ToolCall};

use crate::support::{Kit, alive, ctx_for, dies_within, pid_from, text};

#[tokio::test]
async fn stdout_stderr_and_exit_code() {
    let kit = Kit::new();
    let out = kit
        .call(
            "Bash",
            json!({"command": "echo hello; echo oops >&2; exit 3"}),
        )
        .await;
    let t = text(&out);
    assert!(!out.is_error);
    assert!(t.starts_with("hello\n"), "{t}");
    assert!(t.contains("[stderr]\noops\n"), "{t}");
    assert!(t.ends_with("[exit code 3]"), "{t}");
}

#[tokio::test]
async fn runs_in_the_working_directory() {
    let kit = Kit::new();
    kit.write("marker.txt", "x");
    let out = kit.call("Bash", json!({"command": "ls"})).await;
    assert!(text(&out).contains("marker.txt"), "{}", text(&out));
}

#[tokio::test]
async fn timeout_kills_the_whole_group_including_a_sleep_grandchild() {
    let kit = Kit::new();
    let started = std::time::Instant::now();
    let out = kit
        .call(
            "Bash",
            json!({"command": "sleep 300 & echo $! > gc.pid; echo started; sleep 300", "timeout": 1500}),
        )
        .await;
    let t = text(&out);
    assert!(out.is_error, "{t}");
    assert!(t.contains("started"), "{t}");
    assert!(t.contains("timed out after 1500 ms"), "{t}");
    assert!(started.elapsed() < Duration::from_secs(60));
    let gc = pid_from(&kit.path("gc.pid"), Duration::from_secs(5)).await;
    assert!(
        dies_within(gc, Duration::from_secs(10)).await,
        "grandchild {gc} survived"
    );
}

#[tokio::test]
async fn a_grandchild_left_behind_is_killed_when_the_command_returns() {
    let kit = Kit::new();
    let out = kit
        .call(
            "Bash",
            json!({"command": "sleep 300 >/dev/null 2>&1 & echo $! > left.pid"}),
        )
        .await;
    assert!(text(&out).contains("[exit code 0]"), "{}", text(&out));
    let pid = pid_from(&kit.path("left.pid"), Duration::from_secs(5)).await;
    assert!(dies_within(pid, Duration::from_secs(10)).await);
}

#[tokio::test]
async fn long_output_keeps_head_and_tail() {
    let kit = Kit::new();
    let out = kit
        .call(
            "Bash",
            json!({"command": "echo BEGIN; head -c 200000 /dev/zero | tr '\\0' 'a'; echo; echo END"}),
        )
        .await;
    let t = text(&out);
    assert!(t.starts_with("BEGIN\n"), "{}", &t[..50]);
    assert!(t.contains("END\n[exit code 0]"), "{}", &t[t.len() - 80..]);
    assert!(t.contains("bytes cut from the middle"));
    assert!(t.len() < 32_000, "{}", t.len());
}

#[tokio::test]
async fn only_the_context_environment_is_visible() {
    let kit = Kit::new();
    let host_var = std::env::vars()
        .map(|(k, _)| k)
        .find(|k| !["PATH", "PWD", "SHLVL", "_", "OLDPWD"].contains(&k.as_str()))
        .expect("the test process has some environment variable");
    assert_ne!(std::env::var("PATH").ok().as_deref(), Some("/usr/bin:/bin"));
    let out = kit
        .call(
            "Bash",
            json!({"command": format!("echo \"path=$PATH visible=$ZR_VISIBLE\"; printenv {host_var} || echo host-var-absent")}),
        )
        .await;
    let t = text(&out);
    assert!(t.contains("path=/usr/bin:/bin visible=yes"), "{t}");
    assert!(t.contains("host-var-absent"), "{host_var} leaked: {t}");
}

#[tokio::test]
async fn input_checks_tell_the_model_what_to_fix() {
    let kit = Kit::new();
    let out = kit
        .call("Bash", json!({"command": "true", "timeout": 700_000}))
        .await;
    assert!(out.is_error);
    assert!(text(&out).contains("at most 600000"), "{}", text(&out));
    let out = kit.call("Bash", json!({"cmd": "true"})).await;
    assert!(out.is_error);
    assert!(
        text(&out).contains("command (string, required)"),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn background_commands_die_when_their_agent_finishes() {
    let kit = Kit::new();
    let ctx = kit.ctx();
    let out = kit
        .call(
            "Bash",
            json!({"command": "sleep 300 & echo $! > bg.pid; echo ready; wait", "run_in_background": true}),
        )
        .await;
    let t = text(&out);
    assert!(!out.is_error, "{t}");
    assert!(t.contains("bash_1"), "{t}");
    let pid = pid_from(&kit.path("bg.pid"), Duration::from_secs(5)).await;
    assert!(alive(pid));
    // Another agent's end does not touch it.
    let other = AgentId::root().child(1, "explore");
    assert_eq!(kit.tools.agent_finished(&ctx.session, &other).await, 0);
    assert!(alive(pid));
    assert_eq!(kit.tools.background_count(&ctx.session, &ctx.agent), 1);
    assert_eq!(kit.tools.agent_finished(&ctx.session, &ctx.agent).await, 1);
    assert!(
        dies_within(pid, Duration::from_secs(10)).await,
        "background {pid} survived"
    );
    assert_eq!(kit.tools.background_count(&ctx.session, &ctx.agent), 0);
}

#[tokio::test]
async fn background_output_goes_to_a_readable_log() {
    let kit = Kit::new();
    let out = kit
        .call(
            "Bash",
            json!({"command": "echo from-background", "run_in_background": true}),
        )
        .await;
    let t = text(&out);
    let log = t
        .split_whitespace()
        .find(|w| w.contains("zr-bash-"))
        .unwrap()
        .trim_end_matches(';');
    let mut content = String::new();
    for _ in 0..100 {
        content = std::fs::read_to_string(log).unwrap_or_default();
        if content.contains("from-background") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for _ in 0..100 {
        content = std::fs::read_to_string(log).unwrap_or_default();
        if content.contains("ended") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        content,
        "from-background\n\n[background command ended: exit code 0]\n"
    );
    let ctx = kit.ctx();
    kit.tools.agent_finished(&ctx.session, &ctx.agent).await;
    assert!(
        !std::path::Path::new(log).exists(),
        "log kept after the agent ended"
    );
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let kit = Kit::new();
    let handler = kit.handlers["Bash"].clone();
    let ctx = ctx_for(kit.dir.path(), AgentId::root());
    let call = ToolCall {
        id: "t".to_owned(),
        name: "Bash".to_owned(),
        input: json!({"command": "sleep 300 & echo $! > drop.pid; wait"}),
    };
    let fut = handler.call(call, ctx);
    let pid_path = kit.path("drop.pid");
    let pid = tokio::select! {
        _ = fut => panic!("the command finished"),
        pid = pid_from(&pid_path, Duration::from_secs(20)) => pid,
    };
    // The call's future was dropped when select! returned.
    assert!(
        dies_within(pid, Duration::from_secs(10)).await,
        "{pid} survived the drop"
    );
}

#[tokio::test]
async fn an_agent_may_run_a_bounded_number_of_background_commands() {
    let kit = Kit::new();
    for i in 0..16 {
        let out = kit
            .call(
                "Bash",
                json!({"command": "sleep 300", "run_in_background": true}),
            )
            .await;
        assert!(!out.is_error, "{i}: {}", text(&out));
    }
    let out = kit
        .call(
            "Bash",
            json!({"command": "sleep 300", "run_in_background": true}),
        )
        .await;
    assert!(out.is_error);
    assert!(text(&out).contains("at most 16"), "{}", text(&out));
    let ctx = kit.ctx();
    assert_eq!(kit.tools.agent_finished(&ctx.session, &ctx.agent).await, 16);
}
