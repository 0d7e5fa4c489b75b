//! What the layer asks the engine for: its spans always, their content
//! only with `capture_content` (`Targets` matches targets by prefix, so
//! `gen_ai` alone would also enable `gen_ai_content`).

use tracing::Level;
use tracing_subscriber::layer::SubscriberExt as _;
use zr_engine::{CONTENT_TARGET, TELEMETRY_TARGET};

use crate::config::TelemetryConfig;
use crate::exporter::Telemetry;

/// Runs `check` with the layer of an exporter started with
/// `capture_content` as the default subscriber. The exporter sends
/// nothing (no span is made) and is shut down after.
fn with_layer<T>(capture_content: bool, check: impl FnOnce() -> T) -> T {
    // A discard port: nothing is sent, as no span is made.
    let mut config = TelemetryConfig::new("http://127.0.0.1:9/v1/traces");
    config.capture_content = capture_content;
    let telemetry = Telemetry::start(config).expect("an HTTP endpoint");
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let seen = tracing::subscriber::with_default(subscriber, check);
    telemetry.shutdown();
    seen
}

#[test]
fn without_capture_content_the_content_target_is_off_and_the_spans_on() {
    let (spans, content, other) = with_layer(false, || {
        (
            tracing::enabled!(target: TELEMETRY_TARGET, Level::INFO),
            tracing::enabled!(target: CONTENT_TARGET, Level::INFO),
            tracing::enabled!(target: "zr_engine", Level::INFO),
        )
    });
    assert!(spans, "the GenAI spans are exported");
    assert!(!content, "content is not even formatted unless asked for");
    assert!(!other, "other targets stay local");
}

#[test]
fn with_capture_content_the_content_target_is_on() {
    let (spans, content) = with_layer(true, || {
        (
            tracing::enabled!(target: TELEMETRY_TARGET, Level::INFO),
            tracing::enabled!(target: CONTENT_TARGET, Level::INFO),
        )
    });
    assert!(spans);
    assert!(content);
}
