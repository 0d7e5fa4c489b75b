//! Background subagents of a durable turn on a real Restate server: each
//! is a one-way send of its own invocation (`ZrAgent`), not a step of its
//! parent; its end reaches the root at its next model request; it runs
//! once even when its parent's worker dies; cancelling it, or its turn,
//! ends it cancelled.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zr_engine::TaskStatus;
use zr_restate::JournalEntry;

use crate::host::{Ledger, TestHost};
use crate::workers::{Takeover, Turn, answer, crashed, serve, submit};
use zr_test_support::proxy::Proxy;
use zr_test_support::restate::RestateServer;

/// The background agent's id, and its invocation's key in `session`.
const BG: &str = "root.0001-worker";

/// The notification of the background agent's end, as its parent gets it.
const TOLD: &str = "<background-task-finished>\\nThe background agent root.0001-worker (bg job) finished with status";

/// The Task call that starts the background agent.
fn bg_task() -> Value {
    json!({"name": "Task", "input": {"description": "bg job", "prompt": "background job", "subagent_type": "worker", "run_in_background": true}})
}

/// The journal of invocation `id`, as `zr run --durable` reads it.
async fn journal(server: &RestateServer, id: &str) -> Vec<JournalEntry> {
    zr_restate::journal(&server.admin_url(), id)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Waits (at most a minute) until `what` holds.
async fn until(what: &str, server: &RestateServer, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what}\n{}", server.log());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The requests of `agent` that `host` answered, as JSON text.
fn asked(host: &TestHost, agent: &str) -> Vec<String> {
    host.asked
        .lock()
        .expect("not poisoned")
        .iter()
        .filter(|(a, _)| a == agent)
        .map(|(_, messages)| messages.clone())
        .collect()
}

/// The root starts a worker in the background and bumps for a while (the
/// worker ends meanwhile); then it bumps again (the call its first worker
/// dies in) and answers.
fn takeover_script() -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [bg_task()]},
            {"tool_calls": [{"name": "bump", "input": {"n": 1, "hold_ms": 4000}}]},
            {"tool_calls": [{"name": "bump", "input": {"n": 2, "crash": true}}]},
            {"text": "root done"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 7}}]},
            {"text": "bg done"}
        ]}]
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_background_subagent_is_its_own_invocation_and_reaches_the_root_once_after_a_takeover() {
    const SESSION: &str = "s-0000000000005-00000005";
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let (first, second, crash) = TestHost::crashing_pair(
        &takeover_script(),
        scratch.path().join("a"),
        scratch.path().join("b"),
        &ledger,
    );
    // Everything on the first worker until it dies.
    let workers = Takeover::start(&server, &first, &second).await;

    let turn = submit(&server, SESSION, "go");
    crashed(
        &server,
        &crash,
        "the first worker never reached the second bump",
    )
    .await;
    // The first worker is dead to the server; the turn goes on on the
    // second, from its journal.
    workers.take_over();
    let answer = answer(&server, turn, Duration::from_secs(120)).await;
    assert_eq!(
        (answer.status, answer.output.as_str()),
        (TaskStatus::Completed, "root done")
    );

    // The background agent is one invocation of its own, which ended
    // with its answer; the turn's journal sent it one way (once, though
    // the turn ran twice) and attached to it, and ran no step for it.
    let children = server.invocations("ZrAgent");
    assert_eq!(children.len(), 1, "{children:?}");
    let (child, (status, failure)) = children.iter().next().expect("one child");
    assert_eq!((status.as_str(), failure.as_str()), ("completed", ""));
    let roots = server.invocations("ZrSession");
    assert_eq!(roots.len(), 1, "{roots:?}");
    let root = roots.keys().next().expect("one root");
    let entries = journal(&server, root).await;
    let target = format!("ZrAgent/{SESSION}/{BG}/run");
    let sends: Vec<_> = entries
        .iter()
        .filter(|e| matches!(e, JournalEntry::Send { .. } | JournalEntry::Call { .. }))
        .collect();
    assert_eq!(
        sends,
        [&JournalEntry::Send {
            target,
            invocation: child.clone()
        }],
        "one send of the child, no call: {entries:?}"
    );
    assert!(
        !entries
            .iter()
            .any(|e| matches!(e, JournalEntry::Step { name, .. } if name.starts_with("subagent "))),
        "no step runs it inside the turn: {entries:?}"
    );
    let attaches: Vec<_> = entries
        .iter()
        .filter_map(|e| match e {
            JournalEntry::Attach { invocation, .. } => Some(invocation),
            _ => None,
        })
        .collect();
    assert_eq!(attaches, [child], "one attach to it: {entries:?}");

    // It ran once (on the first worker, before it died): two requests,
    // one bump.
    let worker_requests = asked(&first, BG).len() + asked(&second, BG).len();
    assert_eq!(worker_requests, 2);
    let attempts = ledger.attempts.lock().expect("not poisoned").clone();
    let bg_bumps: Vec<_> = attempts
        .iter()
        .filter(|(key, _)| key.contains("worker"))
        .collect();
    assert_eq!(bg_bumps.len(), 1, "{attempts:?}");
    assert_eq!(*bg_bumps[0].1, 1, "{attempts:?}");

    // The worker that ran it built it as a background agent (its pool,
    // its prompts denied): its transcript's header says so.
    let transcript =
        std::fs::read_to_string(first.sessions().join(SESSION).join(format!("{BG}.jsonl")))
            .expect("the first worker wrote the background agent's transcript");
    let header: Value =
        serde_json::from_str(transcript.lines().next().expect("a header")).expect("a JSON header");
    assert_eq!(
        (header["kind"].as_str(), header["background"].as_bool()),
        (Some("header"), Some(true)),
        "{header}"
    );

    // Its end reached the root at its next request, once: the first
    // worker's third request (the worker ended during the root's 4 s
    // bump) holds it. The second worker, which replayed the turn from
    // its journal, asked only the last request: it holds the end at most
    // once (it hears of it again from the journal, when its replay is
    // over).
    let on_first = asked(&first, "root");
    assert_eq!(on_first.len(), 3, "{on_first:?}");
    assert!(!on_first[1].contains("background-task-finished"));
    assert_eq!(on_first[2].matches(TOLD).count(), 1, "{}", on_first[2]);
    assert!(
        on_first[2].contains("with status completed") && on_first[2].contains("bg done"),
        "{}",
        on_first[2]
    );
    let on_second = asked(&second, "root");
    assert_eq!(on_second.len(), 1, "{on_second:?}");
    assert!(on_second[0].matches(TOLD).count() <= 1, "{}", on_second[0]);
    drop(server);
}

/// The root starts a worker in the background and bumps for a while; the
/// worker bumps twice.
fn cancel_script(root_hold_ms: u64) -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [bg_task()]},
            {"tool_calls": [{"name": "bump", "input": {"n": 1, "hold_ms": root_hold_ms}}]},
            {"text": "root done"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 7, "hold_ms": 1500}}]},
            {"tool_calls": [{"name": "bump", "input": {"n": 8}}]},
            {"text": "bg done"}
        ]}]
    }})
}

/// A server with two workers running `script`, and the turn of `session`
/// submitted once both the root and the background agent are in their
/// first bump.
async fn started(
    scratch: &std::path::Path,
    script: &Value,
    session: &'static str,
) -> (RestateServer, Proxy, [Arc<TestHost>; 2], Arc<Ledger>, Turn) {
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let host = |name: &str| {
        Arc::new(TestHost::new(
            script.clone(),
            scratch.join(name),
            Arc::clone(&ledger),
        ))
    };
    let hosts = [host("a"), host("b")];
    let proxy = Proxy::to_each(vec![
        serve(Arc::clone(&hosts[0])).await,
        serve(Arc::clone(&hosts[1])).await,
    ])
    .await;
    server.register(&proxy.url()).await;
    let turn = submit(&server, session, "go");
    until(
        "the root and its background agent never both bumped",
        &server,
        || ledger.holding.load(Ordering::SeqCst) == 2,
    )
    .await;
    (server, proxy, hosts, ledger, turn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_background_subagent_cancelled_through_restate_ends_cancelled_and_its_parent_hears_of_it()
{
    const SESSION: &str = "s-0000000000006-00000006";
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let (server, _proxy, hosts, ledger, turn) =
        started(scratch.path(), &cancel_script(6000), SESSION).await;
    let children = server.invocations("ZrAgent");
    assert_eq!(children.len(), 1, "{children:?}");
    server.cancel(children.keys().next().expect("one child"));

    let answer = answer(&server, turn, Duration::from_secs(60)).await;
    // The turn itself goes on and answers.
    assert_eq!(
        (answer.status, answer.output.as_str()),
        (TaskStatus::Completed, "root done")
    );
    let children = server.invocations("ZrAgent");
    let (status, failure) = children.values().next().expect("one child");
    assert_eq!(status, "completed");
    assert!(failure.contains("cancel"), "{failure}");
    // The root heard of it at its next request: cancelled.
    let root: Vec<String> = hosts.iter().flat_map(|h| asked(h, "root")).collect();
    assert_eq!(root.len(), 3, "{root:?}");
    assert_eq!(root[2].matches(TOLD).count(), 1, "{}", root[2]);
    assert!(root[2].contains("with status cancelled"), "{}", root[2]);
    // No effect of the worker after the cancel: its second bump never ran.
    let effects = ledger.effects.lock().expect("not poisoned").clone();
    let bg: Vec<_> = effects.keys().filter(|k| k.contains("worker")).collect();
    assert_eq!(bg.len(), 1, "only its first bump: {effects:?}");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancelled_turn_cancels_its_background_subagent() {
    const SESSION: &str = "s-0000000000007-00000007";
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let (server, _proxy, _hosts, ledger, turn) =
        started(scratch.path(), &cancel_script(1000), SESSION).await;
    let roots = server.invocations("ZrSession");
    assert_eq!(roots.len(), 1, "{roots:?}");
    server.cancel(roots.keys().next().expect("one root"));

    let answer = tokio::time::timeout(Duration::from_secs(60), turn)
        .await
        .unwrap_or_else(|_| panic!("the cancelled turn did not end\n{}", server.log()))
        .expect("the request task");
    let error = answer
        .expect_err("a cancelled turn has no answer")
        .to_string();
    assert!(error.contains("cancel"), "{error}");
    // The background agent, which Restate does not cancel with its
    // parent (it was sent one way), ends cancelled too.
    let mut children = BTreeMap::new();
    until("the background agent did not end", &server, || {
        children = server.invocations("ZrAgent");
        children.len() == 1 && children.values().all(|(status, _)| status == "completed")
    })
    .await;
    let (_, failure) = children.values().next().expect("one child");
    assert!(failure.contains("cancel"), "{failure}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let effects = ledger.effects.lock().expect("not poisoned").clone();
    let bg: Vec<_> = effects.keys().filter(|k| k.contains("worker")).collect();
    assert_eq!(bg.len(), 1, "only its first bump: {effects:?}");
    drop(server);
}

/// The root starts a worker in the background, bumps (a slow hook holds
/// the call first) and answers; the worker bumps for a while.
fn waiting_script() -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [bg_task()]},
            {"tool_calls": [{"name": "bump", "input": {"n": 1}}]},
            {"text": "root done"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 7, "hold_ms": 4000}}]},
            {"text": "bg done"}
        ]}]
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_turn_replayed_while_it_waits_for_its_background_agent_ends_once_the_agent_did() {
    const SESSION: &str = "s-0000000000008-00000008";
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let host = |name: &str| {
        let mut host = TestHost::new(
            waiting_script(),
            scratch.path().join(name),
            Arc::clone(&ledger),
        );
        // During the replay the engine is quiet this long between two
        // commands, with more in the journal.
        host.root_hook = Some(Duration::from_millis(300));
        Arc::new(host)
    };
    let (first, second) = (host("a"), host("b"));
    let workers = Takeover::start(&server, &first, &second).await;
    let turn = submit(&server, SESSION, "go");
    // The root answered (its three requests and its bump are in its
    // journal) and waits for its background agent, which bumps.
    let ended_runs = |server: &RestateServer| -> usize {
        server.invocations("ZrSession")
            .keys()
            .map(|id| {
                server
                    .sql(&format!(
                        "SELECT entry_type FROM sys_journal WHERE id = '{id}' AND entry_type = 'Notification: Run'"
                    ))
                    .len()
            })
            .sum()
    };
    until("the background agent never bumped", &server, || {
        ledger.holding.load(Ordering::SeqCst) == 1
    })
    .await;
    until(
        "the root never answered while its agent bumped",
        &server,
        || ended_runs(&server) == 4 && ledger.holding.load(Ordering::SeqCst) == 1,
    )
    .await;
    // Every attempt ends (the turn's and the agent's): the next ones, on
    // the second worker, replay their journals. The turn's replay runs no
    // step's work, and awaits its agent's end only once it answered
    // (awaited while the hook holds the replay, the end the journal does
    // not hold would fail the attempt).
    workers.take_over();
    let answer = answer(&server, turn, Duration::from_secs(60)).await;
    assert_eq!(
        (answer.status, answer.output.as_str()),
        (TaskStatus::Completed, "root done")
    );
    // The turn ended only once its background agent did, with its answer.
    let children = server.invocations("ZrAgent");
    assert_eq!(
        children.values().cloned().collect::<Vec<_>>(),
        [("completed".to_owned(), String::new())],
        "{children:?}"
    );
    let ended: Vec<String> = [&first, &second]
        .iter()
        .flat_map(|h| asked(h, BG))
        .collect();
    assert_eq!(ended.len(), 2, "the agent's two requests, once each");
    // The replay asked nothing again, and never awaited the agent's end
    // before its journal was replayed (Restate's "changed code path").
    assert!(asked(&second, "root").is_empty());
    let log = server.log();
    assert!(
        !log.contains("could not be replayed"),
        "an attempt failed on its replay:\n{log}"
    );
    drop(server);
}
