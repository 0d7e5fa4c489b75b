//! Bash on real processes: exit codes, stderr, timeouts that kill the whole
//! group, output bounding, environment isolation, background commands,
//! cancellation.

use std::time::Duration;

use serde_json::json;
use zr_types::{AgentId, ToolCall};

use crate::support::{Kit, alive, assert_error, ctx_for, dies_within, pid_from, text};

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
async fn the_calls_idempotency_key_is_in_the_environment() {
    let kit = Kit::new();
    let command = json!({"command": "echo \"key=${ZR_IDEMPOTENCY_KEY-unset}\""});
    let keyed = kit
        .call_as("Bash", command.clone(), kit.ctx().for_call("toolu_07"))
        .await;
    let t = text(&keyed);
    let want = format!("key={}/toolu_07\n", crate::support::session());
    assert!(t.starts_with(&want), "{t}");
    let unkeyed = kit.call("Bash", command).await;
    assert!(
        text(&unkeyed).starts_with("key=unset\n"),
        "{}",
        text(&unkeyed)
    );
}

#[tokio::test]
async fn input_checks_tell_the_model_what_to_fix() {
    let kit = Kit::new();
    let out = kit
        .call("Bash", json!({"command": "true", "timeout": 700_000}))
        .await;
    assert_error(&out, "at most 600000");
    let out = kit.call("Bash", json!({"cmd": "true"})).await;
    assert_error(&out, "command (string, required)");
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
    let fut = handler.call(&call, ctx);
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
    assert_error(&out, "at most 16");
    let ctx = kit.ctx();
    assert_eq!(kit.tools.agent_finished(&ctx.session, &ctx.agent).await, 16);
}

#[tokio::test]
async fn a_command_reading_stdin_gets_end_of_file_at_once() {
    let kit = Kit::new();
    let started = std::time::Instant::now();
    let out = kit
        .call(
            "Bash",
            json!({"command": "cat; read line || echo stdin-closed", "timeout": 30_000}),
        )
        .await;
    let t = text(&out);
    assert!(!out.is_error, "{t}");
    assert_eq!(t, "stdin-closed\n[exit code 0]");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn timeout_sends_sigterm_first_then_sigkill_to_what_ignores_it() {
    let kit = Kit::new();
    // The shell traps SIGTERM: it must see it before any SIGKILL.
    let out = kit
        .call(
            "Bash",
            json!({"command": "trap 'echo got-term > term.txt; exit 0' TERM; sleep 300 & wait", "timeout": 1000}),
        )
        .await;
    assert!(out.is_error, "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(kit.path("term.txt")).unwrap(),
        "got-term\n"
    );
    // A grandchild that ignores SIGTERM is killed after the grace.
    let out = kit
        .call(
            "Bash",
            json!({"command": "trap '' TERM; sleep 300 & echo $! > stubborn.pid; wait", "timeout": 1000}),
        )
        .await;
    assert!(out.is_error, "{}", text(&out));
    let pid = pid_from(&kit.path("stubborn.pid"), Duration::from_secs(5)).await;
    assert!(
        dies_within(pid, Duration::from_secs(10)).await,
        "{pid} ignored SIGTERM and survived"
    );
}

#[tokio::test]
async fn dropping_the_tools_kills_background_commands() {
    let kit = Kit::new();
    let out = kit
        .call(
            "Bash",
            json!({"command": "sleep 300 & echo $! > orphan.pid; wait", "run_in_background": true}),
        )
        .await;
    assert!(!out.is_error, "{}", text(&out));
    let pid = pid_from(&kit.path("orphan.pid"), Duration::from_secs(5)).await;
    assert!(alive(pid));
    // The host drops every handler and the tools without calling
    // agent_finished.
    let crate::support::Kit {
        tools,
        handlers,
        dir,
    } = kit;
    drop(handlers);
    drop(tools);
    assert!(
        dies_within(pid, Duration::from_secs(10)).await,
        "{pid} outlived the tools"
    );
    drop(dir);
}

/// Regression: output bounding split multibyte characters at the head and
/// tail cuts, which then came out as U+FFFD.
#[tokio::test]
async fn output_bounding_never_splits_a_character() {
    let kit = Kit::new();
    // 14 999 ASCII bytes, then 3-byte euro signs: the head cut at 15 000
    // bytes falls inside one, and so does the tail cut (one more byte):
    // 1 + 2 bytes of split characters are dropped with the middle.
    let out = kit
        .call(
            "Bash",
            json!({"command": "head -c 14999 /dev/zero | tr '\\0' a; for i in $(seq 10000); do printf '€'; done; printf b"}),
        )
        .await;
    let t = text(&out);
    assert!(!t.contains('\u{FFFD}'), "replacement character in output");
    let note = t.lines().find(|l| l.starts_with("[... ")).unwrap_or("");
    assert_eq!(
        note,
        "[... 15003 bytes cut from the middle; 45000 bytes in total ...]"
    );
    assert!(t.starts_with(&"a".repeat(14_999)));
    assert!(t.ends_with("€€b\n[exit code 0]"), "{t:?}");
}

/// The state of a process in /proc ('Z' for a zombie), None when gone.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The log file and process group named by a background start message.
fn started(t: &str) -> (String, u32) {
    let log = t
        .split_whitespace()
        .find(|w| w.contains("zr-bash-"))
        .unwrap()
        .trim_end_matches(';')
        .to_owned();
    let pgid = t
        .split("(process group ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap();
    (log, pgid)
}

async fn log_ends(log: &str) -> String {
    for _ in 0..200 {
        let content = std::fs::read_to_string(log).unwrap_or_default();
        if content.contains("[background command ended") {
            return content;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{log} never said the command ended");
}

/// Regression: the leader of a background command was reaped as soon as it
/// exited, so its process group id could be handed to a new process group
/// (another agent's command) and then be killed by `agent_finished`. The
/// leader now stays unreaped (its pid reserved) until the agent ends.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_ended_background_leader_keeps_its_group_id_reserved_until_the_agent_ends() {
    let kit = Kit::new();
    let ctx = kit.ctx();
    let out = kit
        .call(
            "Bash",
            json!({"command": "echo done; exit 7", "run_in_background": true}),
        )
        .await;
    let (log, pgid) = started(&text(&out));
    assert_eq!(
        log_ends(&log).await,
        "done\n\n[background command ended: exit code 7]\n"
    );
    // Ended, but not reaped: the pid (= the group id) cannot be reused.
    assert_eq!(proc_state(pgid), Some('Z'));
    let out = kit
        .call(
            "Bash",
            json!({"command": "kill -9 $$", "run_in_background": true}),
        )
        .await;
    let (log, _) = started(&text(&out));
    assert!(
        log_ends(&log)
            .await
            .ends_with("[background command ended: killed by signal 9]\n")
    );
    assert_eq!(kit.tools.agent_finished(&ctx.session, &ctx.agent).await, 2);
    let end = std::time::Instant::now() + Duration::from_secs(10);
    while proc_state(pgid).is_some() && std::time::Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(proc_state(pgid), None, "the leader was not reaped");
}

/// Ended background commands do not pile up: the oldest beyond 32 are
/// forgotten (logs deleted, leaders reaped); running ones are never.
#[tokio::test]
async fn ended_background_commands_are_forgotten_beyond_a_bound() {
    let kit = Kit::new();
    let ctx = kit.ctx();
    let out = kit
        .call(
            "Bash",
            json!({"command": "sleep 300", "run_in_background": true}),
        )
        .await;
    assert!(!out.is_error);
    let mut logs = Vec::new();
    for _ in 0..40 {
        let out = kit
            .call(
                "Bash",
                json!({"command": "true", "run_in_background": true}),
            )
            .await;
        let (log, _) = started(&text(&out));
        log_ends(&log).await;
        logs.push(log);
    }
    // 1 running + 32 ended + the last one (ended after it was counted).
    let count = kit.tools.background_count(&ctx.session, &ctx.agent);
    assert!((33..=34).contains(&count), "{count}");
    assert!(!std::path::Path::new(&logs[0]).exists(), "oldest log kept");
    assert!(std::path::Path::new(&logs[39]).exists());
    assert_eq!(
        kit.tools.agent_finished(&ctx.session, &ctx.agent).await,
        count
    );
}
