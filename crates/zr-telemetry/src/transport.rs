//! [`OtlpHttp`]: OTLP over HTTP with protobuf bodies ([`crate::encode`]),
//! posted by a blocking HTTP client on the export thread.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use crate::error::TelemetryError;

/// Why an export request failed (logged by the export thread, never
/// returned to a run).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PostError {
    #[error("OTLP export to {endpoint}: {source}")]
    Send {
        endpoint: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("OTLP export to {endpoint}: HTTP {status}")]
    Status {
        endpoint: String,
        status: StatusCode,
    },
}

/// Posts each batch to one OTLP/HTTP traces URL.
#[derive(Debug)]
pub(crate) struct OtlpHttp {
    client: reqwest::blocking::Client,
    endpoint: String,
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
        })
    }

    /// Posts one export request's `body`.
    pub(crate) fn post(&self, body: Vec<u8>) -> Result<(), PostError> {
        let response = self
            .client
            .post(&self.endpoint)
            .body(body)
            .send()
            .map_err(|source| PostError::Send {
                endpoint: self.endpoint.clone(),
                source,
            })?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(PostError::Status {
                endpoint: self.endpoint.clone(),
                status,
            })
        }
    }
}
