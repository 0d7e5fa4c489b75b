//! A loopback HTTP/1.1 server that answers with scripted responses, written
//! byte for byte, and records every request (and hands its body to
//! [`Capture`]). Started with [`Replay::start_caching`], it also plays the
//! Messages API's prompt cache ([`PromptCache`]): the usage of each
//! Anthropic answer says what the request read from and wrote to the cache.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::capture::Capture;
use crate::fixture;
use crate::prompt_cache::{Charge, PromptCache, with_usage};
use crate::sse::{self, ResponsesAnswer};

/// One scripted response.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Close the connection after this many body bytes.
    cut_after: Option<usize>,
    /// Stop writing after this many body bytes and wait for the client to
    /// close.
    stall_after: Option<usize>,
}

impl Reply {
    /// 200 with an SSE body.
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into(),
            cut_after: None,
            stall_after: None,
        }
    }

    /// 200 with the SSE fixture `fixtures/{name}` ([`crate::fixture`]).
    pub fn fixture(name: &str) -> Self {
        Self::sse(fixture::bytes(name))
    }

    /// 200 with one Anthropic answer ([`sse::anthropic`]).
    pub fn anthropic(text: Option<&str>, tools: &[(&str, &str, Value)]) -> Self {
        Self::sse(sse::anthropic(text, tools))
    }

    /// 200 with one Chat Completions answer ([`sse::chat`]).
    pub fn chat(text: Option<&str>, call: Option<(&str, &str, &str)>) -> Self {
        Self::sse(sse::chat(text, call))
    }

    /// 200 with one Responses API answer ([`sse::responses`]).
    pub fn responses(answer: ResponsesAnswer<'_>) -> Self {
        Self::sse(sse::responses(answer))
    }

    /// `status` with a JSON body.
    pub fn json(status: u16, body: &str) -> Self {
        Self::typed(status, "application/json", body)
    }

    /// `status` with a body of `content_type`.
    pub fn typed(status: u16, content_type: &str, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.as_bytes().to_vec(),
            cut_after: None,
            stall_after: None,
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Closes the connection after `bytes` bytes of the body.
    pub fn cut_after(mut self, bytes: usize) -> Self {
        self.cut_after = Some(bytes);
        self
    }

    /// Sends `bytes` bytes of the body, then nothing until the client closes.
    pub fn stall_after(mut self, bytes: usize) -> Self {
        self.stall_after = Some(bytes);
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub at: Instant,
    /// With a prompt cache: what the request read, wrote and sent
    /// uncached, as its answer's usage reported it.
    pub cache: Option<Charge>,
}

impl Recorded {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

#[derive(Debug, Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
    /// Connections on which the server saw the client close.
    closed: usize,
    /// The Messages API's prompt cache, when the server plays it.
    cache: Option<PromptCache>,
}

/// The running server; stops when dropped.
#[derive(Debug)]
pub struct Replay {
    port: u16,
    state: Arc<Mutex<State>>,
    changed: Arc<Notify>,
    task: JoinHandle<()>,
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Replay {
    /// Starts a server on 127.0.0.1 that answers requests with `replies`,
    /// in order (and 500 once they run out).
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::start_with(replies, None).await
    }

    /// As [`Replay::start`], and every request to `/v1/messages` is looked
    /// up in `cache`: its answer is held for the cache's time to first
    /// token, then the request's entries are stored and the answer's
    /// `message_start` usage carries its charge (a request with more than
    /// 4 breakpoints is refused with 400, as the API does).
    pub async fn start_caching(replies: Vec<Reply>, cache: PromptCache) -> Self {
        Self::start_with(replies, Some(cache)).await
    }

    async fn start_with(replies: Vec<Reply>, cache: Option<PromptCache>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let port = listener.local_addr().expect("local address").port();
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            cache,
            ..State::default()
        }));
        let changed = Arc::new(Notify::new());
        let capture = Capture::for_this_test();
        let task = tokio::spawn({
            let state = Arc::clone(&state);
            let changed = Arc::clone(&changed);
            async move {
                while let Ok((socket, _)) = listener.accept().await {
                    tokio::spawn(serve(
                        socket,
                        Arc::clone(&state),
                        Arc::clone(&changed),
                        capture.clone(),
                    ));
                }
            }
        });
        Self {
            port,
            state,
            changed,
            task,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().expect("state lock").requests.clone()
    }

    /// Waits (up to 5 s) until the server has seen `count` connections
    /// closed by the client while it was stalling; returns how many it saw.
    pub async fn wait_closed(&self, count: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let notified = self.changed.notified();
            let closed = self.state.lock().expect("state lock").closed;
            if closed >= count || Instant::now() >= deadline {
                return closed;
            }
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    }
}

async fn serve(
    mut socket: TcpStream,
    state: Arc<Mutex<State>>,
    changed: Arc<Notify>,
    capture: Capture,
) {
    let Some(mut request) = read_request(&mut socket).await else {
        return;
    };
    capture.record(&request.path, &request.body);
    // With a prompt cache: the request's charge (or the API's refusal)
    // and how long its answer is held.
    let (reply, lookup) = {
        let mut state = state.lock().expect("state lock");
        let lookup = state
            .cache
            .as_ref()
            .filter(|_| request.path.ends_with("/v1/messages"))
            .map(|cache| {
                let body = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
                (cache.look_up(&body), cache.first_token_delay)
            });
        if let Some((Ok(found), _)) = &lookup {
            request.cache = Some(found.charge);
        }
        state.requests.push(request);
        (state.replies.pop_front(), lookup)
    };
    changed.notify_waiters();
    let mut reply = reply.unwrap_or_else(|| {
        Reply::json(
            500,
            r#"{"error":{"type":"test","message":"no scripted reply left"}}"#,
        )
    });
    match lookup {
        Some((Ok(found), delay)) => {
            tokio::time::sleep(delay).await;
            if let Some(cache) = state.lock().expect("state lock").cache.as_mut() {
                cache.store(&found);
            }
            reply.body = with_usage(&reply.body, found.charge);
        }
        Some((Err(message), _)) => {
            let body = serde_json::json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
            reply = Reply::json(400, &body.to_string());
        }
        None => {}
    }
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let limit = reply
        .cut_after
        .or(reply.stall_after)
        .unwrap_or(reply.body.len())
        .min(reply.body.len());
    if socket.write_all(&reply.body[..limit]).await.is_err() || socket.flush().await.is_err() {
        return;
    }
    if reply.stall_after.is_some() {
        // Wait for the client to hang up.
        let mut buf = [0_u8; 1024];
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        state.lock().expect("state lock").closed += 1;
        changed.notify_waiters();
        return;
    }
    let _ = socket.shutdown().await;
}

/// Reads one request: head, then `content-length` bytes of body.
async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|window| window == b"\r\n\r\n") {
            break pos;
        }
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
        cache: None,
    })
}

/// A retry policy fast enough for tests.
pub fn fast_retry(max_attempts: u32) -> zr_providers::RetryPolicy {
    zr_providers::RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(20),
    }
}

/// A request from the root agent with one user message.
pub fn simple_request(text: &str) -> zr_providers::ModelRequest {
    zr_providers::ModelRequest {
        model: "test-model".into(),
        system: "You are terse.".into(),
        tools: Vec::new(),
        messages: std::sync::Arc::new(vec![zr_types::Message::user_text(text)]),
        max_tokens: 1024,
        tool_choice: zr_providers::ToolChoice::Auto,
        origin: zr_providers::RequestOrigin {
            agent: zr_types::AgentId::root(),
            agent_type: "root".into(),
            turn: 1,
        },
        cache_prefix: None,
        output: None,
        effort: None,
    }
}

/// The first `Metadata` event of a stream (the model and response id the
/// API named), read to its end.
pub async fn metadata_of(
    mut stream: zr_providers::ModelStream,
) -> Option<(String, Option<String>)> {
    use futures_util::StreamExt;
    let mut found = None;
    while let Some(item) = stream.next().await {
        if let Ok(zr_providers::ModelEvent::Metadata { model, id }) = item {
            found.get_or_insert((model, id));
        }
    }
    found
}

/// Everything a stream yields before its end: the events before the last
/// item (without `Metadata`, which [`metadata_of`] checks), and the last
/// item as the response or the error.
pub async fn collect(
    mut stream: zr_providers::ModelStream,
) -> (
    Vec<zr_providers::ModelEvent>,
    Result<zr_providers::ModelResponse, zr_providers::ProviderError>,
) {
    use futures_util::StreamExt;
    let mut events = Vec::new();
    let outcome = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(zr_providers::ModelEvent::Completed(response)) => {
                    assert!(stream.next().await.is_none(), "items after Completed");
                    return Ok(response);
                }
                Ok(zr_providers::ModelEvent::Metadata { .. }) => {}
                Ok(event) => events.push(event),
                Err(error) => {
                    assert!(stream.next().await.is_none(), "items after an error");
                    return Err(error);
                }
            }
        }
        panic!("the stream ended without Completed or an error");
    })
    .await
    .expect("the stream finished within 10 s");
    (events, outcome)
}

/// A text delta event.
pub fn text(text: &str) -> zr_providers::ModelEvent {
    zr_providers::ModelEvent::TextDelta { text: text.into() }
}

/// How many `Retrying` events `events` holds.
pub fn retries(events: &[zr_providers::ModelEvent]) -> usize {
    events
        .iter()
        .filter(|event| matches!(event, zr_providers::ModelEvent::Retrying { .. }))
        .count()
}

/// Checks that a text fixture (`Hello`, `, world`) was streamed and
/// answered, whole, with the response returned.
pub fn assert_hello_world(
    events: &[zr_providers::ModelEvent],
    outcome: Result<zr_providers::ModelResponse, zr_providers::ProviderError>,
) -> zr_providers::ModelResponse {
    assert_eq!(events, [text("Hello"), text(", world")]);
    let response = outcome.expect("completed");
    assert_eq!(
        response.content,
        vec![zr_types::ContentBlock::Text {
            text: "Hello, world".into()
        }],
        "the answer is the whole text, and only it"
    );
    response
}

/// Checks a stream whose first attempt said `partial` and then failed in a
/// way worth retrying (the retry's reason mentions `reason`), and whose
/// second attempt streamed the text fixture: the partial text of the failed
/// attempt is not in the answer.
pub fn assert_partial_then_retried(
    events: &[zr_providers::ModelEvent],
    outcome: Result<zr_providers::ModelResponse, zr_providers::ProviderError>,
    reason: &str,
) {
    assert_eq!(events[0], text("partial"));
    assert!(
        matches!(&events[1], zr_providers::ModelEvent::Retrying { attempt: 1, reason: said, .. } if said.contains(reason)),
        "{events:?}"
    );
    assert_hello_world(&events[2..], outcome);
}

/// Checks that `events` starts with the first retry, after `delay`, for a
/// reason that mentions every one of `mentions`; returns the other events.
pub fn assert_first_retry<'a>(
    events: &'a [zr_providers::ModelEvent],
    delay: Duration,
    mentions: &[&str],
) -> &'a [zr_providers::ModelEvent] {
    let Some(zr_providers::ModelEvent::Retrying {
        attempt,
        delay: waited,
        reason,
    }) = events.first()
    else {
        panic!("expected Retrying first, got {events:?}");
    };
    assert_eq!((*attempt, *waited), (1, delay));
    assert!(
        mentions.iter().all(|mention| reason.contains(mention)),
        "{reason} should mention {mentions:?}"
    );
    &events[1..]
}

/// Checks that `outcome` is `provider`'s error event of `kind` saying
/// `message`.
pub fn assert_api_error(
    outcome: Result<zr_providers::ModelResponse, zr_providers::ProviderError>,
    provider: &str,
    kind: &str,
    message: &str,
) {
    match outcome {
        Err(zr_providers::ProviderError::Api {
            provider: said_by,
            kind: said_kind,
            message: said,
        }) => assert_eq!(
            (said_by, said_kind.as_str(), said.as_str()),
            (provider, kind, message)
        ),
        other => panic!("expected Api, got {other:?}"),
    }
}

/// Checks that `outcome` is `provider`'s rejection with `status`, of `kind`,
/// saying `message`.
pub fn assert_rejected(
    outcome: Result<zr_providers::ModelResponse, zr_providers::ProviderError>,
    provider: &str,
    status: u16,
    kind: &str,
    message: &str,
) {
    match outcome {
        Err(zr_providers::ProviderError::Rejected {
            provider: said_by,
            status: said_status,
            kind: said_kind,
            message: said,
        }) => assert_eq!(
            (said_by, said_status, said_kind.as_str(), said.as_str()),
            (provider, status, kind, message)
        ),
        other => panic!("expected Rejected, got {other:?}"),
    }
}

/// Checks that `outcome` is `provider` giving up after `attempts` attempts,
/// the last one cut (a transport error).
pub fn assert_cut_until_exhausted(
    outcome: Result<zr_providers::ModelResponse, zr_providers::ProviderError>,
    provider: &str,
    attempts: u32,
) {
    match outcome {
        Err(zr_providers::ProviderError::RetriesExhausted {
            provider: said_by,
            attempts: made,
            last,
        }) => {
            assert_eq!((said_by, made), (provider, attempts));
            assert!(
                matches!(*last, zr_providers::ProviderError::Transport { .. }),
                "{last:?}"
            );
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
}

/// Checks that `outcome` is a protocol error of `provider` whose message
/// mentions every one of `mentions`.
pub fn assert_protocol_error(
    outcome: Result<zr_providers::ModelResponse, zr_providers::ProviderError>,
    provider: &str,
    mentions: &[&str],
) {
    let error = outcome.expect_err("a protocol error");
    assert!(
        matches!(&error, zr_providers::ProviderError::Protocol { provider: said_by, message }
            if *said_by == provider && mentions.iter().all(|mention| message.contains(mention))),
        "{error:?} should be a protocol error of {provider} mentioning {mentions:?}"
    );
}

/// The first item of `stream` other than `Metadata`, which must come
/// within 5 s.
pub async fn first_item(
    stream: &mut zr_providers::ModelStream,
) -> Option<Result<zr_providers::ModelEvent, zr_providers::ProviderError>> {
    use futures_util::StreamExt;
    let next = async {
        loop {
            match stream.next().await {
                Some(Ok(zr_providers::ModelEvent::Metadata { .. })) => {}
                other => return other,
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), next)
        .await
        .expect("an event")
}

/// Drops `stream` and checks that `server` saw the client close the
/// connection it was stalling on.
pub async fn assert_drop_closes(stream: zr_providers::ModelStream, server: &Replay) {
    drop(stream);
    assert_eq!(
        server.wait_closed(1).await,
        1,
        "the server saw the client close"
    );
}

/// Checks that `provider` (made for a server and a number of attempts)
/// retries connections cut in the text fixture `fixture`: one cut after
/// `cuts[0]` body bytes is retried and the answer has `usage`; with every
/// attempt cut (after `cuts[i]` bytes for attempt `i`), it gives up after
/// `cuts.len()` attempts, the last error a transport error.
pub async fn check_cut_connections_are_retried<P: zr_providers::ModelProvider>(
    provider: impl Fn(&Replay, u32) -> P,
    name: &str,
    fixture_name: &str,
    cuts: &[usize],
    usage: zr_types::Usage,
) {
    let body = fixture::bytes(fixture_name);
    let attempts = u32::try_from(cuts.len()).expect("a few attempts");
    let server = Replay::start(vec![
        Reply::sse(body.clone()).cut_after(cuts[0]),
        Reply::fixture(fixture_name),
    ])
    .await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    assert!(
        events
            .iter()
            .any(|event| matches!(event, zr_providers::ModelEvent::Retrying { attempt: 1, .. })),
        "{events:?}"
    );
    assert_eq!(outcome.expect("completed").usage, usage);

    let replies = cuts
        .iter()
        .map(|cut| Reply::sse(body.clone()).cut_after(*cut))
        .collect();
    let server = Replay::start(replies).await;
    let (events, outcome) = collect(provider(&server, attempts).stream(simple_request("hi"))).await;
    assert_eq!(retries(&events), cuts.len() - 1);
    assert_cut_until_exhausted(outcome, name, attempts);
    assert_eq!(server.requests().len(), cuts.len());
}

/// Checks that `provider` (made for a server and a number of attempts)
/// streams the text fixture `fixture_name` as `Hello`, `, world`, ending
/// the turn with `usage`, after one `POST` to `path`; returns that request.
pub async fn check_text_fixture<P: zr_providers::ModelProvider>(
    provider: impl Fn(&Replay, u32) -> P,
    fixture_name: &str,
    usage: zr_types::Usage,
    path: &str,
) -> Recorded {
    let server = Replay::start(vec![Reply::fixture(fixture_name)]).await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    let response = assert_hello_world(&events, outcome);
    assert_eq!(response.stop_reason, zr_types::StopReason::EndTurn);
    assert_eq!(response.usage, usage);

    let mut requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = requests.remove(0);
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", path)
    );
    request
}

/// Starts a server answering with `replies` and streams
/// [`simple_request`] from `provider` (made for it with `attempts`
/// attempts): the server, the events and the outcome.
pub async fn stream_from<P: zr_providers::ModelProvider>(
    provider: impl Fn(&Replay, u32) -> P,
    attempts: u32,
    replies: Vec<Reply>,
) -> (
    Replay,
    Vec<zr_providers::ModelEvent>,
    Result<zr_providers::ModelResponse, zr_providers::ProviderError>,
) {
    let server = Replay::start(replies).await;
    let (events, outcome) = collect(provider(&server, attempts).stream(simple_request("hi"))).await;
    (server, events, outcome)
}
