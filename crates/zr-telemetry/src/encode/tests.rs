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

const T0: u64 = 1_700_000_000_000_000_000;

/// A span with every kind of value, an event, and (by `id`) each kind,
/// status and form of name.
fn record(id: u64, parent: u64) -> SpanRecord {
    let mut span = SpanRecord::new(
        0x0123_4567_89ab_cdef_0123_4567_89ab_cdef,
        id,
        parent,
        "chat",
    );
    span.start = T0;
    span.end = T0 + 250_000_000 + id;
    let strings = [
        ("gen_ai.operation.name", "chat"),
        ("empty", ""),
        ("ünïcode", "naïve ✓"),
    ];
    for (key, value) in strings {
        let text = span.push_str(value);
        span.push(key, AttrValue::Str(text));
    }
    let model = span.push_str("claude-x");
    span.push("gen_ai.request.model", AttrValue::Str(model));
    span.push("gen_ai.usage.input_tokens", AttrValue::I64(100));
    span.push("negative", AttrValue::I64(-3));
    span.push("zero", AttrValue::I64(0));
    span.push("zr.task.cost_usd", AttrValue::F64(0.25));
    span.push("zr.agent.background", AttrValue::Bool(false));
    span.push("yes", AttrValue::Bool(true));
    let reasons = span.push_str("end_turn, tool_use");
    span.push(
        "gen_ai.response.finish_reasons",
        AttrValue::StrList(reasons),
    );
    let one = span.push_str("stop");
    span.set(
        "gen_ai.response.finish_reasons_one",
        AttrValue::StrList(one),
    );
    span.name = match id {
        1 => Name::Plain("session"),
        2 => Name::With("chat", model),
        _ => Name::Given(span.push_str("custom name")),
    };
    span.kind = if id == 2 {
        Kind::Client
    } else {
        Kind::Internal
    };
    match id {
        1 => {}
        2 => span.status = StatusCode::Ok,
        _ => {
            span.status = StatusCode::Error;
            span.description = Some(span.push_str("timed out"));
        }
    }
    if id != 1 {
        let reason = span.push_str("HTTP 429");
        let message = span.push_str("retry");
        span.add_event(EventRecord {
            time: T0 + 5_000_000,
            name: EventName::Message(message),
            attributes: vec![
                Attribute {
                    key: "zr.retry.attempt",
                    value: AttrValue::I64(1),
                },
                Attribute {
                    key: "zr.retry.reason",
                    value: AttrValue::Str(reason),
                },
            ],
        });
        span.add_event(EventRecord {
            time: T0 + 6_000_000,
            name: EventName::Static("event"),
            attributes: Vec::new(),
        });
    }
    if id == 4 {
        span.dropped_events = 3;
    }
    span
}

/// The same span as the OpenTelemetry SDK holds it.
fn span_data(span: &SpanRecord) -> SpanData {
    let at = |nanos| UNIX_EPOCH + Duration::from_nanos(nanos);
    let value = |v: AttrValue| match v {
        AttrValue::Str(text) => Value::from(span.str(text).to_owned()),
        AttrValue::Bool(b) => Value::Bool(b),
        AttrValue::I64(i) => Value::I64(i),
        AttrValue::F64(f) => Value::F64(f),
        AttrValue::StrList(text) => Value::Array(Array::String(
            span.str(text)
                .split(',')
                .map(|s| StringValue::from(s.trim().to_owned()))
                .collect(),
        )),
    };
    let attributes = |list: &[Attribute]| -> Vec<KeyValue> {
        list.iter()
            .map(|a| KeyValue::new(a.key, value(a.value)))
            .collect()
    };
    let mut events = SpanEvents::default();
    for event in &span.events {
        let name = match event.name {
            EventName::Static(name) => name.to_owned(),
            EventName::Message(text) => span.str(text).to_owned(),
        };
        events.events.push(Event::new(
            name,
            at(event.time),
            attributes(&event.attributes),
            0,
        ));
    }
    events.dropped_count = span.dropped_events;
    let name = match span.name_parts() {
        (name, None) => name.to_owned(),
        (prefix, Some(suffix)) => format!("{prefix} {suffix}"),
    };
    SpanData {
        span_context: SpanContext::new(
            TraceId::from(span.trace_id),
            SpanId::from(span.span_id),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        ),
        parent_span_id: SpanId::from(span.parent_id),
        parent_span_is_remote: false,
        span_kind: match span.kind {
            Kind::Internal => SpanKind::Internal,
            Kind::Server => SpanKind::Server,
            Kind::Client => SpanKind::Client,
            Kind::Producer => SpanKind::Producer,
            Kind::Consumer => SpanKind::Consumer,
        },
        name: name.into(),
        start_time: at(span.start),
        end_time: at(span.end),
        attributes: attributes(&span.attributes),
        dropped_attributes_count: 0,
        events,
        links: SpanLinks::default(),
        status: match span.status {
            StatusCode::Unset => Status::Unset,
            StatusCode::Ok => Status::Ok,
            StatusCode::Error => {
                Status::error(span.description.map_or("", |d| span.str(d)).to_owned())
            }
        },
        instrumentation_scope: InstrumentationScope::builder(SCOPE).build(),
    }
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
    let spans = vec![record(1, 0), record(2, 1), record(3, 1), record(4, 2)];
    let (sdk_resource, resource) = resources();
    let bytes = export_request(&spans, &resource);
    let ours = ExportTraceServiceRequest::decode(bytes.as_slice()).expect("valid OTLP protobuf");
    let theirs = ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(
            spans.iter().map(span_data).collect(),
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
