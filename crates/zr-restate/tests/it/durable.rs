//! A session on a real Restate server: a worker dies right after a tool's
//! effect, another takes the turn over and replays it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::Agent;
use zr_restate::SessionHost;
use zr_types::SessionId;

use crate::host::{Ledger, TestHost};
use crate::workers::{Takeover, answer, crashed, submit};
use zr_test_support::restate::RestateServer;

const SESSION: &str = "s-0000000000001-00000001";

fn tasks(n: usize) -> Value {
    let tasks: Vec<Value> = (0..n)
        .map(|i| json!({"description": format!("task {i}"), "prompt": format!("do task number {i}"), "subagent_type": "worker"}))
        .collect();
    json!({ "tasks": tasks })
}

/// The root bumps, fans out to three workers, bumps again (the call a
/// worker dies in), and answers.
fn script() -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 1}}]},
            {"tool_calls": [{"name": "MultiTask", "input": tasks(3)}]},
            {"tool_calls": [{"name": "bump", "input": {"n": 2, "crash": true}}]},
            {"text": "all done"}
        ]}],
        "worker": [{"turns": [{"text": "worker done"}]}]
    }})
}

/// Every transcript of `session` under `sessions`: file name -> lines,
/// with what differs between any two runs taken out: time stamps and
/// durations, the folders, a report's text (it shows durations) and the
/// input token counts (the scripted model counts the durations' digits).
pub(crate) fn transcripts(sessions: &Path, session: &str) -> BTreeMap<String, Vec<Value>> {
    let dir = sessions.join(session);
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("a transcript");
        let lines = text
            .lines()
            .map(|line| {
                let mut value: Value = serde_json::from_str(line).expect("a JSON line");
                strip_times(&mut value);
                value
            })
            .collect();
        files.insert(
            path.file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned(),
            lines,
        );
    }
    files
}

pub(crate) fn strip_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| {
                !k.ends_with("_ms") && !["cwd", "display", "input_tokens"].contains(&k.as_str())
            });
            map.values_mut().for_each(strip_times);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_times),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_dying_after_an_effect_costs_nothing_but_that_step() {
    zr_test_support::restate::log_to_test();
    let scratch = tempfile::tempdir().expect("a temporary folder");

    // The same project run locally: the answer to compare with.
    let local = TestHost::new(script(), scratch.path().join("local"), Arc::default());
    let (runtime, config) = local.open().expect("the project opens");
    let session: SessionId = SESSION.parse().expect("a session id");
    let local_agent = Agent::with_session_id(Arc::new(runtime), config, session);
    let expected = local_agent.prompt("go").await.expect("the local run ends");
    assert_eq!(expected.output, "all done");

    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let (first, second, crash) = TestHost::crashing_pair(
        &script(),
        scratch.path().join("a"),
        scratch.path().join("b"),
        &ledger,
    );
    let workers = Takeover::start(&server, &first, &second).await;

    let turn = submit(&server, SESSION, "go");
    crashed(
        &server,
        &crash,
        "the first worker never reached the second bump",
    )
    .await;
    workers.take_over();
    let answer = answer(&server, turn, Duration::from_secs(120)).await;
    assert_eq!(
        answer.output, expected.output,
        "the same answer as the local run"
    );
    assert_eq!(answer.turns, expected.turns);

    let attempts = ledger.attempts.lock().expect("not poisoned").clone();
    let effects = ledger.effects.lock().expect("not poisoned").clone();
    let first_key = format!("{SESSION}/toolu_01_0_root");
    let crash_key = format!("{SESSION}/toolu_03_0_root");
    assert_eq!(
        attempts,
        BTreeMap::from([(first_key.clone(), 1), (crash_key.clone(), 2)]),
        "the first bump ran once; the one cut short ran again, with the same key"
    );
    assert_eq!(
        effects,
        BTreeMap::from([(first_key, 1), (crash_key, 1)]),
        "each effect once"
    );

    // The first worker made the first three root requests and the three
    // workers' ones; the second only the root's last: nothing before the
    // crash was asked again.
    assert_eq!(first.requests.load(Ordering::SeqCst), 6);
    assert_eq!(second.requests.load(Ordering::SeqCst), 1);

    // The transcripts are the local run's, record for record (time
    // stamps and folders aside), none twice: the root's as the second
    // worker wrote it from its start, the subagents' as the first worker
    // wrote them (the second never ran them again).
    let local = transcripts(&local.sessions(), SESSION);
    let mut durable = transcripts(&first.sessions(), SESSION);
    let root = transcripts(&second.sessions(), SESSION);
    assert_eq!(
        root.keys().collect::<Vec<_>>(),
        ["root.jsonl"],
        "the second worker wrote only the root's"
    );
    durable.extend(root);
    assert_eq!(
        durable.keys().collect::<Vec<_>>(),
        local.keys().collect::<Vec<_>>()
    );
    for (file, lines) in &durable {
        assert_eq!(lines, &local[file], "{file}");
    }
    drop(server);
}
