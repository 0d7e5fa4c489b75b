//! [`ExportLayer`]: the `tracing` layer that turns the engine's spans into
//! [`SpanRecord`]s and hands each to the export queue as it closes.
//!
//! A span's record lives in the registry's extensions from `on_new_span`
//! to `on_close`; its parent is the nearest enclosing span this layer
//! exports (so the `tracing` tree is the trace's), and a span without one
//! starts a trace. Entering and leaving a span (every poll of an
//! instrumented future) costs this layer nothing: it does not implement
//! `on_enter` or `on_exit`. Fields are written into the record as they
//! come: each attribute as its OTLP bytes, in the span's one buffer (a
//! `%` field formatted straight into it); `otel.*` fields turned into the
//! span's name, kind and status; content left out unless asked for.

use std::fmt::Debug;
use std::sync::Arc;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::conventions::{MESSAGE, Role, naming_attribute, role};
use crate::ids::Ids;
use crate::queue::SpanSink;
use crate::record::{EventName, EventRecord, Kind, Name, SpanRecord, StatusCode, now};
use crate::wire::AttrValue;

/// Room reserved for a span's attributes up front: an agent span's fit,
/// so most spans allocate their buffer once.
const ATTRIBUTES_RESERVE: usize = 384;

/// The layer; see the module's documentation.
pub(crate) struct ExportLayer {
    /// Where ended spans go: the export queue.
    pub(crate) sink: Arc<dyn SpanSink>,
    pub(crate) ids: Arc<Ids>,
    pub(crate) capture_content: bool,
}

impl std::fmt::Debug for ExportLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportLayer")
            .field("capture_content", &self.capture_content)
            .finish_non_exhaustive()
    }
}

impl<S> tracing_subscriber::Layer<S> for ExportLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let parent = span.parent().and_then(|parent| {
            parent
                .extensions()
                .get::<SpanRecord>()
                .map(|p| (p.trace_id, p.span_id))
        });
        let (trace_id, parent_id) = parent.unwrap_or_else(|| (self.ids.trace_id(), 0));
        let metadata = attrs.metadata();
        let mut record = SpanRecord::new(trace_id, self.ids.span_id(), parent_id, metadata.name());
        record.reserve(ATTRIBUTES_RESERVE);
        attrs.record(&mut SpanVisitor {
            record: &mut record,
            capture_content: self.capture_content,
            naming: naming_attribute(metadata.name()),
        });
        // `replace`, not `insert`: a second exporting layer in the same
        // subscriber must not panic the host (its record takes the place).
        span.extensions_mut().replace(record);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if let Some(record) = extensions.get_mut::<SpanRecord>() {
            values.record(&mut SpanVisitor {
                record,
                capture_content: self.capture_content,
                naming: naming_attribute(span.name()),
            });
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(record) = extensions.get_mut::<SpanRecord>() else {
            return;
        };
        let mut visitor = EventVisitor {
            record,
            capture_content: self.capture_content,
            event: EventRecord::new(now(), event.metadata().name()),
        };
        event.record(&mut visitor);
        let EventVisitor { record, event, .. } = visitor;
        record.add_event(event);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(mut record) = span.extensions_mut().remove::<SpanRecord>() else {
            return;
        };
        record.end = now();
        self.sink.push(record);
    }
}

/// A string field's value, borrowed or to be formatted.
#[derive(Clone, Copy)]
enum Str<'a> {
    Plain(&'a str),
    Debug(&'a dyn Debug),
}

impl<'a> Str<'a> {
    fn value(self) -> AttrValue<'a> {
        match self {
            Self::Plain(text) => AttrValue::Str(text),
            Self::Debug(value) => AttrValue::Debug(value),
        }
    }

    /// Whether the value, as text, satisfies `test` (for the few
    /// `otel.*` values that are read, not kept).
    fn test(self, test: impl Fn(&str) -> bool) -> bool {
        match self {
            Self::Plain(text) => test(text),
            Self::Debug(value) => test(&format!("{value:?}")),
        }
    }
}

/// Writes a span's fields into its record.
struct SpanVisitor<'a> {
    record: &'a mut SpanRecord,
    capture_content: bool,
    /// The attribute that completes the span's name.
    naming: Option<&'static str>,
}

impl SpanVisitor<'_> {
    fn attribute(&mut self, field: &Field, value: AttrValue<'_>) {
        self.record.set(field.index(), field.name(), value);
    }

    fn string(&mut self, field: &Field, value: Str<'_>) {
        let key = field.name();
        match role(key) {
            Role::Name => {
                let text = match value {
                    Str::Plain(text) => self.record.push_str(text),
                    Str::Debug(value) => self.record.push_debug(value),
                };
                self.record.name = Name::Given(text);
            }
            Role::Kind => {
                let kind = match value {
                    Str::Plain(text) => Kind::parse(text),
                    Str::Debug(value) => Kind::parse(&format!("{value:?}")),
                };
                if let Some(kind) = kind {
                    self.record.kind = kind;
                }
            }
            Role::StatusCode => {
                if value.test(|t| t.eq_ignore_ascii_case("error")) {
                    self.record.status = StatusCode::Error;
                } else if value.test(|t| t.eq_ignore_ascii_case("ok")) {
                    self.record.status = StatusCode::Ok;
                    self.record.description = None;
                } else {
                    self.record.status = StatusCode::Unset;
                    self.record.description = None;
                }
            }
            Role::StatusDescription => {
                let text = match value {
                    Str::Plain(text) => self.record.push_str(text),
                    Str::Debug(value) => self.record.push_debug(value),
                };
                self.record.status = StatusCode::Error;
                self.record.description = Some(text);
            }
            Role::FinishReasons => match value {
                Str::Plain(list) => self.attribute(field, AttrValue::List(list)),
                Str::Debug(value) => self.attribute(field, AttrValue::List(&format!("{value:?}"))),
            },
            Role::Content if !self.capture_content => {}
            Role::Content | Role::Attribute => {
                let text = self.record.set(field.index(), key, value.value());
                if self.naming == Some(key)
                    && let Some(text) = text
                {
                    self.record.name = match self.record.name {
                        Name::Plain(prefix) | Name::With(prefix, _) => Name::With(prefix, text),
                        given @ Name::Given(_) => given,
                    };
                }
            }
        }
    }
}

impl Visit for SpanVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.string(field, Str::Plain(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.string(field, Str::Debug(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.attribute(field, AttrValue::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(value) => self.attribute(field, AttrValue::I64(value)),
            Err(_) => self.string(field, Str::Debug(&value)),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.attribute(field, AttrValue::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.attribute(field, AttrValue::Bool(value));
    }
}

/// Writes an event's fields: `message` names it (in the span's text), the
/// others are its attributes.
struct EventVisitor<'a> {
    record: &'a mut SpanRecord,
    capture_content: bool,
    event: EventRecord,
}

impl EventVisitor<'_> {
    fn string(&mut self, field: &Field, value: Str<'_>) {
        let key = field.name();
        if key == MESSAGE {
            let text = match value {
                Str::Plain(text) => self.record.push_str(text),
                Str::Debug(value) => self.record.push_debug(value),
            };
            self.event.name = EventName::Message(text);
        } else if self.capture_content || role(key) != Role::Content {
            self.event.attribute(key, value.value());
        }
    }
}

impl Visit for EventVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.string(field, Str::Plain(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.string(field, Str::Debug(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.event.attribute(field.name(), AttrValue::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(value) => self.event.attribute(field.name(), AttrValue::I64(value)),
            Err(_) => self.string(field, Str::Debug(&value)),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.event.attribute(field.name(), AttrValue::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.event.attribute(field.name(), AttrValue::Bool(value));
    }
}

#[cfg(test)]
mod tests;
