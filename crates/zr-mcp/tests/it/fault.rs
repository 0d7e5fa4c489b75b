//! The fault server: crashes, hangs, garbage on the wire and huge answers.

use std::time::{Duration, Instant};

use serde_json::json;
use zr_mcp::McpError;

use crate::support::*;

/// Now on `CLOCK_MONOTONIC`, in nanoseconds: the clock the fault server
/// stamps its exit with.
fn monotonic_ns() -> u128 {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).unwrap();
    u128::try_from(now.tv_sec()).unwrap() * 1_000_000_000 + u128::try_from(now.tv_nsec()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_fails_every_pending_call_within_100_ms_and_the_next_acquire_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let stamp = dir.path().join("exit");
    let marker = marker();
    let hub = hub(vec![fault("fault", &marker)], options());
    let lease = hub.acquire("fault").await.unwrap();
    let first_pid = lease.process_id().unwrap();

    // Two calls wait forever; a third crashes the server. Each records the
    // moment it failed, on the clock the server stamps its exit with.
    let call = |tool: &'static str, arguments: serde_json::Value| {
        let lease = lease.clone();
        tokio::spawn(async move { (lease.call(tool, arguments).await, monotonic_ns()) })
    };
    let hangs = [call("hang", json!({})), call("hang", json!({}))];
    // Let the hangs reach the server first (not required: a call still on
    // its way is pending as well).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let crash = call("crash", json!({"status": 3, "stamp": stamp}));

    let mut failures = Vec::new();
    for task in std::iter::once(crash).chain(hangs) {
        let (result, failed_at) = task.await.unwrap();
        let error = result.unwrap_err();
        assert!(
            matches!(&error, McpError::Exited { server, status, .. } if server.as_str() == "fault" && status.code() == Some(3)),
            "{error:?}"
        );
        // Then what its stderr said so far (the server logs each step).
        assert!(
            error
                .to_string()
                .starts_with("MCP server 'fault' exited (exit status: 3)"),
            "{error}"
        );
        failures.push(failed_at);
    }
    // Measured from the server's exit (stamped by the server itself just
    // before `_exit`), not from any point on our side.
    let exited_at: u128 = std::fs::read_to_string(&stamp).unwrap().parse().unwrap();
    for failed_at in failures {
        let after =
            Duration::from_nanos(u64::try_from(failed_at.saturating_sub(exited_at)).unwrap());
        assert!(
            failed_at >= exited_at,
            "a call failed before the server exited"
        );
        assert!(
            after < Duration::from_millis(100),
            "a pending call failed {after:?} after the server exited"
        );
    }
    assert!(!lease.is_alive());

    // The next acquire starts the server again.
    let again = hub.acquire("fault").await.unwrap();
    assert_ne!(again.process_id(), Some(first_pid));
    expect_echo(&again, "back").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_hits_the_per_call_timeout_and_the_connection_survives() {
    let marker = marker();
    let server = fault("fault", &marker).with_timeout(Some(Duration::from_millis(500)));
    let hub = hub(vec![server], options());
    let lease = hub.acquire("fault").await.unwrap();
    let start = Instant::now();
    let error = lease.call("hang", json!({})).await.unwrap_err();
    assert!(
        matches!(&error, McpError::Timeout { timeout_ms: 500, method, .. } if method == "tools/call hang"),
        "{error:?}"
    );
    assert!(start.elapsed() >= Duration::from_millis(500));
    assert!(start.elapsed() < Duration::from_secs(10));
    // Through a handler, the model sees the timeout as an error result.
    let tools = lease.tools().await.unwrap();
    let hang = handler_of(&tools, "hang");
    assert_eq!(hang.name().as_str(), "mcp__fault__hang");
    let out = run(&hang, json!({})).await.unwrap();
    assert!(out.is_error);
    assert!(text_of(&out).contains("no answer within 500 ms"), "{out:?}");
    expect_echo(&lease, "still here").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_the_wire_does_not_break_the_connection() {
    let marker = marker();
    let hub = hub(vec![fault("fault", &marker)], options());
    let lease = hub.acquire("fault").await.unwrap();
    let out = lease.call("garbage", json!({"lines": 5})).await.unwrap();
    assert_eq!(text_of(&out), "survived");
    expect_echo(&lease, "after").await;
    assert!(lease.is_alive());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_output_is_cut_to_the_limit_with_a_note() {
    let marker = marker();
    let hub = hub(
        vec![fault("fault", &marker)],
        options().with_max_result_bytes(10_000),
    );
    let lease = hub.acquire("fault").await.unwrap();
    let out = lease
        .call("huge", json!({"bytes": 20_000_000}))
        .await
        .unwrap();
    let text = text_of(&out);
    assert!(text.len() < 11_000, "{} bytes came through", text.len());
    assert!(text.starts_with(&"x".repeat(10_000)));
    // The note says how much was cut: everything but the 10,000 bytes kept
    // (the Python SDK also sends the text again as structured content).
    let note = text.lines().last().unwrap();
    let numbers: Vec<u64> = note
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let [omitted, total, limit] = numbers[..] else {
        panic!("{note}");
    };
    assert!(note.starts_with("[result cut: "), "{note}");
    assert_eq!(limit, 10_000);
    assert!(total >= 20_000_000, "{note}");
    assert_eq!(omitted, total - 10_000, "{note}");
    expect_echo(&lease, "fine").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn is_error_results_reach_the_model_as_errors() {
    let marker = marker();
    let hub = hub(vec![fault("fault", &marker)], options());
    let lease = hub.acquire("fault").await.unwrap();
    let out = lease
        .call("fail", json!({"message": "nope"}))
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(text_of(&out).contains("nope"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_handler_a_crash_is_a_tool_error_naming_server_and_status() {
    let marker = marker();
    let hub = hub(vec![fault("fault", &marker)], options());
    let lease = hub.acquire("fault").await.unwrap();
    let tools = lease.tools().await.unwrap();
    let crash = handler_of(&tools, "crash");
    let error = run(&crash, json!({"status": 7})).await.unwrap_err();
    assert!(
        error.to_string().starts_with(
            "tool 'mcp__fault__crash' is unavailable: MCP server 'fault' exited (exit status: 7)"
        ),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_size_limit_ends_the_session_at_once() {
    let marker = marker();
    let hub = hub(
        vec![fault("fault", &marker)],
        options().with_max_message_bytes(1 << 20),
    );
    let lease = hub.acquire("fault").await.unwrap();
    let start = Instant::now();
    let error = lease
        .call("huge", json!({"bytes": 3_000_000}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            McpError::MessageTooLarge {
                limit_bytes: 1_048_576,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert!(!lease.is_alive());
    expect_processes(
        &marker,
        0,
        Duration::from_secs(5),
        "the server was not stopped",
    )
    .await;
    let again = hub.acquire("fault").await.unwrap();
    expect_echo(&again, "fresh start").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_crash_the_next_call_through_an_old_handler_restarts_the_server() {
    let marker = marker();
    let hub = hub(vec![fault("fault", &marker)], options());
    let tools = hub.tools("fault").await.unwrap();
    let (echo, pid, crash) = (
        handler_of(&tools, "echo"),
        handler_of(&tools, "pid"),
        handler_of(&tools, "crash"),
    );
    drop(tools);
    let first_pid = text_of(&run(&pid, json!({})).await.unwrap());

    // The call that was running when the server died fails, and is not
    // sent again.
    let error = run(&crash, json!({"status": 5})).await.unwrap_err();
    assert!(
        error.to_string().starts_with(
            "tool 'mcp__fault__crash' is unavailable: MCP server 'fault' exited (exit status: 5)"
        ),
        "{error}"
    );
    expect_processes(
        &marker,
        0,
        Duration::from_secs(5),
        "the crashed server is still running",
    )
    .await;

    // The next call through a handler made before the crash starts the
    // server again and goes through.
    let out = run(&echo, json!({"text": "back"})).await.unwrap();
    assert!(!out.is_error, "{out:?}");
    assert_eq!(text_of(&out), "back");
    let second_pid = text_of(&run(&pid, json!({})).await.unwrap());
    assert_ne!(second_pid, first_pid);
    assert!(second_pid.parse::<u32>().is_ok(), "{second_pid}");
    // The new connection is the hub's: an acquire shares it.
    let lease = hub.acquire("fault").await.unwrap();
    assert_eq!(lease.process_id().unwrap().to_string(), second_pid);
    // The two handlers that moved hold a lease each, plus this one; the
    // crash handler still holds the dead connection, which counts nowhere.
    assert_eq!(hub.lease_count("fault"), 3);
    expect_processes(&marker, 1, Duration::from_secs(5), "one restarted server").await;
    // The handler keeps the new connection: no further restart.
    let out = run(&echo, json!({"text": "again"})).await.unwrap();
    assert_eq!(text_of(&out), "again");
    assert_eq!(text_of(&run(&pid, json!({})).await.unwrap()), second_pid);
    assert_eq!(count_processes(&marker), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_through_old_handlers_share_one_restart() {
    let marker = marker();
    let hub = hub(vec![fault("fault", &marker)], options());
    let lease = hub.acquire("fault").await.unwrap();
    let first_pid = lease.process_id().unwrap();
    let tools = lease.tools().await.unwrap();
    let (echo, pid) = (handler_of(&tools, "echo"), handler_of(&tools, "pid"));
    let error = lease.call("crash", json!({})).await.unwrap_err();
    assert!(error.is_connection_lost(), "{error:?}");
    assert!(!lease.is_alive());

    // Three calls at once, two through the same handler, all finding the
    // connection dead.
    let call = |handler: std::sync::Arc<zr_mcp::McpToolHandler>, input| {
        tokio::spawn(async move { run(&handler, input).await })
    };
    let tasks = [
        call(echo.clone(), json!({"text": "one"})),
        call(echo.clone(), json!({"text": "two"})),
        call(pid.clone(), json!({})),
    ];
    let mut texts = Vec::new();
    for task in tasks {
        let out = task.await.unwrap().unwrap();
        assert!(!out.is_error, "{out:?}");
        texts.push(text_of(&out));
    }
    assert_eq!(texts[..2], ["one", "two"]);
    let new_pid: u32 = texts[2].parse().unwrap();
    assert_ne!(new_pid, first_pid);
    // Exactly one server was started: a second one would still be running,
    // held by the handler that started it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(count_processes(&marker), 1);
    let again = hub.acquire("fault").await.unwrap();
    assert_eq!(again.process_id(), Some(new_pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_the_restarted_server_no_longer_has_is_an_error_result() {
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("fleeting");
    std::fs::write(&flag, "").unwrap();
    let marker = marker();
    let server = zr_mcp::ServerConfig::new(
        "fault".parse().unwrap(),
        zr_mcp::TransportConfig::Stdio(
            zr_mcp::StdioConfig::new(python())
                .with_args([fault_server_py(), marker.clone()])
                .with_env("ZR_FAULT_FLEETING", flag.to_string_lossy()),
        ),
    );
    let hub = hub(vec![server], options());
    let lease = hub.acquire("fault").await.unwrap();
    let tools = lease.tools().await.unwrap();
    let fleeting = handler_of(&tools, "fleeting");
    let out = run(&fleeting, json!({})).await.unwrap();
    assert_eq!(text_of(&out), "still here");

    std::fs::remove_file(&flag).unwrap();
    lease.call("crash", json!({})).await.unwrap_err();
    let out = run(&fleeting, json!({})).await.unwrap();
    assert!(out.is_error, "{out:?}");
    assert_eq!(
        text_of(&out),
        "MCP server 'fault' was restarted and no longer has the tool 'fleeting'"
    );
    // The server was restarted all the same, and other tools work.
    let echo = handler_of(&tools, "echo");
    let out = run(&echo, json!({"text": "fine"})).await.unwrap();
    assert_eq!(text_of(&out), "fine");
    assert_eq!(count_processes(&marker), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_hub_dropped_an_old_handler_stays_unavailable() {
    let marker = marker();
    let hub = hub(vec![fault("fault", &marker)], options());
    let tools = hub.tools("fault").await.unwrap();
    let echo = handler_of(&tools, "echo");
    drop(hub);
    let error = run(&echo, json!({"text": "x"})).await.unwrap_err();
    assert!(
        matches!(&error, zr_types::ToolError::Unavailable { reason, .. } if reason.contains("hub was dropped")),
        "{error}"
    );
    expect_processes(
        &marker,
        0,
        Duration::from_secs(5),
        "the server was not stopped",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_in_command_and_args_reach_the_real_process() {
    let marker = marker();
    let script = std::path::PathBuf::from(fault_server_py());
    let servers_dir = script.parent().unwrap().display().to_string();
    let name = script.file_name().unwrap().to_str().unwrap().to_owned();
    // A config as Claude Code accepts it: the program and the script's
    // folder come from variables, the script's name from a default.
    let text = json!({"mcpServers": {"fault": {
        "command": "${ZR_PYTHON}",
        "args": ["${ZR_SERVERS}/${ZR_UNSET_NAME:-fault_server.py}", marker],
    }}})
    .to_string();
    assert_eq!(name, "fault_server.py");
    let vars = |var: &str| match var {
        "ZR_PYTHON" => Some(python()),
        "ZR_SERVERS" => Some(servers_dir.clone()),
        _ => None,
    };
    let config = zr_mcp::McpConfig::parse(&text, &vars).unwrap();
    let hub = zr_mcp::McpHub::new(config, options());
    let lease = hub.acquire("fault").await.unwrap();
    expect_echo(&lease, "expanded").await;
    // The process runs the expanded path, not the literal references.
    let pid = lease.process_id().unwrap();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    assert!(argv.contains(&script.display().to_string()), "{argv:?}");
    assert!(!argv.iter().any(|a| a.contains("${")), "{argv:?}");
}
