//! Where spans go and what they hold: [`TelemetryConfig`], from the
//! host's settings and the standard `OTEL_*` variables.

use std::time::Duration;

use crate::error::TelemetryError;

/// The default bound of the export queue, in spans. A 1,000-subagent
/// fan-out makes about 6,100 (an agent, two chats and three calls each).
pub const DEFAULT_QUEUE_SIZE: usize = 16_384;

/// How an exporter is set up. Off unless an endpoint is set.
#[derive(Debug, Clone, PartialEq)]
pub struct TelemetryConfig {
    /// The OTLP/HTTP traces URL (`http://localhost:6006/v1/traces`).
    pub endpoint: String,
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
    /// dropped (with a warning) rather than wait.
    pub queue_size: usize,
    /// How long an export request may take.
    pub export_timeout: Duration,
    /// How long the final flush at shutdown may take.
    pub shutdown_timeout: Duration,
}

impl TelemetryConfig {
    /// Exports to `endpoint` (an OTLP/HTTP traces URL) with the defaults:
    /// no headers, no content, `service.name` `zr`, a queue of
    /// [`DEFAULT_QUEUE_SIZE`] spans, 10 s per export, 5 s for the final
    /// flush.
    #[must_use]
    pub fn new(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
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
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (with `/v1/traces` appended);
    /// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TRACES_HEADERS`
    /// (`key=value,key2=value2`, values percent-decoded);
    /// `OTEL_SERVICE_NAME`; `OTEL_RESOURCE_ATTRIBUTES` (as the headers are
    /// written). `None` when no endpoint is set or
    /// `OTEL_SDK_DISABLED` is `true`.
    ///
    /// # Errors
    ///
    /// [`TelemetryError::BadHeader`] for a header without `=`.
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Result<Option<Self>, TelemetryError> {
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let Some(endpoint) = env_endpoint(var) else {
            return Ok(None);
        };
        let mut config = Self::new(endpoint);
        config.apply_env(var)?;
        Ok(Some(config))
    }

    /// Applies the standard variables over this configuration: an endpoint
    /// and a service name there replace these; their headers and resource
    /// attributes are added (a header named twice takes the variable's
    /// value).
    ///
    /// # Errors
    ///
    /// [`TelemetryError::BadHeader`] for a header (or resource attribute)
    /// without `=`.
    pub fn apply_env(
        &mut self,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), TelemetryError> {
        if let Some(endpoint) = env_endpoint(var) {
            self.endpoint = endpoint;
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

/// The traces URL the variables name, if any.
fn env_endpoint(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| {
        set("OTEL_EXPORTER_OTLP_ENDPOINT")
            .map(|base| format!("{}/v1/traces", base.trim_end_matches('/')))
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
