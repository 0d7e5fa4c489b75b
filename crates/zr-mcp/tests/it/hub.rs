//! The hub's sharing rules: counted leases, the grace period, reconnects, no orphans.

use std::time::Duration;

use serde_json::json;
use zr_mcp::McpError;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_share_one_process_and_close_after_the_grace_period() {
    let marker = marker();
    // Long enough that the re-acquire below lands inside it on a loaded
    // machine.
    let grace = Duration::from_secs(3);
    let hub = hub(vec![fault("fault", &marker)], options().with_grace(grace));

    let (a, b) = tokio::join!(hub.acquire("fault"), hub.acquire("fault"));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.process_id(), b.process_id());
    assert_eq!(count_processes(&marker), 1, "two leases, one process");
    assert_eq!(hub.lease_count("fault"), 2);
    let c = a.clone();
    assert_eq!(hub.lease_count("fault"), 3);
    drop((a, c));
    assert_eq!(hub.lease_count("fault"), 1);

    // Released, then re-acquired inside the grace period: the same process.
    let pid = b.process_id();
    drop(b);
    assert_eq!(hub.lease_count("fault"), 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        count_processes(&marker),
        1,
        "still open during the grace period"
    );
    let again = hub.acquire("fault").await.unwrap();
    assert_eq!(again.process_id(), pid, "reused inside the grace period");
    // The earlier close timer must not close the re-acquired connection.
    tokio::time::sleep(grace).await;
    assert!(again.is_alive());
    expect_echo(&again, "alive").await;
    assert_eq!(count_processes(&marker), 1);

    // Released for good: the process ends after the grace period.
    drop(again);
    expect_processes(
        &marker,
        0,
        grace + Duration::from_secs(10),
        "the server outlived its grace period",
    )
    .await;
    let fresh = hub.acquire("fault").await.unwrap();
    assert_ne!(
        fresh.process_id(),
        pid,
        "a new process after the grace period"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_names_with_the_same_settings_share_a_connection() {
    let marker = marker();
    let hub = hub(
        vec![fault("one", &marker), fault("two", &marker)],
        options(),
    );
    let one = hub.acquire("one").await.unwrap();
    let two = hub.acquire("two").await.unwrap();
    assert_eq!(one.process_id(), two.process_id());
    assert_eq!(count_processes(&marker), 1);
    // Tools straight from the hub hold their own leases.
    let tools = hub.tools("one").await.unwrap();
    assert_eq!(hub.lease_count("one"), 2 + tools.len());
    drop(tools);
    assert_eq!(hub.lease_count("one"), 2);
    // Each lease names its tools after its own server name.
    let names: Vec<String> = two
        .tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.definition.name.to_string())
        .collect();
    assert!(names.contains(&"mcp__two__echo".to_owned()), "{names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_survives_the_hub() {
    let marker = marker();
    let hub = hub(
        vec![fault("fault", &marker), everything("every", &marker)],
        options(),
    );
    let fault = hub.acquire("fault").await.unwrap();
    let every = hub.acquire("every").await.unwrap();
    assert_eq!(count_processes(&marker), 2);
    // A call waiting when the hub goes fails with a clear error.
    let pending = tokio::spawn({
        let fault = fault.clone();
        async move { fault.call("hang", json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(hub);
    // Leases still exist, but the processes are gone.
    expect_processes(
        &marker,
        0,
        Duration::from_secs(5),
        "servers outlived the hub",
    )
    .await;
    let error = pending.await.unwrap().unwrap_err();
    assert!(matches!(error, McpError::HubDropped { .. }), "{error:?}");
    assert!(!every.is_alive());
    drop((fault, every));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_connection_is_not_kept_and_the_next_acquire_tries_again() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("later.py");
    let marker = marker();
    let server = stdio(
        "late",
        python(),
        vec![script.display().to_string(), marker.clone()],
    );
    let hub = hub(vec![server], options());

    // The script does not exist yet: Python exits with status 2.
    let error = hub.acquire("late").await.unwrap_err();
    assert!(
        matches!(&error, McpError::Exited { status, .. } if status.code() == Some(2)),
        "{error:?}"
    );
    assert_eq!(hub.lease_count("late"), 0);
    // Two acquires at once: the second waits for the first start, is not
    // handed its failure as a connection, and tries again itself.
    let (a, b) = tokio::join!(hub.acquire("late"), hub.acquire("late"));
    for error in [a.unwrap_err(), b.unwrap_err()] {
        assert!(matches!(error, McpError::Exited { .. }), "{error:?}");
    }
    assert_eq!(hub.lease_count("late"), 0);

    std::fs::copy(fault_server_py(), &script).unwrap();
    let lease = hub.acquire("late").await.unwrap();
    expect_echo(&lease, "made it").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_failures_and_unknown_servers_name_the_server() {
    let hub = hub(
        vec![stdio(
            "ghost",
            "/nonexistent/zr-no-such-server".into(),
            vec![],
        )],
        options(),
    );
    let error = hub.acquire("ghost").await.unwrap_err();
    assert!(matches!(error, McpError::Spawn { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "MCP server 'ghost': cannot start '/nonexistent/zr-no-such-server'"
    );
    let error = hub.acquire("nobody").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "no MCP server named 'nobody' is configured"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_hits_the_connect_timeout() {
    // `sleep` never answers the handshake.
    let hub = hub(
        vec![stdio("mute", "sleep".into(), vec!["30".into()])],
        options().with_connect_timeout(Duration::from_millis(300)),
    );
    let error = hub.acquire("mute").await.unwrap_err();
    assert!(
        matches!(
            error,
            McpError::ConnectTimeout {
                timeout_ms: 300,
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_start_is_reported_in_its_own_words() {
    // Like a server that needs a token: a few lines on stderr, exit 1.
    let script = "echo starting github server >&2; for i in 1 2 3 4 5 6 7 8 9 10 11; do echo line $i >&2; done; echo 'GITHUB_TOKEN is not set' >&2; exit 1";
    let hub = hub(
        vec![stdio("gh", "sh".into(), vec!["-c".into(), script.into()])],
        options(),
    );
    let error = hub.acquire("gh").await.unwrap_err();
    let McpError::Exited { status, stderr, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(status.code(), Some(1));
    // The last ten lines, oldest first; the first two were dropped.
    let expected: Vec<String> = (3..=11)
        .map(|i| format!("line {i}"))
        .chain(["GITHUB_TOKEN is not set".to_owned()])
        .collect();
    assert_eq!(stderr, &expected);
    assert!(
        error.to_string().starts_with(
            "MCP server 'gh' exited (exit status: 1); its last lines on stderr: \"line 3\" "
        ) && error
            .to_string()
            .ends_with("\"line 11\" \"GITHUB_TOKEN is not set\""),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_server_times_out_with_what_it_said() {
    let script = "echo 'waiting for the database at db:5432' >&2; exec sleep 30";
    let hub = hub(
        vec![stdio("db", "sh".into(), vec!["-c".into(), script.into()])],
        options().with_connect_timeout(Duration::from_millis(1500)),
    );
    let error = hub.acquire("db").await.unwrap_err();
    assert!(
        matches!(&error, McpError::ConnectTimeout { stderr, .. } if stderr == &["waiting for the database at db:5432"]),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "MCP server 'db' did not complete the handshake within 1500 ms; its last lines on stderr: \"waiting for the database at db:5432\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_child_gets_only_its_variables_and_the_base() {
    let marker = marker();
    // Some variable of this test process besides the base: it must not
    // reach the child (cargo sets many, e.g. CARGO_MANIFEST_DIR).
    let leak = std::env::vars()
        .map(|(k, _)| k)
        .find(|k| !["PATH", "HOME", "LANG"].contains(&k.as_str()));
    // From a real `.mcp.json`, with a `${VAR}` expanded from the host.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".mcp.json");
    let text = serde_json::json!({"mcpServers": {"every": {
        "command": node(),
        "args": [everything_js(), "stdio", marker],
        "env": {"ZR_ONLY_THIS": "${ZR_SECRET}", "ZR_DEFAULTED": "${ZR_UNSET:-fallback}"},
        "cwd": "."
    }}});
    std::fs::write(&file, text.to_string()).unwrap();
    let vars = |name: &str| (name == "ZR_SECRET").then(|| "s3cret".to_owned());
    let config = zr_mcp::McpConfig::load(&file, &vars).unwrap();
    let hub = zr_mcp::McpHub::new(config, options());
    let lease = hub.acquire("every").await.unwrap();
    let out = lease.call("get-env", json!({})).await.unwrap();
    let env: serde_json::Value = serde_json::from_str(&text_of(&out)).unwrap();
    let keys: Vec<&str> = env
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(env["ZR_ONLY_THIS"], "s3cret");
    assert_eq!(env["ZR_DEFAULTED"], "fallback");
    for key in &keys {
        assert!(
            // ZR_OWNER: zr_process marks every child with its owner.
            [
                "PATH",
                "HOME",
                "LANG",
                "ZR_ONLY_THIS",
                "ZR_DEFAULTED",
                "ZR_OWNER"
            ]
            .contains(key),
            "the child saw {key}: {keys:?}"
        );
    }
    if let Some(leak) = leak {
        assert!(!keys.contains(&leak.as_str()), "{leak} leaked");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helpers_a_server_started_die_with_it() {
    let marker = marker();
    // The server first starts a helper of its own, in its process group.
    let server = fault_with_helper("parent", &marker);
    let hub = hub(vec![server.clone()], options());
    let lease = hub.acquire("parent").await.unwrap();
    let both_run = "server and helper should run";
    expect_processes(&marker, 2, Duration::from_secs(30), both_run).await;
    drop(lease);
    drop(hub);
    expect_processes(&marker, 0, Duration::from_secs(5), "survived the hub").await;

    // When the server crashes, its helper goes too.
    let hub = crate::support::hub(vec![server], options());
    let lease = hub.acquire("parent").await.unwrap();
    expect_processes(&marker, 2, Duration::from_secs(30), both_run).await;
    let error = lease.call("crash", json!({})).await.unwrap_err();
    assert!(matches!(error, McpError::Exited { .. }), "{error:?}");
    expect_processes(&marker, 0, Duration::from_secs(5), "survived the crash").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_hub_while_a_connection_closes_stops_the_others_at_once() {
    let slow_marker = marker();
    let other_marker = marker();
    // A server whose process group outlives its input: after the MCP server
    // exits, the shell that started it sleeps on, so the polite close waits
    // its full two seconds before killing the group.
    let slow = fault_in_lingering_shell("slow", &slow_marker);
    let hub = hub(
        vec![slow, fault("other", &other_marker)],
        options().with_grace(Duration::from_millis(100)),
    );
    let slow_lease = hub.acquire("slow").await.unwrap();
    let other = hub.acquire("other").await.unwrap();
    assert_eq!(count_processes(&slow_marker), 2, "the shell and the server");
    assert_eq!(count_processes(&other_marker), 1);

    // The grace period ends: the slow server's input is closed and its
    // Python exits, while the shell lingers.
    drop(slow_lease);
    expect_processes(
        &slow_marker,
        1,
        Duration::from_secs(30),
        "the slow server never started closing",
    )
    .await;
    // The hub goes while that close is still waiting: the other server stops
    // now, not when the close is over.
    drop(hub);
    expect_processes(
        &other_marker,
        0,
        Duration::from_millis(500),
        "the other server outlived the hub",
    )
    .await;
    assert!(!other.is_alive());
    expect_processes(
        &slow_marker,
        0,
        Duration::from_secs(10),
        "the closing server was never stopped",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_connection_is_stopped_when_replaced_even_while_leases_remain() {
    let marker = marker();
    // The shell outlives the MCP server it started.
    let server = fault_in_lingering_shell("wrapped", &marker);
    let hub = hub(vec![server], options().with_max_message_bytes(64 * 1024));
    let old = hub.acquire("wrapped").await.unwrap();
    // After answering, the server writes a line over the size limit while
    // no call waits: the session ends, the server's input is closed, Python
    // exits and the shell sleeps on.
    let out = old
        .call("flood", json!({"bytes": 1_000_000}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "flooding");
    assert!(eventually(Duration::from_secs(30), || !old.is_alive()).await);
    expect_processes(&marker, 1, Duration::from_secs(30), "only the shell left").await;

    // The next acquire replaces the dead connection; `old` still holds it,
    // but its shell is stopped: only the new shell and server remain.
    let new = hub.acquire("wrapped").await.unwrap();
    assert_ne!(new.process_id(), old.process_id());
    expect_processes(
        &marker,
        2,
        Duration::from_secs(5),
        "the new shell and server",
    )
    .await;
    let error = old.call("echo", json!({"text": "x"})).await.unwrap_err();
    assert!(error.is_connection_lost(), "{error:?}");
    drop(hub);
    expect_processes(&marker, 0, Duration::from_secs(5), "outlived the hub").await;
    drop((old, new));
}

#[test]
fn leases_and_hub_dropped_during_and_after_runtime_shutdown_stop_everything_without_panicking() {
    let marker = marker();
    // The server starts a helper in its process group: killing only the
    // server process would leave the helper behind.
    let server = fault_with_helper("parent", &marker);
    let hub = hub(vec![server], options().with_grace(Duration::from_secs(1)));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (lease, tools) = runtime.block_on(async {
        let lease = hub.acquire("parent").await.unwrap();
        let tools = lease.tools().await.unwrap();
        // A task that holds a lease and waits on a call when the runtime
        // shuts down: both are dropped by the shutdown itself.
        let held = lease.clone();
        tokio::spawn(async move { held.call("hang", json!({})).await });
        (lease, tools)
    });
    let start = std::time::Instant::now();
    while count_processes(&marker) != 2 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "server and helper should run"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(runtime);
    // No runtime any more: the session's and the reaper's tasks are gone.
    // Dropping what is left must neither panic nor leave a process behind.
    drop(tools);
    drop(lease);
    drop(hub);
    let start = std::time::Instant::now();
    while count_processes(&marker) != 0 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{} processes outlived the hub",
            count_processes(&marker)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_while_the_connection_closes_starts_a_new_server() {
    let marker = marker();
    // The shell outlives the MCP server, so the close takes its full two
    // seconds.
    let server = fault_in_lingering_shell("slow", &marker);
    let hub = hub(
        vec![server],
        options().with_grace(Duration::from_millis(100)),
    );
    let first = hub.acquire("slow").await.unwrap();
    let first_pid = first.process_id();
    drop(first);
    expect_processes(
        &marker,
        1,
        Duration::from_secs(30),
        "the connection never started closing",
    )
    .await;
    let again = hub.acquire("slow").await.unwrap();
    assert_ne!(again.process_id(), first_pid);
    expect_echo(&again, "new").await;
    assert_eq!(hub.lease_count("slow"), 1);
    drop((again, hub));
    expect_processes(&marker, 0, Duration::from_secs(10), "outlived the hub").await;
}
