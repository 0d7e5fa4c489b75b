//! OpenTelemetry export of a run (`[telemetry]` in `zr.toml`, or the
//! standard `OTEL_EXPORTER_OTLP_*` variables): the exporter's tracer is
//! given to every runtime of the process; the final flush has a bound.
//! Telemetry never fails a run: a setting that cannot be used is a
//! warning, and the run goes on without.

use std::io::Write as _;
use std::sync::{Arc, OnceLock};

use zr_engine::Tracer;
// OTLP's default HTTP endpoint, for a `[telemetry]` table without one
// (gRPC chosen by the variables takes gRPC's).
use zr_telemetry::DEFAULT_HTTP_ENDPOINT as DEFAULT_ENDPOINT;
use zr_telemetry::{Telemetry, TelemetryConfig, TelemetryError};

use crate::config::TelemetrySettings;
use crate::project::Project;

/// The exporter `project` and the environment ask for, started; `None`
/// when telemetry is off or cannot start (said on standard error).
pub(crate) fn start(project: &Project, var: &dyn Fn(&str) -> Option<String>) -> Option<Telemetry> {
    let chosen = match config(project.config.telemetry.as_ref(), var) {
        Ok(chosen) => chosen?,
        Err(error) => return warn(&error),
    };
    Telemetry::start(chosen).map_or_else(|error| warn(&error), Some)
}

fn warn(error: &TelemetryError) -> Option<Telemetry> {
    let _ = writeln!(
        std::io::stderr().lock(),
        "warning: telemetry is off for this run: {}",
        zr_types::error_chain(error)
    );
    None
}

/// The configuration `[telemetry]` (if any) and the variables make:
/// the table's values, then the variables over them (endpoint, headers,
/// service name); `enabled = false` wins over everything.
pub(crate) fn config(
    table: Option<&TelemetrySettings>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<TelemetryConfig>, TelemetryError> {
    let Some(table) = table else {
        return TelemetryConfig::from_env(var);
    };
    if table.enabled == Some(false) {
        return Ok(None);
    }
    let mut config = TelemetryConfig::new(table.endpoint.as_deref().unwrap_or(DEFAULT_ENDPOINT));
    config.headers = table
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    config.capture_content = table.capture_content;
    if let Some(name) = &table.service_name {
        config.service_name.clone_from(name);
    }
    if let Some(size) = table.queue_size {
        config.queue_size = size;
    }
    config.apply_env(var)?;
    Ok(Some(config))
}

/// Makes `telemetry`'s tracer the one every runtime of the process
/// reports to (set once per process, as the subscriber is).
fn use_tracer(telemetry: &Telemetry) {
    let _ = TRACER.set(telemetry.tracer());
}

/// Runs `work` (a command that runs agents: `zr run`, `zr resume`, `zr
/// worker`, `zr cron`, `zr mcp serve`) with `project`'s telemetry on when
/// configured (the exporter's tracer given to every runtime the process
/// builds), and sends what is queued after it, within the flush's bound.
pub(crate) async fn around<T>(project: &Project, work: impl Future<Output = T>) -> T {
    let telemetry = start(project, &|v| project.var(v));
    if let Some(telemetry) = &telemetry {
        use_tracer(telemetry);
    }
    let out = work.await;
    finish(telemetry).await;
    out
}

/// The exporter's tracer of this process, set by [`around`].
static TRACER: OnceLock<Arc<dyn Tracer>> = OnceLock::new();

/// The tracer every runtime of the process reports to: the exporter's
/// when telemetry is on.
pub(crate) fn tracer() -> Option<Arc<dyn Tracer>> {
    TRACER.get().cloned()
}

/// Sends the spans still queued, within the configured bound.
pub(crate) async fn finish(telemetry: Option<Telemetry>) {
    if let Some(telemetry) = telemetry {
        let _ = tokio::task::spawn_blocking(move || telemetry.shutdown()).await;
    }
}

#[cfg(test)]
mod tests;
