//! The probe server: list changes, cancellation reaching the server, stderr reaching `tracing`.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::json;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};
use zr_mcp::McpError;

use crate::support::*;

fn probe(marker: &str) -> zr_mcp::ServerConfig {
    stdio(
        "probe",
        python(),
        vec![probe_server_py(), marker.to_owned()],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_is_seen_by_the_next_listing() {
    let marker = marker();
    let hub = hub(vec![probe(&marker)], options());
    let lease = hub.acquire("probe").await.unwrap();
    let names = |tools: &[zr_mcp::McpTool]| -> Vec<String> {
        tools
            .iter()
            .map(|t| t.definition.name.to_string())
            .collect()
    };
    let before = names(&lease.tools().await.unwrap());
    assert_eq!(
        before,
        [
            "mcp__probe__add_tool",
            "mcp__probe__wait_for_cancel",
            "mcp__probe__shout",
            "mcp__probe__request_meta"
        ]
    );
    // Listing again without a change uses the stored list.
    assert_eq!(names(&lease.tools().await.unwrap()), before);

    let out = lease
        .call("add_tool", json!({"name": "fresh"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "added");
    // The notification may arrive just after the answer.
    let deadline = Instant::now() + Duration::from_secs(5);
    let after = loop {
        let after = names(&lease.tools().await.unwrap());
        if after.len() > before.len() || Instant::now() > deadline {
            break after;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        after.last().map(String::as_str),
        Some("mcp__probe__fresh"),
        "{after:?}"
    );
    let out = lease.call("fresh", json!({})).await.unwrap();
    assert_eq!(text_of(&out), "I am fresh");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_carries_its_idempotency_key_in_meta() {
    let hub = hub(vec![probe(&marker())], options());
    let lease = hub.acquire("probe").await.unwrap();
    let tools = lease.tools().await.unwrap();
    let handler = handler_of(&tools, "request_meta");

    // Through the handler, as the engine calls it: the context's key
    // (`{session}/{call id}`) is in the request's `_meta`.
    let out = run(&handler, json!({})).await.unwrap();
    let meta: serde_json::Value = serde_json::from_str(&text_of(&out)).unwrap();
    let key = tool_context().for_call("1").idempotency_key.unwrap();
    assert_eq!(
        meta.get(zr_mcp::IDEMPOTENCY_KEY_META),
        Some(&json!(key)),
        "{meta}"
    );

    // A context without a call has no key, and the request no such entry.
    let call = zr_types::ToolCall {
        id: "2".into(),
        name: handler.name().to_string(),
        input: json!({}),
    };
    let out = zr_types::ToolHandler::call(&*handler, &call, tool_context())
        .await
        .unwrap();
    let meta: serde_json::Value = serde_json::from_str(&text_of(&out)).unwrap();
    assert_eq!(meta.get(zr_mcp::IDEMPOTENCY_KEY_META), None, "{meta}");
}

/// `PATH.started`: written by `wait_for_cancel` when its handler runs.
fn started(path: &std::path::Path) -> std::path::PathBuf {
    let mut started = path.as_os_str().to_owned();
    started.push(".started");
    started.into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_call_or_timing_out_sends_cancelled_to_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let marker = marker();
    // Long enough for the server to start the handler even on a loaded
    // machine: a cancellation that arrives earlier never reaches it.
    let limit = Duration::from_secs(3);
    let server = probe(&marker).with_timeout(Some(limit));
    let hub = hub(vec![server], options());
    let lease = hub.acquire("probe").await.unwrap();
    let pid = lease.process_id();

    // The caller gives up once the server is working on the call: the
    // call's future is dropped.
    let dropped = dir.path().join("dropped");
    // Boxed, so that `drop` really drops it (a `tokio::pin!` would only
    // drop a reference).
    let mut call = Box::pin(lease.call("wait_for_cancel", json!({"path": dropped})));
    tokio::select! {
        outcome = &mut call => panic!("wait_for_cancel answered: {outcome:?}"),
        running = eventually(Duration::from_secs(30), || started(&dropped).exists()) => {
            assert!(running, "the server never started wait_for_cancel");
        }
    }
    drop(call);
    assert!(
        eventually(Duration::from_secs(10), || dropped.exists()).await,
        "the server never saw the cancellation of a dropped call"
    );
    assert_eq!(std::fs::read_to_string(&dropped).unwrap(), "cancelled");

    // The per-call time limit.
    let timed_out = dir.path().join("timed_out");
    let error = lease
        .call("wait_for_cancel", json!({"path": timed_out}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            McpError::Timeout {
                timeout_ms: 3000,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        started(&timed_out).exists(),
        "the server had not started the call within {limit:?}"
    );
    assert!(
        eventually(Duration::from_secs(10), || timed_out.exists()).await,
        "the server never saw the cancellation of a timed-out call"
    );
    assert_eq!(std::fs::read_to_string(&timed_out).unwrap(), "cancelled");
    // The cancellations came while the session went on (a server shutting
    // down cancels its handlers too): same process, still answering.
    let out = lease
        .call("shout", json!({"text": "still fine"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "shouted");
    assert_eq!(lease.process_id(), pid);
    assert!(lease.is_alive());
}

/// Events recorded as `target | server | message`.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

#[derive(Default)]
struct Fields {
    server: String,
    message: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "server" => self.server = format!("{value:?}"),
            "message" => self.message = format!("{value:?}"),
            _ => {}
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if !event.metadata().target().starts_with("zr_mcp") {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        self.0.lock().unwrap().push(format!(
            "{} | {} | {}",
            event.metadata().target(),
            fields.server,
            fields.message
        ));
    }
}

/// The process-wide capture. Global, not per thread: `tracing` caches
/// whether a call site is wanted, and tests on other threads would
/// otherwise settle that before a thread-local subscriber exists.
fn capture() -> &'static Capture {
    static CAPTURE: OnceLock<Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = Capture::default();
        tracing::subscriber::set_global_default(Registry::default().with(capture.clone()))
            .expect("no other test sets a global subscriber");
        capture
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_stderr_goes_to_tracing_with_the_server_name() {
    let capture = capture();
    let marker = marker();
    let server = stdio("shouter", python(), vec![probe_server_py(), marker]);
    let hub = hub(vec![server], options());
    let lease = hub.acquire("shouter").await.unwrap();
    let out = lease
        .call("shout", json!({"text": "hello from stderr"}))
        .await
        .unwrap();
    assert_eq!(text_of(&out), "shouted");
    let expected = "zr_mcp::server | shouter | probe: hello from stderr";
    let seen = eventually(Duration::from_secs(5), || {
        capture
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|line| line == expected)
    })
    .await;
    let lines: Vec<String> = capture
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("shouter"))
        .cloned()
        .collect();
    assert!(seen, "{lines:#?}");
}
