//! Starting the exporter: what it refuses, and the tracer asks the engine
//! for content only with `capture_content`.

use crate::config::{Protocol, TelemetryConfig};
use crate::error::TelemetryError;
use crate::exporter::Telemetry;

/// Whether the tracer of an exporter started with `capture_content`
/// asks for content. The exporter sends nothing (no span is made) and is
/// shut down after.
fn asks_for_content(capture_content: bool, protocol: Protocol) -> bool {
    // A discard port: nothing is sent, as no span is made.
    let mut config = TelemetryConfig::new("http://127.0.0.1:9/v1/traces");
    config.capture_content = capture_content;
    config.protocol = protocol;
    let telemetry = Telemetry::start(config).expect("an HTTP endpoint");
    let asks = telemetry.tracer().capture_content();
    telemetry.shutdown();
    asks
}

#[test]
fn content_is_asked_for_only_with_capture_content() {
    for protocol in [Protocol::HttpProtobuf, Protocol::HttpJson, Protocol::Grpc] {
        assert!(!asks_for_content(false, protocol));
        assert!(asks_for_content(true, protocol));
    }
}

#[test]
fn an_endpoint_that_is_not_http_is_refused() {
    let error = Telemetry::start(TelemetryConfig::new("localhost:4317")).unwrap_err();
    assert!(
        matches!(error, TelemetryError::BadEndpoint { ref endpoint } if endpoint == "localhost:4317"),
        "{error:?}"
    );
}

#[test]
fn a_header_http_cannot_carry_is_refused_naming_it() {
    for protocol in [Protocol::HttpProtobuf, Protocol::Grpc] {
        let mut config = TelemetryConfig::new("http://127.0.0.1:9/v1/traces");
        config.protocol = protocol;
        config.headers = vec![("bad name".to_owned(), "v".to_owned())];
        let error = Telemetry::start(config).unwrap_err();
        assert_eq!(
            error.to_string(),
            "telemetry header 'bad name=v' is not key=value"
        );
    }
}
