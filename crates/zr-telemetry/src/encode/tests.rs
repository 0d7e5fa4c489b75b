//! The bytes decode, with `prost` and the generated OTLP messages, to
//! exactly what the OpenTelemetry crates' own conversion makes of the same
//! spans (given to it as the SDK's `SpanData`): every field, nested
//! message and value kind; and they are the same bytes.

use std::time::{Duration, UNIX_EPOCH};

use opentelemetry::trace::{
    Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use prost::Message as _;

use super::*;
use crate::record::{Kind, Name, StatusCode};
use crate::wire::AttrValue;

const T0: u64 = 1_700_000_000_000_000_000;

/// Sets `key` on both the record and the SDK's attributes.
fn set(span: &mut SpanRecord, sdk: &mut Vec<KeyValue>, key: &'static str, value: AttrValue<'_>) {
    span.push(key, value);
    sdk.push(KeyValue::new(key, sdk_value(value)));
}

fn sdk_value(value: AttrValue<'_>) -> Value {
    match value {
        AttrValue::Str(text) => Value::from(text.to_owned()),
        AttrValue::Bool(b) => Value::Bool(b),
        AttrValue::I64(i) => Value::I64(i),
        AttrValue::F64(f) => Value::F64(f),
        AttrValue::StrArray(items) => Value::Array(Array::String(
            items
                .iter()
                .map(|s| StringValue::from((*s).to_owned()))
                .collect(),
        )),
    }
}

/// A span with every kind of value and (by `id`) each kind, status, form
/// of name and events; as zr records it and as the OpenTelemetry SDK
/// holds it.
fn span(id: u64, parent: u64) -> (SpanRecord, SpanData) {
    let at = |nanos| UNIX_EPOCH + Duration::from_nanos(nanos);
    let mut span = SpanRecord::new(
        0x0123_4567_89ab_cdef_0123_4567_89ab_cdef,
        id,
        parent,
        "chat",
    );
    span.start = T0;
    span.end = T0 + 250_000_000 + id;
    let mut sdk = Vec::new();
    set(
        &mut span,
        &mut sdk,
        "gen_ai.operation.name",
        AttrValue::Str("chat"),
    );
    set(&mut span, &mut sdk, "empty", AttrValue::Str(""));
    set(&mut span, &mut sdk, "ünïcode", AttrValue::Str("naïve ✓"));
    let agent = format!("root.{id:04}");
    set(
        &mut span,
        &mut sdk,
        "gen_ai.agent.id",
        AttrValue::Str(&agent),
    );
    set(
        &mut span,
        &mut sdk,
        "gen_ai.usage.input_tokens",
        AttrValue::I64(100),
    );
    set(&mut span, &mut sdk, "negative", AttrValue::I64(-3));
    set(&mut span, &mut sdk, "zero", AttrValue::I64(0));
    set(
        &mut span,
        &mut sdk,
        "zr.task.cost_usd",
        AttrValue::F64(0.25),
    );
    set(
        &mut span,
        &mut sdk,
        "zr.agent.background",
        AttrValue::Bool(false),
    );
    set(&mut span, &mut sdk, "yes", AttrValue::Bool(true));
    set(
        &mut span,
        &mut sdk,
        "gen_ai.response.finish_reasons",
        AttrValue::StrArray(&["end_turn", "tool_use"]),
    );
    let model = span
        .push("gen_ai.request.model", AttrValue::Str("claude-x"))
        .unwrap();
    sdk.push(KeyValue::new("gen_ai.request.model", "claude-x"));
    span.name = match id {
        1 => Name::Plain("session"),
        2 => Name::With("chat", model),
        _ => Name::Plain("execute_tool"),
    };
    let name = match id {
        1 => "session",
        2 => "chat claude-x",
        _ => "execute_tool",
    };
    span.kind = if id == 2 {
        Kind::Client
    } else {
        Kind::Internal
    };
    let status = match id {
        1 => Status::Unset,
        2 => Status::Unset,
        _ => {
            span.status = StatusCode::Error;
            span.description = Some(span.push_str("timed out"));
            Status::error("timed out")
        }
    };
    let mut events = SpanEvents::default();
    if id != 1 {
        let mut retry = EventRecord::new(T0 + 5_000_000, "retry");
        retry.attribute("zr.retry.attempt", AttrValue::I64(1));
        retry.attribute("zr.retry.reason", AttrValue::Str("HTTP 429"));
        span.add_event(retry);
        span.add_event(EventRecord::new(T0 + 6_000_000, "event"));
        events.events.push(Event::new(
            "retry",
            at(T0 + 5_000_000),
            vec![
                KeyValue::new("zr.retry.attempt", 1_i64),
                KeyValue::new("zr.retry.reason", "HTTP 429"),
            ],
            0,
        ));
        events
            .events
            .push(Event::new("event", at(T0 + 6_000_000), Vec::new(), 0));
    }
    if id == 4 {
        span.dropped_events = 3;
        events.dropped_count = 3;
    }
    let data = SpanData {
        span_context: SpanContext::new(
            TraceId::from(span.trace_id),
            SpanId::from(id),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        ),
        parent_span_id: SpanId::from(parent),
        parent_span_is_remote: false,
        span_kind: if id == 2 {
            SpanKind::Client
        } else {
            SpanKind::Internal
        },
        name: name.into(),
        start_time: at(span.start),
        end_time: at(span.end),
        attributes: sdk,
        dropped_attributes_count: 0,
        events,
        links: SpanLinks::default(),
        status,
        instrumentation_scope: InstrumentationScope::builder(SCOPE).build(),
    };
    (span, data)
}

/// The resource as the SDK holds it, and as ours (in the SDK's order:
/// it keeps attributes in a hash map).
fn resources() -> (opentelemetry_sdk::Resource, Resource) {
    let sdk = opentelemetry_sdk::Resource::builder_empty()
        .with_attributes([
            KeyValue::new("service.name", "zr"),
            KeyValue::new("host.name", "test"),
            KeyValue::new("empty", ""),
        ])
        .build();
    let ours = Resource {
        attributes: sdk
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_str().into_owned()))
            .collect(),
    };
    (sdk, ours)
}

#[test]
fn the_bytes_decode_to_what_the_opentelemetry_conversion_makes() {
    let (spans, data): (Vec<SpanRecord>, Vec<SpanData>) =
        [span(1, 0), span(2, 1), span(3, 1), span(4, 2)]
            .into_iter()
            .unzip();
    let (sdk_resource, resource) = resources();
    let bytes = export_request(&spans, &resource);
    let ours = ExportTraceServiceRequest::decode(bytes.as_slice()).expect("valid OTLP protobuf");
    let theirs = ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(
            data,
            &ResourceAttributesWithSchema::from(&sdk_resource),
        ),
    };
    assert_eq!(ours, theirs);
    // The same bytes too: fields in number order, defaults left out.
    assert_eq!(bytes, theirs.encode_to_vec());
}

#[test]
fn an_empty_batch_is_a_request_with_the_resource_alone() {
    let bytes = export_request(&[], &resources().1);
    let ours = ExportTraceServiceRequest::decode(bytes.as_slice()).unwrap();
    assert_eq!(ours.resource_spans.len(), 1);
    assert!(ours.resource_spans[0].scope_spans.is_empty());
    assert_eq!(
        ours.resource_spans[0]
            .resource
            .as_ref()
            .unwrap()
            .attributes
            .len(),
        3
    );
}
