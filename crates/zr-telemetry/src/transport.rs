//! [`OtlpHttp`]: OTLP over HTTP with protobuf bodies ([`crate::encode`]),
//! posted from the export thread: by [`PlainHttp`] (HTTP/1.1 on a socket
//! of the thread's own) for an `http://` endpoint when no proxy variable
//! is set, by the blocking `reqwest` client otherwise (`https://`, a
//! proxy, user information in the URL).

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use crate::error::TelemetryError;
use crate::plain::{PlainHttp, Target};

/// The variables `reqwest` reads a proxy for an `http://` URL from: with
/// any of them set, requests go through `reqwest`, which honours them
/// (and `NO_PROXY`).
const PROXY_VARIABLES: [&str; 4] = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"];

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
    #[error("OTLP export to {endpoint}: {source}")]
    Io {
        endpoint: String,
        #[source]
        source: std::io::Error,
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
    client: Client,
    endpoint: String,
}

#[derive(Debug)]
enum Client {
    Plain(PlainHttp),
    Reqwest(reqwest::blocking::Client),
}

impl OtlpHttp {
    /// An exporter to `endpoint` with `headers` on every request, each
    /// request bounded by `timeout` (with [`PlainHttp`], each connect,
    /// read and write).
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
        let proxied = PROXY_VARIABLES
            .iter()
            .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()));
        if let Some(target) = Target::parse(endpoint).filter(|_| !proxied) {
            let headers = map
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_bytes()));
            return Ok(Self {
                client: Client::Plain(PlainHttp::new(target, headers, timeout)),
                endpoint: endpoint.to_owned(),
            });
        }
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
            client: Client::Reqwest(client),
            endpoint: endpoint.to_owned(),
        })
    }

    /// Posts one export request, whose body is `head` then `entries`.
    pub(crate) fn post(&mut self, head: &[u8], entries: &[u8]) -> Result<(), PostError> {
        let status = match &mut self.client {
            Client::Plain(plain) => {
                let code = plain
                    .post(&[head, entries])
                    .map_err(|source| PostError::Io {
                        endpoint: self.endpoint.clone(),
                        source,
                    })?;
                StatusCode::from_u16(code).map_err(|_| PostError::Io {
                    endpoint: self.endpoint.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("status {code}"),
                    ),
                })?
            }
            Client::Reqwest(client) => {
                let mut body = Vec::with_capacity(head.len() + entries.len());
                body.extend_from_slice(head);
                body.extend_from_slice(entries);
                client
                    .post(&self.endpoint)
                    .body(body)
                    .send()
                    .map_err(|source| PostError::Send {
                        endpoint: self.endpoint.clone(),
                        source,
                    })?
                    .status()
            }
        };
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
