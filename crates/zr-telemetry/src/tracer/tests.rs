//! The tracer's spans as the engine starts and ends them, read from an
//! in-memory exporter behind the SDK's simple processor: the tree and its
//! traces, names, kinds, status, attributes set later (a key set again
//! keeps its last value), events, a parent that ends after its children,
//! the host's span as the parent of roots, and the context child
//! processes get.

use std::sync::{Arc, Mutex};

use opentelemetry::Value;
use opentelemetry::trace::{SpanId, Status, TraceId, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use zr_engine::AttributeValue;

use super::*;
use crate::config::TraceParent;

/// Keeps the spans exported, in the order they ended.
#[derive(Debug, Clone, Default)]
struct Spans(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Spans {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

const HOST: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn tracer(parent: Option<&str>) -> (ExportTracer, Spans, SdkTracerProvider) {
    let spans = Spans::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let root = parent.map_or_else(Context::new, |traceparent| {
        crate::context::extract(&TraceParent {
            traceparent: traceparent.to_owned(),
            tracestate: None,
        })
        .unwrap()
    });
    let tracer = ExportTracer {
        tracer: provider.tracer("zr"),
        root,
        capture_content: false,
    };
    (tracer, spans, provider)
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

fn find<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name}"))
}

fn attr(span: &SpanData, key: &str) -> Vec<Value> {
    span.attributes
        .iter()
        .filter(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
        .collect()
}

/// A session, its root, a Task call, the subagent and its model request,
/// as the engine reports them; the spans in the order they ended.
fn session_with_a_subagent(tracer: &ExportTracer, spans: &Spans) -> Vec<SpanData> {
    let session = start(tracer, None, "session", SpanKind::Internal, &[]);
    let root = start(
        tracer,
        Some(&session),
        "invoke_agent",
        SpanKind::Internal,
        &[str("gen_ai.agent.name", "root")],
    );
    let call = start(
        tracer,
        Some(&root),
        "execute_tool",
        SpanKind::Internal,
        &[str("gen_ai.tool.name", "Task")],
    );
    let sub = start(
        tracer,
        Some(&call),
        "invoke_agent",
        SpanKind::Internal,
        &[str("gen_ai.agent.name", "worker")],
    );
    let chat = start(
        tracer,
        Some(&sub),
        "chat",
        SpanKind::Client,
        &[str("gen_ai.request.model", "m")],
    );
    chat.add_event(
        "retry",
        &[Attribute {
            key: "zr.retry.attempt",
            value: AttributeValue::I64(1),
        }],
    );
    chat.set(&[str("gen_ai.response.model", "first")]);
    chat.set(&[
        str("gen_ai.response.model", "second"),
        Attribute {
            key: "gen_ai.response.finish_reasons",
            value: AttributeValue::StrArray(&["end_turn"]),
        },
    ]);
    sub.set_error(Some("timed out"));
    // The session and its root are dropped first: they end after their
    // children all the same.
    drop((session, root, call));
    drop(sub);
    assert!(spans.0.lock().unwrap().is_empty(), "chat still runs");
    drop(chat);
    spans.0.lock().unwrap().clone()
}

#[test]
fn spans_nest_as_the_engine_starts_them_and_parents_end_after_their_children() {
    let (tracer, spans, _provider) = tracer(None);
    let ended = session_with_a_subagent(&tracer, &spans);
    let names: Vec<&str> = ended.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "chat m",
            "invoke_agent worker",
            "execute_tool Task",
            "invoke_agent root",
            "session"
        ]
    );
    let session = find(&ended, "session");
    assert_eq!(session.parent_span_id, SpanId::INVALID, "a root");
    for (child, parent) in [
        ("invoke_agent root", "session"),
        ("execute_tool Task", "invoke_agent root"),
        ("invoke_agent worker", "execute_tool Task"),
        ("chat m", "invoke_agent worker"),
    ] {
        let (child, parent) = (find(&ended, child), find(&ended, parent));
        assert_eq!(child.parent_span_id, parent.span_context.span_id());
        assert!(!child.parent_span_is_remote);
        assert_eq!(
            child.span_context.trace_id(),
            session.span_context.trace_id()
        );
    }
    let chat = find(&ended, "chat m");
    assert_eq!(chat.span_kind, opentelemetry::trace::SpanKind::Client);
    assert_eq!(attr(chat, "gen_ai.response.model"), [Value::from("second")]);
    assert_eq!(
        attr(chat, "gen_ai.response.finish_reasons"),
        [Value::Array(vec![StringValue::from("end_turn")].into())]
    );
    assert_eq!(chat.events.len(), 1);
    assert_eq!(chat.events[0].name, "retry");
    assert_eq!(
        find(&ended, "invoke_agent worker").status,
        Status::error("timed out")
    );
    assert_eq!(find(&ended, "invoke_agent root").status, Status::Unset);
}

#[test]
fn each_session_is_a_trace_of_its_own_without_a_host_span() {
    let (tracer, spans, _provider) = tracer(None);
    drop(start(&tracer, None, "session", SpanKind::Internal, &[]));
    drop(start(&tracer, None, "session", SpanKind::Internal, &[]));
    let ended = spans.0.lock().unwrap().clone();
    assert_ne!(
        ended[0].span_context.trace_id(),
        ended[1].span_context.trace_id()
    );
}

#[test]
fn a_host_span_given_as_traceparent_is_the_parent_of_every_session() {
    let (tracer, spans, _provider) = tracer(Some(HOST));
    let ended = session_with_a_subagent(&tracer, &spans);
    let host_trace = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
    for span in &ended {
        assert_eq!(span.span_context.trace_id(), host_trace, "{}", span.name);
    }
    let session = find(&ended, "session");
    assert_eq!(
        session.parent_span_id,
        SpanId::from_hex("00f067aa0ba902b7").unwrap()
    );
    assert!(session.parent_span_is_remote);
}

#[test]
fn a_span_gives_its_own_context_to_child_processes() {
    let (tracer, _spans, _provider) = tracer(Some(HOST));
    let session = start(&tracer, None, "session", SpanKind::Internal, &[]);
    let call = start(
        &tracer,
        Some(&session),
        "execute_tool",
        SpanKind::Internal,
        &[str("gen_ai.tool.name", "Bash")],
    );
    let context = call.context().expect("a context");
    let live = call.as_any().downcast_ref::<Live>().unwrap();
    assert_eq!(
        context.traceparent,
        format!(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-{}-01",
            live.context.span_id()
        )
    );
    assert_eq!(context.tracestate, "");
}
