//! Unit tests of transcripts: what the writer puts on disk reads back as
//! the same history; the reader ignores a torn tail, names the line of
//! garbage before it, and repairs what providers refuse.

use std::path::{Path, PathBuf};

use serde_json::json;
use zr_types::{AgentId, ContentBlock, Message, MessageRole, ToolResultContent, Usage};

use super::read::{Repairs, parse, read, read_header, repair};
use super::{State, Writer};
use crate::error::TranscriptError;
use zr_protocol::transcript::{Finished, Header, RecordRef, VERSION};

fn header() -> Header {
    Header {
        version: VERSION,
        session: "s-0000000000001-00000002".parse().unwrap(),
        agent: AgentId::root().child(1, "worker"),
        agent_type: "worker".to_owned(),
        parent: Some(AgentId::root()),
        definition_hash: Some("00000000000000ff".to_owned()),
        definition: None,
        permission_mode: None,
        system_prompt: "You are the worker.".to_owned(),
        model: "m".to_owned(),
        cwd: PathBuf::from("/tmp"),
        worktree: None,
        created_ms: 1,
        max_turns: 5,
        inherited_messages: 0,
        task: None,
        background: false,
        output_schema: None,
        depth_ceiling: None,
    }
}

fn line(record: &RecordRef<'_>) -> String {
    let mut text = serde_json::to_string(record).unwrap();
    text.push('\n');
    text
}

fn use_block(id: &str) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.to_owned(),
        name: "Read".to_owned(),
        input: json!({"file_path": "a"}),
    }
}

fn result_block(id: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.to_owned(),
        content: vec![ToolResultContent::Text {
            text: "contents".to_owned(),
        }],
        is_error: false,
        display: None,
    }
}

fn msg(role: MessageRole, content: Vec<ContentBlock>) -> Message {
    Message { role, content }
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text { text: t.to_owned() }
}

/// A conversation with one answered tool call.
fn conversation() -> Vec<Message> {
    vec![
        Message::user_text("look at a"),
        msg(
            MessageRole::Assistant,
            vec![text("looking"), use_block("t1")],
        ),
        msg(MessageRole::User, vec![result_block("t1")]),
        Message::assistant_text("a holds contents"),
    ]
}

fn file_of(history: &[Message]) -> String {
    let h = header();
    let mut out = line(&RecordRef::Header(&h));
    for message in history {
        out.push_str(&line(&RecordRef::Message { message, at_ms: 1 }));
    }
    out
}

fn parse_str(text: &str) -> Result<super::Loaded, TranscriptError> {
    parse(Path::new("t.jsonl"), text.as_bytes())
}

#[test]
fn records_read_back_as_the_history_they_wrote() {
    let loaded = parse_str(&file_of(&conversation())).unwrap();
    assert_eq!(loaded.header, header());
    assert_eq!(loaded.history, conversation());
    assert_eq!(loaded.records, 5);
    assert!(!loaded.torn);
    assert_eq!(loaded.repairs, Repairs::default());
    assert_eq!(loaded.finished, None, "no finished record: cut short");
}

#[test]
fn a_finished_record_counts_only_after_the_last_message() {
    let finished = Finished {
        status: "completed".to_owned(),
        output: "{\"n\": 1}".to_owned(),
        turns: 2,
        usage: Usage::default(),
        error: None,
        at_ms: Some(1_700_000_000_000),
        value: Some(serde_json::json!({"n": 1})),
    };
    let mut text = file_of(&conversation());
    text.push_str(&line(&RecordRef::Finished(&finished)));
    assert_eq!(parse_str(&text).unwrap().finished, Some(finished.clone()));
    let more = Message::user_text("and b?");
    text.push_str(&line(&RecordRef::Message {
        message: &more,
        at_ms: 1,
    }));
    let loaded = parse_str(&text).unwrap();
    assert_eq!(loaded.finished, None);
    assert_eq!(loaded.history.last(), Some(&more));
}

#[test]
fn a_failed_query_restores_the_history_and_stays_finished() {
    let finished = Finished {
        status: "failed".to_owned(),
        output: String::new(),
        turns: 1,
        usage: Usage::default(),
        error: None,
        at_ms: Some(1_700_000_000_000),
        value: None,
    };
    let mut text = file_of(&conversation());
    text.push_str(&line(&RecordRef::Finished(&finished)));
    let kept = &conversation()[..3];
    text.push_str(&line(&RecordRef::QueryFailed { history: kept }));
    let loaded = parse_str(&text).unwrap();
    assert_eq!(loaded.history, kept);
    assert_eq!(loaded.finished, Some(finished));
}

#[test]
fn a_torn_last_line_is_ignored_and_nothing_before_it_is_lost() {
    let whole = file_of(&conversation());
    let next = line(&RecordRef::Message {
        message: &Message::user_text("more"),
        at_ms: 1,
    });
    // Every cut inside the last record, its newline excluded.
    for cut in 1..next.len() {
        let text = format!("{whole}{}", &next[..cut]);
        let loaded = parse_str(&text).unwrap();
        assert!(loaded.torn, "cut at {cut}");
        assert_eq!(loaded.history, conversation(), "cut at {cut}");
        assert_eq!(loaded.valid_len, whole.len() as u64, "cut at {cut}");
    }
}

#[test]
fn invalid_json_on_the_last_complete_line_is_torn_too() {
    let text = format!("{}{{\"kind\": \"mess\n\n", file_of(&conversation()));
    let loaded = parse_str(&text).unwrap();
    assert!(loaded.torn);
    assert_eq!(loaded.history, conversation());
}

#[test]
fn garbage_in_the_middle_is_an_error_naming_file_and_line() {
    let whole = file_of(&conversation());
    let mut lines: Vec<&str> = whole.lines().collect();
    lines.insert(3, "{not json");
    let text = lines.join("\n") + "\n";
    let error = parse(Path::new("/x/root.jsonl"), text.as_bytes()).unwrap_err();
    assert!(
        matches!(&error, TranscriptError::InvalidLine { path, line: 4, .. } if path == Path::new("/x/root.jsonl")),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "transcript /x/root.jsonl, line 4: not a valid record"
    );
}

#[test]
fn a_file_without_a_header_or_with_two_is_refused() {
    let no_header = line(&RecordRef::Message {
        message: &Message::user_text("hi"),
        at_ms: 1,
    });
    assert!(matches!(
        parse_str(&no_header),
        Err(TranscriptError::MissingHeader { .. })
    ));
    assert!(matches!(
        parse_str(""),
        Err(TranscriptError::MissingHeader { .. })
    ));
    let torn_header = &file_of(&[])[..20];
    assert!(matches!(
        parse_str(torn_header),
        Err(TranscriptError::MissingHeader { .. })
    ));
    let twice = format!("{}{}", file_of(&[]), file_of(&[]));
    assert!(matches!(
        parse_str(&twice),
        Err(TranscriptError::SecondHeader { line: 2, .. })
    ));
    let mut newer = header();
    newer.version = VERSION + 1;
    assert!(matches!(
        parse_str(&line(&RecordRef::Header(&newer))),
        Err(TranscriptError::UnsupportedVersion {
            version: 3,
            supported: 2,
            ..
        })
    ));
}

#[test]
fn tool_calls_without_results_are_dropped_and_an_emptied_message_with_them() {
    // Killed while the calls ran: the answer is on disk, the results not.
    let mut history = vec![
        Message::user_text("look"),
        msg(
            MessageRole::Assistant,
            vec![text("looking"), use_block("t1")],
        ),
    ];
    let repairs = repair(&mut history);
    assert_eq!(
        history,
        vec![
            Message::user_text("look"),
            Message::assistant_text("looking")
        ]
    );
    assert_eq!(repairs.calls, 1);

    let mut history = vec![
        Message::user_text("look"),
        msg(
            MessageRole::Assistant,
            vec![use_block("t1"), use_block("t2")],
        ),
        msg(MessageRole::User, vec![result_block("t2")]),
        Message::user_text("then this"),
    ];
    let repairs = repair(&mut history);
    assert_eq!(
        history,
        vec![
            Message::user_text("look"),
            msg(MessageRole::Assistant, vec![use_block("t2")]),
            msg(
                MessageRole::User,
                vec![result_block("t2"), text("then this")]
            ),
        ]
    );
    assert_eq!((repairs.calls, repairs.merged), (1, 1));

    // Only orphans: the assistant message goes, the user messages around
    // it become one.
    let mut history = vec![
        Message::user_text("look"),
        msg(MessageRole::Assistant, vec![use_block("t1")]),
        Message::user_text("again"),
    ];
    repair(&mut history);
    assert_eq!(
        history,
        vec![msg(MessageRole::User, vec![text("look"), text("again")])]
    );
}

#[test]
fn results_without_their_call_and_empty_messages_are_dropped() {
    let mut history = vec![
        msg(MessageRole::User, vec![text("look"), text("")]),
        msg(MessageRole::Assistant, vec![]),
        msg(MessageRole::Assistant, vec![text("ok")]),
        msg(
            MessageRole::User,
            vec![result_block("ghost"), text("go on")],
        ),
        msg(MessageRole::Assistant, vec![text("")]),
    ];
    let repairs = repair(&mut history);
    assert_eq!(
        history,
        vec![
            Message::user_text("look"),
            Message::assistant_text("ok"),
            Message::user_text("go on"),
        ]
    );
    // Two empty texts, the message that was empty and the one left empty.
    assert_eq!((repairs.results, repairs.empty), (1, 4));
    assert!(repairs.any());
}

#[test]
fn a_valid_history_is_left_alone() {
    let mut history = conversation();
    assert_eq!(repair(&mut history), Repairs::default());
    assert_eq!(history, conversation());
}

fn writer(path: &Path) -> Writer {
    Writer {
        path: path.to_owned(),
        state: State::New,
        messages: 0,
        last: None,
        in_run: false,
        cut_short: false,
        claimed: false,
        ended: false,
        notify: None,
    }
}

#[test]
fn the_writer_appends_what_the_history_gained_and_replaces_what_it_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s/root.jsonl");
    let mut w = writer(&path);
    w.open_new(&header(), &[], 1).unwrap();
    let mut history = vec![Message::user_text("look at a")];
    w.sync(&history, 1).unwrap();
    history.extend(conversation().into_iter().skip(1));
    w.sync(&history, 1).unwrap();
    // A block added to the last message (push_user_text) is a record of
    // its own, merged when read.
    history.push(msg(MessageRole::User, vec![text("one")]));
    w.sync(&history, 1).unwrap();
    history.last_mut().unwrap().content.push(text("two"));
    w.sync(&history, 1).unwrap();
    w.sync(&history, 1).unwrap();
    let loaded = read(&path).unwrap();
    assert_eq!(loaded.history, history);
    assert_eq!(loaded.records, 7, "header, 5 messages, one added block");
    assert_eq!(read_header(&path).unwrap(), header());

    // A shorter history (compaction, a cancelled query) is written whole.
    let short = vec![Message::user_text("summary")];
    w.sync(&short, 1).unwrap();
    assert_eq!(read(&path).unwrap().history, short);
    let raw = std::fs::read_to_string(&path).unwrap();
    assert!(
        raw.lines()
            .last()
            .unwrap()
            .starts_with(r#"{"kind":"history_replaced""#)
    );
}

#[test]
fn a_new_writer_never_writes_into_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("root.jsonl");
    std::fs::write(&path, "someone else's\n").unwrap();
    let error = writer(&path).open_new(&header(), &[], 1).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "someone else's\n");
}

#[test]
fn a_transcript_appears_only_whole_and_a_partial_one_left_by_a_kill_is_written_anew() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("root.0005-fork.jsonl");
    let partial = dir.path().join("root.0005-fork.jsonl.partial");
    // What a kill between the partial file's creation and its link leaves.
    std::fs::write(&partial, "").unwrap();
    let mut w = writer(&path);
    w.open_new(&header(), &[Message::user_text("look at a")], 1)
        .unwrap();
    assert!(!partial.exists(), "the partial name is gone once linked");
    let loaded = read(&path).unwrap();
    assert_eq!(loaded.records, 2, "the header and the prompt, in one file");
    assert_eq!(loaded.history, vec![Message::user_text("look at a")]);
    // The writer goes on writing into the linked file.
    let mut history = vec![Message::user_text("look at a")];
    history.push(msg(MessageRole::Assistant, vec![text("done")]));
    w.sync(&history, 1).unwrap();
    assert_eq!(read(&path).unwrap().history, history);
    // Neither the session listing nor a resume takes the partial name for
    // an agent: both read `<agent>.jsonl` names only.
    assert!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .all(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
    );
}

fn block() -> impl proptest::strategy::Strategy<Value = ContentBlock> {
    use proptest::prelude::*;
    prop_oneof![
        Just(text("")),
        (0u8..4).prop_map(|n| text(&format!("words {n}"))),
        (0u8..3).prop_map(|n| use_block(&format!("t{n}"))),
        (0u8..3).prop_map(|n| result_block(&format!("t{n}"))),
    ]
}

fn history() -> impl proptest::strategy::Strategy<Value = Vec<Message>> {
    use proptest::prelude::*;
    proptest::collection::vec(
        (
            prop_oneof![Just(MessageRole::User), Just(MessageRole::Assistant)],
            proptest::collection::vec(block(), 0..4),
        )
            .prop_map(|(role, content)| Message { role, content }),
        0..8,
    )
}

/// What providers require, but for the first role.
fn valid(history: &[Message]) -> Result<(), String> {
    for (i, m) in history.iter().enumerate() {
        if m.content.is_empty() {
            return Err(format!("message {i} is empty"));
        }
        if i > 0 && history[i - 1].role == m.role {
            return Err(format!("message {i} has the role of the one before"));
        }
        let next = history.get(i + 1);
        let previous = i.checked_sub(1).map(|p| &history[p]);
        for b in &m.content {
            let ok = match b {
                ContentBlock::Text { text } => !text.is_empty(),
                ContentBlock::ToolUse { id, .. } => {
                    m.role == MessageRole::Assistant
                        && next.is_some_and(|n| super::read::results_of(n).contains(id))
                }
                ContentBlock::ToolResult { tool_use_id, .. } => {
                    m.role == MessageRole::User
                        && previous.is_some_and(|p| super::read::uses_of(p).contains(tool_use_id))
                }
                ContentBlock::Thinking { .. } => true,
            };
            if !ok {
                return Err(format!("message {i}: {b:?}"));
            }
        }
    }
    Ok(())
}

fn texts(history: &[Message]) -> Vec<String> {
    history
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::Text { text } if !text.is_empty() => Some(text.clone()),
            _ => None,
        })
        .collect()
}

proptest::proptest! {
    #[test]
    fn prop_repair_makes_any_history_valid_keeps_its_texts_and_is_idempotent(history in history()) {
        let mut repaired = history.clone();
        repair(&mut repaired);
        proptest::prop_assert_eq!(valid(&repaired), Ok(()));
        proptest::prop_assert_eq!(texts(&repaired), texts(&history));
        let mut again = repaired.clone();
        proptest::prop_assert_eq!(repair(&mut again), Repairs::default());
        proptest::prop_assert_eq!(again, repaired);
    }
}
