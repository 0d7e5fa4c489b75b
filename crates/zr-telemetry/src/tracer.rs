//! [`ExportTracer`]: the engine's [`Tracer`], which keeps each span as a
//! [`SpanRecord`] from its start and hands it to the export queue when
//! its last handle is dropped.
//!
//! The engine gives a span's attributes as its own values; each is
//! written at once as its OTLP bytes, in the span's one buffer. A span's
//! name is its operation, completed (the GenAI conventions'
//! `{operation} {target}`) by the value of the attribute that names its
//! target (`invoke_agent worker`, `chat claude-sonnet-4-5`,
//! `execute_tool Bash`). A span keeps its parent's handle, so a parent
//! ends after its children (a session's span after its background
//! agents').

use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use zr_engine::{Attribute, SpanKind, SpanStart, TraceSpan, Tracer};

use crate::conventions::naming_attribute;
use crate::ids::Ids;
use crate::queue::SpanSink;
use crate::record::{EventRecord, Kind, Name, SpanRecord, StatusCode, now};

/// Room reserved for a span's attributes up front: an agent span's fit,
/// so most spans allocate their buffer once.
const ATTRIBUTES_RESERVE: usize = 384;

/// The tracer; see the module's documentation.
pub(crate) struct ExportTracer {
    /// Where ended spans go: the export queue.
    pub(crate) sink: Arc<dyn SpanSink>,
    pub(crate) ids: Arc<Ids>,
    pub(crate) capture_content: bool,
}

impl std::fmt::Debug for ExportTracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportTracer")
            .field("capture_content", &self.capture_content)
            .finish_non_exhaustive()
    }
}

impl Tracer for ExportTracer {
    fn capture_content(&self) -> bool {
        self.capture_content
    }

    fn start(
        &self,
        parent: Option<&Arc<dyn TraceSpan>>,
        start: &SpanStart<'_>,
    ) -> Arc<dyn TraceSpan> {
        // A parent of another tracer's (not the engine's way) starts a
        // trace of its own.
        let parent = parent.and_then(|p| {
            p.as_any()
                .downcast_ref::<Live>()
                .map(|live| ((live.trace_id, live.span_id), Arc::clone(p)))
        });
        let (trace_id, parent_id) = parent
            .as_ref()
            .map_or_else(|| (self.ids.trace_id(), 0), |(ids, _)| *ids);
        let span_id = self.ids.span_id();
        let mut record = SpanRecord::new(trace_id, span_id, parent_id, start.operation);
        record.kind = match start.kind {
            SpanKind::Internal => Kind::Internal,
            SpanKind::Client => Kind::Client,
        };
        record.reserve(ATTRIBUTES_RESERVE);
        let naming = naming_attribute(start.operation);
        for attribute in start.attributes {
            let at = record.push(attribute.key, attribute.value);
            if naming == Some(attribute.key)
                && let Some(text) = at
            {
                record.name = Name::With(start.operation, text);
            }
        }
        Arc::new(Live {
            trace_id,
            span_id,
            record: Mutex::new(record),
            sink: Arc::clone(&self.sink),
            _parent: parent.map(|(_, handle)| handle),
        })
    }
}

/// A running span.
struct Live {
    trace_id: u128,
    span_id: u64,
    record: Mutex<SpanRecord>,
    sink: Arc<dyn SpanSink>,
    /// Kept so that the parent ends after this span.
    _parent: Option<Arc<dyn TraceSpan>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("span_id", &self.span_id)
            .finish_non_exhaustive()
    }
}

impl Live {
    fn record(&self) -> MutexGuard<'_, SpanRecord> {
        // A panic elsewhere while the record was locked leaves it whole
        // (every change is one call): go on with it.
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TraceSpan for Live {
    fn set(&self, attributes: &[Attribute<'_>]) {
        let mut record = self.record();
        for attribute in attributes {
            record.set(attribute.key, attribute.value);
        }
    }

    fn add_event(&self, name: &'static str, attributes: &[Attribute<'_>]) {
        let mut event = EventRecord::new(now(), name);
        for attribute in attributes {
            event.attribute(attribute.key, attribute.value);
        }
        self.record().add_event(event);
    }

    fn set_error(&self, description: Option<&str>) {
        let mut record = self.record();
        record.status = StatusCode::Error;
        record.description = description.map(|text| record.push_str(text));
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let record = self
            .record
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        record.end = now();
        self.sink.push(record);
        // The record (its buffers) is freed with the span, by the thread
        // that made it.
    }
}

#[cfg(test)]
mod tests;
