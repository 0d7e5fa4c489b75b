//! OpenTelemetry export of zr's agents: the engine's `tracing` spans
//! (`invoke_agent`, `chat`, `execute_tool`, in the GenAI semantic
//! conventions; see zr-engine's `TELEMETRY_TARGET`) sent over OTLP/HTTP
//! (protobuf) to any receiver: Arize Phoenix, Jaeger, Langfuse, an
//! OpenTelemetry Collector.
//!
//! Off unless a host starts it. One trace per session: the session's span
//! holds each query's root `invoke_agent`; a subagent's (foreground,
//! fork or background) is a child of the `execute_tool` span of the
//! `Task` or `MultiTask` call that started it. Message content is sent
//! only with [`TelemetryConfig::capture_content`].
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//! use zr_telemetry::{Telemetry, TelemetryConfig};
//!
//! # fn main() -> Result<(), zr_telemetry::TelemetryError> {
//! let telemetry = Telemetry::start(TelemetryConfig::new("http://localhost:6006/v1/traces"))?;
//! tracing_subscriber::registry().with(telemetry.layer()).init();
//! // ... run agents ...
//! telemetry.shutdown(); // sends what is queued, within a bound
//! # Ok(()) }
//! ```
//!
//! Export never blocks or fails a run: see [`Telemetry`].

mod config;
mod conventions;
mod encode;
mod error;
mod exporter;
mod ids;
mod layer;
mod plain;
mod queue;
mod record;
mod transport;
mod wire;

pub use config::{DEFAULT_QUEUE_SIZE, TelemetryConfig, parse_headers};
pub use error::TelemetryError;
pub use exporter::Telemetry;
