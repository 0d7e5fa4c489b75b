//! Tests of compaction: the split point, the summary request's room, cutting
//! oversized results on line and character boundaries, and the marker.

use std::path::Path;

use proptest::prelude::*;
use serde_json::json;
use zr_types::{ContentBlock, Message, MessageRole, ToolResultContent};

use super::cut::{Spill, cut, marker, text_len, text_len_bound, text_of};
use super::{fit, splice, split_point};

fn user(text: &str) -> Message {
    Message {
        role: MessageRole::User,
        content: vec![ContentBlock::Text { text: text.into() }],
    }
}

fn asks(id: &str) -> Message {
    Message {
        role: MessageRole::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: id.into(),
            name: "Look".into(),
            input: json!({}),
        }],
    }
}

fn says(text: &str) -> Message {
    Message {
        role: MessageRole::Assistant,
        content: vec![ContentBlock::Text { text: text.into() }],
    }
}

fn result(id: &str, text: &str) -> Message {
    Message {
        role: MessageRole::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: vec![ToolResultContent::Text { text: text.into() }],
            is_error: false,
            display: None,
        }],
    }
}

#[test]
fn the_split_never_separates_a_tool_use_from_its_result() {
    // 0 prompt, 1 use a, 2 result a, 3 use b, 4 result b
    let history = vec![
        user("go"),
        asks("a"),
        result("a", "A"),
        asks("b"),
        result("b", "B"),
    ];
    // Keeping 2: index 3 (the assistant's use of b) starts the kept part.
    assert_eq!(split_point(&history, 2), Some(3));
    // Keeping 1 would start at result b, which belongs to its use: the
    // split moves back to the use.
    assert_eq!(split_point(&history, 1), Some(3));
    // Keeping 3 starts at result a: back to use a.
    assert_eq!(split_point(&history, 3), Some(1));
    // Nothing older than the first use to summarise but the prompt.
    assert_eq!(split_point(&history, 4), Some(1));
    assert_eq!(split_point(&history, 5), None);
    assert_eq!(split_point(&history, 50), None);
}

#[test]
fn a_plain_user_message_can_start_the_kept_part() {
    // A second query's prompt after a finished answer.
    let history = vec![user("first"), says("done"), user("second")];
    assert_eq!(split_point(&history, 1), Some(2));
    assert_eq!(split_point(&history, 0), Some(2));
    assert_eq!(split_point(&[user("only")], 0), None);
}

#[test]
fn the_cut_keeps_whole_lines_when_it_can() {
    let text: String = (0..100).map(|i| format!("line {i:03}\n")).collect();
    // 9 bytes a line; limit 90: head share 60 (6 whole lines = 54), tail
    // share 30 (the last 3 lines = 27).
    let (head, tail) = cut(&text, 90);
    assert_eq!(
        head,
        "line 000\nline 001\nline 002\nline 003\nline 004\nline 005\n"
    );
    assert_eq!(tail, "line 097\nline 098\nline 099\n");
}

#[test]
fn the_cut_falls_back_to_character_boundaries() {
    // One long line of two-byte characters.
    let text = "é".repeat(100);
    let (head, tail) = cut(&text, 31);
    // Head share 21 -> 20 bytes (10 characters), tail share 10.
    assert_eq!(
        (head, tail),
        ("é".repeat(10).as_str(), "é".repeat(5).as_str())
    );
}

#[test]
fn the_marker_names_the_file_or_the_failure() {
    assert_eq!(
        marker(900, 1000, 12, Ok(Path::new("/s/tool-results/root-1-c.txt"))),
        "[... cut 900 of 1000 bytes here; the full output (12 lines) is in /s/tool-results/root-1-c.txt: read it with Read (offset and limit, a few hundred lines at a time) or search it with Grep ...]"
    );
    assert_eq!(
        marker(900, 1000, 12, Err("disk full")),
        "[... cut 900 of 1000 bytes here; the full output could not be saved (disk full) ...]"
    );
}

#[test]
fn a_resumed_session_never_writes_over_its_earlier_tool_results() {
    let dir = tempfile::tempdir().unwrap();
    let session: zr_types::SessionId = "s-0000000000001-00000002".parse().unwrap();
    let root = zr_types::AgentId::root();
    // Call ids repeat across processes with some providers (scripted,
    // local servers); a resumed session numbers its files from 1 again.
    let before = Spill::new(&session, Some(dir.path()))
        .write(&root, "call_0", b"before")
        .unwrap();
    let again = Spill::new(&session, Some(dir.path()));
    let after = again.write(&root, "call_0", b"after").unwrap();
    let next = again.write(&root, "call_1", b"next").unwrap();
    let folder = dir.path().join(session.as_str()).join("tool-results");
    assert_eq!(
        (before.clone(), after.clone(), next.clone()),
        (
            folder.join("root-1-call_0.txt"),
            folder.join("root-2-call_0.txt"),
            folder.join("root-3-call_1.txt")
        )
    );
    assert_eq!(std::fs::read(&before).unwrap(), b"before");
    assert_eq!(std::fs::read(&after).unwrap(), b"after");
    assert_eq!(std::fs::read(&next).unwrap(), b"next");
}

#[test]
fn fitting_leaves_out_the_oldest_tool_results_first() {
    let big = "x".repeat(4000);
    let mut messages = vec![
        user("go"),
        asks("a"),
        result("a", &big),
        asks("b"),
        result("b", &big),
    ];
    // Room for about one big result: only the older one goes.
    let left_out = fit(&mut messages, 1500);
    assert_eq!(left_out, 1);
    let texts: Vec<String> = messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => match content.as_slice() {
                [ToolResultContent::Text { text }] => Some(text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    // 4,027 bytes: the result's content as JSON.
    assert_eq!(
        texts[0],
        "[a result of 4027 bytes, left out of the summary request]"
    );
    assert!(texts[1] == big, "the newer result is kept whole");
    assert_eq!(texts.len(), 2);
    // Enough room: nothing changes.
    let before = messages.clone();
    assert_eq!(fit(&mut messages, 100_000), 0);
    assert_eq!(messages, before);
}

proptest! {
    /// Law: a cut keeps a prefix and a suffix of the text, on character
    /// boundaries, together at most the limit, and never overlapping.
    #[test]
    fn prop_a_cut_keeps_a_prefix_and_a_suffix_within_the_limit(
        pieces in proptest::collection::vec(
            proptest::sample::select(vec!["é", "a", "\n", "日本", "🦀"]),
            1..200,
        ),
        seed in 0usize..1000,
    ) {
        let text = pieces.concat();
        // Any limit below the text's length.
        let limit = seed % text.len();
        let (head, tail) = cut(&text, limit);
        prop_assert!(text.starts_with(head));
        prop_assert!(text.ends_with(tail));
        prop_assert!(head.len() + tail.len() <= limit);
        prop_assert!(head.len() + tail.len() < text.len());
    }
}

/// One exchange of a generated conversation: the assistant's text and
/// number of tool calls; after an answer without calls, whether the user
/// writes again (a new query).
fn exchange() -> impl Strategy<Value = (bool, usize, bool)> {
    (any::<bool>(), 0usize..3, any::<bool>())
}

/// A valid conversation that ends with the user's message, as before a
/// request.
fn conversation(exchanges: &[(bool, usize, bool)]) -> Vec<Message> {
    let mut history = vec![user("start")];
    for (n, &(text, calls, _)) in exchanges.iter().enumerate() {
        let mut content = Vec::new();
        if text || calls == 0 {
            content.push(ContentBlock::Text {
                text: format!("answer {n}"),
            });
        }
        let ids: Vec<String> = (0..calls).map(|i| format!("c{n}_{i}")).collect();
        for id in &ids {
            content.push(ContentBlock::ToolUse {
                id: id.clone(),
                name: "Look".into(),
                input: json!({}),
            });
        }
        history.push(Message {
            role: MessageRole::Assistant,
            content,
        });
        if ids.is_empty() {
            history.push(user(&format!("query {n}")));
        } else {
            history.push(Message {
                role: MessageRole::User,
                content: ids
                    .iter()
                    .map(|id| ContentBlock::ToolResult {
                        tool_use_id: id.clone(),
                        content: vec![ToolResultContent::Text { text: "r".into() }],
                        is_error: false,
                        display: None,
                    })
                    .collect(),
            });
        }
    }
    history
}

fn uses(message: &Message) -> Vec<&str> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect()
}

fn results(message: &Message) -> Vec<&str> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect()
}

proptest! {
    /// Law: compaction keeps a conversation valid (it starts with the
    /// user, roles alternate, every tool use is answered in the next
    /// message and every result answers a use in the one before) and keeps
    /// at least the last `keep` messages verbatim after the summary.
    #[test]
    fn prop_compaction_keeps_the_conversation_valid(
        exchanges in proptest::collection::vec(exchange(), 0..8),
        keep in 0usize..12,
    ) {
        let history = conversation(&exchanges);
        let Some(split) = split_point(&history, keep) else {
            // Only when nothing older than the kept part can go.
            prop_assert!(
                (1..=history.len().saturating_sub(keep)).all(|i| history.get(i).is_none_or(|m| !results(m).is_empty()))
            );
            return Ok(());
        };
        prop_assert!(split >= 1 && split + keep <= history.len());
        let mut compacted = history.clone();
        splice(&mut compacted, split, "SUMMARY".to_owned());
        prop_assert_eq!(compacted[0].role, MessageRole::User);
        prop_assert_eq!(&compacted[0].content[0], &ContentBlock::Text { text: "SUMMARY".into() });
        for pair in compacted.windows(2) {
            prop_assert_ne!(pair[0].role, pair[1].role);
            let mut asked = uses(&pair[0]);
            let mut answered = results(&pair[1]);
            asked.sort_unstable();
            answered.sort_unstable();
            prop_assert_eq!(asked, answered);
        }
        prop_assert!(results(&compacted[0]).is_empty());
        // The kept part is verbatim (its first message may have gained the
        // summary in front).
        let kept = &history[split..];
        let tail = &compacted[compacted.len() - kept.len()..];
        prop_assert_eq!(&tail[1..], &kept[1..]);
        prop_assert!(tail[0].content.ends_with(&kept[0].content));
    }
}

#[test]
fn a_results_length_is_measured_as_its_text_would_be() {
    let json = ToolResultContent::Json {
        value: json!({"results": [{"output": "é \"quoted\"\n", "turns": 2}], "ok": true}),
    };
    let text = ToolResultContent::Text {
        text: "two\nlines".to_owned(),
    };
    let image = ToolResultContent::Image {
        source: zr_types::ImageSource::Url {
            url: "http://127.0.0.1/a.png".to_owned(),
        },
    };
    for content in [
        vec![],
        vec![image.clone()],
        vec![json.clone()],
        vec![text.clone(), image, json.clone(), text],
    ] {
        assert_eq!(text_len(&content), text_of(&content).len(), "{content:?}");
        assert!(
            text_len_bound(&content) >= text_len(&content),
            "{content:?}"
        );
    }
    assert!(text_len(&[json]) > 20);
}

/// Any JSON value: numbers of every kind, strings with characters that
/// need escapes, nested arrays and objects.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|n| json!(n)),
        any::<String>().prop_map(serde_json::Value::String),
        "[\u{0}-\u{1f}\"\\\\]{0,8}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
            proptest::collection::btree_map(any::<String>(), inner, 0..8)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Law: the bound that spares a result's exact measure is never below
    /// it, so a result it passes is within the limit.
    #[test]
    fn prop_the_length_bound_is_never_below_the_length(value in any_json(), text in ".{0,40}") {
        let content = vec![
            ToolResultContent::Json { value },
            ToolResultContent::Text { text },
        ];
        prop_assert!(text_len_bound(&content) >= text_len(&content));
        prop_assert!(text_len_bound(&content[..1]) >= text_len(&content[..1]));
    }
}
