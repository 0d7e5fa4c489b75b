//! The bytes decode, with `prost` and the generated OTLP messages, to
//! exactly what the OpenTelemetry crates' own conversion makes of the same
//! spans: every field, nested message and value kind.

use std::time::{Duration, UNIX_EPOCH};

use opentelemetry::trace::{
    Event, Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use prost::Message as _;

use super::*;

fn context(trace: u128, span: u64, remote: bool) -> SpanContext {
    SpanContext::new(
        TraceId::from(trace),
        SpanId::from(span),
        TraceFlags::SAMPLED,
        remote,
        TraceState::default(),
    )
}

fn span(id: u64, parent: u64, scope: &InstrumentationScope) -> SpanData {
    let at = |ms| UNIX_EPOCH + Duration::from_millis(1_700_000_000_000 + ms);
    let mut events = SpanEvents::default();
    events.events.push(Event::new(
        "retry",
        at(5),
        vec![
            KeyValue::new("zr.retry.attempt", 1_i64),
            KeyValue::new("zr.retry.reason", "HTTP 429"),
        ],
        0,
    ));
    let mut links = SpanLinks::default();
    if id == 3 {
        links.links.push(Link::new(
            context(9, 99, true),
            vec![KeyValue::new("k", "v")],
            2,
        ));
    }
    SpanData {
        span_context: context(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef, id, false),
        parent_span_id: SpanId::from(parent),
        parent_span_is_remote: false,
        span_kind: if id == 2 {
            SpanKind::Client
        } else {
            SpanKind::Internal
        },
        name: format!("span {id}").into(),
        start_time: at(0),
        end_time: at(250 + id),
        attributes: vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("empty", ""),
            KeyValue::new("gen_ai.usage.input_tokens", 100_i64),
            KeyValue::new("negative", -3_i64),
            KeyValue::new("zero", 0_i64),
            KeyValue::new("zr.task.cost_usd", 0.25_f64),
            KeyValue::new("zr.agent.background", false),
            KeyValue::new("yes", true),
            KeyValue::new(
                "gen_ai.response.finish_reasons",
                Value::Array(Array::String(vec![
                    StringValue::from("end_turn"),
                    StringValue::from(""),
                ])),
            ),
            KeyValue::new("ints", Value::Array(Array::I64(vec![0, 1, -1, 300]))),
            KeyValue::new("bools", Value::Array(Array::Bool(vec![true, false]))),
            KeyValue::new("floats", Value::Array(Array::F64(vec![0.0, 1.5]))),
            KeyValue::new("ünïcode", "naïve ✓"),
        ],
        dropped_attributes_count: u32::try_from(id).unwrap() - 1,
        events,
        links,
        status: match id {
            1 => Status::Unset,
            2 => Status::Ok,
            _ => Status::error("timed_out"),
        },
        instrumentation_scope: scope.clone(),
    }
}

#[test]
fn the_bytes_decode_to_what_the_opentelemetry_conversion_makes() {
    let zr = InstrumentationScope::builder("zr").build();
    let other = InstrumentationScope::builder("other")
        .with_version("1.2")
        .with_schema_url("https://example.com/schema")
        .with_attributes([KeyValue::new("scope.attr", 7_i64)])
        .build();
    let spans = vec![
        span(1, 0, &zr),
        span(2, 1, &zr),
        span(3, 1, &other),
        span(4, 2, &zr),
    ];
    let resource = Resource::builder()
        .with_service_name("zr")
        .with_attribute(KeyValue::new("host.name", "test"))
        .with_schema_url([], "https://example.com/resource")
        .build();

    let bytes = export_request(&spans, &ResourceData::from(&resource));
    let ours = ExportTraceServiceRequest::decode(bytes.as_slice()).expect("valid OTLP protobuf");
    let theirs = ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(
            spans,
            &ResourceAttributesWithSchema::from(&resource),
        ),
    };
    assert_eq!(ours, theirs);
    // The same bytes too: fields in number order, defaults left out.
    assert_eq!(bytes, theirs.encode_to_vec());
}

#[test]
fn an_empty_batch_is_a_request_with_the_resource_alone() {
    let resource = Resource::builder().with_service_name("zr").build();
    let bytes = export_request(&[], &ResourceData::from(&resource));
    let ours = ExportTraceServiceRequest::decode(bytes.as_slice()).unwrap();
    assert_eq!(ours.resource_spans.len(), 1);
    assert!(ours.resource_spans[0].scope_spans.is_empty());
}
