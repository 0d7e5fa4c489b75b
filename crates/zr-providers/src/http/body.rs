//! Response bodies read whole rather than as an event stream: error
//! bodies, and a 2xx answer whose content type is not `text/event-stream`
//! (a server that ignored `stream: true`, or a proxy's page), which is read
//! as the API's non-streamed message when it is one.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap};

use super::failure::{Failure, truncate};
use crate::error::ProviderError;
use crate::provider::ModelEvent;

/// The most of an error body that is read.
pub(super) const MAX_ERROR_BODY: usize = 64 * 1024;
/// The largest whole message accepted in place of an event stream.
pub(super) const MAX_MESSAGE_BODY: usize = 16 * 1024 * 1024;

/// How reading a body ended.
#[derive(Debug)]
pub(super) enum BodyEnd {
    /// At its end.
    Complete,
    /// At the byte limit, with more to come.
    TooLarge,
    /// The time limit passed.
    TimedOut,
    /// The connection failed.
    Cut(reqwest::Error),
}

/// Reads `response`'s body, up to `max` bytes and within `limit`.
pub(super) async fn read_body(
    response: reqwest::Response,
    limit: Duration,
    max: usize,
) -> (Vec<u8>, BodyEnd) {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    let read = tokio::time::timeout(limit, async {
        while let Some(chunk) = chunks.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(error) => return BodyEnd::Cut(error),
            };
            let room = max.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                return BodyEnd::TooLarge;
            }
        }
        BodyEnd::Complete
    })
    .await;
    (body, read.unwrap_or(BodyEnd::TimedOut))
}

/// The response's content type when it is not an event stream: `None` for
/// `text/event-stream` (parameters and case aside) and for a response
/// without the header, which is read as a stream as before (some local
/// servers stream without naming it).
pub(super) fn not_event_stream(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?;
    let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
    let essence = text.split(';').next().unwrap_or_default().trim();
    (!essence.eq_ignore_ascii_case("text/event-stream")).then_some(text)
}

/// Everything one attempt has to say about a 2xx `response` of
/// `content_type` (not an event stream), whose body `whole` reads as the
/// API's answer (a decoder's `whole`): the events of the API's whole
/// message, ending with `Completed`; the failure of an error object; a
/// retryable failure when the body did not arrive whole; otherwise one
/// final [`ProviderError::Protocol`] naming the content type, since another
/// attempt would most likely get the same answer.
pub(super) async fn whole_message(
    provider: &'static str,
    url: String,
    limit: Duration,
    response: reqwest::Response,
    content_type: &str,
    whole: impl FnOnce(&str, &mut Vec<ModelEvent>) -> Result<bool, Failure>,
) -> Result<Vec<ModelEvent>, Failure> {
    let (body, end) = read_body(response, limit, MAX_MESSAGE_BODY).await;
    let not_a_message = |why: String| {
        Failure::fatal(ProviderError::Protocol {
            provider,
            message: format!(
                "the response has content type '{content_type}', not text/event-stream, and {why}"
            ),
        })
    };
    match end {
        BodyEnd::Complete => {}
        BodyEnd::TooLarge => {
            return Err(not_a_message(format!(
                "is larger than {} MiB",
                MAX_MESSAGE_BODY / (1024 * 1024)
            )));
        }
        BodyEnd::TimedOut => {
            return Err(Failure::retry(
                ProviderError::Timeout {
                    provider,
                    url,
                    waiting_for: "response body",
                    after: limit,
                },
                None,
            ));
        }
        BodyEnd::Cut(source) => {
            return Err(Failure::retry(
                ProviderError::Transport {
                    provider,
                    url,
                    source,
                },
                None,
            ));
        }
    }
    let text = String::from_utf8_lossy(&body);
    let mut out = Vec::new();
    let read = whole(&text, &mut out)?;
    if read && matches!(out.last(), Some(ModelEvent::Completed(_))) {
        return Ok(out);
    }
    Err(not_a_message(format!(
        "is not a whole message of the API either: {}",
        truncate(text.trim(), 200)
    )))
}
