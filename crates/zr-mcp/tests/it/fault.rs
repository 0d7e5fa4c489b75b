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
            matches!(&error, McpError::Exited { server, status } if server.as_str() == "fault" && status.code() == Some(3)),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "MCP server 'fault' exited (exit status: 3)"
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
    let out = again.call("echo", json!({"text": "back"})).await.unwrap();
    assert_eq!(text_of(&out), "back");
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
    let hang = tools
        .iter()
        .find(|t| t.handler.remote_name() == "hang")
        .unwrap();
    let out = zr_types::ToolHandler::call(
        hang.handler.as_ref(),
        zr_types::ToolCall {
            id: "1".into(),
            name: "mcp__fault__hang".into(),
            input: json!({}),
        },
        zr_types::ToolContext::new(
            zr_types::SessionId::from_parts(1, 1),
            zr_types::AgentId::root(),
            std::env::temp_dir(),
            Default::default(),
        ),
    )
    .await
    .unwrap();
    assert!(out.is_error);
    assert!(text_of(&out).contains("no answer within 500 ms"), "{out:?}");
    let out = lease
        .call("echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_the_wire_does_not_break_the_connection() {
    let marker = marker();
    let hub = hub(vec![fault("fault", &marker)], options());
    let lease = hub.acquire("fault").await.unwrap();
    let out = lease.call("garbage", json!({"lines": 5})).await.unwrap();
    assert_eq!(text_of(&out), "survived");
    let out = lease.call("echo", json!({"text": "after"})).await.unwrap();
    assert_eq!(text_of(&out), "after");
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
    let out = lease.call("echo", json!({"text": "fine"})).await.unwrap();
    assert_eq!(text_of(&out), "fine");
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
    let crash = tools
        .iter()
        .find(|t| t.handler.remote_name() == "crash")
        .unwrap();
    let error = zr_types::ToolHandler::call(
        crash.handler.as_ref(),
        zr_types::ToolCall {
            id: "1".into(),
            name: "mcp__fault__crash".into(),
            input: json!({"status": 7}),
        },
        zr_types::ToolContext::new(
            zr_types::SessionId::from_parts(1, 1),
            zr_types::AgentId::root(),
            std::env::temp_dir(),
            Default::default(),
        ),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool 'mcp__fault__crash' is unavailable: MCP server 'fault' exited (exit status: 7)"
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
    assert!(
        eventually(Duration::from_secs(5), || count_processes(&marker) == 0).await,
        "the server was not stopped"
    );
    let again = hub.acquire("fault").await.unwrap();
    let out = again
        .call("echo", json!({"text": "fresh start"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "fresh start");
}
