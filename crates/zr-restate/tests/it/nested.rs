//! A tree of depth 2 on a real Restate server: the root's `lead`s are
//! child invocations of the root's, and each lead's own `worker` a child
//! invocation of the lead's (`ZrAgent`, keyed `{session}/{agent id}`). The
//! first worker dies inside the grandchildren; the second takes every
//! invocation over, and nothing is lost or run twice. The session's tree
//! budget is what the journal says was spent: a grandchild that spends it
//! on the second worker stops the whole tree.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{TaskStatus, TreeBudget};

use crate::host::{Ledger, TestHost};
use crate::workers::{Takeover, answer, crashed, submit};
use zr_test_support::restate::RestateServer;

fn task(subagent_type: &str, prompt: &str) -> Value {
    json!({"name": "Task", "input": {"description": prompt, "prompt": prompt, "subagent_type": subagent_type}})
}

/// Two workers at `max_depth` 2 sharing `ledger`, the first crashing at a
/// `bump` with `{"crash": true}`.
fn pair(
    script: &Value,
    scratch: &std::path::Path,
    ledger: &Arc<Ledger>,
    budget: TreeBudget,
) -> (Arc<TestHost>, Arc<TestHost>, Arc<tokio::sync::Notify>) {
    let (first, second, crash) =
        TestHost::crashing_pair(script, scratch.join("a"), scratch.join("b"), ledger);
    let deep = |host: Arc<TestHost>| {
        let mut host = Arc::into_inner(host).expect("not shared yet");
        host.max_depth = Some(2);
        host.tree_budget = budget;
        Arc::new(host)
    };
    (deep(first), deep(second), crash)
}

/// The `ZrAgent` invocations: key -> (status, the target that invoked it).
fn agents(server: &RestateServer) -> BTreeMap<String, (String, String)> {
    server
        .sql("SELECT target_service_key, status, invoked_by_target FROM sys_invocation WHERE target_service_name = 'ZrAgent'")
        .into_iter()
        .map(|row| {
            let text = |key: &str| row[key].as_str().unwrap_or_default().to_owned();
            (
                text("target_service_key"),
                (text("status"), text("invoked_by_target")),
            )
        })
        .collect()
}

const SESSION: &str = "s-0000000000021-00000021";

/// root -> two leads (one MultiTask) -> a worker each; each lead bumps
/// first, each worker bumps with the crash.
fn tree() -> Value {
    let leads: Vec<Value> = (0..2)
        .map(|i| json!({"description": format!("lead {i}"), "prompt": format!("lead part {i}"), "subagent_type": "lead"}))
        .collect();
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": {"tasks": leads}}]},
            {"text": "root done"}
        ]}],
        "lead": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 1}}]},
            {"tool_calls": [task("worker", "work on it")]},
            {"text": "lead done"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 2, "crash": true}}]},
            {"text": "worker done"}
        ]}]
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn grandchildren_are_child_invocations_and_survive_their_worker() {
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let (first, second, crash) = pair(&tree(), scratch.path(), &ledger, TreeBudget::default());
    let workers = Takeover::start(&server, &first, &second).await;

    let turn = submit(&server, SESSION, "go");
    crashed(&server, &crash, "no worker reached its bump").await;
    // Both grandchildren hang in their bump on the first worker (the
    // second one's crash is awaited too, so that both are cut short).
    crashed(
        &server,
        &crash,
        "the second grandchild never reached its bump",
    )
    .await;
    workers.take_over();
    let answer = answer(&server, turn, Duration::from_secs(120)).await;
    assert_eq!(answer.output, "root done");

    // Two leads, two grandchildren: each its own invocation, each
    // grandchild invoked by its lead's invocation, all completed.
    let invocations = agents(&server);
    assert_eq!(invocations.len(), 4, "{invocations:#?}");
    let leads = ["root.0001-lead", "root.0002-lead"];
    for lead in leads {
        let key = format!("{SESSION}/{lead}");
        let (status, by) = &invocations[&key];
        assert_eq!(status, "completed", "{key}");
        assert!(by.starts_with("ZrSession/"), "{key} invoked by {by}");
        let children: Vec<_> = invocations
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{key}.")))
            .collect();
        assert_eq!(children.len(), 1, "{lead}'s worker: {invocations:#?}");
        let (child, (status, by)) = children[0];
        assert!(child.ends_with("-worker"), "{child}");
        assert_eq!(status, "completed", "{child}");
        assert_eq!(by, &format!("ZrAgent/{key}/run"), "{child} invoked by");
    }

    // Each effect once; the grandchildren's bumps, cut short, ran again
    // with their keys; the leads' ran once.
    let effects = ledger.effects.lock().expect("not poisoned").clone();
    assert_eq!(effects.len(), 4, "{effects:?}");
    assert!(effects.values().all(|n| *n == 1), "{effects:?}");
    let attempts = ledger.attempts.lock().expect("not poisoned").clone();
    let mut counts: Vec<u32> = attempts.values().copied().collect();
    counts.sort_unstable();
    assert_eq!(counts, [1, 1, 2, 2], "{attempts:?}");

    // No request twice: root 2, leads 3 each, workers 2 each, over both
    // workers; the grandchildren's second requests were the second's.
    let requests = first.requests.load(Ordering::SeqCst) + second.requests.load(Ordering::SeqCst);
    assert_eq!(requests, 2 + 2 * 3 + 2 * 2);
    let second_agents = second.agents.lock().expect("not poisoned").clone();
    assert_eq!(
        second_agents
            .iter()
            .filter(|a| a.ends_with("-worker"))
            .count(),
        2,
        "{second_agents:?}"
    );
    drop(server);
}

const BUDGET_SESSION: &str = "s-0000000000022-00000022";

/// root -> lead -> worker; the worker bumps (its worker dies there), then
/// spends the tree's budget in one answer that also asks for a bump.
fn spending() -> Value {
    let delegating = |child: &str, summary: &str| {
        json!([{"turns": [
            {"tool_calls": [task(child, "go on")]},
            {"text": "never", "tool_calls": [{"name": "bump", "input": {"n": 9}}]},
            {"text": "done"}
        ], "summary": summary}])
    };
    json!({"turns_from": "history", "agents": {
        "root": delegating("lead", "root summary"),
        "lead": delegating("worker", "lead summary"),
        "worker": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 1, "crash": true}}]},
            {"text": "digging", "usage": {"input_tokens": 4000, "output_tokens": 2000},
             "tool_calls": [{"name": "bump", "input": {"n": 2}}]},
            {"text": "never"}
        ], "summary": "worker summary"}]
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_tree_budget_holds_across_a_worker_restart() {
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let budget = TreeBudget {
        tokens: Some(5_000),
        cost_usd: None,
    };
    let (first, second, crash) = pair(&spending(), scratch.path(), &ledger, budget);
    let workers = Takeover::start(&server, &first, &second).await;

    let turn = submit(&server, BUDGET_SESSION, "go");
    crashed(&server, &crash, "the grandchild never reached its bump").await;
    workers.take_over();
    let answer = answer(&server, turn, Duration::from_secs(120)).await;

    // The grandchild spent the budget on the second worker; its parent
    // and the root heard of it through their journals (the children's
    // answers) and stopped with their summaries.
    assert_eq!(answer.output, "root summary", "{answer:?}");
    assert_eq!(answer.status, TaskStatus::BudgetExhausted, "{answer:?}");
    let effects = ledger.effects.lock().expect("not poisoned").clone();
    assert_eq!(
        effects.len(),
        1,
        "only the grandchild's first bump: nothing ran after the budget ended: {effects:?}"
    );
    assert!(effects.values().all(|n| *n == 1));
    let summaries: Vec<String> = [&first, &second]
        .iter()
        .flat_map(|host| host.asked.lock().expect("not poisoned").clone())
        .filter(|(agent, _)| agent.starts_with("root.0001-lead"))
        .map(|(_, messages)| messages)
        .collect();
    assert!(
        summaries
            .iter()
            .any(|messages| messages.contains("worker summary")),
        "the lead's summary request holds its worker's summary"
    );
    drop(server);
}
