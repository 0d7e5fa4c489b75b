//! A root's snapshot (`Agent::snapshot`) given to a new root of the same
//! session (`Agent::from_snapshot`), as a durable backend does between
//! turns: the conversation and the loaded tools go on, and the root's
//! transcript holds every query's records once, whether it was written
//! on this machine or not.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use zr_engine::{Agent, AgentConfig, RootSnapshot};
use zr_types::{Message, SessionId};

use crate::support::{Echo, Harness, record_kinds, tool_names, with_db_query};

/// The root loads a deferred tool and answers without calling it; the
/// next query calls it.
fn loads_then_calls() -> (Harness, AgentConfig) {
    with_db_query(
        &json!({"agents": {"root": [{"turns": [
            {"tool_calls": [{"name": "FindTool", "input": {"query": "select:mcp__db__query"}}]},
            {"text": "loaded"},
            {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 2}}]},
            {"text": "again"}
        ]}]}}),
        Arc::new(Echo),
    )
}

/// `snapshot` through JSON, as a durable backend stores it.
fn stored(snapshot: &RootSnapshot) -> RootSnapshot {
    serde_json::from_value(serde_json::to_value(snapshot).unwrap()).unwrap()
}

/// The history the transcripts in `sessions` resume `session` into.
fn resumed(
    h: &Harness,
    config: &AgentConfig,
    session: &SessionId,
    sessions: &Path,
) -> Vec<Message> {
    let mut config = config.clone();
    config.sessions_dir = Some(sessions.to_owned());
    Agent::resume(Arc::clone(&h.runtime), config, session)
        .unwrap()
        .history()
}

#[tokio::test]
async fn a_root_from_a_snapshot_goes_on_and_cuts_off_what_a_later_attempt_wrote() {
    let (h, mut config) = loads_then_calls();
    let sessions = h.dir.path().join("sessions");
    config.sessions_dir = Some(sessions.clone());
    let first = h.agent(config.clone());
    assert_eq!(first.prompt("go").await.unwrap().output, "loaded");
    let snapshot = first.snapshot().expect("no query runs");
    let session = first.session_id().clone();
    let path = sessions.join(format!("{session}/root.jsonl"));
    assert_eq!(snapshot.history, first.history());
    assert_eq!(
        snapshot
            .loaded
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["mcp__db__query"]
    );
    drop(first);
    // An attempt of the next turn wrote a record, then its worker was
    // given up on (it still holds the file open).
    let mut zombie = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let lost = json!({"kind": "message", "at_ms": 1, "message": {"role": "user", "content": [{"type": "text", "text": "a lost attempt"}]}});
    writeln!(zombie, "{lost}").unwrap();

    let second = Agent::from_snapshot(
        Arc::clone(&h.runtime),
        config.clone(),
        session.clone(),
        stored(&snapshot),
    );
    assert_eq!(second.prompt("more").await.unwrap().output, "again");
    // The given-up attempt writes again: not into the new transcript.
    writeln!(zombie, "{lost}").unwrap();
    drop(zombie);
    let requests = h.provider.of_type("root");
    let mut expected = snapshot.history.clone();
    expected.push(Message::user_text("more"));
    assert_eq!(*requests[2].messages, expected, "the conversation goes on");
    assert!(
        tool_names(&requests[2]).contains(&"mcp__db__query".to_owned()),
        "the tool loaded (and never called) in the first query is still advertised"
    );

    // One header, each query's records once, nothing of the lost attempt.
    let kinds = record_kinds(&path);
    let count = |kind: &str| kinds.iter().filter(|k| *k == kind).count();
    assert_eq!((count("header"), count("finished")), (1, 2), "{kinds:?}");
    assert!(
        !std::fs::read_to_string(&path)
            .unwrap()
            .contains("a lost attempt")
    );
    assert_eq!(resumed(&h, &config, &session, &sessions), second.history());
}

#[tokio::test]
async fn a_snapshot_from_another_machine_writes_the_transcript_anew() {
    let (h, mut config) = loads_then_calls();
    config.sessions_dir = Some(h.dir.path().join("here"));
    let first = h.agent(config.clone());
    assert_eq!(first.prompt("go").await.unwrap().output, "loaded");
    let snapshot = first.snapshot().expect("no query runs");
    let session = first.session_id().clone();
    let here =
        std::fs::read_to_string(h.dir.path().join(format!("here/{session}/root.jsonl"))).unwrap();
    drop(first);

    // The other machine holds a shorter transcript of the session (the
    // first query cut short there): not the snapshot's.
    let there = h.dir.path().join("there");
    std::fs::create_dir_all(there.join(session.as_str())).unwrap();
    let stale: String = here.split_inclusive('\n').take(2).collect();
    std::fs::write(there.join(format!("{session}/root.jsonl")), stale).unwrap();
    config.sessions_dir = Some(there.clone());
    let second = Agent::from_snapshot(
        Arc::clone(&h.runtime),
        config.clone(),
        session.clone(),
        stored(&snapshot),
    );
    assert_eq!(second.prompt("more").await.unwrap().output, "again");

    let kinds = record_kinds(&there.join(format!("{session}/root.jsonl")));
    let count = |kind: &str| kinds.iter().filter(|k| *k == kind).count();
    assert_eq!((count("header"), count("finished")), (1, 1), "{kinds:?}");
    assert_eq!(resumed(&h, &config, &session, &there), second.history());
    assert_eq!(
        second.history().len(),
        8,
        "both queries (four messages each), once"
    );
}

#[tokio::test]
async fn a_query_whose_snapshot_was_never_kept_is_cut_off_and_runs_again() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"text": "one"},
        {"text": "two"},
        {"text": "two again"}
    ]}]}}));
    let sessions = h.dir.path().join("sessions");
    let mut config = AgentConfig::new("root");
    config.sessions_dir = Some(sessions.clone());
    let first = h.agent(config.clone());
    assert_eq!(first.prompt("first").await.unwrap().output, "one");
    let kept = stored(&first.snapshot().expect("no query runs"));
    // The second query finished on disk, but its snapshot was lost (the
    // worker died before the backend stored it).
    assert_eq!(first.prompt("second").await.unwrap().output, "two");
    let session = first.session_id().clone();
    drop(first);
    let path = sessions.join(format!("{session}/root.jsonl"));
    assert_eq!(
        record_kinds(&path)
            .iter()
            .filter(|k| *k == "finished")
            .count(),
        2
    );

    let again = Agent::from_snapshot(
        Arc::clone(&h.runtime),
        config.clone(),
        session.clone(),
        kept,
    );
    assert_eq!(again.prompt("second").await.unwrap().output, "two again");
    let kinds = record_kinds(&path);
    let count = |kind: &str| kinds.iter().filter(|k| *k == kind).count();
    assert_eq!((count("header"), count("finished")), (1, 2), "{kinds:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains(r#""text":"two""#),
        "the lost query's answer is cut off: {text}"
    );
    assert_eq!(resumed(&h, &config, &session, &sessions), again.history());
}
