//! A loopback HTTP/1.1 server that answers with scripted responses, written
//! byte for byte, and records every request.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// One scripted response.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
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
    pub(crate) fn sse(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into(),
            cut_after: None,
            stall_after: None,
        }
    }

    /// 200 with the SSE fixture `tests/it/fixtures/{name}`.
    pub(crate) fn fixture(name: &str) -> Self {
        Self::sse(fixture(name))
    }

    /// `status` with a JSON body.
    pub(crate) fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
            cut_after: None,
            stall_after: None,
        }
    }

    /// Adds a response header.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Closes the connection after `bytes` bytes of the body.
    pub(crate) fn cut_after(mut self, bytes: usize) -> Self {
        self.cut_after = Some(bytes);
        self
    }

    /// Sends `bytes` bytes of the body, then nothing until the client closes.
    pub(crate) fn stall_after(mut self, bytes: usize) -> Self {
        self.stall_after = Some(bytes);
        self
    }
}

/// The bytes of a fixture file.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// The fixture `tests/it/fixtures/{name}` as text.
pub(crate) fn fixture_text(name: &str) -> String {
    String::from_utf8(fixture(name)).expect("fixtures are UTF-8")
}

/// The fixture `tests/it/fixtures/{name}` as text, with `from` replaced by
/// `to`; panics if `from` does not occur, so that an edited fixture cannot
/// silently turn a test into a copy of another.
pub(crate) fn fixture_replaced(name: &str, from: &str, to: &str) -> String {
    let text = fixture_text(name);
    assert!(text.contains(from), "{name} does not contain {from:?}");
    text.replace(from, to)
}

/// A request the server received.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    /// Names in lower case, in arrival order.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) at: Instant,
}

impl Recorded {
    /// The first header named `name` (lower case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the request body is JSON")
    }
}

#[derive(Debug, Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
    /// Connections on which the server saw the client close.
    closed: usize,
}

/// The running server; stops when dropped.
#[derive(Debug)]
pub(crate) struct Replay {
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
    pub(crate) async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let port = listener.local_addr().expect("local address").port();
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            ..State::default()
        }));
        let changed = Arc::new(Notify::new());
        let task = tokio::spawn({
            let state = Arc::clone(&state);
            let changed = Arc::clone(&changed);
            async move {
                while let Ok((socket, _)) = listener.accept().await {
                    tokio::spawn(serve(socket, Arc::clone(&state), Arc::clone(&changed)));
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
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests received so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state.lock().expect("state lock").requests.clone()
    }

    /// Waits (up to 5 s) until the server has seen `count` connections
    /// closed by the client while it was stalling; returns how many it saw.
    pub(crate) async fn wait_closed(&self, count: usize) -> usize {
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

async fn serve(mut socket: TcpStream, state: Arc<Mutex<State>>, changed: Arc<Notify>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let reply = {
        let mut state = state.lock().expect("state lock");
        state.requests.push(request);
        state.replies.pop_front()
    };
    changed.notify_waiters();
    let reply = reply.unwrap_or_else(|| {
        Reply::json(
            500,
            r#"{"error":{"type":"test","message":"no scripted reply left"}}"#,
        )
    });
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
    })
}

/// A retry policy fast enough for tests.
pub(crate) fn fast_retry(max_attempts: u32) -> zr_engine::RetryPolicy {
    zr_engine::RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(20),
    }
}

/// A request from the root agent with one user message.
pub(crate) fn simple_request(text: &str) -> zr_engine::ModelRequest {
    zr_engine::ModelRequest {
        model: "test-model".into(),
        system: "You are terse.".into(),
        tools: Vec::new(),
        messages: vec![zr_types::Message::user_text(text)],
        max_tokens: 1024,
        tool_choice: zr_engine::ToolChoice::Auto,
        origin: zr_engine::RequestOrigin {
            agent: zr_types::AgentId::root(),
            agent_type: "root".into(),
            turn: 1,
        },
    }
}

/// Everything a stream yields before its end: the events before the last
/// item, and the last item as the response or the error.
pub(crate) async fn collect(
    mut stream: zr_engine::ModelStream,
) -> (
    Vec<zr_engine::ModelEvent>,
    Result<zr_engine::ModelResponse, zr_engine::ProviderError>,
) {
    use futures_util::StreamExt;
    let mut events = Vec::new();
    let outcome = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(zr_engine::ModelEvent::Completed(response)) => {
                    assert!(stream.next().await.is_none(), "items after Completed");
                    return Ok(response);
                }
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
