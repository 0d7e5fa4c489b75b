//! A fan-out on a real Restate server: each subagent of the root is its
//! own child invocation (`ZrAgent`), and the children spread over the two
//! workers behind the proxy; a MultiTask call keeps at most
//! `max_concurrent` of them in flight.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Agent, TaskStatus};
use zr_restate::SessionHost;
use zr_types::SessionId;

use crate::durable::transcripts;
use crate::host::{Ledger, TestHost};
use crate::workers::{answer, serve, submit};
use zr_test_support::proxy::Proxy;
use zr_test_support::restate::RestateServer;

const SESSION: &str = "s-0000000000002-00000002";

/// Subagents in all, in MultiTask calls of ten (the CI size; the
/// 100-subagent run is the must-show test's).
const SUBAGENTS: usize = 20;

/// At most this many children of one call in flight.
const MAX_CONCURRENT: usize = 4;

/// How long each subagent's `bump` takes: long enough for the calls'
/// slots to fill.
const HOLD_MS: u64 = 150;

/// The root fans out in calls of ten; each worker bumps (holding its
/// slot a while) and answers.
fn script() -> Value {
    let calls: Vec<Value> = (0..SUBAGENTS / 10)
        .map(|call| {
            let tasks: Vec<Value> = (0..10)
                .map(|i| json!({"description": format!("task {call}.{i}"), "prompt": format!("do task {call}.{i}"), "subagent_type": "worker"}))
                .collect();
            json!({"tool_calls": [{"name": "MultiTask", "input": {"tasks": tasks}}]})
        })
        .collect();
    let mut root = calls;
    root.push(json!({"text": "fanned out"}));
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": root}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 1, "hold_ms": HOLD_MS}}]},
            {"text": "worker done"}
        ]}]
    }})
}

fn host(dir: std::path::PathBuf, ledger: &Arc<Ledger>) -> TestHost {
    let mut host = TestHost::new(script(), dir, Arc::clone(ledger));
    host.max_concurrent = Some(MAX_CONCURRENT);
    host
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_subagent_is_a_child_invocation_on_either_worker() {
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");

    let local_ledger = Arc::new(Ledger::default());
    let local = host(scratch.path().join("local"), &local_ledger);
    let (runtime, config) = local.open().expect("the project opens");
    let session: SessionId = SESSION.parse().expect("a session id");
    let expected = Agent::with_session_id(Arc::new(runtime), config, session.clone())
        .prompt("go")
        .await
        .expect("the local run ends");
    assert_eq!(expected.output, "fanned out");

    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let first = Arc::new(host(scratch.path().join("a"), &ledger));
    let second = Arc::new(host(scratch.path().join("b"), &ledger));
    let a = serve(Arc::clone(&first)).await;
    let b = serve(Arc::clone(&second)).await;
    let proxy = Proxy::to_each(vec![a, b]).await;
    server.register(&proxy.url()).await;

    let answer = answer(
        &server,
        submit(&server, SESSION, "go"),
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(
        (answer.status, answer.output.as_str()),
        (TaskStatus::Completed, "fanned out")
    );
    assert_eq!(answer.turns, expected.turns);

    // Every subagent ran on exactly one worker, and both workers ran some.
    let on = |host: &TestHost| -> BTreeSet<String> {
        let agents = host.agents.lock().expect("not poisoned").clone();
        agents.into_iter().filter(|a| a != "root").collect()
    };
    let (on_a, on_b) = (on(&first), on(&second));
    assert!(
        !on_a.is_empty() && !on_b.is_empty(),
        "the children ran on both workers: {on_a:?} / {on_b:?}"
    );
    assert!(
        on_a.is_disjoint(&on_b),
        "no child ran twice: {on_a:?} / {on_b:?}"
    );
    let all: BTreeSet<String> = on_a.union(&on_b).cloned().collect();
    let ids: BTreeSet<String> = (1..=SUBAGENTS)
        .map(|n| format!("root.{n:04}-worker"))
        .collect();
    assert_eq!(all, ids);

    // Each child's effect once; at most MAX_CONCURRENT in flight, and
    // the slots filled (a call refills its slots as children finish).
    let effects = ledger.effects.lock().expect("not poisoned").clone();
    assert_eq!(effects.len(), SUBAGENTS, "{effects:?}");
    assert!(effects.values().all(|n| *n == 1), "{effects:?}");
    let attempts = ledger.attempts.lock().expect("not poisoned").clone();
    assert!(
        attempts.values().all(|n| *n == 1),
        "no call ran twice: {attempts:?}"
    );
    assert_eq!(
        ledger.most_held.load(Ordering::SeqCst),
        MAX_CONCURRENT,
        "the children in flight at once"
    );
    assert_eq!(
        local_ledger.most_held.load(Ordering::SeqCst),
        MAX_CONCURRENT
    );

    // The transcripts are the local run's, each written once, by the
    // worker that ran its agent (the root's by the worker of its turn).
    let local = transcripts(&local.sessions(), SESSION);
    let mut durable: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for worker in [&first, &second] {
        for (file, lines) in transcripts(&worker.sessions(), SESSION) {
            assert!(
                durable.insert(file.clone(), lines).is_none(),
                "{file} written twice"
            );
        }
    }
    assert_eq!(
        durable.keys().collect::<Vec<_>>(),
        local.keys().collect::<Vec<_>>()
    );
    for (file, lines) in &durable {
        assert_eq!(lines, &local[file], "{file}");
    }
    drop(server);
}
