//! OpenTelemetry export of zr's agents: the engine's spans
//! (`invoke_agent`, `chat`, `execute_tool`, in the GenAI semantic
//! conventions; see zr-engine's [`Tracer`](zr_engine::Tracer)) sent over
//! OTLP (gRPC, HTTP/protobuf or HTTP/JSON, as
//! `OTEL_EXPORTER_OTLP_PROTOCOL` says) to any receiver: Arize Phoenix,
//! Jaeger, Langfuse, an OpenTelemetry Collector.
//!
//! Off unless a host starts it. One trace per session: the session's span
//! holds each query's root `invoke_agent`; a subagent's (foreground,
//! fork or background) is a child of the `execute_tool` span of the
//! `Task` or `MultiTask` call that started it. Given `TRACEPARENT` (a
//! host's span), the session spans are its children; every process zr
//! starts inside a span (a Bash command, a hook) gets that span as its
//! `TRACEPARENT`. Message content is sent only with
//! [`TelemetryConfig::capture_content`].
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use zr_caps::RuntimeSettings;
//! # use zr_engine::{Agent, AgentConfig, RuntimeEnvironment, ScriptedProvider, Script};
//! # use zr_tools::BuiltinTools;
//! use zr_telemetry::{Telemetry, TelemetryConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! # let provider = Arc::new(ScriptedProvider::new(Script::default()));
//! # let settings = RuntimeSettings { model: "m".into(), cwd: std::path::PathBuf::from("."), env: Default::default() };
//! let telemetry = Telemetry::start(TelemetryConfig::new("http://localhost:6006/v1/traces"))?;
//! let runtime = RuntimeEnvironment::new(provider, settings, BuiltinTools::new(std::path::PathBuf::from("cron.json")))
//!     .with_tracer(telemetry.tracer());
//! let agent = Agent::new(Arc::new(runtime), AgentConfig::new("You are helpful."));
//! agent.prompt("Say hello").await?;
//! drop(agent);
//! telemetry.shutdown(); // sends what is queued, within a bound
//! # Ok(()) }
//! ```
//!
//! Export never blocks or fails a run: see [`Telemetry`].
//!
//! # Structure
//!
//! Export is the maintained OpenTelemetry crates' (see
//! docs/decisions.md): `opentelemetry_sdk`'s tracer provider and batch
//! span processor, `opentelemetry-otlp`'s exporter (gRPC through tonic,
//! HTTP/protobuf or HTTP/JSON through the async reqwest client; gzip;
//! retries with backoff on the statuses the OTLP specification names).
//! zr-telemetry holds what is zr's: `conventions.rs` (how a span is
//! named), `config.rs` ([`TelemetryConfig`], the `OTEL_*` variables and
//! `TRACEPARENT`), `context.rs` (W3C trace context in and out),
//! `error.rs`, `tracer.rs` (`ExportTracer`, zr-engine's `Tracer` on the
//! SDK's tracer: a span's parent kept so a parent ends after its
//! children, the host's span as the parent of roots) and `exporter.rs`
//! ([`Telemetry`]: the provider, the exporter on a Tokio runtime of its
//! own driven by the batch processor's thread, the bounded final flush).
//!
//! Unit tests check the tracer's spans through an in-memory exporter;
//! `tests/it` exports scripted sessions to a real Arize Phoenix over
//! gRPC and over HTTP, reading the trees back through its REST API
//! (ignored tests, run by `cargo xtask ci`'s receiver step), and to a
//! loopback OTLP/HTTP receiver (gzip, headers, retries on 429 and 503).
//! `benches/fanout.rs` compares a 1,000-subagent fan-out with and without
//! export to a loopback OTLP sink.

mod config;
mod context;
mod conventions;
mod error;
mod exporter;
mod tracer;

pub use config::{
    DEFAULT_GRPC_ENDPOINT, DEFAULT_HTTP_ENDPOINT, DEFAULT_QUEUE_SIZE, Protocol, TelemetryConfig,
    TraceParent, parse_headers,
};
pub use error::TelemetryError;
pub use exporter::Telemetry;
