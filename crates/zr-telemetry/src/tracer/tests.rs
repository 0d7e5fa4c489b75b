//! The tracer's records of spans as the engine starts and ends them: the
//! tree and its traces, names, kinds, status, attributes set later (a key
//! set again keeps its last value), events, and a parent that ends after
//! its children.

use std::sync::Arc;

use zr_engine::AttributeValue;

use super::*;
use crate::record::decoded;

/// Keeps the records the tracer hands over, in the order the spans ended.
#[derive(Default)]
struct Records(Mutex<Vec<SpanRecord>>);

impl SpanSink for Records {
    fn push(&self, span: &SpanRecord) {
        self.0.lock().unwrap().push(span.clone());
    }
}

fn tracer() -> (ExportTracer, Arc<Records>) {
    let records = Arc::new(Records::default());
    let tracer = ExportTracer {
        sink: Arc::clone(&records) as Arc<dyn SpanSink>,
        ids: Arc::new(Ids::with_seed(7)),
        capture_content: false,
    };
    (tracer, records)
}

const fn str(key: &'static str, value: &'static str) -> Attribute<'static> {
    Attribute {
        key,
        value: AttributeValue::Str(value),
    }
}

fn start(
    tracer: &ExportTracer,
    parent: Option<&Arc<dyn TraceSpan>>,
    operation: &'static str,
    kind: SpanKind,
    attributes: &[Attribute<'_>],
) -> Arc<dyn TraceSpan> {
    tracer.start(
        parent,
        &SpanStart {
            operation,
            kind,
            attributes,
        },
    )
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

/// A session, its root, a Task call, the subagent and its model request,
/// as the engine reports them; the records in the order they ended.
fn session_with_a_subagent() -> Vec<SpanRecord> {
    let (tracer, records) = tracer();
    let internal = SpanKind::Internal;
    let session = start(
        &tracer,
        None,
        "session",
        internal,
        &[str("gen_ai.conversation.id", "s-1")],
    );
    let root = start(
        &tracer,
        Some(&session),
        "invoke_agent",
        internal,
        &[
            str("gen_ai.operation.name", "invoke_agent"),
            str("gen_ai.agent.name", "root"),
        ],
    );
    drop(session);
    let call = start(
        &tracer,
        Some(&root),
        "execute_tool",
        internal,
        &[str("gen_ai.tool.name", "Task")],
    );
    let worker = start(
        &tracer,
        Some(&call),
        "invoke_agent",
        internal,
        &[
            str("gen_ai.agent.name", "worker"),
            Attribute {
                key: "zr.agent.background",
                value: AttributeValue::Bool(true),
            },
        ],
    );
    let chat = start(
        &tracer,
        Some(&worker),
        "chat",
        SpanKind::Client,
        &[str("gen_ai.request.model", "m-1")],
    );
    chat.add_event(
        "retry",
        &[
            Attribute {
                key: "zr.retry.attempt",
                value: AttributeValue::I64(1),
            },
            str("zr.retry.reason", "HTTP 429"),
        ],
    );
    chat.set(&[Attribute {
        key: "gen_ai.response.finish_reasons",
        value: AttributeValue::StrArray(&["end_turn"]),
    }]);
    chat.set(&[str("error.type", "timeout")]);
    chat.set_error(Some("the stream ended early"));
    drop(chat);
    drop(worker);
    call.set(&[str("zr.tool.status", "ok")]);
    drop(call);
    root.set(&[
        str("zr.task.status", "completed"),
        Attribute {
            key: "gen_ai.usage.input_tokens",
            value: AttributeValue::I64(12),
        },
    ]);
    root.set(&[str("zr.task.status", "failed")]);
    drop(root);
    std::mem::take(&mut *records.0.lock().unwrap())
}

#[test]
fn a_session_is_one_trace_and_a_parent_ends_after_its_children() {
    let records = session_with_a_subagent();
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
        "the session's handle was dropped first, yet it ended last"
    );
    let session = find(&records, "session");
    let root = find(&records, "invoke_agent root");
    let call = find(&records, "execute_tool Task");
    let worker = find(&records, "invoke_agent worker");
    let chat = find(&records, "chat m-1");
    assert_eq!(session.parent_id, 0);
    assert_eq!(root.parent_id, session.span_id);
    assert_eq!(call.parent_id, root.span_id);
    assert_eq!(worker.parent_id, call.span_id);
    assert_eq!(chat.parent_id, worker.span_id);
    assert!(records.iter().all(|r| r.trace_id == session.trace_id));
    assert!(records.iter().all(|r| r.start <= r.end && r.start > 0));

    let (tracer, records) = tracer();
    drop(start(&tracer, None, "session", SpanKind::Internal, &[]));
    drop(start(&tracer, None, "session", SpanKind::Internal, &[]));
    let two = records.0.lock().unwrap();
    assert_ne!(
        two[0].trace_id, two[1].trace_id,
        "another session, another trace"
    );
}

#[test]
fn kinds_status_and_typed_attributes() {
    let records = session_with_a_subagent();
    let chat = find(&records, "chat m-1");
    assert_eq!(chat.kind, Kind::Client);
    assert_eq!(chat.status, StatusCode::Error);
    assert_eq!(
        chat.description.map(|d| chat.str(d)),
        Some("the stream ended early")
    );
    assert_eq!(attr(chat, "error.type").as_deref(), Some("timeout"));
    assert_eq!(
        attr(chat, "gen_ai.response.finish_reasons").as_deref(),
        Some("[end_turn]")
    );
    assert_eq!(find(&records, "session").kind, Kind::Internal);
    assert_eq!(
        find(&records, "execute_tool Task").status,
        StatusCode::Unset
    );
    let worker = find(&records, "invoke_agent worker");
    assert_eq!(
        decoded(worker.attributes(), false)[1],
        ("zr.agent.background".to_owned(), "true".to_owned())
    );
}

#[test]
fn a_key_set_again_keeps_its_last_value_once() {
    let records = session_with_a_subagent();
    let root = find(&records, "invoke_agent root");
    let statuses = decoded(root.attributes(), false)
        .iter()
        .filter(|(k, _)| k == "zr.task.status")
        .count();
    assert_eq!(statuses, 1);
    assert_eq!(attr(root, "zr.task.status").as_deref(), Some("failed"));
    assert_eq!(
        attr(root, "gen_ai.usage.input_tokens").as_deref(),
        Some("12")
    );
    assert_eq!(root.name_parts(), ("invoke_agent", Some("root")));
}

#[test]
fn keys_beyond_those_remembered_are_still_set_once() {
    let (tracer, records) = tracer();
    let span = start(
        &tracer,
        None,
        "execute_tool",
        SpanKind::Internal,
        &[str("gen_ai.tool.name", "Bash")],
    );
    const KEYS: [&str; 16] = [
        "k00", "k01", "k02", "k03", "k04", "k05", "k06", "k07", "k08", "k09", "k10", "k11", "k12",
        "k13", "k14", "k15",
    ];
    for round in 0..3 {
        for key in KEYS {
            span.set(&[Attribute {
                key,
                value: AttributeValue::I64(round),
            }]);
        }
    }
    drop(span);
    let records = records.0.lock().unwrap();
    let attributes = decoded(records[0].attributes(), false);
    assert_eq!(attributes.len(), 17, "{attributes:?}");
    assert!(
        attributes[1..].iter().all(|(_, v)| v == "2"),
        "{attributes:?}"
    );
    assert_eq!(records[0].name_parts(), ("execute_tool", Some("Bash")));
}

#[test]
fn events_land_on_their_span() {
    let records = session_with_a_subagent();
    let chat = find(&records, "chat m-1");
    let [retry] = &chat.events[..] else {
        panic!("one event: {:?}", chat.events);
    };
    assert_eq!(retry.name, "retry");
    assert_eq!(
        decoded(&retry.attributes, true),
        [
            ("zr.retry.attempt".to_owned(), "1".to_owned()),
            ("zr.retry.reason".to_owned(), "HTTP 429".to_owned())
        ]
    );
    assert!(retry.time >= chat.start);
}
