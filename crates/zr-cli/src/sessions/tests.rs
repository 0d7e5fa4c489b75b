//! Reading transcripts tolerantly, statuses and costs.

use std::path::Path;

use super::view::started_from_id;
use super::*;

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const HEADER: &str = r#"{"kind":"header","version":1,"session":"s-0000000000001-00000000","agent":"root","agent_type":"root","parent":null,"system_prompt":"p","model":"claude-sonnet-4-5","cwd":"/","created_ms":1,"max_turns":5}"#;
const PROMPT: &str = r#"{"kind":"message","message":{"role":"user","content":[{"type":"text","text":"first line\nsecond"}]}}"#;
const REPLY: &str =
    r#"{"kind":"message","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}"#;
const FINISHED: &str = r#"{"kind":"finished","status":"completed","output":"ok","turns":1,"usage":{"input_tokens":1000000,"output_tokens":100000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}"#;

#[test]
fn a_torn_last_line_is_ignored_and_a_broken_line_warns() {
    let dir = tempfile::tempdir().unwrap();
    let done = "s-0000000000002-00000000";
    let cut = "s-0000000000003-00000000";
    write(
        dir.path(),
        &format!("{done}/root.jsonl"),
        &format!("{HEADER}\n{PROMPT}\n{REPLY}\n{FINISHED}\n{{\"kind\":\"mess"),
    );
    write(
        dir.path(),
        &format!("{cut}/root.jsonl"),
        &format!("{HEADER}\n{PROMPT}\nnot json\n{REPLY}\n"),
    );
    let (sessions, warnings) = list(dir.path(), dir.path());
    assert_eq!(
        warnings,
        [format!(
            "{cut}/root.jsonl:3: not a transcript record (expected ident at line 1 column 2); the rest of this file is ignored"
        )]
    );
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0].id, cut, "newest first");
    assert_eq!(sessions[0].status, "interrupted");
    assert_eq!(sessions[0].turns, 0);
    assert_eq!(sessions[0].cost_usd, Some(0.0));
    assert_eq!(sessions[1].status, "completed");
    assert_eq!(sessions[1].prompt, "first line\nsecond");
    assert_eq!(sessions[1].turns, 1);
    assert_eq!(sessions[1].usage.total(), 1_100_000);
    // 1M input at $3 + 0.1M output at $15.
    assert_eq!(format_cost(sessions[1].cost_usd), "$4.5000");
    assert_eq!(sessions[1].agents, ["root"]);
}

#[test]
fn a_fork_counts_only_its_own_turns() {
    let dir = tempfile::tempdir().unwrap();
    let id = "s-0000000000004-00000000";
    write(
        dir.path(),
        &format!("{id}/root.jsonl"),
        &format!("{HEADER}\n{PROMPT}\n{REPLY}\n{FINISHED}\n"),
    );
    // The fork starts with the root's prompt and reply (inherited), then
    // its task, then one reply of its own.
    let fork_header = HEADER
        .replace(
            r#""agent":"root","agent_type":"root","parent":null"#,
            r#""agent":"root.0001-fork","agent_type":"fork","parent":"root""#,
        )
        .replace(
            r#""max_turns":5}"#,
            r#""max_turns":2,"inherited_messages":2}"#,
        );
    assert!(fork_header.contains("inherited_messages"), "{fork_header}");
    write(
        dir.path(),
        &format!("{id}/root.0001-fork.jsonl"),
        &format!("{fork_header}\n{PROMPT}\n{REPLY}\n{PROMPT}\n{REPLY}\n{FINISHED}\n"),
    );
    let (sessions, warnings) = list(dir.path(), dir.path());
    assert_eq!(warnings, Vec::<String>::new());
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].agents.len(), 2, "{:?}", sessions[0].agents);
    assert_eq!(
        sessions[0].turns, 2,
        "the root's one turn and the fork's own one, not the inherited reply"
    );
}

#[test]
fn an_unknown_model_with_tokens_has_no_cost() {
    let dir = tempfile::tempdir().unwrap();
    let header = HEADER.replace("claude-sonnet-4-5", "my-local-model");
    write(
        dir.path(),
        "s-0000000000002-00000000/root.jsonl",
        &format!("{header}\n{PROMPT}\n{REPLY}\n{FINISHED}\n"),
    );
    let (sessions, _) = list(dir.path(), dir.path());
    assert_eq!(sessions[0].cost_usd, None);
    assert_eq!(format_cost(sessions[0].cost_usd), "-");
}

#[test]
fn session_ids_give_their_start_time() {
    assert_eq!(
        started_from_id("s-0019ad5e5a3c0-1234abcd"),
        Some(0x19ad5e5a3c0)
    );
    assert_eq!(format_started(Some(0)), "1970-01-01 00:00:00");
    assert_eq!(started_from_id("nope"), None);
}
