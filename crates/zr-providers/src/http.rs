//! The HTTP layer shared by the model providers: retry policy, status
//! classification, SSE attempts and the retry driver.
//!
//! A provider describes one attempt (how to send the request, how to decode
//! its server-sent events); [`retrying`] runs attempts until one completes,
//! reporting every retry as [`ModelEvent::Retrying`]. [`Endpoint::stream`]
//! does both for the providers' common case: a JSON body posted with the
//! [`HttpSettings`] of their config.

mod attempt;
mod body;
mod endpoint;
mod failure;
mod status;

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tracing::Instrument;

use crate::error::ProviderError;
use crate::provider::{ModelEvent, ModelRequest, ModelStream};

#[cfg(test)]
pub(crate) use attempt::decode_chunks;
pub(crate) use attempt::{Attempt, Decoder, Request, SseEvent, attempt};
pub(crate) use endpoint::Endpoint;
pub use endpoint::HttpSettings;
pub(crate) use failure::{Failure, truncate};
pub(crate) use status::ApiError;

/// How a provider retries a request that failed in a way worth retrying
/// (HTTP 408, 409, 429, 5xx, 529; an `overloaded_error` in the stream; a cut
/// or stalled connection).
///
/// The delay before attempt `n + 1` is, without a server hint, a uniformly
/// random duration in `[0, min(max_delay, base_delay * 2^(n-1))]` ("full
/// jitter"). When the failed response carried `retry-after-ms` (milliseconds)
/// or `retry-after` (seconds, or an HTTP date), that delay is used instead,
/// without jitter, capped at `max_delay`: a server asking for more than
/// `max_delay` gets `max_delay`, and the attempt budget decides the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; at least 1 is always made.
    pub max_attempts: u32,
    /// The back-off scale: the first retry waits up to this long.
    pub base_delay: Duration,
    /// The longest wait between two attempts, server hints included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Five attempts, 500 ms base delay, 30 s maximum delay.
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt `attempt` (1-based), given the
    /// server's hint if it sent one.
    #[must_use]
    pub fn delay(&self, attempt: u32, server_hint: Option<Duration>) -> Duration {
        if let Some(hint) = server_hint {
            return hint.min(self.max_delay);
        }
        let exponent = attempt.saturating_sub(1).min(31);
        let ceiling = self
            .base_delay
            .saturating_mul(1_u32 << exponent)
            .min(self.max_delay);
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(fastrand::u64(0..=nanos))
    }
}

/// Runs attempts made by `start` (called with the 1-based attempt number)
/// until one yields [`ModelEvent::Completed`], retrying retryable failures
/// as `policy` says. Every item is produced inside `span`, whose `attempt`
/// field is updated. Every failure (a retry's reason, the final error, and
/// what is logged of them) has `secret` replaced by `[redacted]`: an API
/// that echoes the key in its error body never puts it on a screen, in
/// `--json` output or in a transcript.
pub(crate) fn retrying<F>(
    provider: &'static str,
    policy: RetryPolicy,
    secret: Option<Arc<str>>,
    span: tracing::Span,
    start: F,
) -> ModelStream
where
    F: FnMut(u32) -> Attempt + Send + 'static,
{
    let driver = Driver {
        provider,
        policy,
        secret,
        span,
        start,
        attempt: 0,
        current: None,
        backoff: None,
        done: false,
    };
    Box::pin(futures_util::stream::unfold(driver, Driver::next))
}

/// The retry driver's state between two items.
struct Driver<F> {
    provider: &'static str,
    policy: RetryPolicy,
    secret: Option<Arc<str>>,
    span: tracing::Span,
    start: F,
    attempt: u32,
    current: Option<Attempt>,
    backoff: Option<Duration>,
    done: bool,
}

impl<F> Driver<F>
where
    F: FnMut(u32) -> Attempt + Send + 'static,
{
    async fn next(mut self) -> Option<(Result<ModelEvent, ProviderError>, Self)> {
        if self.done {
            return None;
        }
        let span = self.span.clone();
        let item = self.step().instrument(span).await;
        Some((item, self))
    }

    async fn step(&mut self) -> Result<ModelEvent, ProviderError> {
        if let Some(delay) = self.backoff.take() {
            tokio::time::sleep(delay).await;
        }
        let current = match &mut self.current {
            Some(current) => current,
            None => {
                self.attempt = self.attempt.saturating_add(1);
                self.span.record("attempt", self.attempt);
                tracing::debug!(attempt = self.attempt, "sending request");
                self.current.insert((self.start)(self.attempt))
            }
        };
        match current.next().await {
            Some(Ok(event)) => {
                if matches!(event, ModelEvent::Completed(_)) {
                    self.done = true;
                    self.current = None;
                }
                Ok(event)
            }
            Some(Err(failure)) => {
                self.current = None;
                self.fail(failure)
            }
            None => {
                // An attempt always ends with Completed or a failure; a
                // bare end is treated like a cut connection.
                self.current = None;
                let failure = Failure::retry(
                    ProviderError::Protocol {
                        provider: self.provider,
                        message: "the stream ended before the message was complete".into(),
                    },
                    None,
                );
                self.fail(failure)
            }
        }
    }

    fn fail(&mut self, failure: Failure) -> Result<ModelEvent, ProviderError> {
        let Failure { error, retry } = failure;
        let error = match &self.secret {
            Some(secret) => error.redacted(secret),
            None => error,
        };
        let Some(hint) = retry else {
            tracing::warn!(error = %error, "request failed");
            self.done = true;
            return Err(error);
        };
        if self.attempt >= self.policy.max_attempts {
            tracing::warn!(error = %error, attempts = self.attempt, "retries exhausted");
            self.done = true;
            return Err(ProviderError::RetriesExhausted {
                provider: self.provider,
                attempts: self.attempt,
                last: Box::new(error),
            });
        }
        let delay = self.policy.delay(self.attempt, hint);
        tracing::info!(error = %error, attempt = self.attempt, ?delay, "retrying");
        self.backoff = Some(delay);
        Ok(ModelEvent::Retrying {
            attempt: self.attempt,
            delay,
            reason: error.to_string(),
        })
    }
}

/// The tracing span of one model request; `attempt` is recorded by
/// [`retrying`].
pub(crate) fn request_span(provider: &'static str, request: &ModelRequest) -> tracing::Span {
    tracing::info_span!(
        "model_request",
        provider,
        model = %request.model,
        agent = %request.origin.agent,
        agent_type = %request.origin.agent_type,
        turn = request.origin.turn,
        attempt = tracing::field::Empty,
    )
}

/// The key of the one field of a tool call's input that the output limit
/// cut short (see [`crate::ModelResponse`]): its value is the start of
/// what the model wrote.
pub const CUT_OFF_INPUT: &str = "zr_cut_off_input";

/// A stream that fails at once with `error`.
pub(crate) fn failed(error: ProviderError) -> ModelStream {
    Box::pin(futures_util::stream::iter([Err(error)]))
}

/// Parses a tool call's streamed input: empty means `{}`. In a response
/// that ended at the output limit (`cut_off`), input that is not valid
/// JSON is the call the limit cut short: it becomes
/// `{CUT_OFF_INPUT: "the first 200 characters"}`, for the engine to answer
/// as cut off (a failure would end the run on a weak model's first long
/// call); otherwise it is a protocol error.
pub(crate) fn tool_input(
    provider: &'static str,
    id: &str,
    name: &str,
    json: &str,
    cut_off: bool,
) -> Result<serde_json::Value, Failure> {
    if json.trim().is_empty() {
        return Ok(serde_json::Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(json)
        .or_else(|error| {
            if cut_off {
                tracing::info!(
                    provider,
                    call = id,
                    tool = name,
                    "a tool call's input was cut off at the output limit"
                );
                let mut input = serde_json::Map::new();
                input.insert(
                    CUT_OFF_INPUT.to_owned(),
                    serde_json::Value::String(truncate(json, 200)),
                );
                return Ok(serde_json::Value::Object(input));
            }
            Err(error)
        })
        .map_err(|error| {
            Failure::fatal(ProviderError::Protocol {
                provider,
                message: format!(
                    "the input of tool call {id} ({name}) is not valid JSON: {error}: {}",
                    truncate(json, 200)
                ),
            })
        })
}

#[cfg(test)]
mod tests;
