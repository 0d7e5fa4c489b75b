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
    /// The HTTP client of the exporter could not be built.
    #[error("the OTLP exporter's HTTP client could not be built")]
    Exporter {
        /// Why.
        #[source]
        source: reqwest::Error,
    },
    /// The thread that builds the HTTP client could not start.
    #[error("the OTLP exporter's HTTP client could not be built: no thread")]
    Thread {
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Building the HTTP client panicked.
    #[error("the OTLP exporter's HTTP client panicked while being built")]
    ClientPanicked,
}
