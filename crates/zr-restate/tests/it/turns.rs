//! A durable session of several turns (`zr resume SESSION PROMPT` sends
//! the next turn to the same object): each turn goes on from the
//! conversation of the earlier ones, which the session object keeps in
//! Restate's state, whichever worker runs it; the root's transcript holds
//! every turn's records once.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::Agent;
use zr_restate::{SessionHost, TurnAnswer};
use zr_types::{Message, SessionId};

use crate::durable::transcripts;
use crate::host::{Ledger, TestHost};
use crate::workers::{Takeover, answer, crashed, submit};
use zr_test_support::restate::RestateServer;

const SESSION: &str = "s-0000000000002-00000002";

fn task(n: u32) -> Value {
    json!({"description": format!("task {n}"), "prompt": format!("do task number {n}"), "subagent_type": "worker"})
}

/// Two turns, each with a subagent and a bump; the second turn's bump is
/// the call a worker dies in.
fn script() -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": task(1)}]},
            {"tool_calls": [{"name": "bump", "input": {"n": 1}}]},
            {"text": "first answer"},
            {"tool_calls": [{"name": "Task", "input": task(2)}]},
            {"tool_calls": [{"name": "bump", "input": {"n": 2, "crash": true}}]},
            {"text": "second answer"}
        ]}],
        "worker": [{"turns": [{"text": "worker done"}]}]
    }})
}

fn session() -> SessionId {
    SESSION.parse().expect("a session id")
}

/// `messages` as JSON, without what differs between two runs (time
/// stamps, durations: see `durable::transcripts`).
fn comparable(messages: &[Message]) -> Value {
    let mut value = serde_json::to_value(messages).expect("messages serialise");
    crate::durable::strip_times(&mut value);
    value
}

async fn turn(server: &RestateServer, prompt: &str) -> TurnAnswer {
    answer(
        server,
        submit(server, SESSION, prompt),
        Duration::from_secs(120),
    )
    .await
}

fn requests(host: &TestHost) -> Vec<Vec<Message>> {
    host.root_requests.lock().expect("not poisoned").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_second_turn_goes_on_from_the_first_even_when_its_worker_dies() {
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");

    // The same two queries on one local root: the answers, conversation
    // and transcripts to compare with.
    let local = TestHost::new(script(), scratch.path().join("local"), Arc::default());
    let (runtime, config) = local.open().expect("the project opens");
    let local_agent = Agent::with_session_id(Arc::new(runtime), config, session());
    let local_first = local_agent.prompt("first").await.expect("query 1 ends");
    let local_second = local_agent.prompt("second").await.expect("query 2 ends");
    assert_eq!(local_second.output, "second answer");

    // Two workers sharing the project folder (and so the transcripts);
    // the first dies in the second turn's bump, right after its effect.
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let shared = scratch.path().join("shared");
    let (first, second, crash) =
        TestHost::crashing_pair(&script(), shared.clone(), shared, &ledger);
    let workers = Takeover::start(&server, &first, &second).await;

    let answer = turn(&server, "first").await;
    assert_eq!(
        (answer.output.as_str(), answer.turns),
        (local_first.output.as_str(), local_first.turns)
    );

    let second_turn = submit(&server, SESSION, "second");
    crashed(
        &server,
        &crash,
        "the first worker never reached the second turn's bump",
    )
    .await;
    workers.take_over();
    let answer = crate::workers::answer(&server, second_turn, Duration::from_secs(120)).await;
    assert_eq!(
        (answer.output.as_str(), answer.turns),
        (local_second.output.as_str(), local_second.turns),
        "the same answer as the local root's second query"
    );

    // The first worker asked the first turn's three requests and the
    // second turn's first two; the second worker, which took the turn
    // over, its last.
    let asked_first = requests(&first);
    let asked_second = requests(&second);
    assert_eq!((asked_first.len(), asked_second.len()), (5, 1));
    // The second turn's first request carries the first turn's whole
    // conversation (its last request, its answer), then the new prompt.
    let mut expected = asked_first[2].clone();
    expected.push(Message::assistant_text("first answer"));
    expected.push(Message::user_text("second"));
    assert_eq!(
        asked_first[3], expected,
        "turn 2 starts from turn 1's conversation"
    );
    // The worker that took the turn over, with no memory of the first
    // turn in its process, had it from Restate's state.
    assert!(
        asked_second[0].starts_with(&expected),
        "the replayed attempt starts from the same conversation: {:#?}",
        asked_second[0]
    );
    // As the local root did.
    let mut local_expected = local_agent.history();
    local_expected.truncate(expected.len());
    assert_eq!(comparable(&expected), comparable(&local_expected));

    // Each bump has its own key (the second turn's calls are not named as
    // the first's) and took effect once; the one cut short ran again.
    let session_key = |call: &str| format!("{SESSION}/{call}");
    assert_eq!(
        ledger.attempts.lock().expect("not poisoned").clone(),
        BTreeMap::from([
            (session_key("toolu_02_0_root"), 1),
            (session_key("toolu_05_0_root"), 2)
        ])
    );
    assert_eq!(
        ledger.effects.lock().expect("not poisoned").clone(),
        BTreeMap::from([
            (session_key("toolu_02_0_root"), 1),
            (session_key("toolu_05_0_root"), 1)
        ])
    );

    // The transcripts are the local root's, record for record: the
    // root's holds both turns once (the second worker cut the first
    // one's attempt off and went on after the first turn), and the second
    // turn's subagent is numbered after the first's.
    let local = transcripts(&local.sessions(), SESSION);
    let durable = transcripts(&first.sessions(), SESSION);
    assert_eq!(
        durable.keys().collect::<Vec<_>>(),
        [
            "root.0001-worker.jsonl",
            "root.0002-worker.jsonl",
            "root.jsonl"
        ]
    );
    assert_eq!(
        durable.keys().collect::<Vec<_>>(),
        local.keys().collect::<Vec<_>>()
    );
    for (file, lines) in &durable {
        assert_eq!(lines, &local[file], "{file}");
    }
    let kinds: Vec<&str> = durable["root.jsonl"]
        .iter()
        .filter_map(|r| r["kind"].as_str())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "finished").count(),
        2,
        "{kinds:?}"
    );
    drop(server);
}

/// Three turns, a bump in the first two.
fn three_turns() -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 1}}]},
            {"text": "one"},
            {"tool_calls": [{"name": "bump", "input": {"n": 2}}]},
            {"text": "two"},
            {"text": "three"}
        ]}]
    }})
}

/// The history `host`'s transcript of the session resumes into.
fn resumed_history(host: &TestHost) -> Vec<Message> {
    let (runtime, config) = host.open().expect("the project opens");
    Agent::resume(Arc::new(runtime), config, &session())
        .expect("the transcript reads back")
        .history()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_without_a_shared_folder_each_write_the_whole_conversation() {
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let local = TestHost::new(three_turns(), scratch.path().join("local"), Arc::default());
    let (runtime, config) = local.open().expect("the project opens");
    let local_agent = Agent::with_session_id(Arc::new(runtime), config, session());
    let mut local_histories = Vec::new();
    for prompt in ["first", "second", "third"] {
        local_agent.prompt(prompt).await.expect("the query ends");
        local_histories.push(comparable(&local_agent.history()));
    }

    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let first = Arc::new(TestHost::new(
        three_turns(),
        scratch.path().join("a"),
        Arc::clone(&ledger),
    ));
    let second = Arc::new(TestHost::new(
        three_turns(),
        scratch.path().join("b"),
        Arc::clone(&ledger),
    ));
    let workers = Takeover::start(&server, &first, &second).await;

    // Turn 1 on the first worker, turn 2 on the second, turn 3 on the
    // first again (whose transcript holds only turn 1).
    assert_eq!(turn(&server, "first").await.output, "one");
    assert_eq!(comparable(&resumed_history(&first)), local_histories[0]);
    workers.take_over();
    assert_eq!(turn(&server, "second").await.output, "two");
    assert_eq!(
        comparable(&resumed_history(&second)),
        local_histories[1],
        "the second worker's transcript holds turn 1 (from the state) and turn 2"
    );
    workers.give_back();
    assert_eq!(turn(&server, "third").await.output, "three");
    assert_eq!(
        comparable(&resumed_history(&first)),
        local_histories[2],
        "the first worker's transcript was written anew with all three turns"
    );
    let root = &transcripts(&first.sessions(), SESSION)["root.jsonl"];
    let headers = root.iter().filter(|r| r["kind"] == "header").count();
    assert_eq!(headers, 1, "{root:#?}");

    assert_eq!(
        ledger.effects.lock().expect("not poisoned").len(),
        2,
        "two bumps, two keys"
    );
    drop(server);
}
