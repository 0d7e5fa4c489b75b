//! A call's time budget is a durable timer: the worker running the turn
//! dies mid-budget, another takes the turn over, and the straggling
//! children are stopped at the first attempt's deadline, not a fresh one.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::host::{Ledger, TestHost};
use crate::workers::{Takeover, answer, submit};
use serde_json::{Value, json};
use zr_test_support::restate::RestateServer;

const SESSION: &str = "s-0000000000004-00000004";

/// The call's budget.
const BUDGET: Duration = Duration::from_secs(6);

/// When the first worker dies, counted from the moment both children
/// are under way (the call started a little before).
const DIES_AFTER: Duration = Duration::from_secs(3);

/// The root fans out to two workers that bump for a minute (longer than
/// the budget), then answers.
fn script() -> Value {
    let tasks: Vec<Value> = (0..2)
        .map(|i| json!({"description": format!("task {i}"), "prompt": format!("do task {i}"), "subagent_type": "worker"}))
        .collect();
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": {"tasks": tasks}}]},
            {"text": "budget spent"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 1, "hold_ms": 60_000}}]},
            {"text": "worker done"}
        ]}]
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_budget_ends_at_the_first_attempts_deadline_after_a_worker_dies() {
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let host = |name: &str| {
        let mut host = TestHost::new(script(), scratch.path().join(name), Arc::clone(&ledger));
        host.budget = Some(BUDGET);
        Arc::new(host)
    };
    let (first, second) = (host("a"), host("b"));
    let workers = Takeover::start(&server, &first, &second).await;

    let start = Instant::now();
    let turn = submit(&server, SESSION, "go");
    // Both children are in their bump, mid-budget: the first worker dies
    // (every connection to it drops; new ones go to the second).
    while ledger.holding.load(Ordering::SeqCst) < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the children did not start\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let under_way = Instant::now();
    tokio::time::sleep(DIES_AFTER).await;
    workers.take_over();

    let answer = answer(&server, turn, Duration::from_secs(60)).await;
    let (took, since) = (start.elapsed(), under_way.elapsed());
    assert_eq!(answer.output, "budget spent");
    // The first attempt's deadline (BUDGET after the call started, a
    // little before `under_way`), not the second's (BUDGET after the
    // takeover, DIES_AFTER after `under_way`).
    assert!(
        took >= BUDGET && since < BUDGET + DIES_AFTER,
        "the turn ended {took:?} after its submit, {since:?} after its children were under way; the budget is {BUDGET:?}, the takeover came {DIES_AFTER:?} after they were"
    );
    // The second worker ran the turn to its end: its root transcript says
    // both tasks timed out.
    let root = std::fs::read_to_string(second.sessions().join(SESSION).join("root.jsonl"))
        .expect("the second worker wrote the root's transcript");
    assert_eq!(
        root.matches("\"status\":\"timed_out\"").count(),
        2,
        "{root}"
    );
    drop(server);
}
