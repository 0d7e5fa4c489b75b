//! The standard variables, read as the OTLP exporter specification says.

use std::collections::BTreeMap;

use super::*;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn nothing_set_means_off() {
    assert_eq!(TelemetryConfig::from_env(&env(&[])).unwrap(), None);
}

#[test]
fn the_base_endpoint_gets_the_traces_path_and_the_signal_one_is_used_as_it_is() {
    let base =
        TelemetryConfig::from_env(&env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318/")]))
            .unwrap()
            .unwrap();
    assert_eq!(base.endpoint, "http://h:4318/v1/traces");
    let both = TelemetryConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(both.endpoint, "http://t:1/custom");
}

#[test]
fn headers_are_split_trimmed_and_percent_decoded_and_the_traces_ones_win() {
    let config = TelemetryConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
        ("OTEL_EXPORTER_OTLP_HEADERS", " api-key = a%20b , x=1,"),
        ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X=2"),
        ("OTEL_SERVICE_NAME", "svc"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(
        config.headers,
        [
            ("api-key".to_owned(), "a b".to_owned()),
            ("X".to_owned(), "2".to_owned())
        ]
    );
    assert_eq!(config.service_name, "svc");
}

#[test]
fn a_header_without_a_value_is_an_error_naming_it() {
    let error = TelemetryConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "good=1,broken"),
    ]))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "telemetry header 'broken' is not key=value"
    );
}

#[test]
fn the_sdk_can_be_disabled_by_its_variable() {
    let off = TelemetryConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
        ("OTEL_SDK_DISABLED", "TRUE"),
    ]))
    .unwrap();
    assert_eq!(off, None);
}

#[test]
fn a_percent_without_hex_digits_is_kept() {
    assert_eq!(percent_decode("100%"), "100%");
    assert_eq!(percent_decode("%zz%41"), "%zzA");
}

#[test]
fn the_protocol_chooses_how_the_base_endpoint_is_read() {
    let grpc = TelemetryConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4317"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(grpc.protocol, Protocol::Grpc);
    assert_eq!(grpc.endpoint, "http://h:4317", "gRPC has no path");
    let json = TelemetryConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(
        json.protocol,
        Protocol::HttpJson,
        "the traces variable wins"
    );
    assert_eq!(json.endpoint, "http://h:4318/v1/traces");
}

#[test]
fn grpc_over_the_http_default_endpoint_takes_grpcs_default() {
    let mut config = TelemetryConfig::new(DEFAULT_HTTP_ENDPOINT);
    config
        .apply_env(&env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]))
        .unwrap();
    assert_eq!(config.endpoint, DEFAULT_GRPC_ENDPOINT);
}

#[test]
fn compression_timeout_and_the_hosts_trace_context_are_read() {
    let config = TelemetryConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        (
            "TRACEPARENT",
            " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
        ),
        ("TRACESTATE", "a=b"),
    ]))
    .unwrap()
    .unwrap();
    assert!(config.gzip);
    assert_eq!(config.export_timeout, Duration::from_millis(2500));
    assert_eq!(
        config.parent,
        Some(TraceParent {
            traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned(),
            tracestate: Some("a=b".to_owned()),
        })
    );
    let plain = TelemetryConfig::from_env(&env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h")]))
        .unwrap()
        .unwrap();
    assert!(!plain.gzip);
    assert_eq!(plain.protocol, Protocol::HttpProtobuf);
    assert_eq!(plain.parent, None);
}

#[test]
fn a_setting_that_is_not_one_is_an_error_naming_the_variable_and_its_values() {
    for (name, value, message) in [
        (
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "http",
            "OTEL_EXPORTER_OTLP_PROTOCOL='http' is not grpc, http/protobuf or http/json",
        ),
        (
            "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
            "zstd",
            "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION='zstd' is not gzip or none",
        ),
        (
            "OTEL_EXPORTER_OTLP_TIMEOUT",
            "10s",
            "OTEL_EXPORTER_OTLP_TIMEOUT='10s' is not a whole number of milliseconds",
        ),
    ] {
        let error = TelemetryConfig::from_env(&env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
            (name, value),
        ]))
        .unwrap_err();
        assert_eq!(error.to_string(), message);
    }
}
