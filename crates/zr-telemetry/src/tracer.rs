//! [`ExportTracer`]: the engine's [`Tracer`] on the OpenTelemetry SDK's
//! tracer. Each engine span is an SDK span from its start, ended (and
//! handed to the batch processor) when its last handle is dropped.
//!
//! A span's name is its operation, completed (the GenAI conventions'
//! `{operation} {target}`) by the value of the attribute that names its
//! target (`invoke_agent worker`, `chat claude-sonnet-4-5`,
//! `execute_tool Bash`). Attributes set after the start wait in the span's
//! handle until it ends, so that a key set again keeps its last value
//! (the SDK would keep both). A span keeps its parent's handle, so a
//! parent ends after its children (a session's span after its background
//! agents'). A span without a parent is a child of the host's span
//! (`TRACEPARENT`) when there is one, else the root of a new trace.

use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use opentelemetry::trace::{
    Span as _, SpanBuilder, SpanContext, Status, TraceContextExt as _, Tracer as _,
};
use opentelemetry::{Context, Key, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use zr_engine::{Attribute, AttributeValue, SpanKind, SpanStart, TraceContext, TraceSpan, Tracer};

use crate::context;
use crate::conventions::naming_attribute;

/// The tracer; see the module's documentation.
pub(crate) struct ExportTracer {
    pub(crate) tracer: SdkTracer,
    /// What a span without a parent is a child of: the host's span, or
    /// nothing.
    pub(crate) root: Context,
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
        // A parent of another tracer's (not the engine's way) starts from
        // the root.
        let parent = parent.and_then(|p| {
            p.as_any()
                .downcast_ref::<Live>()
                .map(|live| (live.context.clone(), Arc::clone(p)))
        });
        let naming = naming_attribute(start.operation);
        let mut name = std::borrow::Cow::Borrowed(start.operation);
        let attributes: Vec<KeyValue> = start
            .attributes
            .iter()
            .map(|attribute| {
                if naming == Some(attribute.key)
                    && let AttributeValue::Str(target) = attribute.value
                {
                    name = format!("{} {target}", start.operation).into();
                }
                key_value(attribute)
            })
            .collect();
        let builder = SpanBuilder::from_name(name)
            .with_kind(match start.kind {
                SpanKind::Internal => opentelemetry::trace::SpanKind::Internal,
                SpanKind::Client => opentelemetry::trace::SpanKind::Client,
            })
            .with_attributes(attributes);
        let span = match &parent {
            Some((context, _)) => self.tracer.build_with_context(
                builder,
                &Context::new().with_remote_span_context(context.clone()),
            ),
            None => self.tracer.build_with_context(builder, &self.root),
        };
        Arc::new(Live {
            context: span.span_context().clone(),
            span: Mutex::new(Open {
                span,
                late: Vec::new(),
            }),
            _parent: parent.map(|(_, handle)| handle),
        })
    }
}

/// `attribute` as OpenTelemetry's (its key not copied).
fn key_value(attribute: &Attribute<'_>) -> KeyValue {
    KeyValue::new(Key::from_static_str(attribute.key), value(attribute.value))
}

fn value(value: AttributeValue<'_>) -> Value {
    match value {
        AttributeValue::Str(text) => Value::String(text.to_owned().into()),
        AttributeValue::I64(i) => Value::I64(i),
        AttributeValue::F64(x) => Value::F64(x),
        AttributeValue::Bool(b) => Value::Bool(b),
        AttributeValue::StrArray(items) => Value::Array(
            items
                .iter()
                .map(|item| StringValue::from((*item).to_owned()))
                .collect::<Vec<_>>()
                .into(),
        ),
    }
}

/// A running span.
struct Live {
    /// Its ids (a local parent's context for its children: not remote).
    context: SpanContext,
    span: Mutex<Open>,
    /// Kept so that the parent ends after this span.
    _parent: Option<Arc<dyn TraceSpan>>,
}

/// The SDK's span, and the attributes set since its start.
struct Open {
    span: Span,
    late: Vec<KeyValue>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

impl Live {
    fn open(&self) -> MutexGuard<'_, Open> {
        // A panic elsewhere while the span was locked leaves it whole
        // (every change is one call): go on with it.
        self.span.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TraceSpan for Live {
    fn set(&self, attributes: &[Attribute<'_>]) {
        let mut open = self.open();
        for attribute in attributes {
            let kv = key_value(attribute);
            match open.late.iter_mut().find(|known| known.key == kv.key) {
                Some(known) => *known = kv,
                None => open.late.push(kv),
            }
        }
    }

    fn add_event(&self, name: &'static str, attributes: &[Attribute<'_>]) {
        let attributes = attributes.iter().map(key_value).collect();
        self.open().span.add_event(name, attributes);
    }

    fn set_error(&self, description: Option<&str>) {
        self.open()
            .span
            .set_status(Status::error(description.unwrap_or_default().to_owned()));
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn context(&self) -> Option<TraceContext> {
        context::inject(&self.context)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let open = self.span.get_mut().unwrap_or_else(PoisonError::into_inner);
        let late = std::mem::take(&mut open.late);
        open.span.set_attributes(late);
        open.span.end();
    }
}

#[cfg(test)]
mod tests;
