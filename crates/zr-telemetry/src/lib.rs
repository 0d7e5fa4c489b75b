//! OpenTelemetry export of zr's agents: the engine's spans
//! (`invoke_agent`, `chat`, `execute_tool`, in the GenAI semantic
//! conventions; see zr-engine's [`Tracer`](zr_engine::Tracer)) sent over
//! OTLP/HTTP (protobuf) to any receiver: Arize Phoenix, Jaeger, Langfuse,
//! an OpenTelemetry Collector.
//!
//! Off unless a host starts it. One trace per session: the session's span
//! holds each query's root `invoke_agent`; a subagent's (foreground,
//! fork or background) is a child of the `execute_tool` span of the
//! `Task` or `MultiTask` call that started it. Message content is sent
//! only with [`TelemetryConfig::capture_content`].
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
//! The OTLP protobuf is written here, without the OpenTelemetry SDK (see
//! docs/decisions.md). From the bottom: `wire.rs` (protobuf varints and
//! fields; an OTLP `KeyValue` written whole), `conventions.rs` (how a span
//! is named), `ids.rs` (trace and span ids: SplitMix64 of a counter from a
//! per-process seed), `config.rs` ([`TelemetryConfig`], the `OTEL_*`
//! variables), `error.rs`. Above them `record.rs` (one span's ids, times,
//! name, kind, status, events, and its attributes as OTLP bytes in one
//! buffer), `encode.rs` (a record as an entry of `ScopeSpans.spans`; a
//! batch framed as an `ExportTraceServiceRequest`), `plain.rs` (HTTP/1.1 on
//! a keep-alive `TcpStream` of the export thread's own, for `http://`
//! endpoints without a proxy variable) and `transport.rs` (`plain.rs`, or
//! the blocking reqwest client for `https://` and proxies). Then
//! `queue.rs` (the bounded queue: a span encoded into its buffer when it
//! ends, on the run's thread; the export thread sends batches of 512, warns
//! of drops, logs failed requests and gives sent buffers back for reuse)
//! and `tracer.rs` (`ExportTracer`, zr-engine's `Tracer`: a span's record
//! behind its handle until its last handle drops, its parent's handle kept
//! so a parent ends after its children). On top, `exporter.rs`
//! ([`Telemetry`]: starts the thread, hands out the tracer, the bounded
//! final flush).
//!
//! Tests decode the encoding and compare it byte for byte with the
//! OpenTelemetry crates' own conversion of the same spans (those crates and
//! `prost` are dev-dependencies only), and export scripted sessions to a
//! real Arize Phoenix, reading the trees back through its REST API
//! (ignored tests, run by `cargo xtask ci`'s receiver step).
//! `benches/fanout.rs` compares a 1,000-subagent fan-out with and without
//! export to a loopback OTLP sink.

mod config;
mod conventions;
mod encode;
mod error;
mod exporter;
mod ids;
mod plain;
mod queue;
mod record;
mod tracer;
mod transport;
mod wire;

pub use config::{DEFAULT_QUEUE_SIZE, TelemetryConfig, parse_headers};
pub use error::TelemetryError;
pub use exporter::Telemetry;
