//! [`Telemetry`]: the OpenTelemetry SDK's tracer provider with a batch
//! span processor and the OTLP exporter the configuration names (gRPC,
//! HTTP/protobuf or HTTP/JSON), and the engine's [`Tracer`] that feeds it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{
    Compression, SpanExporter, WithExportConfig as _, WithHttpConfig as _, WithTonicConfig as _,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::resource::TelemetryResourceDetector;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider, SpanData,
};
use zr_engine::Tracer;

use crate::config::{Protocol, TelemetryConfig};
use crate::context;
use crate::error::TelemetryError;
use crate::tracer::ExportTracer;

/// Spans per export request.
pub(crate) const BATCH_SIZE: usize = 512;

/// A running exporter. Give [`Telemetry::tracer`] to the runtime
/// (`RuntimeEnvironment::with_tracer`); call [`Telemetry::shutdown`] at
/// the end (dropping it does the same).
///
/// Export never blocks or fails a run: ended spans wait in the batch
/// processor's queue of [`TelemetryConfig::queue_size`], sent by its
/// thread in batches of 512; a span that finds the queue full is dropped;
/// a receiver that is down or throttles costs retries (with backoff,
/// within the export timeout) and then failed requests on that thread,
/// logged, nothing more.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: Arc<ExportTracer>,
    shutdown_timeout: Duration,
    stopped: bool,
}

impl Telemetry {
    /// Starts the exporter for `config` (no request is made until there
    /// are spans). A `TRACEPARENT` that is not a valid W3C trace context
    /// is ignored, with a warning (as the W3C specification asks).
    ///
    /// # Errors
    ///
    /// [`TelemetryError::BadEndpoint`] for an endpoint that is not an
    /// HTTP URL, [`TelemetryError::BadHeader`] for a header HTTP cannot
    /// carry, [`TelemetryError::Runtime`] or
    /// [`TelemetryError::Exporter`] when the exporter cannot be built.
    pub fn start(config: TelemetryConfig) -> Result<Self, TelemetryError> {
        let endpoint = config.endpoint.trim();
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(TelemetryError::BadEndpoint {
                endpoint: config.endpoint.clone(),
            });
        }
        let exporter = OnRuntime::build(&config)?;
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(
                BatchConfigBuilder::default()
                    .with_max_queue_size(config.queue_size.max(1))
                    .with_max_export_batch_size(BATCH_SIZE.min(config.queue_size.max(1)))
                    .build(),
            )
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource(&config))
            .build();
        let root = match &config.parent {
            None => opentelemetry::Context::new(),
            Some(parent) => context::extract(parent).unwrap_or_else(|| {
                tracing::warn!(
                    "telemetry: TRACEPARENT '{}' is not a W3C trace context; ignored",
                    parent.traceparent
                );
                opentelemetry::Context::new()
            }),
        };
        let tracer = Arc::new(ExportTracer {
            tracer: provider.tracer("zr"),
            root,
            capture_content: config.capture_content,
        });
        Ok(Self {
            provider,
            tracer,
            shutdown_timeout: config.shutdown_timeout,
            stopped: false,
        })
    }

    /// The tracer that exports the engine's spans, for
    /// `RuntimeEnvironment::with_tracer`. Every tracer of one exporter
    /// feeds its queue; spans ended after [`Telemetry::shutdown`] are
    /// dropped.
    #[must_use]
    pub fn tracer(&self) -> Arc<dyn Tracer> {
        Arc::clone(&self.tracer) as Arc<dyn Tracer>
    }

    /// Sends what is queued and stops, waiting at most
    /// [`TelemetryConfig::shutdown_timeout`] (an export stuck on a dead
    /// receiver does not hold the caller past the bound). A failure is
    /// logged, never returned: telemetry does not fail a run.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        if let Err(error) = self.provider.shutdown_with_timeout(self.shutdown_timeout) {
            tracing::warn!("telemetry: the final flush failed: {error}");
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The resource the spans are sent under: the service, the SDK, and
/// `OTEL_RESOURCE_ATTRIBUTES`' pairs (read into the configuration).
fn resource(config: &TelemetryConfig) -> Resource {
    Resource::builder_empty()
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_attributes(
            config
                .resource_attributes
                .iter()
                .filter(|(key, _)| key != "service.name")
                .map(|(key, value)| KeyValue::new(key.clone(), value.clone())),
        )
        .with_service_name(config.service_name.clone())
        .build()
}

/// The OTLP exporter on a runtime of its own: the batch processor's
/// thread drives each export on it (tonic and the async reqwest client
/// need a Tokio runtime; the processor's thread has none, and the run's
/// runtime is not the exporter's to use).
#[derive(Debug)]
struct OnRuntime {
    runtime: tokio::runtime::Runtime,
    exporter: SpanExporter,
}

impl OnRuntime {
    fn build(config: &TelemetryConfig) -> Result<Self, TelemetryError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|source| TelemetryError::Runtime { source })?;
        // tonic's channel is made on the runtime it will run on.
        let entered = runtime.enter();
        let headers = header_map(&config.headers)?;
        let endpoint = config.endpoint.trim().to_owned();
        let exporter = match config.protocol {
            Protocol::Grpc => {
                let mut builder = SpanExporter::builder()
                    .with_tonic()
                    .with_endpoint(endpoint)
                    .with_timeout(config.export_timeout)
                    .with_metadata(
                        opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(
                            headers,
                        ),
                    );
                if config.gzip {
                    builder = builder.with_compression(Compression::Gzip);
                }
                builder.build()
            }
            Protocol::HttpProtobuf | Protocol::HttpJson => {
                let mut builder = SpanExporter::builder()
                    .with_http()
                    .with_protocol(match config.protocol {
                        Protocol::HttpJson => opentelemetry_otlp::Protocol::HttpJson,
                        Protocol::HttpProtobuf | Protocol::Grpc => {
                            opentelemetry_otlp::Protocol::HttpBinary
                        }
                    })
                    .with_endpoint(endpoint)
                    .with_timeout(config.export_timeout)
                    .with_headers(config.headers.iter().cloned().collect::<HashMap<_, _>>());
                if config.gzip {
                    builder = builder.with_compression(Compression::Gzip);
                }
                builder.build()
            }
        }
        .map_err(|source| TelemetryError::Exporter { source })?;
        drop(entered);
        Ok(Self { runtime, exporter })
    }
}

impl opentelemetry_sdk::trace::SpanExporter for OnRuntime {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        // Called on the batch processor's thread, which is no runtime's.
        self.runtime.block_on(self.exporter.export(batch))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.exporter.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.exporter.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.exporter.set_resource(resource);
    }
}

/// The configured headers as HTTP's (and gRPC metadata's).
fn header_map(headers: &[(String, String)]) -> Result<reqwest::header::HeaderMap, TelemetryError> {
    use reqwest::header::{HeaderName, HeaderValue};
    let bad = |key: &str, value: &str| TelemetryError::BadHeader {
        header: format!("{key}={value}"),
    };
    headers
        .iter()
        .map(|(key, value)| {
            let name = HeaderName::from_bytes(key.to_ascii_lowercase().as_bytes())
                .map_err(|_| bad(key, value))?;
            let value = HeaderValue::from_str(value).map_err(|_| bad(key, value))?;
            Ok((name, value))
        })
        .collect()
}

#[cfg(test)]
mod tests;
