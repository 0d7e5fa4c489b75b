//! One attempt of a streaming request: send, check the status, read the
//! server-sent events with an idle timeout and hand them to a decoder (or,
//! when the answer is not an event stream, hand its body whole).

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{FutureExt, Stream, StreamExt};

use super::body::{MAX_ERROR_BODY, not_event_stream, read_body, whole_message};
use super::failure::{Failure, truncate};
use super::status::failure_from_status;
use crate::error::ProviderError;
use crate::provider::ModelEvent;

/// The items of one attempt: events, then `Completed` or a failure.
pub(crate) type Attempt = Pin<Box<dyn Stream<Item = Result<ModelEvent, Failure>> + Send>>;

/// One server-sent event.
#[derive(Debug)]
pub(crate) struct SseEvent {
    /// The `event:` field (`message` when absent).
    pub(crate) event: String,
    /// The `data:` lines, joined by newlines.
    pub(crate) data: String,
}

/// Turns one API's server-sent events into model events.
pub(crate) trait Decoder: Send + 'static {
    /// Decodes `event`, pushing what it yields to `out`; pushes
    /// [`ModelEvent::Completed`] when the message is over.
    fn decode(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), Failure>;

    /// The body ended without `Completed`: the final event (or why the
    /// message is invalid) if the format allows the message to end here,
    /// else `None` (a cut connection).
    fn end(&mut self) -> Option<Result<ModelEvent, Failure>>;

    /// The 2xx answer was not an event stream: reads `body`, whole, as the
    /// API's non-streamed answer. Pushes its events to `out`, ending with
    /// [`ModelEvent::Completed`], and returns `true`; fails as
    /// [`Decoder::decode`] does on an error object; returns `false` when
    /// `body` is neither. The default knows no whole answer.
    fn whole(&mut self, body: &str, out: &mut Vec<ModelEvent>) -> Result<bool, Failure> {
        let _ = (body, out);
        Ok(false)
    }
}

/// Everything one attempt needs besides its decoder.
#[derive(Debug)]
pub(crate) struct Request {
    /// `anthropic` or `openai`.
    pub(crate) provider: &'static str,
    /// Where the key comes from, for authentication errors.
    pub(crate) key_hint: &'static str,
    /// The endpoint, for errors.
    pub(crate) url: String,
    /// The request, ready to send.
    pub(crate) builder: reqwest::RequestBuilder,
    /// Connect plus response head.
    pub(crate) request_timeout: Duration,
    /// Between two pieces of the body.
    pub(crate) idle_timeout: Duration,
}

type Events = Pin<
    Box<
        dyn Stream<Item = Result<eventsource_stream::Event, EventStreamError<reqwest::Error>>>
            + Send,
    >,
>;

/// Where an attempt is.
enum State<D> {
    Start(Box<Request>, D),
    Streaming(Live<D>),
    /// The events of a whole (not streamed) message, to hand out.
    Whole(VecDeque<ModelEvent>),
    Done,
}

/// A response whose status said success.
enum Opened {
    /// Server-sent events.
    Stream(Events),
    /// Another content type: read whole.
    Whole(reqwest::Response, String),
}

/// An attempt whose response is streaming.
struct Live<D> {
    provider: &'static str,
    url: String,
    idle_timeout: Duration,
    events: Events,
    decoder: D,
    /// Decoded events not yet handed out.
    pending: VecDeque<ModelEvent>,
}

/// Starts one attempt of `request`, decoding its events with `decoder`. The
/// request is sent when the attempt is first polled; dropping the attempt
/// closes the connection.
pub(crate) fn attempt<D: Decoder>(request: Request, decoder: D) -> Attempt {
    Box::pin(futures_util::stream::unfold(
        State::Start(Box::new(request), decoder),
        advance,
    ))
}

async fn advance<D: Decoder>(
    mut state: State<D>,
) -> Option<(Result<ModelEvent, Failure>, State<D>)> {
    loop {
        state = match state {
            State::Done => return None,
            State::Start(request, mut decoder) => {
                let (provider, url) = (request.provider, request.url.clone());
                let (request_timeout, idle_timeout) =
                    (request.request_timeout, request.idle_timeout);
                match open(*request).await {
                    Ok(Opened::Stream(events)) => State::Streaming(Live {
                        provider,
                        url,
                        idle_timeout,
                        events,
                        decoder,
                        pending: VecDeque::new(),
                    }),
                    Ok(Opened::Whole(response, content_type)) => {
                        match whole_message(
                            provider,
                            url,
                            request_timeout,
                            response,
                            &content_type,
                            |body, out| decoder.whole(body, out),
                        )
                        .await
                        {
                            Ok(events) => State::Whole(events.into()),
                            Err(failure) => return Some((Err(failure), State::Done)),
                        }
                    }
                    Err(failure) => return Some((Err(failure), State::Done)),
                }
            }
            State::Whole(mut events) => {
                let event = events.pop_front()?;
                return Some((Ok(event), State::Whole(events)));
            }
            State::Streaming(mut live) => {
                if let Some(event) = live.pending.pop_front() {
                    if matches!(event, ModelEvent::Completed(_)) {
                        return Some((Ok(event), State::Done));
                    }
                    return Some((Ok(event), State::Streaming(live)));
                }
                let (provider, idle_timeout) = (live.provider, live.idle_timeout);
                let next = tokio::time::timeout(idle_timeout, live.events.next()).await;
                let failure = match next {
                    Err(_elapsed) => Failure::retry(
                        ProviderError::Timeout {
                            provider,
                            url: live.url,
                            waiting_for: "stream data",
                            after: idle_timeout,
                        },
                        None,
                    ),
                    Ok(Some(Ok(event))) => {
                        let event = SseEvent {
                            event: event.event,
                            data: event.data,
                        };
                        let mut out = Vec::new();
                        match live.decoder.decode(&event, &mut out) {
                            Ok(()) => {
                                if out
                                    .iter()
                                    .any(|event| matches!(event, ModelEvent::Completed(_)))
                                {
                                    // Read the body's end if it is already
                                    // here, so that the connection goes
                                    // back to the pool instead of closing.
                                    let _ = live.events.next().now_or_never();
                                }
                                live.pending.extend(out);
                                state = State::Streaming(live);
                                continue;
                            }
                            Err(failure) => failure,
                        }
                    }
                    Ok(Some(Err(EventStreamError::Transport(source)))) => Failure::retry(
                        ProviderError::Transport {
                            provider,
                            url: live.url,
                            source,
                        },
                        None,
                    ),
                    Ok(Some(Err(EventStreamError::Utf8(error)))) => {
                        Failure::fatal(ProviderError::Protocol {
                            provider,
                            message: format!("the stream is not UTF-8: {error}"),
                        })
                    }
                    Ok(Some(Err(EventStreamError::Parser(error)))) => {
                        Failure::fatal(ProviderError::Protocol {
                            provider,
                            message: format!(
                                "the stream is not server-sent events: {}",
                                truncate(&error.to_string(), 200)
                            ),
                        })
                    }
                    Ok(None) => match live.decoder.end() {
                        Some(Ok(event)) => return Some((Ok(event), State::Done)),
                        Some(Err(failure)) => failure,
                        None => Failure::retry(
                            ProviderError::Protocol {
                                provider,
                                message: "the stream ended before the message was complete".into(),
                            },
                            None,
                        ),
                    },
                };
                return Some((Err(failure), State::Done));
            }
        };
    }
}

/// Sends the request and checks the status; on success returns the body as
/// server-sent events, or the response to read whole when its content type
/// is another.
async fn open(request: Request) -> Result<Opened, Failure> {
    let Request {
        provider,
        key_hint,
        url,
        builder,
        request_timeout,
        idle_timeout: _,
    } = request;
    let response = match tokio::time::timeout(request_timeout, builder.send()).await {
        Err(_elapsed) => {
            return Err(Failure::retry(
                ProviderError::Timeout {
                    provider,
                    url,
                    waiting_for: "response",
                    after: request_timeout,
                },
                None,
            ));
        }
        Ok(Err(source)) => {
            let fatal = source.is_builder();
            let error = ProviderError::Transport {
                provider,
                url,
                source,
            };
            return Err(if fatal {
                Failure::fatal(error)
            } else {
                Failure::retry(error, None)
            });
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        let headers = response.headers().clone();
        let (body, _end) = read_body(response, request_timeout, MAX_ERROR_BODY).await;
        return Err(failure_from_status(
            provider,
            key_hint,
            status.as_u16(),
            &headers,
            &body,
        ));
    }
    if let Some(content_type) = not_event_stream(response.headers()) {
        return Ok(Opened::Whole(response, content_type));
    }
    Ok(Opened::Stream(Box::pin(sse_events(
        response.bytes_stream(),
    ))))
}

/// Parses a body as server-sent events.
pub(crate) fn sse_events<S, E>(
    body: S,
) -> eventsource_stream::EventStream<impl Stream<Item = Result<Bytes, E>>>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    let mut first = true;
    let body = body.map(move |chunk| {
        chunk.map(|bytes| {
            // A leading byte-order mark is allowed by the SSE format.
            if std::mem::take(&mut first) && bytes.starts_with(b"\xEF\xBB\xBF") {
                bytes.slice(3..)
            } else {
                bytes
            }
        })
    });
    // The empty line in front is a no-op for the SSE parser and keeps its
    // byte-order-mark check (which slices one byte off a three-byte
    // character) from ever seeing a body that starts with U+FEFF.
    futures_util::stream::once(async { Ok(Bytes::from_static(b"\n")) })
        .chain(body)
        .eventsource()
}

/// Runs `decoder` over `chunks` as a body would arrive, without a network:
/// every event it yields (or the failure), for tests.
#[cfg(test)]
pub(crate) fn decode_chunks<D: Decoder>(
    decoder: &mut D,
    chunks: Vec<Vec<u8>>,
) -> Result<Vec<ModelEvent>, Failure> {
    let body = futures_util::stream::iter(
        chunks
            .into_iter()
            .map(|chunk| Ok::<_, std::convert::Infallible>(Bytes::from(chunk))),
    );
    let mut events = Box::pin(sse_events(body));
    let mut out = Vec::new();
    // The body stream is always ready, so each poll completes at once.
    while let Some(Some(item)) = events.next().now_or_never() {
        let Ok(event) = item else {
            return Err(Failure::fatal(ProviderError::Protocol {
                provider: "test",
                message: "not server-sent events".into(),
            }));
        };
        let event = SseEvent {
            event: event.event,
            data: event.data,
        };
        decoder.decode(&event, &mut out)?;
    }
    if let Some(end) = decoder.end() {
        out.push(end?);
    }
    Ok(out)
}
