//! What is kept of one span from its start to its end, and sent as it is
//! to the export thread: ids, times, name, kind, status, attributes and
//! events. Each attribute is written as its OTLP bytes as it is recorded
//! ([`wire::key_value`]), all of a span's in one buffer: a span costs a
//! few allocations, not one per field, and its export copies the bytes.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::wire::{self, AttrValue};

/// The most events a span keeps; later ones are counted as dropped (the
/// OpenTelemetry SDK's default limit).
pub(crate) const MAX_EVENTS: usize = 128;

/// `Span.attributes`' field number.
const SPAN_ATTRIBUTES: u32 = 9;

/// `Span.Event.attributes`' field number.
const EVENT_ATTRIBUTES: u32 = 3;

/// A range of bytes of a [`SpanRecord`]: of its attributes for
/// [`Name::With`], of its text otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Text {
    start: u32,
    len: u32,
}

impl Text {
    fn new(start: usize, len: usize) -> Self {
        // A span's buffers beyond 4 GiB are not representable; ranges
        // saturate (the export then cuts the strings short).
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Self {
            start: clamp(start),
            len: clamp(len),
        }
    }

    pub(crate) fn len(self) -> usize {
        self.len as usize
    }

    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// OTLP's `SpanKind`, of those zr's spans take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Internal = 1,
    Client = 3,
}

/// OTLP's status code; an error's description is [`SpanRecord::description`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusCode {
    Unset = 0,
    Error = 2,
}

/// A span's name: its operation, then (the GenAI conventions'
/// `{operation} {target}`) the value of one of its attributes (a range of
/// the attributes' bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Name {
    Plain(&'static str),
    With(&'static str, Text),
}

/// An event of a span (a retry).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventRecord {
    pub(crate) time: u64,
    pub(crate) name: &'static str,
    /// `KeyValue` messages, as [`wire::key_value`] writes them.
    pub(crate) attributes: Vec<u8>,
}

impl EventRecord {
    /// An event at `time` named `name`, without attributes yet.
    pub(crate) fn new(time: u64, name: &'static str) -> Self {
        Self {
            time,
            name,
            attributes: Vec::new(),
        }
    }

    /// Appends the attribute `key` = `value`.
    pub(crate) fn attribute(&mut self, key: &str, value: AttrValue<'_>) {
        wire::key_value(&mut self.attributes, EVENT_ATTRIBUTES, key, value);
    }
}

/// One span, from its start to its end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpanRecord {
    pub(crate) trace_id: u128,
    pub(crate) span_id: u64,
    /// 0 for a root.
    pub(crate) parent_id: u64,
    pub(crate) name: Name,
    pub(crate) kind: Kind,
    /// Nanoseconds since the Unix epoch.
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) status: StatusCode,
    pub(crate) description: Option<Text>,
    pub(crate) events: Vec<EventRecord>,
    pub(crate) dropped_events: u32,
    /// `KeyValue` messages as field 9 of `Span`, ready to copy.
    attributes: Vec<u8>,
    /// The keys given to [`SpanRecord::set`] so far (a key set again
    /// replaces its value; those set at the start are never set again).
    late: [&'static str; LATE_KEYS],
    /// How many of `late` are used; beyond [`LATE_KEYS`] every key is
    /// looked for in the bytes.
    late_len: usize,
    /// What is not an attribute: the status description.
    text: String,
}

/// Keys set after a span's start that are remembered (an agent's end sets
/// eight).
const LATE_KEYS: usize = 12;

impl SpanRecord {
    /// A span started now.
    pub(crate) fn new(trace_id: u128, span_id: u64, parent_id: u64, name: &'static str) -> Self {
        Self {
            trace_id,
            span_id,
            parent_id,
            name: Name::Plain(name),
            kind: Kind::Internal,
            start: now(),
            end: 0,
            status: StatusCode::Unset,
            description: None,
            events: Vec::new(),
            dropped_events: 0,
            attributes: Vec::new(),
            late: [""; LATE_KEYS],
            late_len: 0,
            text: String::new(),
        }
    }

    /// Reserves `bytes` for attributes.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        self.attributes.reserve(bytes);
    }

    /// The attributes' bytes.
    pub(crate) fn attributes(&self) -> &[u8] {
        &self.attributes
    }

    /// Copies `text` into the text.
    pub(crate) fn push_str(&mut self, text: &str) -> Text {
        let start = self.text.len();
        self.text.push_str(text);
        Text::new(start, text.len())
    }

    /// The text `text` names.
    pub(crate) fn str(&self, text: Text) -> &str {
        self.text.get(text.range()).unwrap_or_default()
    }

    /// Appends the attribute `key` = `value` (a key not written before).
    /// Returns where a string value is, for [`Name::With`].
    pub(crate) fn push(&mut self, key: &str, value: AttrValue<'_>) -> Option<Text> {
        wire::key_value(&mut self.attributes, SPAN_ATTRIBUTES, key, value)
            .map(|(start, len)| Text::new(start, len))
    }

    /// Sets the attribute `key` to `value` after the start, replacing the
    /// value of an earlier `set` of the same key.
    pub(crate) fn set(&mut self, key: &'static str, value: AttrValue<'_>) {
        let known = &self.late[..self.late_len.min(LATE_KEYS)];
        let again = known.contains(&key);
        if again || self.late_len >= LATE_KEYS {
            self.remove(key);
        }
        if !again {
            if let Some(slot) = self.late.get_mut(self.late_len) {
                *slot = key;
            }
            self.late_len = self.late_len.saturating_add(1);
        }
        self.push(key, value);
    }

    /// Removes the attribute `key`, if written, keeping the name's range
    /// right.
    fn remove(&mut self, key: &str) {
        let found = wire::entries(&self.attributes).find(|(_, k)| *k == key.as_bytes());
        if let Some((range, _)) = found {
            let removed = Text::new(range.start, range.len());
            self.attributes.drain(range);
            if let Name::With(prefix, text) = self.name {
                let at = text.start as usize;
                if removed.range().contains(&at) {
                    self.name = Name::Plain(prefix);
                } else if at > removed.start as usize {
                    self.name = Name::With(prefix, Text::new(at - removed.len(), text.len()));
                }
            }
        }
    }

    /// Adds `event`, or counts it when the span has [`MAX_EVENTS`].
    pub(crate) fn add_event(&mut self, event: EventRecord) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        } else {
            self.dropped_events = self.dropped_events.saturating_add(1);
        }
    }

    /// The span's name, in its parts (`{prefix} {suffix}` or whole), as
    /// the UTF-8 bytes the export copies.
    pub(crate) fn name_bytes(&self) -> (&[u8], Option<&[u8]>) {
        match self.name {
            Name::Plain(name) => (name.as_bytes(), None),
            Name::With(name, text) => (
                name.as_bytes(),
                Some(self.attributes.get(text.range()).unwrap_or_default()),
            ),
        }
    }

    /// The span's name, in its parts (`{prefix} {suffix}` or whole).
    #[cfg(test)]
    pub(crate) fn name_parts(&self) -> (&str, Option<&str>) {
        let text = |bytes| std::str::from_utf8(bytes).expect("names are UTF-8");
        let (name, suffix) = self.name_bytes();
        (text(name), suffix.map(text))
    }
}

/// Attributes as `(key, value)` text, decoded with the OTLP crate's
/// messages (tests read records through it).
#[cfg(test)]
pub(crate) fn decoded(bytes: &[u8], event: bool) -> Vec<(String, String)> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
    use prost::Message as _;

    fn text(value: Option<&AnyValue>) -> String {
        match value.and_then(|v| v.value.as_ref()) {
            Some(Any::StringValue(s)) => s.clone(),
            Some(Any::IntValue(i)) => i.to_string(),
            Some(Any::BoolValue(b)) => b.to_string(),
            Some(Any::DoubleValue(x)) => x.to_string(),
            Some(Any::ArrayValue(a)) => format!(
                "[{}]",
                a.values
                    .iter()
                    .map(|v| text(Some(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => format!("{other:?}"),
        }
    }
    let attributes: Vec<KeyValue> = if event {
        opentelemetry_proto::tonic::trace::v1::span::Event::decode(bytes)
            .expect("an event's attributes")
            .attributes
    } else {
        opentelemetry_proto::tonic::trace::v1::Span::decode(bytes)
            .expect("a span's attributes")
            .attributes
    };
    attributes
        .iter()
        .map(|kv| (kv.key.clone(), text(kv.value.as_ref())))
        .collect()
}

/// Nanoseconds since the Unix epoch, now (0 before it).
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
