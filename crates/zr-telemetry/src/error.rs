//! Errors of starting the exporter.

use thiserror::Error;

/// Telemetry could not start (a run goes on without it).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The OTLP endpoint is not an `http://` or `https://` URL.
    #[error("telemetry endpoint '{endpoint}' is not an http:// or https:// URL")]
    BadEndpoint {
        /// The endpoint as configured.
        endpoint: String,
    },
    /// A header of `OTEL_EXPORTER_OTLP_HEADERS` (or the configuration) is
    /// not `key=value`.
    #[error("telemetry header '{header}' is not key=value")]
    BadHeader {
        /// The entry.
        header: String,
    },
    /// A setting (`OTEL_EXPORTER_OTLP_PROTOCOL`, `..._COMPRESSION`,
    /// `..._TIMEOUT`) has a value it cannot take.
    #[error("{name}='{value}' is not {expected}")]
    BadSetting {
        /// The variable.
        name: String,
        /// Its value.
        value: String,
        /// What it may be.
        expected: &'static str,
    },
    /// The exporter's runtime (its thread's I/O) could not be built.
    #[error("the OTLP exporter's runtime could not be built")]
    Runtime {
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP client could not be built.
    #[error("the OTLP exporter's HTTP client could not be built")]
    Client {
        /// Why.
        #[source]
        source: reqwest::Error,
    },
    /// The OTLP exporter could not be built (a header gRPC cannot carry,
    /// an endpoint it cannot parse).
    #[error("the OTLP exporter could not be built")]
    Exporter {
        /// Why.
        #[source]
        source: opentelemetry_otlp::ExporterBuildError,
    },
}
