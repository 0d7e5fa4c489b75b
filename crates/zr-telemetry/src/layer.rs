//! [`ExportLayer`]: the `tracing` layer that turns the engine's spans into
//! [`SpanRecord`]s and queues each as it closes.
//!
//! A span's record lives in the registry's extensions from `on_new_span`
//! to `on_close`; its parent is the nearest enclosing span this layer
//! exports (so the `tracing` tree is the trace's), and a span without one
//! starts a trace. Entering and leaving a span (every poll of an
//! instrumented future) costs this layer nothing: it does not implement
//! `on_enter` or `on_exit`. Fields are written into the record as they
//! come: strings copied into the span's one buffer, numbers as they are,
//! `otel.*` fields turned into the span's name, kind and status, content
//! left out unless asked for.

use std::fmt::Debug;
use std::sync::Arc;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::conventions::{MESSAGE, Role, naming_attribute, role};
use crate::ids::Ids;
use crate::queue::Queue;
use crate::record::{
    AttrValue, Attribute, EventName, EventRecord, Kind, Name, SpanRecord, StatusCode, Text, now,
};

/// Room reserved for a span's strings up front: an agent span's ids,
/// names and model fit, so most spans allocate their buffer once.
const TEXT_RESERVE: usize = 192;

/// The layer; see the module's documentation.
#[derive(Debug)]
pub(crate) struct ExportLayer {
    pub(crate) queue: Arc<Queue>,
    pub(crate) ids: Arc<Ids>,
    pub(crate) capture_content: bool,
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
        record.reserve(metadata.fields().len(), TEXT_RESERVE);
        attrs.record(&mut SpanVisitor {
            record: &mut record,
            capture_content: self.capture_content,
            naming: naming_attribute(metadata.name()),
            fresh: true,
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
                fresh: false,
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
            name: EventName::Static(event.metadata().name()),
            attributes: Vec::new(),
        };
        event.record(&mut visitor);
        let EventVisitor {
            record,
            name,
            attributes,
            ..
        } = visitor;
        record.add_event(EventRecord {
            time: now(),
            name,
            attributes,
        });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(mut record) = span.extensions_mut().remove::<SpanRecord>() else {
            return;
        };
        record.end = now();
        self.queue.push(record);
    }
}

/// A string field's value, borrowed or to be formatted.
#[derive(Clone, Copy)]
enum Str<'a> {
    Plain(&'a str),
    Debug(&'a dyn Debug),
}

impl Str<'_> {
    fn write(self, record: &mut SpanRecord) -> Text {
        match self {
            Self::Plain(text) => record.push_str(text),
            Self::Debug(value) => record.push_debug(value),
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
    /// Whether no field has been recorded yet (a new span's fields are
    /// distinct, so none replaces another).
    fresh: bool,
}

impl SpanVisitor<'_> {
    fn attribute(&mut self, key: &'static str, value: AttrValue) {
        if self.fresh {
            self.record.push(key, value);
        } else {
            self.record.set(key, value);
        }
    }

    fn string(&mut self, field: &Field, value: Str<'_>) {
        let key = field.name();
        match role(key) {
            Role::Name => {
                let text = value.write(self.record);
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
                let text = value.write(self.record);
                self.record.status = StatusCode::Error;
                self.record.description = Some(text);
            }
            Role::FinishReasons => {
                let text = value.write(self.record);
                self.attribute(key, AttrValue::StrList(text));
            }
            Role::Content if !self.capture_content => {}
            Role::Content | Role::Attribute => {
                let text = value.write(self.record);
                if self.naming == Some(key) {
                    self.record.name = match self.record.name {
                        Name::Plain(prefix) | Name::With(prefix, _) => Name::With(prefix, text),
                        given @ Name::Given(_) => given,
                    };
                }
                self.attribute(key, AttrValue::Str(text));
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
        self.attribute(field.name(), AttrValue::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(value) => self.attribute(field.name(), AttrValue::I64(value)),
            Err(_) => self.string(field, Str::Debug(&value)),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.attribute(field.name(), AttrValue::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.attribute(field.name(), AttrValue::Bool(value));
    }
}

/// Writes an event's fields: `message` names it, the others are its
/// attributes (strings in the span's buffer).
struct EventVisitor<'a> {
    record: &'a mut SpanRecord,
    capture_content: bool,
    name: EventName,
    attributes: Vec<Attribute>,
}

impl EventVisitor<'_> {
    fn string(&mut self, field: &Field, value: Str<'_>) {
        let key = field.name();
        if key == MESSAGE {
            self.name = EventName::Message(value.write(self.record));
        } else if self.capture_content || role(key) != Role::Content {
            let text = value.write(self.record);
            self.push(key, AttrValue::Str(text));
        }
    }

    fn push(&mut self, key: &'static str, value: AttrValue) {
        self.attributes.push(Attribute { key, value });
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
        self.push(field.name(), AttrValue::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(value) => self.push(field.name(), AttrValue::I64(value)),
            Err(_) => self.string(field, Str::Debug(&value)),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field.name(), AttrValue::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field.name(), AttrValue::Bool(value));
    }
}

#[cfg(test)]
mod tests;
