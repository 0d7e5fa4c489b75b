//! The legacy HTTP+SSE transport (MCP protocol 2024-11-05), which Claude
//! Code still accepts as `"type": "sse"`: rmcp 3 has no client for it, so
//! this is a small one on rmcp's [`Transport`] trait.
//!
//! The client opens one `GET` on the server's URL (`Accept:
//! text/event-stream`). The server's first event, `endpoint`, names the URL
//! (relative to the stream's) to which the client `POST`s each JSON-RPC
//! message; the server answers those posts with `202 Accepted` and sends
//! its own messages (answers, requests, notifications) as `message` events
//! on the stream. An endpoint on another origin than the stream's is
//! refused (as the TypeScript SDK's client does), so a server cannot send
//! zr's headers elsewhere. An event larger than the hub's message limit
//! ends the stream, as on the other transports: that bound is why the
//! event parser is this module's own (a few lines of the WHATWG format)
//! rather than `eventsource-stream`, which zr-providers uses and which
//! grows an event without limit.

use std::time::Duration;

use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderValue, header};
use reqwest::Url;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::config::{HttpConfig, http_header};

/// How many server messages wait for the client before the stream's
/// reader waits.
const QUEUE: usize = 64;

/// What went wrong on an SSE connection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum SseError {
    /// The URL (or the endpoint the server named) is not a URL.
    #[error("'{url}' is not a valid URL")]
    Url {
        /// The text.
        url: String,
        /// Why.
        #[source]
        source: url::ParseError,
    },
    /// A request could not be sent or its answer read.
    #[error("{method} {url} failed")]
    Http {
        /// `GET` or `POST`.
        method: &'static str,
        /// Where.
        url: Url,
        /// The client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered with an error status.
    #[error("{method} {url} answered {status}")]
    Status {
        /// `GET` or `POST`.
        method: &'static str,
        /// Where.
        url: Url,
        /// Its status.
        status: reqwest::StatusCode,
    },
    /// The stream ended, or sent something else, before naming its
    /// message endpoint.
    #[error("the event stream at {url} ended before its 'endpoint' event")]
    NoEndpoint {
        /// The stream's URL.
        url: Url,
    },
    /// The endpoint is on another origin than the stream.
    #[error(
        "the server named a message endpoint on another origin ({endpoint}) than its stream ({url}); refused"
    )]
    OtherOrigin {
        /// The stream's URL.
        url: Url,
        /// The endpoint it named.
        endpoint: Url,
    },
    /// A message could not be written as JSON.
    #[error("the message could not be written as JSON")]
    Json(#[source] serde_json::Error),
}

/// A client connection over the legacy SSE transport.
#[derive(Debug)]
pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    messages: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: JoinHandle<()>,
}

impl SseTransport {
    /// Opens the event stream of `config`'s URL and waits for its
    /// `endpoint` event; events larger than `max_event` bytes end it.
    pub(crate) async fn connect(config: &HttpConfig, max_event: usize) -> Result<Self, SseError> {
        let url = Url::parse(&config.url).map_err(|source| SseError::Url {
            url: config.url.clone(),
            source,
        })?;
        let headers: HeaderMap = config
            .headers
            .iter()
            .filter_map(|(name, value)| http_header(name, value))
            .collect();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .build()
            .map_err(|source| SseError::Http {
                method: "GET",
                url: url.clone(),
                source,
            })?;
        let response = client
            .get(url.clone())
            .headers(headers.clone())
            .header(
                header::ACCEPT,
                HeaderValue::from_static("text/event-stream"),
            )
            .send()
            .await
            .map_err(|source| SseError::Http {
                method: "GET",
                url: url.clone(),
                source,
            })?;
        if !response.status().is_success() {
            return Err(SseError::Status {
                method: "GET",
                url,
                status: response.status(),
            });
        }
        let mut events = Box::pin(events(response.bytes_stream(), max_event));
        let endpoint = loop {
            match events.next().await {
                Some(event) if event.name == "endpoint" => break event.data,
                Some(_) => {}
                None => return Err(SseError::NoEndpoint { url }),
            }
        };
        let endpoint = url.join(endpoint.trim()).map_err(|source| SseError::Url {
            url: endpoint.clone(),
            source,
        })?;
        if endpoint.origin() != url.origin() {
            return Err(SseError::OtherOrigin { url, endpoint });
        }
        let (sender, messages) = mpsc::channel(QUEUE);
        let reader = tokio::spawn(async move {
            while let Some(event) = events.next().await {
                if event.name != "message" {
                    continue;
                }
                match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&event.data) {
                    Ok(message) => {
                        if sender.send(message).await.is_err() {
                            return;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "an SSE server sent a message that is not JSON-RPC; ignored");
                    }
                }
            }
        });
        Ok(Self {
            client,
            endpoint,
            headers,
            messages,
            reader,
        })
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = self.endpoint.clone();
        let headers = self.headers.clone();
        async move {
            let body = serde_json::to_vec(&item).map_err(SseError::Json)?;
            let response = client
                .post(endpoint.clone())
                .headers(headers)
                .header(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )
                .body(body)
                .send()
                .await
                .map_err(|source| SseError::Http {
                    method: "POST",
                    url: endpoint.clone(),
                    source,
                })?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseError::Status {
                    method: "POST",
                    url: endpoint,
                    status: response.status(),
                })
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.messages.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.messages.close();
        Ok(())
    }
}

/// One server-sent event: its name (`message` when it has none) and data.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    name: String,
    data: String,
}

/// The events of an `text/event-stream` body (the WHATWG format: `event:`
/// and `data:` fields, `:` comments, a blank line ends an event; `id:` and
/// `retry:` are read and not used). The stream ends at the body's end, at
/// a read error, or at an event (or a line) over `max_event` bytes.
fn events<S, B, E>(body: S, max_event: usize) -> impl futures_util::Stream<Item = Event>
where
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    futures_util::stream::unfold(
        (body, Parser::default(), std::collections::VecDeque::new()),
        move |(mut body, mut parser, mut ready)| async move {
            loop {
                if let Some(event) = ready.pop_front() {
                    return Some((event, (body, parser, ready)));
                }
                match body.next().await {
                    Some(Ok(chunk)) => {
                        if !parser.feed(chunk.as_ref(), max_event, &mut ready) {
                            tracing::warn!(
                                limit = max_event,
                                "an SSE server sent an event over the message size limit; the stream is closed"
                            );
                            return None;
                        }
                    }
                    Some(Err(error)) => {
                        tracing::debug!(%error, "the SSE stream broke");
                        return None;
                    }
                    None => return None,
                }
            }
        },
    )
}

/// The state between chunks: the partial line, and the event so far.
#[derive(Debug, Default)]
struct Parser {
    line: Vec<u8>,
    name: Option<String>,
    data: Option<String>,
}

impl Parser {
    /// Reads `chunk`, pushing each finished event to `ready`; `false` when
    /// a line or an event grew over `max` bytes.
    fn feed(
        &mut self,
        chunk: &[u8],
        max: usize,
        ready: &mut std::collections::VecDeque<Event>,
    ) -> bool {
        for &byte in chunk {
            if byte != b'\n' {
                self.line.push(byte);
                if self.line.len() > max {
                    return false;
                }
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line);
            if line.is_empty() {
                if let Some(data) = self.data.take() {
                    ready.push_back(Event {
                        name: self.name.take().unwrap_or_else(|| "message".to_owned()),
                        data,
                    });
                }
                self.name = None;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((&line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.name = Some(value.to_owned()),
                "data" => {
                    match &mut self.data {
                        Some(data) => {
                            data.push('\n');
                            data.push_str(value);
                        }
                        None => self.data = Some(value.to_owned()),
                    }
                    if self.data.as_ref().is_some_and(|d| d.len() > max) {
                        return false;
                    }
                }
                _ => {}
            }
        }
        true
    }
}

#[cfg(test)]
mod tests;
