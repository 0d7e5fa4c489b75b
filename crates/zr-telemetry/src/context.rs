//! W3C trace context (`traceparent`, `tracestate`) through the
//! OpenTelemetry SDK's propagator: the host's span read at start, a
//! span's context given to the processes started inside it.

use std::collections::HashMap;

use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::{SpanContext, TraceContextExt as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use zr_engine::TraceContext;

use crate::config::TraceParent;

/// The context `parent` names, as a parent of spans; `None` when it is
/// not a valid trace context.
pub(crate) fn extract(parent: &TraceParent) -> Option<Context> {
    let mut carrier = HashMap::from([("traceparent".to_owned(), parent.traceparent.clone())]);
    if let Some(state) = &parent.tracestate {
        carrier.insert("tracestate".to_owned(), state.clone());
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    let valid = context.span().span_context().is_valid();
    valid.then_some(context)
}

/// `span`'s context as W3C writes it; `None` for an invalid one.
pub(crate) fn inject(span: &SpanContext) -> Option<TraceContext> {
    let context = Context::new().with_remote_span_context(span.clone());
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut carrier);
    Some(TraceContext {
        traceparent: carrier.remove("traceparent")?,
        tracestate: carrier.remove("tracestate").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests;
