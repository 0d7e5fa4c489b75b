//! [`Telemetry`]: the OTLP/HTTP exporter behind a bounded queue, and the
//! engine's [`Tracer`] that feeds it.

use std::sync::Arc;

use zr_engine::Tracer;

use crate::config::TelemetryConfig;
use crate::encode::Resource;
use crate::error::TelemetryError;
use crate::ids::Ids;
use crate::queue::{Queue, SpanSink, Worker};
use crate::tracer::ExportTracer;
use crate::transport::OtlpHttp;

/// A running exporter. Give [`Telemetry::tracer`] to the runtime
/// (`RuntimeEnvironment::with_tracer`); call [`Telemetry::shutdown`] at
/// the end (dropping it does the same).
///
/// Export never blocks or fails a run: spans wait in a queue of
/// [`TelemetryConfig::queue_size`], sent by a thread of their own; a span
/// that finds the queue full is dropped, with a warning (once, then the
/// count at shutdown); a receiver that is down costs failed export
/// requests on that thread, logged, nothing more.
#[derive(Debug)]
pub struct Telemetry {
    queue: Arc<Queue>,
    ids: Arc<Ids>,
    worker: Option<Worker>,
    config: TelemetryConfig,
}

impl Telemetry {
    /// Starts the exporter for `config` (no request is made until there
    /// are spans).
    ///
    /// # Errors
    ///
    /// [`TelemetryError::BadEndpoint`] for an endpoint that is not an
    /// HTTP URL, [`TelemetryError::BadHeader`] for a header HTTP cannot
    /// carry, [`TelemetryError::Exporter`] (or `Thread`, `ClientPanicked`)
    /// when the HTTP client or the export thread cannot be started.
    pub fn start(config: TelemetryConfig) -> Result<Self, TelemetryError> {
        let endpoint = config.endpoint.trim();
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(TelemetryError::BadEndpoint {
                endpoint: config.endpoint.clone(),
            });
        }
        let http = OtlpHttp::new(endpoint, &config.headers, config.export_timeout)?;
        let queue = Arc::new(Queue::new(config.queue_size));
        let worker = Worker::start(Arc::clone(&queue), http, resource(&config))
            .map_err(|source| TelemetryError::Thread { source })?;
        Ok(Self {
            queue,
            ids: Arc::new(Ids::new()),
            worker: Some(worker),
            config,
        })
    }

    /// The tracer that exports the engine's spans, for
    /// `RuntimeEnvironment::with_tracer`. Every tracer of one exporter
    /// feeds its queue; spans ended after [`Telemetry::shutdown`] are
    /// dropped.
    #[must_use]
    pub fn tracer(&self) -> Arc<dyn Tracer> {
        Arc::new(ExportTracer {
            sink: Arc::clone(&self.queue) as Arc<dyn SpanSink>,
            ids: Arc::clone(&self.ids),
            capture_content: self.config.capture_content,
        })
    }

    /// Sends what is queued and stops, waiting at most
    /// [`TelemetryConfig::shutdown_timeout`] (an export thread stuck on a
    /// dead receiver does not hold the caller past the bound). A failure
    /// is logged, never returned: telemetry does not fail a run.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(worker) = self.worker.take() {
            worker.stop(self.config.shutdown_timeout);
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The resource the spans are sent under: the service, this exporter,
/// and `OTEL_RESOURCE_ATTRIBUTES`' pairs (read into the configuration).
fn resource(config: &TelemetryConfig) -> Resource {
    let mut attributes = vec![
        ("service.name".to_owned(), config.service_name.clone()),
        ("telemetry.sdk.language".to_owned(), "rust".to_owned()),
        ("telemetry.sdk.name".to_owned(), "zr-telemetry".to_owned()),
        (
            "telemetry.sdk.version".to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
        ),
    ];
    for (key, value) in &config.resource_attributes {
        if key != "service.name" {
            attributes.retain(|(k, _)| k != key);
            attributes.push((key.clone(), value.clone()));
        }
    }
    Resource { attributes }
}

#[cfg(test)]
mod tests;
