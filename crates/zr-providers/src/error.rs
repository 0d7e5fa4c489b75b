//! Errors of the model providers.

use std::time::Duration;

use thiserror::Error;

/// A model request failed for good (after any retries).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The API refused the credentials (401, 403).
    #[error(
        "{provider}: authentication failed (HTTP {status}): {message}; check the API key ({key_hint})"
    )]
    Auth {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The API's message.
        message: String,
        /// Where the key comes from, e.g. `ANTHROPIC_API_KEY`.
        key_hint: &'static str,
    },
    /// The API rejected the request itself (400, 404, 413, 422): retrying
    /// cannot help.
    #[error("{provider}: request rejected (HTTP {status}, {kind}): {message}")]
    Rejected {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The API's error type, e.g. `invalid_request_error`.
        kind: String,
        /// The API's message.
        message: String,
    },
    /// An HTTP status worth retrying (429, 5xx, 529), reported when it was
    /// the last straw.
    #[error("{provider}: HTTP {status} ({kind}): {message}")]
    Status {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The API's error type, when it sent one.
        kind: String,
        /// The API's message.
        message: String,
    },
    /// An error event in the middle of a stream.
    #[error("{provider}: error in the stream ({kind}): {message}")]
    Api {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The API's error type, e.g. `overloaded_error`.
        kind: String,
        /// The API's message.
        message: String,
    },
    /// The connection failed or was cut.
    #[error("{provider}: connection to {url} failed")]
    Transport {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The endpoint.
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The response did not follow the API's format (bad JSON, an event out
    /// of order, a stream that ended before the message did).
    #[error("{provider}: malformed response: {message}")]
    Protocol {
        /// `anthropic`, `openai`, or `engine` when a provider's stream
        /// ended without [`ModelEvent::Completed`](crate::ModelEvent::Completed).
        provider: &'static str,
        /// What was wrong, and where.
        message: String,
    },
    /// Every attempt failed with a retryable error.
    #[error("{provider}: gave up after {attempts} attempts")]
    RetriesExhausted {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// How many attempts were made.
        attempts: u32,
        /// The last attempt's error.
        #[source]
        last: Box<ProviderError>,
    },
    /// The server sent nothing for too long: no response head within the
    /// request timeout, or no stream data within the idle timeout. Retried.
    #[error("{provider}: no {waiting_for} from {url} within {after:?}")]
    Timeout {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The endpoint.
        url: String,
        /// `response` (connect and first byte) or `stream data` (idle).
        waiting_for: &'static str,
        /// The limit that passed.
        after: Duration,
    },
    /// A provider built from the environment lacks a variable.
    #[error("{provider}: the environment variable {var} is not set")]
    MissingEnv {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The variable, e.g. `ANTHROPIC_API_KEY`.
        var: &'static str,
    },
    /// The scripted provider has no reply for this request.
    #[error("scripted provider: {message}")]
    Script {
        /// Which agent asked, at which turn, and what the script lacks.
        message: String,
    },
}

impl ProviderError {
    /// The error with every `secret` in its text replaced by
    /// `[redacted]` (the API's messages, a URL; a transport error's cause,
    /// which zr does not write, keeps its own text).
    #[must_use]
    pub(crate) fn redacted(self, secret: &str) -> Self {
        let hide = |text: String| text.replace(secret, "[redacted]");
        match self {
            Self::Auth {
                provider,
                status,
                message,
                key_hint,
            } => Self::Auth {
                provider,
                status,
                message: hide(message),
                key_hint,
            },
            Self::Rejected {
                provider,
                status,
                kind,
                message,
            } => Self::Rejected {
                provider,
                status,
                kind: hide(kind),
                message: hide(message),
            },
            Self::Status {
                provider,
                status,
                kind,
                message,
            } => Self::Status {
                provider,
                status,
                kind: hide(kind),
                message: hide(message),
            },
            Self::Api {
                provider,
                kind,
                message,
            } => Self::Api {
                provider,
                kind: hide(kind),
                message: hide(message),
            },
            Self::Protocol { provider, message } => Self::Protocol {
                provider,
                message: hide(message),
            },
            Self::RetriesExhausted {
                provider,
                attempts,
                last,
            } => Self::RetriesExhausted {
                provider,
                attempts,
                last: Box::new(last.redacted(secret)),
            },
            Self::Transport {
                provider,
                url,
                source,
            } => Self::Transport {
                provider,
                url: hide(url),
                source,
            },
            Self::Timeout {
                provider,
                url,
                waiting_for,
                after,
            } => Self::Timeout {
                provider,
                url: hide(url),
                waiting_for,
                after,
            },
            other @ (Self::MissingEnv { .. } | Self::Script { .. }) => other,
        }
    }
}
