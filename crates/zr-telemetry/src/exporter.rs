//! [`Telemetry`]: the OTLP/HTTP exporter behind a bounded batch queue,
//! and the `tracing` layer that feeds it the engine's spans.

use std::sync::mpsc;
use std::thread;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use tracing::{Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;
use zr_engine::{CONTENT_TARGET, TELEMETRY_TARGET};

use crate::config::TelemetryConfig;
use crate::conventions::Conventions;
use crate::error::TelemetryError;
use crate::transport::OtlpHttp;

/// Spans per export request.
const BATCH_SIZE: usize = 512;

/// A running exporter. Build the layer with [`Telemetry::layer`] and add
/// it to the `tracing` subscriber; call [`Telemetry::shutdown`] at the end
/// (dropping it without does the same, with the SDK's own bound).
///
/// Export never blocks or fails a run: spans wait in a queue of
/// [`TelemetryConfig::queue_size`], sent by a thread of their own; a span
/// that finds the queue full is dropped and the SDK logs a warning (once,
/// then the count at shutdown); a receiver that is down costs failed
/// export requests on that thread, logged, nothing more.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
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
    /// when the HTTP client cannot be built.
    pub fn start(config: TelemetryConfig) -> Result<Self, TelemetryError> {
        let endpoint = config.endpoint.trim();
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(TelemetryError::BadEndpoint {
                endpoint: config.endpoint.clone(),
            });
        }
        let exporter = OtlpHttp::new(endpoint, &config.headers, config.export_timeout)?;
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(config.queue_size.max(1))
            .with_max_export_batch_size(BATCH_SIZE.min(config.queue_size.max(1)))
            .build();
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(batch)
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(Conventions {
                inner: processor,
                capture_content: config.capture_content,
            })
            .with_resource(
                Resource::builder()
                    .with_service_name(config.service_name.clone())
                    .build(),
            )
            .build();
        Ok(Self { provider, config })
    }

    /// The `tracing` layer that exports the engine's spans (target
    /// `gen_ai`, and the content target with `capture_content`) and
    /// nothing else: other spans and events of the subscriber stay local.
    #[must_use]
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        let tracer = self.provider.tracer("zr");
        // `Targets` matches a target by prefix: `gen_ai` alone would enable
        // `gen_ai_content` too, and every span would format the content
        // only for `Conventions` to drop it. The content target is named
        // either way (the longer directive wins).
        let content = if self.config.capture_content {
            LevelFilter::INFO
        } else {
            LevelFilter::OFF
        };
        let targets = Targets::new()
            .with_target(TELEMETRY_TARGET, Level::INFO)
            .with_target(CONTENT_TARGET, content);
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            // No other OpenTelemetry instrumentation reads the current
            // OpenTelemetry context: parents come from the `tracing` span
            // tree, and entering a span (every poll of an instrumented
            // future) does not start and attach its OpenTelemetry span.
            .with_context_activation(false)
            .with_tracked_inactivity(false)
            .with_threads(false)
            .with_location(false)
            .with_level(false)
            .with_target(false)
            .with_filter(targets)
    }

    /// Sends what is queued and stops, waiting at most
    /// [`TelemetryConfig::shutdown_timeout`] (on a thread of its own: an
    /// exporter stuck on a dead receiver does not hold the caller past the
    /// bound). A failure is logged, never returned: telemetry does not fail
    /// a run.
    pub fn shutdown(self) {
        let bound = self.config.shutdown_timeout;
        let provider = self.provider;
        let (tx, rx) = mpsc::channel();
        let flusher = thread::Builder::new()
            .name("zr-telemetry-flush".to_owned())
            .spawn(move || {
                let _ = tx.send(provider.shutdown_with_timeout(bound));
            });
        if flusher.is_err() {
            tracing::warn!("telemetry: could not start the final flush; queued spans are lost");
            return;
        }
        match rx.recv_timeout(bound + std::time::Duration::from_millis(200)) {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!("telemetry: the final flush failed: {error}"),
            Err(_) => tracing::warn!(
                "telemetry: the final flush did not finish within {} ms; queued spans are lost",
                bound.as_millis()
            ),
        }
    }
}

#[cfg(test)]
mod tests;
