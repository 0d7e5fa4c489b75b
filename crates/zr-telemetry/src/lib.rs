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
