//! HTTP status classification, API error bodies and `retry-after` headers.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;
use serde::Deserialize;

use super::failure::{Failure, truncate};
use crate::error::ProviderError;

/// The longest raw body kept in an error message.
const MAX_RAW_BODY: usize = 500;

/// What an HTTP status means for the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusClass {
    /// 401, 403: the credentials.
    Auth,
    /// Worth retrying: 408, 409, 429, 5xx (529 included).
    Retry,
    /// Anything else that is not a success: the request itself.
    Rejected,
}

/// Classifies a non-success status.
pub(crate) fn classify(status: u16) -> StatusClass {
    match status {
        401 | 403 => StatusClass::Auth,
        408 | 409 | 429 | 500..=599 => StatusClass::Retry,
        _ => StatusClass::Rejected,
    }
}

/// The error object both APIs send: `{"error": {"type", "message"}}`
/// (Anthropic wraps it in `{"type": "error", ...}`; OpenAI adds `code` and
/// `param`).
#[derive(Debug, Deserialize)]
pub(crate) struct ApiErrorBody {
    /// The error itself.
    pub(crate) error: ApiError,
}

/// An API error object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ApiError {
    /// `invalid_request_error`, `overloaded_error`, `server_error`, ...
    #[serde(rename = "type")]
    pub(crate) kind: Option<String>,
    /// OpenAI's finer code, e.g. `rate_limit_exceeded`; may be a number on
    /// servers that imitate the API.
    pub(crate) code: Option<serde_json::Value>,
    /// The human-readable message.
    pub(crate) message: Option<String>,
}

impl ApiError {
    /// The error's type (or code), `unknown` when it has neither.
    pub(crate) fn kind(&self) -> String {
        match (&self.kind, &self.code) {
            (Some(kind), _) if !kind.is_empty() => kind.clone(),
            (_, Some(serde_json::Value::String(code))) => code.clone(),
            (_, Some(code)) if !code.is_null() => code.to_string(),
            _ => "unknown".to_owned(),
        }
    }

    /// Whether another attempt may cure this error: its type or code is one
    /// of `names`, or its code is an HTTP status worth retrying (429, 5xx),
    /// as a number or as a numeric string (`"code": "500"`, as proxies in
    /// front of the APIs send it).
    pub(crate) fn retryable(&self, names: &[&str]) -> bool {
        let (status, code_name) = match &self.code {
            Some(serde_json::Value::Number(code)) => (code.as_u64(), None),
            Some(serde_json::Value::String(code)) => {
                (code.trim().parse::<u64>().ok(), Some(code.as_str()))
            }
            _ => (None, None),
        };
        status.is_some_and(|status| status == 429 || (500..=599).contains(&status))
            || [self.kind.as_deref(), code_name]
                .into_iter()
                .flatten()
                .any(|name| names.contains(&name))
    }

    /// The failure this error object in a stream (or a whole response)
    /// stands for: retried when [`ApiError::retryable`] with `names`.
    pub(crate) fn into_failure(self, provider: &'static str, names: &[&str]) -> Failure {
        let retryable = self.retryable(names);
        let error = ProviderError::Api {
            provider,
            kind: self.kind(),
            message: self.message_or("(no message)"),
        };
        if retryable {
            Failure::retry(error, None)
        } else {
            Failure::fatal(error)
        }
    }

    /// The error's message, or `fallback`.
    pub(crate) fn message_or(&self, fallback: &str) -> String {
        self.message.clone().unwrap_or_else(|| fallback.to_owned())
    }
}

/// The failure an HTTP error response stands for.
pub(crate) fn failure_from_status(
    provider: &'static str,
    key_hint: &'static str,
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
) -> Failure {
    let raw = truncate(String::from_utf8_lossy(body).trim(), MAX_RAW_BODY);
    let (kind, message) = match serde_json::from_slice::<ApiErrorBody>(body) {
        Ok(parsed) => (parsed.error.kind(), parsed.error.message_or(&raw)),
        Err(_) => ("unknown".to_owned(), raw),
    };
    match classify(status) {
        StatusClass::Auth => Failure::fatal(ProviderError::Auth {
            provider,
            status,
            message,
            key_hint,
        }),
        StatusClass::Rejected => Failure::fatal(ProviderError::Rejected {
            provider,
            status,
            kind,
            message,
        }),
        StatusClass::Retry => Failure::retry(
            ProviderError::Status {
                provider,
                status,
                kind,
                message,
            },
            retry_after(headers, SystemTime::now()),
        ),
    }
}

/// The delay a response asks for: `retry-after-ms` (milliseconds, may be
/// fractional), else `retry-after` (whole seconds, or an HTTP date, measured
/// from `now`). Unreadable or negative values are ignored.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|value| value.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = parse_http_date(value)?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the HTTP date
/// format servers must send.
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    let rest = text.split_once(", ")?.1;
    let mut parts = rest.split(' ');
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':');
    let hour: u64 = clock.next()?.parse().ok()?;
    let minute: u64 = clock.next()?.parse().ok()?;
    let second: u64 = clock.next()?.parse().ok()?;
    if parts.next()? != "GMT"
        || parts.next().is_some()
        || clock.next().is_some()
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
        || !(1970..=9999).contains(&year)
    {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, i64::from(day))).ok()?;
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second;
    UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}
