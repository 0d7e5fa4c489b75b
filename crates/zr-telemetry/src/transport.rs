//! [`OtlpHttp`]: the SDK's span exporter for OTLP over HTTP with protobuf
//! bodies ([`crate::encode`]), sent by a blocking HTTP client on the batch
//! processor's own thread.

use std::time::Duration;

use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use crate::encode::{ResourceData, export_request};
use crate::error::TelemetryError;

/// Posts each batch to one OTLP/HTTP traces URL.
#[derive(Debug)]
pub(crate) struct OtlpHttp {
    client: reqwest::blocking::Client,
    endpoint: String,
    resource: ResourceData,
}

impl OtlpHttp {
    /// An exporter to `endpoint` with `headers` on every request, each
    /// request bounded by `timeout`.
    ///
    /// The blocking client is built on a thread of its own: building (or
    /// dropping) one inside an async runtime panics, and hosts start
    /// telemetry from async code.
    pub(crate) fn new(
        endpoint: &str,
        headers: &[(String, String)],
        timeout: Duration,
    ) -> Result<Self, TelemetryError> {
        let mut map = HeaderMap::new();
        for (key, value) in headers {
            let bad = || TelemetryError::BadHeader {
                header: format!("{key}={value}"),
            };
            let name = HeaderName::try_from(key.as_str()).map_err(|_| bad())?;
            let value = HeaderValue::try_from(value.as_str()).map_err(|_| bad())?;
            map.insert(name, value);
        }
        map.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-protobuf"),
        );
        let client = std::thread::Builder::new()
            .name("zr-telemetry-client".to_owned())
            .spawn(move || {
                reqwest::blocking::Client::builder()
                    .timeout(timeout)
                    .default_headers(map)
                    .build()
            })
            .map_err(|source| TelemetryError::Thread { source })?
            .join()
            .map_err(|_| TelemetryError::ClientPanicked)?
            .map_err(|source| TelemetryError::Exporter { source })?;
        Ok(Self {
            client,
            endpoint: endpoint.to_owned(),
            resource: ResourceData::default(),
        })
    }

    fn post(&self, batch: &[SpanData]) -> OTelSdkResult {
        let body = export_request(batch, &self.resource);
        let response = self
            .client
            .post(&self.endpoint)
            .body(body)
            .send()
            .map_err(|error| {
                OTelSdkError::InternalFailure(format!("OTLP export to {}: {error}", self.endpoint))
            })?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(OTelSdkError::InternalFailure(format!(
                "OTLP export to {}: HTTP {status}",
                self.endpoint
            )))
        }
    }
}

impl SpanExporter for OtlpHttp {
    /// The batch processor runs this future to completion on its thread
    /// (`block_on`): the request blocks that thread, never the run's.
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.post(&batch)
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.resource = ResourceData::from(resource);
    }
}
