//! The exporter's tracer asks the engine for content only with
//! `capture_content`.

use crate::config::TelemetryConfig;
use crate::exporter::Telemetry;

/// Whether the tracer of an exporter started with `capture_content`
/// asks for content. The exporter sends nothing (no span is made) and is
/// shut down after.
fn asks_for_content(capture_content: bool) -> bool {
    // A discard port: nothing is sent, as no span is made.
    let mut config = TelemetryConfig::new("http://127.0.0.1:9/v1/traces");
    config.capture_content = capture_content;
    let telemetry = Telemetry::start(config).expect("an HTTP endpoint");
    let asks = telemetry.tracer().capture_content();
    telemetry.shutdown();
    asks
}

#[test]
fn content_is_asked_for_only_with_capture_content() {
    assert!(!asks_for_content(false));
    assert!(asks_for_content(true));
}
