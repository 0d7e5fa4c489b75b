//! `[telemetry]` and the variables: what turns export on, and who wins.

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
fn off_without_the_table_or_the_variables() {
    assert_eq!(config(None, &env(&[])).unwrap(), None);
}

#[test]
fn the_variables_alone_turn_it_on() {
    let on = config(
        None,
        &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318")]),
    )
    .unwrap()
    .unwrap();
    assert_eq!(on.endpoint, "http://h:4318/v1/traces");
    assert!(!on.capture_content);
}

#[test]
fn the_table_turns_it_on_and_the_variables_override_its_endpoint() {
    let table = TelemetrySettings {
        capture_content: true,
        queue_size: Some(10),
        ..TelemetrySettings::default()
    };
    let own = config(Some(&table), &env(&[])).unwrap().unwrap();
    assert_eq!(own.endpoint, DEFAULT_ENDPOINT);
    assert!(own.capture_content);
    assert_eq!(own.queue_size, 10);
    let redirected = config(
        Some(&table),
        &env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://x/t")]),
    )
    .unwrap()
    .unwrap();
    assert_eq!(redirected.endpoint, "http://x/t");
}

#[test]
fn enabled_false_wins_over_the_variables() {
    let table = TelemetrySettings {
        enabled: Some(false),
        ..TelemetrySettings::default()
    };
    let off = config(
        Some(&table),
        &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h")]),
    )
    .unwrap();
    assert_eq!(off, None);
}
