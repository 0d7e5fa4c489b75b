//! Where spans go and what they hold: [`TelemetryConfig`], from the
//! host's settings and the standard `OTEL_*` variables.

use std::time::Duration;

use crate::error::TelemetryError;

/// The default bound of the export queue, in spans. A 1,000-subagent
/// fan-out makes about 6,100 (an agent, two chats and three calls each).
pub const DEFAULT_QUEUE_SIZE: usize = 16_384;

/// OTLP/HTTP's default traces URL.
pub const DEFAULT_HTTP_ENDPOINT: &str = "http://localhost:4318/v1/traces";

/// OTLP/gRPC's default address.
pub const DEFAULT_GRPC_ENDPOINT: &str = "http://localhost:4317";

/// How spans travel, as `OTEL_EXPORTER_OTLP_PROTOCOL` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// `http/protobuf` (the default).
    #[default]
    HttpProtobuf,
    /// `http/json`.
    HttpJson,
    /// `grpc`.
    Grpc,
}

impl Protocol {
    /// The protocol `name` (`grpc`, `http/protobuf`, `http/json`).
    ///
    /// # Errors
    ///
    /// [`TelemetryError::BadSetting`] for another name.
    pub fn parse(name: &str) -> Result<Self, TelemetryError> {
        match name.trim() {
            "http/protobuf" => Ok(Self::HttpProtobuf),
            "http/json" => Ok(Self::HttpJson),
            "grpc" => Ok(Self::Grpc),
            other => Err(TelemetryError::BadSetting {
                name: "OTEL_EXPORTER_OTLP_PROTOCOL".to_owned(),
                value: other.to_owned(),
                expected: "grpc, http/protobuf or http/json",
            }),
        }
    }
}

/// The W3C trace context a run's spans are children of: the host's span,
/// as `TRACEPARENT` and `TRACESTATE` give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// `00-{trace id}-{span id}-{flags}`.
    pub traceparent: String,
    /// The vendors' entries, if any.
    pub tracestate: Option<String>,
}

/// How an exporter is set up. Off unless an endpoint is set.
#[derive(Debug, Clone, PartialEq)]
pub struct TelemetryConfig {
    /// Where spans go: for HTTP the traces URL
    /// (`http://localhost:6006/v1/traces`), for gRPC the receiver's
    /// address (`http://localhost:4317`).
    pub endpoint: String,
    /// How they travel.
    pub protocol: Protocol,
    /// Whether export requests are gzip-compressed.
    pub gzip: bool,
    /// The host's span that the run's root spans are children of
    /// (`TRACEPARENT`); without it each session is a trace of its own.
    pub parent: Option<TraceParent>,
    /// Headers sent with every export (an API key, say).
    pub headers: Vec<(String, String)>,
    /// Whether spans carry message content: prompts, answers, tool
    /// arguments and results. Off by default.
    pub capture_content: bool,
    /// `service.name` of the spans' resource.
    pub service_name: String,
    /// Other attributes of the spans' resource (`deployment.environment`
    /// and the like), as `OTEL_RESOURCE_ATTRIBUTES` gives them.
    pub resource_attributes: Vec<(String, String)>,
    /// The bound of the export queue, in spans; a span beyond it is
    /// dropped rather than wait.
    pub queue_size: usize,
    /// How long an export request may take.
    pub export_timeout: Duration,
    /// How long the final flush at shutdown may take.
    pub shutdown_timeout: Duration,
}

impl TelemetryConfig {
    /// Exports to `endpoint` (an OTLP/HTTP traces URL) with the defaults:
    /// HTTP/protobuf without compression, no parent, no headers, no
    /// content, `service.name` `zr`, a queue of [`DEFAULT_QUEUE_SIZE`]
    /// spans, 10 s per export (retries included), 5 s for the final
    /// flush.
    #[must_use]
    pub fn new(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            protocol: Protocol::HttpProtobuf,
            gzip: false,
            parent: None,
            headers: Vec::new(),
            capture_content: false,
            service_name: "zr".to_owned(),
            resource_attributes: Vec::new(),
            queue_size: DEFAULT_QUEUE_SIZE,
            export_timeout: Duration::from_secs(10),
            shutdown_timeout: Duration::from_secs(5),
        }
    }

    /// The configuration the standard variables ask for, read through
    /// `var`: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (with `/v1/traces` appended for
    /// HTTP); `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`,
    /// `..._COMPRESSION` (`gzip` or `none`), `..._TIMEOUT`
    /// (milliseconds); `OTEL_EXPORTER_OTLP_HEADERS` and
    /// `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`key=value,key2=value2`,
    /// values percent-decoded); `OTEL_SERVICE_NAME`;
    /// `OTEL_RESOURCE_ATTRIBUTES` (as the headers are written);
    /// `TRACEPARENT` and `TRACESTATE` (the host's span). `None` when no
    /// endpoint is set or `OTEL_SDK_DISABLED` is `true`.
    ///
    /// # Errors
    ///
    /// [`TelemetryError::BadHeader`] for a header without `=`,
    /// [`TelemetryError::BadSetting`] for a protocol, compression or
    /// timeout that is not one.
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Self>, TelemetryError> {
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        if env_endpoint(var, Protocol::HttpProtobuf).is_none() {
            return Ok(None);
        }
        let mut config = Self::new(DEFAULT_HTTP_ENDPOINT);
        config.apply_env(var)?;
        Ok(Some(config))
    }

    /// Applies the standard variables over this configuration: an
    /// endpoint, protocol, compression, timeout, parent and service name
    /// there replace these; their headers and resource attributes are
    /// added (a header named twice takes the variable's value). gRPC
    /// chosen over OTLP/HTTP's default endpoint takes gRPC's.
    ///
    /// # Errors
    ///
    /// [`TelemetryError::BadHeader`] for a header (or resource attribute)
    /// without `=`, [`TelemetryError::BadSetting`] for a protocol,
    /// compression or timeout that is not one.
    pub fn apply_env(
        &mut self,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), TelemetryError> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        // The traces variable, else the general one: (name, value).
        let signal = |general: &str| {
            let traces = general.replacen("OTLP_", "OTLP_TRACES_", 1);
            set(&traces)
                .map(|value| (traces, value))
                .or_else(|| set(general).map(|value| (general.to_owned(), value)))
        };
        if let Some((name, value)) = signal("OTEL_EXPORTER_OTLP_PROTOCOL") {
            self.protocol = Protocol::parse(&value).map_err(|error| match error {
                TelemetryError::BadSetting {
                    value, expected, ..
                } => TelemetryError::BadSetting {
                    name,
                    value,
                    expected,
                },
                other => other,
            })?;
            if self.protocol == Protocol::Grpc && self.endpoint == DEFAULT_HTTP_ENDPOINT {
                DEFAULT_GRPC_ENDPOINT.clone_into(&mut self.endpoint);
            }
        }
        if let Some(endpoint) = env_endpoint(var, self.protocol) {
            self.endpoint = endpoint;
        }
        if let Some((name, value)) = signal("OTEL_EXPORTER_OTLP_COMPRESSION") {
            self.gzip = match value.trim() {
                "gzip" => true,
                "none" => false,
                other => {
                    return Err(TelemetryError::BadSetting {
                        name,
                        value: other.to_owned(),
                        expected: "gzip or none",
                    });
                }
            };
        }
        if let Some((name, value)) = signal("OTEL_EXPORTER_OTLP_TIMEOUT") {
            let millis = value
                .trim()
                .parse::<u64>()
                .map_err(|_| TelemetryError::BadSetting {
                    name,
                    value: value.clone(),
                    expected: "a whole number of milliseconds",
                })?;
            self.export_timeout = Duration::from_millis(millis);
        }
        if let Some(traceparent) = set("TRACEPARENT") {
            self.parent = Some(TraceParent {
                traceparent: traceparent.trim().to_owned(),
                tracestate: set("TRACESTATE"),
            });
        }
        for name in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ] {
            if let Some(list) = var(name) {
                for (key, value) in parse_headers(&list)? {
                    self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&key));
                    self.headers.push((key, value));
                }
            }
        }
        if let Some(list) = var("OTEL_RESOURCE_ATTRIBUTES") {
            for (key, value) in parse_headers(&list)? {
                self.resource_attributes.retain(|(k, _)| *k != key);
                self.resource_attributes.push((key, value));
            }
        }
        if let Some(name) = var("OTEL_SERVICE_NAME").filter(|n| !n.trim().is_empty()) {
            self.service_name = name;
        }
        Ok(())
    }
}

/// The endpoint the variables name for `protocol`, if any: the traces
/// one as it is, the base one with `/v1/traces` for HTTP.
fn env_endpoint(var: &dyn Fn(&str) -> Option<String>, protocol: Protocol) -> Option<String> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| {
        set("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| match protocol {
            Protocol::Grpc => base,
            Protocol::HttpProtobuf | Protocol::HttpJson => {
                format!("{}/v1/traces", base.trim_end_matches('/'))
            }
        })
    })
}

/// `key=value,key2=value2`, as the OTLP exporter specification writes
/// headers: entries trimmed, values percent-decoded, empty entries
/// skipped.
///
/// # Errors
///
/// [`TelemetryError::BadHeader`] for an entry without `=` or with an
/// empty key.
pub fn parse_headers(list: &str) -> Result<Vec<(String, String)>, TelemetryError> {
    list.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| match entry.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                Ok((key.trim().to_owned(), percent_decode(value.trim())))
            }
            _ => Err(TelemetryError::BadHeader {
                header: entry.to_owned(),
            }),
        })
        .collect()
}

/// `%20` and the like decoded; a `%` not followed by two hex digits is
/// kept as it is.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            // Two hex digits make at most 255.
            out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
