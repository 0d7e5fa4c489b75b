//! The layer's records of spans made as the engine makes them: the tree
//! (skipping spans it does not export), names, kinds, status, content,
//! the finish reasons, fields recorded later, and events.

use std::sync::Arc;

use tracing::Level;
use tracing::field::Empty;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;

use super::*;
use crate::record::decoded;

/// Keeps the records the layer hands over.
#[derive(Default)]
struct Records(std::sync::Mutex<Vec<SpanRecord>>);

impl SpanSink for Records {
    fn push(&self, span: SpanRecord) {
        self.0.lock().unwrap().push(span);
    }
}

/// Runs `body` under a subscriber with the layer alone and returns the
/// records it handed over, in the order the spans closed.
fn records(capture_content: bool, body: impl FnOnce()) -> Vec<SpanRecord> {
    let queue = Arc::new(Records::default());
    let layer = ExportLayer {
        sink: Arc::clone(&queue) as Arc<dyn SpanSink>,
        ids: Arc::new(Ids::with_seed(7)),
        capture_content,
    };
    let content = if capture_content {
        LevelFilter::INFO
    } else {
        LevelFilter::OFF
    };
    let targets = Targets::new()
        .with_target("gen_ai", Level::INFO)
        .with_target("gen_ai_content", content);
    let subscriber = tracing_subscriber::registry().with(layer.with_filter(targets));
    tracing::subscriber::with_default(subscriber, body);
    std::mem::take(&mut *queue.0.lock().unwrap())
}

fn find<'a>(records: &'a [SpanRecord], name: &str) -> &'a SpanRecord {
    records
        .iter()
        .find(|r| {
            let (prefix, suffix) = r.name_parts();
            match suffix {
                Some(suffix) => format!("{prefix} {suffix}") == name,
                None => prefix == name,
            }
        })
        .unwrap_or_else(|| panic!("no span {name}"))
}

/// `key`'s value, as text.
fn attr(span: &SpanRecord, key: &str) -> Option<String> {
    decoded(span.attributes(), false)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

fn session_with_a_subagent() {
    let session = tracing::info_span!(target: "gen_ai", parent: None, "session",
        gen_ai.conversation.id = %"s-1");
    let root = tracing::info_span!(target: "gen_ai", parent: &session, "invoke_agent",
        gen_ai.agent.name = "root", zr.task.status = Empty, gen_ai.usage.input_tokens = Empty);
    let _root = root.enter();
    let call = tracing::info_span!(target: "gen_ai", "execute_tool",
        gen_ai.tool.name = "Task", zr.tool.status = Empty, otel.status_code = Empty);
    {
        let _call = call.enter();
        // A span of another target between the call and its subagent.
        let local = tracing::info_span!(target: "zr_engine", "local");
        let _local = local.enter();
        let worker = tracing::info_span!(target: "gen_ai", "invoke_agent",
            gen_ai.agent.name = "worker", zr.agent.background = true);
        let chat = tracing::info_span!(target: "gen_ai", parent: &worker, "chat",
            otel.kind = "client", gen_ai.request.model = "m-1",
            gen_ai.response.finish_reasons = Empty,
            gen_ai.input.messages = Empty,
            error.type = Empty, otel.status_code = Empty, otel.status_description = Empty);
        chat.record("gen_ai.input.messages", "[secret]");
        chat.in_scope(|| {
            tracing::event!(target: "gen_ai", Level::INFO,
                zr.retry.attempt = 1_u32, zr.retry.reason = "HTTP 429", message = "retry");
        });
        chat.record("gen_ai.response.finish_reasons", "end_turn");
        chat.record("error.type", "timeout");
        chat.record("otel.status_code", "ERROR");
        chat.record("otel.status_description", "the stream ended early");
    }
    call.record("zr.tool.status", "ok");
    root.record("gen_ai.usage.input_tokens", u64::MAX);
    root.record("zr.task.status", "failed");
    root.record("zr.task.status", "completed");
}

#[test]
fn the_tree_skips_spans_of_other_targets_and_a_session_is_one_trace() {
    let records = records(false, session_with_a_subagent);
    let names: Vec<(&str, Option<&str>)> = records.iter().map(SpanRecord::name_parts).collect();
    assert_eq!(
        names,
        [
            ("chat", Some("m-1")),
            ("invoke_agent", Some("worker")),
            ("execute_tool", Some("Task")),
            ("invoke_agent", Some("root")),
            ("session", None),
        ],
        "closed in this order; the `local` span is not exported"
    );
    let session = find(&records, "session");
    let root = find(&records, "invoke_agent root");
    let call = find(&records, "execute_tool Task");
    let worker = find(&records, "invoke_agent worker");
    let chat = find(&records, "chat m-1");
    assert_eq!(session.parent_id, 0);
    assert_eq!(root.parent_id, session.span_id);
    assert_eq!(call.parent_id, root.span_id);
    assert_eq!(worker.parent_id, call.span_id, "past the local span");
    assert_eq!(chat.parent_id, worker.span_id);
    assert!(records.iter().all(|r| r.trace_id == session.trace_id));
    assert!(records.iter().all(|r| r.start <= r.end && r.start > 0));

    let two = self::records(false, || {
        drop(tracing::info_span!(target: "gen_ai", parent: None, "session"));
        drop(tracing::info_span!(target: "gen_ai", parent: None, "session"));
    });
    assert_ne!(
        two[0].trace_id, two[1].trace_id,
        "another session, another trace"
    );
}

#[test]
fn otel_fields_become_kind_status_and_names() {
    let records = records(false, session_with_a_subagent);
    let chat = find(&records, "chat m-1");
    assert_eq!(chat.kind, Kind::Client);
    assert_eq!(chat.status, StatusCode::Error);
    assert_eq!(
        chat.description.map(|d| chat.str(d)),
        Some("the stream ended early")
    );
    assert_eq!(attr(chat, "error.type").as_deref(), Some("timeout"));
    assert_eq!(
        attr(chat, "otel.kind"),
        None,
        "a property, not an attribute"
    );
    assert_eq!(find(&records, "session").kind, Kind::Internal);
    assert_eq!(
        find(&records, "execute_tool Task").status,
        StatusCode::Unset
    );

    let given = self::records(false, || {
        drop(tracing::info_span!(target: "gen_ai", "execute_tool",
            gen_ai.tool.name = "Bash", otel.name = "run Bash"));
    });
    assert_eq!(given[0].name_parts(), ("run Bash", None));
}

#[test]
fn fields_are_typed_and_a_field_recorded_again_keeps_the_last_value() {
    let records = records(false, session_with_a_subagent);
    let root = find(&records, "invoke_agent root");
    let statuses = decoded(root.attributes(), false)
        .iter()
        .filter(|(k, _)| k == "zr.task.status")
        .count();
    assert_eq!(statuses, 1);
    assert_eq!(attr(root, "zr.task.status").as_deref(), Some("completed"));
    assert_eq!(
        attr(root, "gen_ai.usage.input_tokens"),
        Some(u64::MAX.to_string()),
        "a u64 beyond i64 is sent as its digits"
    );
    let worker = find(&records, "invoke_agent worker");
    assert_eq!(
        decoded(worker.attributes(), false)[1],
        ("zr.agent.background".to_owned(), "true".to_owned())
    );
    assert_eq!(
        attr(find(&records, "session"), "gen_ai.conversation.id").as_deref(),
        Some("s-1"),
        "a `%` field, written with its Display"
    );
    let chat = find(&records, "chat m-1");
    assert_eq!(
        attr(chat, "gen_ai.response.finish_reasons").as_deref(),
        Some("[end_turn]")
    );
}

#[test]
fn events_land_on_their_span_named_by_their_message() {
    let records = records(false, session_with_a_subagent);
    let chat = find(&records, "chat m-1");
    let [retry] = &chat.events[..] else {
        panic!("one event: {:?}", chat.events);
    };
    let EventName::Message(name) = retry.name else {
        panic!("named by its message: {retry:?}");
    };
    assert_eq!(chat.str(name), "retry");
    assert_eq!(
        decoded(&retry.attributes, true),
        [
            ("zr.retry.attempt".to_owned(), "1".to_owned()),
            ("zr.retry.reason".to_owned(), "HTTP 429".to_owned())
        ]
    );
    assert!(retry.time >= chat.start);
}

#[test]
fn content_is_kept_only_when_asked_for() {
    let without = records(false, session_with_a_subagent);
    assert_eq!(
        attr(find(&without, "chat m-1"), "gen_ai.input.messages"),
        None
    );
    let with = records(true, session_with_a_subagent);
    assert_eq!(
        attr(find(&with, "chat m-1"), "gen_ai.input.messages").as_deref(),
        Some("[secret]")
    );
}
