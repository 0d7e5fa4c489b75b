//! OTLP/protobuf encoding of a batch of finished spans: the bytes of an
//! `ExportTraceServiceRequest` (`opentelemetry/proto/collector/trace/v1`),
//! written straight from the tracer's [`SpanRecord`]s.
//!
//! A span is encoded when it ends, on the run's thread, into the queue's
//! buffer ([`span_entry`]); the export thread wraps a batch of them in a
//! request ([`request_head`], then the entries as queued). The attributes are already OTLP bytes (the
//! tracer wrote them as they were set) and are copied; the rest of
//! each span is sized once and written in one pass, in field-number
//! order as `prost` writes it (the tests decode both and compare, and
//! compare the bytes with those of the OpenTelemetry crates' own
//! conversion of the same spans).

use crate::record::{EventRecord, SpanRecord};
use crate::wire::{
    FIXED32, bytes_field, bytes_field_len, fixed64_field, header, message_field_len, string_field,
    string_field_len, tag, tag_len, varint_field, varint_field_len,
};

/// `SpanFlags`: sampled, and the flags byte says the parent is not remote.
const FLAGS: u32 = 0x01 | 0x100;

/// The instrumentation scope every span is sent under.
pub(crate) const SCOPE: &str = "zr";

/// The resource every batch is sent under: its attributes, all strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Resource {
    pub(crate) attributes: Vec<(String, String)>,
}

/// Appends `span` to `out` as an entry of `ScopeSpans.spans` (its tag,
/// length and `Span` message): a batch of entries is what [`request`]
/// wraps.
pub(crate) fn span_entry(out: &mut Vec<u8>, span: &SpanRecord) {
    let len = span_len(span);
    out.reserve(message_field_len(2, len));
    header(out, 2, len);
    let start = out.len();
    write_span(out, span);
    debug_assert_eq!(out.len() - start, len, "sizes computed as written");
}

/// The request body for `entries` (spans as [`span_entry`] writes them),
/// under `resource` and the scope [`SCOPE`].
#[cfg(test)]
pub(crate) fn request(entries: &[u8], resource: &Resource) -> Vec<u8> {
    let mut out = request_head(entries.len(), resource);
    out.extend_from_slice(entries);
    out
}

/// The bytes of [`request`]'s body that come before `entries_len` bytes
/// of entries (the body is this, then the entries as they are).
pub(crate) fn request_head(entries_len: usize, resource: &Resource) -> Vec<u8> {
    let scope_len =
        (entries_len != 0).then(|| message_field_len(1, string_field_len(1, SCOPE)) + entries_len);
    let resource_len: usize = resource
        .attributes
        .iter()
        .map(|(k, v)| message_field_len(1, string_key_value_len(k, v)))
        .sum();
    let resource_spans_len =
        message_field_len(1, resource_len) + scope_len.map_or(0, |len| message_field_len(2, len));

    let total = message_field_len(1, resource_spans_len) - entries_len;
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
    }
    debug_assert_eq!(out.len(), total, "sizes computed as written");
    out
}

/// The request body for `spans` (tests compare it with the OpenTelemetry
/// crates' conversion).
#[cfg(test)]
pub(crate) fn export_request(spans: &[SpanRecord], resource: &Resource) -> Vec<u8> {
    let mut entries = Vec::new();
    for span in spans {
        span_entry(&mut entries, span);
    }
    request(&entries, resource)
}

/// A `KeyValue` of a string value.
fn string_key_value_len(key: &str, value: &str) -> usize {
    string_field_len(1, key) + message_field_len(2, message_field_len(1, value.len()))
}

/// The span's name: its parts, and their length as one string.
fn name_len(span: &SpanRecord) -> usize {
    match span.name_bytes() {
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
        + span.attributes().len()
        + varint_field_len(12, u64::from(span.dropped_events))
        + message_field_len(15, status_len(span))
        + tag_len(16)
        + 4;
    for event in &span.events {
        len += message_field_len(11, event_len(event));
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
        match span.name_bytes() {
            (name, None) => out.extend_from_slice(name),
            (prefix, Some(suffix)) => {
                out.extend_from_slice(prefix);
                out.push(b' ');
                out.extend_from_slice(suffix);
            }
        }
    }
    varint_field(out, 6, span.kind as u64);
    fixed64_field(out, 7, span.start);
    fixed64_field(out, 8, span.end);
    out.extend_from_slice(span.attributes());
    for event in &span.events {
        header(out, 11, event_len(event));
        fixed64_field(out, 1, event.time);
        string_field(out, 2, event.name);
        out.extend_from_slice(&event.attributes);
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

fn event_len(event: &EventRecord) -> usize {
    1 + 8 + string_field_len(2, event.name) + event.attributes.len()
}

#[cfg(test)]
mod tests;
