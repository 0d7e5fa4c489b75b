//! Cancelling a durable turn through Restate's admin API: the root's
//! invocation and every child it waits for end cancelled, and no side
//! effect happens after.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::host::{Ledger, TestHost};
use crate::workers::{serve, submit};
use serde_json::{Value, json};
use zr_test_support::proxy::Proxy;
use zr_test_support::restate::RestateServer;

const SESSION: &str = "s-0000000000003-00000003";

/// Children of the one MultiTask call.
const CHILDREN: usize = 4;

/// The root fans out to four workers; each bumps for a while (cancelled
/// meanwhile), then would bump again and answer.
fn script() -> Value {
    let tasks: Vec<Value> = (0..CHILDREN)
        .map(|i| json!({"description": format!("task {i}"), "prompt": format!("do task {i}"), "subagent_type": "worker"}))
        .collect();
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": {"tasks": tasks}}]},
            {"tool_calls": [{"name": "bump", "input": {"n": 9}}]},
            {"text": "not cancelled"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 1, "hold_ms": 1500}}]},
            {"tool_calls": [{"name": "bump", "input": {"n": 2}}]},
            {"text": "worker done"}
        ]}]
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancelled_turn_cancels_every_child_and_stops_their_effects() {
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let host = |name: &str| {
        let mut host = TestHost::new(script(), scratch.path().join(name), Arc::clone(&ledger));
        host.max_concurrent = Some(CHILDREN);
        Arc::new(host)
    };
    let (first, second) = (host("a"), host("b"));
    let proxy = Proxy::to_each(vec![serve(first).await, serve(second).await]).await;
    server.register(&proxy.url()).await;

    let turn = submit(&server, SESSION, "go");
    // Every child is in its first bump.
    let deadline = Instant::now() + Duration::from_secs(60);
    while ledger.holding.load(Ordering::SeqCst) < CHILDREN {
        assert!(
            Instant::now() < deadline,
            "the children never all started: {} holding, at most {}, {:?}",
            ledger.holding.load(Ordering::SeqCst),
            ledger.most_held.load(Ordering::SeqCst),
            ledger.attempts.lock().expect("not poisoned")
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let roots = server.invocations("ZrSession");
    assert_eq!(roots.len(), 1, "{roots:?}");
    let root = roots.keys().next().expect("one root");
    server.cancel(root);

    let answer = tokio::time::timeout(Duration::from_secs(60), turn)
        .await
        .unwrap_or_else(|_| panic!("the cancelled turn did not end\n{}", server.log()))
        .expect("the request task");
    let error = answer
        .expect_err("a cancelled turn has no answer")
        .to_string();
    assert!(error.contains("cancel"), "{error}");

    // Every invocation ends, cancelled.
    let deadline = Instant::now() + Duration::from_secs(30);
    let children = loop {
        let children = server.invocations("ZrAgent");
        if children.len() == CHILDREN && children.values().all(|(status, _)| status == "completed")
        {
            break children;
        }
        assert!(
            Instant::now() < deadline,
            "the children did not all end: {children:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for (id, (_, failure)) in children
        .iter()
        .chain(server.invocations("ZrSession").iter())
    {
        assert!(
            failure.contains("cancelled"),
            "{id} ended with '{failure}', not cancelled"
        );
    }

    // The first bumps (under way when the cancel came) took effect; no
    // effect after: no child's second bump, not the root's.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let effects = ledger.effects.lock().expect("not poisoned").clone();
    let attempts = ledger.attempts.lock().expect("not poisoned").clone();
    assert_eq!(effects.len(), CHILDREN, "only the first bumps: {effects:?}");
    assert!(
        effects.keys().all(|key| key.contains("worker")),
        "no bump of the root: {effects:?}"
    );
    assert!(attempts.values().all(|n| *n == 1), "{attempts:?}");
    drop(server);
}
