//! OTLP/protobuf encoding of a batch of finished spans: the bytes of an
//! `ExportTraceServiceRequest` (`opentelemetry/proto/collector/trace/v1`),
//! written straight from the SDK's [`SpanData`].
//!
//! The OTLP exporter crate first converts every span into generated
//! message structs (each key and string copied, each nested message
//! boxed), then lets `prost` size every nested message again at each
//! level of nesting: that was more than half of what export cost a
//! fan-out (BENCHMARKS.md, issue 20). Here each span's size is computed
//! once, from the borrowed data, and the bytes written in one pass, in
//! field-number order as `prost` writes them (the tests decode both and
//! compare).

use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::trace::SpanData;

/// Wire types.
const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

/// `SpanFlags`: the flags byte says whether the parent is remote.
const HAS_IS_REMOTE: u32 = 0x100;
const IS_REMOTE: u32 = 0x200;

/// The resource every batch is sent under: its attributes and schema.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResourceData {
    pub(crate) attributes: Vec<KeyValue>,
    pub(crate) schema_url: Option<String>,
}

impl From<&opentelemetry_sdk::Resource> for ResourceData {
    fn from(resource: &opentelemetry_sdk::Resource) -> Self {
        Self {
            attributes: resource
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                .collect(),
            schema_url: resource.schema_url().map(str::to_owned),
        }
    }
}

/// The request body for `spans`, grouped by instrumentation scope under
/// `resource`.
pub(crate) fn export_request(spans: &[SpanData], resource: &ResourceData) -> Vec<u8> {
    // Scopes in the order first seen, with their spans' indices.
    let mut scopes: Vec<(&InstrumentationScope, Vec<usize>)> = Vec::new();
    for (i, span) in spans.iter().enumerate() {
        match scopes
            .iter_mut()
            .find(|(scope, _)| **scope == span.instrumentation_scope)
        {
            Some((_, members)) => members.push(i),
            None => scopes.push((&span.instrumentation_scope, vec![i])),
        }
    }
    let span_lens: Vec<usize> = spans.iter().map(span_len).collect();
    let scope_lens: Vec<usize> = scopes
        .iter()
        .map(|(scope, members)| {
            message_field_len(1, scope_len(scope))
                + members
                    .iter()
                    .map(|&i| message_field_len(2, span_lens[i]))
                    .sum::<usize>()
                + string_field_len(3, scope.schema_url().unwrap_or(""))
        })
        .collect();
    let resource_len = attributes_len(1, &resource.attributes);
    let schema_url = resource.schema_url.as_deref().unwrap_or("");
    let resource_spans_len = message_field_len(1, resource_len)
        + scope_lens
            .iter()
            .map(|&len| message_field_len(2, len))
            .sum::<usize>()
        + string_field_len(3, schema_url);

    let total = message_field_len(1, resource_spans_len);
    let mut out = Vec::with_capacity(total);
    header(&mut out, 1, resource_spans_len);
    header(&mut out, 1, resource_len);
    attributes(&mut out, 1, &resource.attributes);
    for ((scope, members), &len) in scopes.iter().zip(&scope_lens) {
        header(&mut out, 2, len);
        write_scope(&mut out, scope);
        for &i in members {
            header(&mut out, 2, span_lens[i]);
            write_span(&mut out, &spans[i]);
        }
        string_field(&mut out, 3, scope.schema_url().unwrap_or(""));
    }
    string_field(&mut out, 3, schema_url);
    debug_assert_eq!(out.len(), total, "sizes computed as written");
    out
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn kind(kind: &SpanKind) -> u64 {
    match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

fn flags(trace_flags: u8, remote: bool) -> u32 {
    u32::from(trace_flags) | HAS_IS_REMOTE | if remote { IS_REMOTE } else { 0 }
}

/// `Status`: its code, and a message for an error.
fn status(status: &Status) -> (u64, &str) {
    match status {
        Status::Unset => (0, ""),
        Status::Ok => (1, ""),
        Status::Error { description } => (2, description),
    }
}

fn scope_len(scope: &InstrumentationScope) -> usize {
    string_field_len(1, scope.name())
        + string_field_len(2, scope.version().unwrap_or(""))
        + scope
            .attributes()
            .map(|kv| message_field_len(3, key_value_len(kv)))
            .sum::<usize>()
}

fn write_scope(out: &mut Vec<u8>, scope: &InstrumentationScope) {
    header(out, 1, scope_len(scope));
    string_field(out, 1, scope.name());
    string_field(out, 2, scope.version().unwrap_or(""));
    for kv in scope.attributes() {
        header(out, 3, key_value_len(kv));
        key_value(out, kv);
    }
}

fn span_len(span: &SpanData) -> usize {
    let context = &span.span_context;
    let parent = parent_id(span);
    let (code, message) = status(&span.status);
    let status_len = string_field_len(2, message) + varint_field_len(3, code);
    let mut len = bytes_field_len(1, 16)
        + bytes_field_len(2, 8)
        + string_field_len(3, &context.trace_state().header())
        + parent.map_or(0, |_| bytes_field_len(4, 8))
        + string_field_len(5, &span.name)
        + varint_field_len(6, kind(&span.span_kind))
        + 2 * (1 + 8)
        + attributes_len(9, &span.attributes)
        + varint_field_len(10, u64::from(span.dropped_attributes_count))
        + varint_field_len(12, u64::from(span.events.dropped_count))
        + varint_field_len(14, u64::from(span.links.dropped_count))
        + message_field_len(15, status_len)
        + tag_len(16)
        + 4;
    for event in &span.events.events {
        len += message_field_len(11, event_len(event));
    }
    for link in &span.links.links {
        len += message_field_len(13, link_len(link));
    }
    len
}

fn write_span(out: &mut Vec<u8>, span: &SpanData) {
    let context = &span.span_context;
    bytes_field(out, 1, &context.trace_id().to_bytes());
    bytes_field(out, 2, &context.span_id().to_bytes());
    string_field(out, 3, &context.trace_state().header());
    if let Some(parent) = parent_id(span) {
        bytes_field(out, 4, &parent.to_bytes());
    }
    string_field(out, 5, &span.name);
    varint_field(out, 6, kind(&span.span_kind));
    fixed64_field(out, 7, nanos(span.start_time));
    fixed64_field(out, 8, nanos(span.end_time));
    attributes(out, 9, &span.attributes);
    varint_field(out, 10, u64::from(span.dropped_attributes_count));
    for event in &span.events.events {
        header(out, 11, event_len(event));
        fixed64_field(out, 1, nanos(event.timestamp));
        string_field(out, 2, &event.name);
        attributes(out, 3, &event.attributes);
        varint_field(out, 4, u64::from(event.dropped_attributes_count));
    }
    varint_field(out, 12, u64::from(span.events.dropped_count));
    for link in &span.links.links {
        header(out, 13, link_len(link));
        let context = &link.span_context;
        bytes_field(out, 1, &context.trace_id().to_bytes());
        bytes_field(out, 2, &context.span_id().to_bytes());
        string_field(out, 3, &context.trace_state().header());
        attributes(out, 4, &link.attributes);
        varint_field(out, 5, u64::from(link.dropped_attributes_count));
        tag(out, 6, FIXED32);
        out.extend_from_slice(
            &flags(context.trace_flags().to_u8(), context.is_remote()).to_le_bytes(),
        );
    }
    varint_field(out, 14, u64::from(span.links.dropped_count));
    let (code, message) = status(&span.status);
    header(
        out,
        15,
        string_field_len(2, message) + varint_field_len(3, code),
    );
    string_field(out, 2, message);
    varint_field(out, 3, code);
    tag(out, 16, FIXED32);
    out.extend_from_slice(
        &flags(context.trace_flags().to_u8(), span.parent_span_is_remote).to_le_bytes(),
    );
}

fn parent_id(span: &SpanData) -> Option<SpanId> {
    (span.parent_span_id != SpanId::INVALID).then_some(span.parent_span_id)
}

fn event_len(event: &opentelemetry::trace::Event) -> usize {
    1 + 8
        + string_field_len(2, &event.name)
        + attributes_len(3, &event.attributes)
        + varint_field_len(4, u64::from(event.dropped_attributes_count))
}

fn link_len(link: &opentelemetry::trace::Link) -> usize {
    let context = &link.span_context;
    bytes_field_len(1, 16)
        + bytes_field_len(2, 8)
        + string_field_len(3, &context.trace_state().header())
        + attributes_len(4, &link.attributes)
        + varint_field_len(5, u64::from(link.dropped_attributes_count))
        + tag_len(6)
        + 4
}

fn attributes_len(field: u32, attributes: &[KeyValue]) -> usize {
    attributes
        .iter()
        .map(|kv| message_field_len(field, key_value_len(kv)))
        .sum()
}

fn attributes(out: &mut Vec<u8>, field: u32, attributes: &[KeyValue]) {
    for kv in attributes {
        header(out, field, key_value_len(kv));
        key_value(out, kv);
    }
}

fn key_value_len(kv: &KeyValue) -> usize {
    string_field_len(1, kv.key.as_str()) + message_field_len(2, any_value_len(&kv.value))
}

fn key_value(out: &mut Vec<u8>, kv: &KeyValue) {
    string_field(out, 1, kv.key.as_str());
    header(out, 2, any_value_len(&kv.value));
    any_value(out, &kv.value);
}

/// An `AnyValue`: a oneof, so its one field is written even when it holds
/// the default (an empty string, `false`, `0`).
fn any_value_len(value: &Value) -> usize {
    match value {
        Value::Bool(_) => 2,
        Value::I64(i) => 1 + varint_len(i64_bits(*i)),
        Value::F64(_) => 1 + 8,
        Value::String(s) => message_field_len(1, s.as_str().len()),
        Value::Array(array) => message_field_len(5, array_len(array)),
        other => message_field_len(1, other.as_str().len()),
    }
}

fn any_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Bool(b) => {
            tag(out, 2, VARINT);
            out.push(u8::from(*b));
        }
        Value::I64(i) => {
            tag(out, 3, VARINT);
            varint(out, i64_bits(*i));
        }
        Value::F64(f) => {
            tag(out, 4, FIXED64);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Value::String(s) => {
            header(out, 1, s.as_str().len());
            out.extend_from_slice(s.as_str().as_bytes());
        }
        Value::Array(array) => {
            header(out, 5, array_len(array));
            array_values(out, array);
        }
        other => {
            let text = other.as_str();
            header(out, 1, text.len());
            out.extend_from_slice(text.as_bytes());
        }
    }
}

/// An `ArrayValue`'s `values` (field 1), each an `AnyValue`.
fn array_len(array: &Array) -> usize {
    match array {
        Array::Bool(v) => v.len() * (1 + 1 + 2),
        Array::I64(v) => v
            .iter()
            .map(|i| message_field_len(1, 1 + varint_len(i64_bits(*i))))
            .sum(),
        Array::F64(v) => v.len() * (1 + 1 + 9),
        Array::String(v) => v
            .iter()
            .map(|s| message_field_len(1, message_field_len(1, s.as_str().len())))
            .sum(),
        other => message_field_len(1, message_field_len(1, other.to_string().len())),
    }
}

fn array_values(out: &mut Vec<u8>, array: &Array) {
    match array {
        Array::Bool(v) => v.iter().for_each(|b| {
            header(out, 1, 2);
            any_value(out, &Value::Bool(*b));
        }),
        Array::I64(v) => v.iter().for_each(|i| {
            header(out, 1, 1 + varint_len(i64_bits(*i)));
            any_value(out, &Value::I64(*i));
        }),
        Array::F64(v) => v.iter().for_each(|f| {
            header(out, 1, 9);
            any_value(out, &Value::F64(*f));
        }),
        Array::String(v) => v.iter().for_each(|s| {
            let text = s.as_str();
            header(out, 1, message_field_len(1, text.len()));
            header(out, 1, text.len());
            out.extend_from_slice(text.as_bytes());
        }),
        other => {
            let text = other.to_string();
            header(out, 1, message_field_len(1, text.len()));
            header(out, 1, text.len());
            out.extend_from_slice(text.as_bytes());
        }
    }
}

/// An `int64` on the wire: its two's complement bits.
fn i64_bits(i: i64) -> u64 {
    u64::from_ne_bytes(i.to_ne_bytes())
}

fn varint_len(mut v: u64) -> usize {
    let mut len = 1;
    while v >= 0x80 {
        v >>= 7;
        len += 1;
    }
    len
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // The low seven bits, with the continuation bit.
        out.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, u64::from(field << 3 | wire));
}

fn tag_len(field: u32) -> usize {
    varint_len(u64::from(field << 3))
}

/// A length-delimited field's tag and length.
fn header(out: &mut Vec<u8>, field: u32, len: usize) {
    tag(out, field, LEN);
    varint(out, len as u64);
}

/// A message field of `len` bytes (always written, as `prost` writes a
/// message that is present).
fn message_field_len(field: u32, len: usize) -> usize {
    tag_len(field) + varint_len(len as u64) + len
}

/// A proto3 string or bytes field: left out when empty.
fn string_field_len(field: u32, text: &str) -> usize {
    bytes_field_len(field, text.len())
}

fn bytes_field_len(field: u32, len: usize) -> usize {
    if len == 0 {
        0
    } else {
        message_field_len(field, len)
    }
}

fn string_field(out: &mut Vec<u8>, field: u32, text: &str) {
    bytes_field(out, field, text.as_bytes());
}

fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    if !bytes.is_empty() {
        header(out, field, bytes.len());
        out.extend_from_slice(bytes);
    }
}

/// A proto3 integer field: left out when zero.
fn varint_field_len(field: u32, v: u64) -> usize {
    if v == 0 {
        0
    } else {
        tag_len(field) + varint_len(v)
    }
}

fn varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        tag(out, field, VARINT);
        varint(out, v);
    }
}

fn fixed64_field(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, FIXED64);
    out.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests;
