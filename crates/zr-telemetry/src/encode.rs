//! OTLP/protobuf encoding of a batch of finished spans: the bytes of an
//! `ExportTraceServiceRequest` (`opentelemetry/proto/collector/trace/v1`),
//! written straight from the layer's [`SpanRecord`]s.
//!
//! Each span's size is computed once, from the borrowed data, and the
//! bytes written in one pass, in field-number order as `prost` writes
//! them (the tests decode both and compare, and compare the bytes with
//! those of the OpenTelemetry crates' own conversion of the same spans).

use crate::record::{AttrValue, Attribute, EventName, EventRecord, SpanRecord};

/// Wire types.
const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;
const FIXED32: u32 = 5;

/// `SpanFlags`: sampled, and the flags byte says the parent is not remote.
const FLAGS: u32 = 0x01 | 0x100;

/// The instrumentation scope every span is sent under.
pub(crate) const SCOPE: &str = "zr";

/// The resource every batch is sent under: its attributes, all strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Resource {
    pub(crate) attributes: Vec<(String, String)>,
}

/// The request body for `spans`, under `resource` and the scope [`SCOPE`].
pub(crate) fn export_request(spans: &[SpanRecord], resource: &Resource) -> Vec<u8> {
    let span_lens: Vec<usize> = spans.iter().map(span_len).collect();
    let scope_len = if spans.is_empty() {
        None
    } else {
        Some(
            message_field_len(1, string_field_len(1, SCOPE))
                + span_lens
                    .iter()
                    .map(|&len| message_field_len(2, len))
                    .sum::<usize>(),
        )
    };
    let resource_len: usize = resource
        .attributes
        .iter()
        .map(|(k, v)| message_field_len(1, string_key_value_len(k, v)))
        .sum();
    let resource_spans_len =
        message_field_len(1, resource_len) + scope_len.map_or(0, |len| message_field_len(2, len));

    let total = message_field_len(1, resource_spans_len);
    let mut out = Vec::with_capacity(total);
    header(&mut out, 1, resource_spans_len);
    header(&mut out, 1, resource_len);
    for (key, value) in &resource.attributes {
        header(&mut out, 1, string_key_value_len(key, value));
        string_field(&mut out, 1, key);
        header(&mut out, 2, message_field_len(1, value.len()));
        header(&mut out, 1, value.len());
        out.extend_from_slice(value.as_bytes());
    }
    if let Some(len) = scope_len {
        header(&mut out, 2, len);
        header(&mut out, 1, string_field_len(1, SCOPE));
        string_field(&mut out, 1, SCOPE);
        for (span, &len) in spans.iter().zip(&span_lens) {
            header(&mut out, 2, len);
            write_span(&mut out, span);
        }
    }
    debug_assert_eq!(out.len(), total, "sizes computed as written");
    out
}

/// A `KeyValue` of a string value.
fn string_key_value_len(key: &str, value: &str) -> usize {
    string_field_len(1, key) + message_field_len(2, message_field_len(1, value.len()))
}

/// The span's name: its parts, and their length as one string.
fn name_len(span: &SpanRecord) -> usize {
    match span.name_parts() {
        (name, None) => name.len(),
        (prefix, Some(suffix)) => prefix.len() + 1 + suffix.len(),
    }
}

fn status_len(span: &SpanRecord) -> usize {
    let message = span.description.map_or(0, |d| d.len());
    bytes_field_len(2, message) + varint_field_len(3, span.status as u64)
}

fn span_len(span: &SpanRecord) -> usize {
    let mut len = bytes_field_len(1, 16)
        + bytes_field_len(2, 8)
        + if span.parent_id == 0 {
            0
        } else {
            bytes_field_len(4, 8)
        }
        + bytes_field_len(5, name_len(span))
        + varint_field_len(6, span.kind as u64)
        + 2 * (1 + 8)
        + attributes_len(9, span, &span.attributes)
        + varint_field_len(12, u64::from(span.dropped_events))
        + message_field_len(15, status_len(span))
        + tag_len(16)
        + 4;
    for event in &span.events {
        len += message_field_len(11, event_len(span, event));
    }
    len
}

fn write_span(out: &mut Vec<u8>, span: &SpanRecord) {
    bytes_field(out, 1, &span.trace_id.to_be_bytes());
    bytes_field(out, 2, &span.span_id.to_be_bytes());
    if span.parent_id != 0 {
        bytes_field(out, 4, &span.parent_id.to_be_bytes());
    }
    let len = name_len(span);
    if len > 0 {
        header(out, 5, len);
        match span.name_parts() {
            (name, None) => out.extend_from_slice(name.as_bytes()),
            (prefix, Some(suffix)) => {
                out.extend_from_slice(prefix.as_bytes());
                out.push(b' ');
                out.extend_from_slice(suffix.as_bytes());
            }
        }
    }
    varint_field(out, 6, span.kind as u64);
    fixed64_field(out, 7, span.start);
    fixed64_field(out, 8, span.end);
    attributes(out, 9, span, &span.attributes);
    for event in &span.events {
        header(out, 11, event_len(span, event));
        fixed64_field(out, 1, event.time);
        string_field(out, 2, event_name(span, event));
        attributes(out, 3, span, &event.attributes);
    }
    varint_field(out, 12, u64::from(span.dropped_events));
    header(out, 15, status_len(span));
    if let Some(description) = span.description {
        string_field(out, 2, span.str(description));
    }
    varint_field(out, 3, span.status as u64);
    tag(out, 16, FIXED32);
    out.extend_from_slice(&FLAGS.to_le_bytes());
}

fn event_name<'a>(span: &'a SpanRecord, event: &EventRecord) -> &'a str {
    match event.name {
        EventName::Static(name) => name,
        EventName::Message(text) => span.str(text),
    }
}

fn event_len(span: &SpanRecord, event: &EventRecord) -> usize {
    1 + 8
        + string_field_len(2, event_name(span, event))
        + attributes_len(3, span, &event.attributes)
}

fn attributes_len(field: u32, span: &SpanRecord, attributes: &[Attribute]) -> usize {
    attributes
        .iter()
        .map(|a| message_field_len(field, key_value_len(span, a)))
        .sum()
}

fn attributes(out: &mut Vec<u8>, field: u32, span: &SpanRecord, attributes: &[Attribute]) {
    for attribute in attributes {
        header(out, field, key_value_len(span, attribute));
        string_field(out, 1, attribute.key);
        header(out, 2, any_value_len(span, attribute.value));
        any_value(out, span, attribute.value);
    }
}

fn key_value_len(span: &SpanRecord, attribute: &Attribute) -> usize {
    string_field_len(1, attribute.key) + message_field_len(2, any_value_len(span, attribute.value))
}

/// The strings of a comma-separated list, trimmed.
fn list(span: &SpanRecord, text: crate::record::Text) -> impl Iterator<Item = &str> {
    span.str(text).split(',').map(str::trim)
}

/// An `AnyValue`: a oneof, so its one field is written even when it holds
/// the default (an empty string, `false`, `0`).
fn any_value_len(span: &SpanRecord, value: AttrValue) -> usize {
    match value {
        AttrValue::Bool(_) => 2,
        AttrValue::I64(i) => 1 + varint_len(i64_bits(i)),
        AttrValue::F64(_) => 1 + 8,
        AttrValue::Str(text) => message_field_len(1, text.len()),
        AttrValue::StrList(text) => message_field_len(5, array_len(span, text)),
    }
}

fn any_value(out: &mut Vec<u8>, span: &SpanRecord, value: AttrValue) {
    match value {
        AttrValue::Bool(b) => {
            tag(out, 2, VARINT);
            out.push(u8::from(b));
        }
        AttrValue::I64(i) => {
            tag(out, 3, VARINT);
            varint(out, i64_bits(i));
        }
        AttrValue::F64(f) => {
            tag(out, 4, FIXED64);
            out.extend_from_slice(&f.to_le_bytes());
        }
        AttrValue::Str(text) => {
            let text = span.str(text);
            header(out, 1, text.len());
            out.extend_from_slice(text.as_bytes());
        }
        AttrValue::StrList(text) => {
            header(out, 5, array_len(span, text));
            for item in list(span, text) {
                header(out, 1, message_field_len(1, item.len()));
                header(out, 1, item.len());
                out.extend_from_slice(item.as_bytes());
            }
        }
    }
}

/// An `ArrayValue` of strings: its `values` (field 1), each an `AnyValue`.
fn array_len(span: &SpanRecord, text: crate::record::Text) -> usize {
    list(span, text)
        .map(|item| message_field_len(1, message_field_len(1, item.len())))
        .sum()
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
