//! What is kept of one span from its start to its end, and sent as it is
//! to the export thread: ids, times, name, kind, status, attributes and
//! events. Every string of a span (its attributes', its events') is
//! copied into one buffer of the span's, and an attribute holds a range of
//! it: a span costs a few allocations, not one per field.

use std::time::{SystemTime, UNIX_EPOCH};

/// The most events a span keeps; later ones are counted as dropped (the
/// OpenTelemetry SDK's default limit).
pub(crate) const MAX_EVENTS: usize = 128;

/// A range of a [`SpanRecord`]'s text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Text {
    start: u32,
    len: u32,
}

impl Text {
    pub(crate) fn len(self) -> usize {
        self.len as usize
    }
}

/// An attribute's value, in the types OTLP has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum AttrValue {
    Str(Text),
    Bool(bool),
    I64(i64),
    F64(f64),
    /// A string array, written comma-separated (the finish reasons).
    StrList(Text),
}

/// A key (a `tracing` field's name) and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Attribute {
    pub(crate) key: &'static str,
    pub(crate) value: AttrValue,
}

/// OTLP's `SpanKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Internal = 1,
    Server = 2,
    Client = 3,
    Producer = 4,
    Consumer = 5,
}

impl Kind {
    /// The kind `otel.kind` names (any case), as `tracing-opentelemetry`
    /// reads it.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        [
            ("internal", Self::Internal),
            ("server", Self::Server),
            ("client", Self::Client),
            ("producer", Self::Producer),
            ("consumer", Self::Consumer),
        ]
        .into_iter()
        .find_map(|(name, kind)| text.eq_ignore_ascii_case(name).then_some(kind))
    }
}

/// OTLP's status code; an error's description is [`SpanRecord::description`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusCode {
    Unset = 0,
    Ok = 1,
    Error = 2,
}

/// A span's name: its `tracing` name, then (the GenAI conventions'
/// `{operation} {target}`) the value of one of its attributes, or a name
/// given whole by `otel.name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Name {
    Plain(&'static str),
    With(&'static str, Text),
    Given(Text),
}

/// An event of a span (a retry).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventRecord {
    pub(crate) time: u64,
    pub(crate) name: EventName,
    pub(crate) attributes: Vec<Attribute>,
}

/// An event's name: its `message` field, or its `tracing` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventName {
    Static(&'static str),
    Message(Text),
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
    pub(crate) attributes: Vec<Attribute>,
    pub(crate) events: Vec<EventRecord>,
    pub(crate) dropped_events: u32,
    text: String,
}

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
            attributes: Vec::new(),
            events: Vec::new(),
            dropped_events: 0,
            text: String::new(),
        }
    }

    /// Reserves room for `attributes` more attributes and `bytes` of text.
    pub(crate) fn reserve(&mut self, attributes: usize, bytes: usize) {
        self.attributes.reserve_exact(attributes);
        self.text.reserve(bytes);
    }

    /// Copies `text` in.
    pub(crate) fn push_str(&mut self, text: &str) -> Text {
        let start = self.text.len();
        self.text.push_str(text);
        self.range_from(start)
    }

    /// Writes `value` in with its `Debug` form (a `%` field's `Display`).
    pub(crate) fn push_debug(&mut self, value: &dyn std::fmt::Debug) -> Text {
        use std::fmt::Write as _;
        let start = self.text.len();
        // Writing to a `String` does not fail; a `Debug` that does leaves
        // what it wrote.
        let _ = write!(self.text, "{value:?}");
        self.range_from(start)
    }

    fn range_from(&self, start: usize) -> Text {
        // A span's text beyond 4 GiB is not representable; its ranges
        // saturate (the export then cuts the strings short).
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Text {
            start: clamp(start),
            len: clamp(self.text.len() - start),
        }
    }

    /// The string `text` names.
    pub(crate) fn str(&self, text: Text) -> &str {
        let start = text.start as usize;
        self.text.get(start..start + text.len()).unwrap_or_default()
    }

    /// Adds `key`, known not to be set yet (a new span's fields).
    pub(crate) fn push(&mut self, key: &'static str, value: AttrValue) {
        self.attributes.push(Attribute { key, value });
    }

    /// Sets `key` (replacing a value recorded before).
    pub(crate) fn set(&mut self, key: &'static str, value: AttrValue) {
        match self.attributes.iter_mut().find(|a| a.key == key) {
            Some(attribute) => attribute.value = value,
            None => self.attributes.push(Attribute { key, value }),
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

    /// The span's name, in its parts (`{prefix} {suffix}` or whole).
    pub(crate) fn name_parts(&self) -> (&str, Option<&str>) {
        match self.name {
            Name::Plain(name) => (name, None),
            Name::With(name, text) => (name, Some(self.str(text))),
            Name::Given(text) => (self.str(text), None),
        }
    }
}

/// Nanoseconds since the Unix epoch, now (0 before it).
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
