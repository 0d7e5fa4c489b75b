//! W3C trace contexts read and written.

use opentelemetry::trace::{SpanId, TraceFlags, TraceId, TraceState};

use super::*;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn a_valid_traceparent_is_read_with_its_state() {
    let context = extract(&TraceParent {
        traceparent: PARENT.to_owned(),
        tracestate: Some("vendor=x".to_owned()),
    })
    .expect("a valid context");
    let span = context.span();
    let span = span.span_context();
    assert_eq!(
        span.trace_id(),
        TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap()
    );
    assert_eq!(
        span.span_id(),
        SpanId::from_hex("00f067aa0ba902b7").unwrap()
    );
    assert!(span.is_sampled());
    assert!(span.is_remote());
    assert_eq!(span.trace_state().header(), "vendor=x");
}

#[test]
fn an_invalid_traceparent_is_none() {
    for bad in [
        "",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "not a context",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
    ] {
        let parent = TraceParent {
            traceparent: bad.to_owned(),
            tracestate: None,
        };
        assert!(extract(&parent).is_none(), "{bad:?}");
    }
}

#[test]
fn a_span_context_is_written_as_w3c_says() {
    let span = SpanContext::new(
        TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
        SpanId::from_hex("00f067aa0ba902b7").unwrap(),
        TraceFlags::SAMPLED,
        false,
        TraceState::from_key_value([("vendor", "x")]).unwrap(),
    );
    assert_eq!(
        inject(&span),
        Some(TraceContext {
            traceparent: PARENT.to_owned(),
            tracestate: "vendor=x".to_owned(),
        })
    );
    assert_eq!(inject(&SpanContext::empty_context()), None);
}
