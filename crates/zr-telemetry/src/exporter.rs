//! [`Telemetry`]: the OTLP/HTTP exporter behind a bounded queue, and the
//! `tracing` layer that feeds it the engine's spans.

use std::sync::Arc;

use tracing::{Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;
use zr_engine::{CONTENT_TARGET, TELEMETRY_TARGET};

use crate::config::TelemetryConfig;
use crate::encode::Resource;
use crate::error::TelemetryError;
use crate::ids::Ids;
use crate::layer::ExportLayer;
use crate::queue::{Queue, SpanSink, Worker};
use crate::transport::OtlpHttp;

/// A running exporter. Build the layer with [`Telemetry::layer`] and add
/// it to the `tracing` subscriber; call [`Telemetry::shutdown`] at the end
/// (dropping it does the same).
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

    /// The `tracing` layer that exports the engine's spans (target
    /// `gen_ai`, and the content target with `capture_content`) and
    /// nothing else: other spans and events of the subscriber stay local.
    #[must_use]
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        // `Targets` matches a target by prefix: `gen_ai` alone would enable
        // `gen_ai_content` too, and every span would format the content
        // only for the layer to drop it. The content target is named
        // either way (the longer directive wins).
        let content = if self.config.capture_content {
            LevelFilter::INFO
        } else {
            LevelFilter::OFF
        };
        let targets = Targets::new()
            .with_target(TELEMETRY_TARGET, Level::INFO)
            .with_target(CONTENT_TARGET, content);
        ExportLayer {
            sink: Arc::clone(&self.queue) as Arc<dyn SpanSink>,
            ids: Arc::clone(&self.ids),
            capture_content: self.config.capture_content,
        }
        .with_filter(targets)
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
