//! The last touches before a span is queued for export: what a `tracing`
//! field cannot say in the GenAI conventions' types, and the content the
//! host did not ask for.
//!
//! - `gen_ai.response.finish_reasons` is a string array in the
//!   conventions; the engine records it comma-separated;
//! - without `capture_content`, message content (prompts, answers, tool
//!   arguments and results) is removed from every span, whatever the
//!   engine recorded (another layer may have enabled the content target).

use std::time::Duration;

use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};

/// The attributes that hold message content.
pub(crate) const CONTENT_ATTRIBUTES: [&str; 5] = [
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
];

/// Wraps the batch processor: every span passes [`fix`] first.
#[derive(Debug)]
pub(crate) struct Conventions<P> {
    pub(crate) inner: P,
    pub(crate) capture_content: bool,
}

impl<P: SpanProcessor> SpanProcessor for Conventions<P> {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        fix(&mut span.attributes, self.capture_content);
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// Applies the conventions' types to `attributes`, and drops content
/// unless `capture_content`.
pub(crate) fn fix(attributes: &mut Vec<KeyValue>, capture_content: bool) {
    if !capture_content {
        attributes.retain(|kv| !CONTENT_ATTRIBUTES.contains(&kv.key.as_str()));
    }
    for kv in attributes.iter_mut() {
        if kv.key.as_str() == "gen_ai.response.finish_reasons"
            && let Value::String(list) = &kv.value
        {
            let reasons: Vec<StringValue> = list
                .as_str()
                .split(',')
                .map(|r| StringValue::from(r.trim().to_owned()))
                .collect();
            kv.value = Value::Array(Array::String(reasons));
        }
    }
}

#[cfg(test)]
mod tests;
