//! A loopback HTTP/1.1 server standing in for a model API: it records
//! every request (headers, body as JSON and as bytes) and answers each
//! with the next reply of its list (the last one again once the list is
//! used up), so a test can script a whole session over the real wire.
//! Every body goes to the shared [`Capture`] too.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::capture::Capture;
use crate::support::{TempProject, repo, stderr};

/// One request the server received.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Value,
    /// The body as sent, byte for byte.
    pub(crate) raw: Vec<u8>,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One answer: an HTTP status and its body (SSE for 200, JSON otherwise).
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    /// A 200 streaming `sse`.
    pub(crate) fn sse(sse: Vec<u8>) -> Self {
        Self {
            status: 200,
            body: sse,
        }
    }
}

/// The server: `url` is its base address.
pub(crate) struct Server {
    pub(crate) url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    /// Answers every request with `sse`.
    pub(crate) fn start(sse: Vec<u8>) -> Self {
        Self::scripted(vec![Reply::sse(sse)])
    }

    /// Answers request `i` with `replies[i]` (the last one once they run
    /// out).
    pub(crate) fn scripted(replies: Vec<Reply>) -> Self {
        assert!(!replies.is_empty(), "a server needs a reply");
        Self::answering(move |_, i| replies[i.min(replies.len() - 1)].clone())
    }

    /// Answers each request with `answer(request, its number)`: a model
    /// whose answer depends on what it is asked (the agent, the history),
    /// for sessions whose requests come in no fixed order.
    pub(crate) fn answering(answer: impl Fn(&Request, usize) -> Reply + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!(
            "http://{}",
            listener.local_addr().expect("the listener's address")
        );
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let capture = Capture::for_this_test();
        // Ends with the test process (blocked in accept).
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                // A broken connection is the client's problem: the test
                // sees it in zr's output and in the requests recorded.
                let _ = serve(stream, &answer, &seen, &capture);
            }
        });
        Self { url, requests }
    }

    pub(crate) fn requests(&self) -> Vec<Request> {
        self.requests.lock().expect("requests lock").clone()
    }
}

/// Reads one request from `stream`, records it, answers with what
/// `answer` makes of it.
fn serve(
    mut stream: TcpStream,
    answer: &dyn Fn(&Request, usize) -> Reply,
    seen: &Mutex<Vec<Request>>,
    capture: &Capture,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.push((n.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    capture.record(&path, &body);
    let request = Request {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: body,
    };
    let reply = {
        let mut seen = seen.lock().expect("requests lock");
        let reply = answer(&request, seen.len());
        seen.push(request);
        reply
    };
    let kind = if reply.status == 200 {
        "text/event-stream"
    } else {
        "application/json"
    };
    let head = format!(
        "HTTP/1.1 {} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        reply.status,
        reply.body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&reply.body)?;
    stream.flush()
}

/// `zr run PROMPT` in `project` with `server` as the model API
/// (`ANTHROPIC_BASE_URL`, or `OPENAI_BASE_URL` with `openai`); it must exit 0.
pub(crate) fn run_against(
    project: &TempProject,
    server: &Server,
    openai: bool,
    prompt: &str,
) -> std::process::Output {
    let mut cmd = crate::support::zr();
    cmd.args(["run", prompt]).current_dir(project.path());
    if openai {
        cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url));
    } else {
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("ANTHROPIC_BASE_URL", &server.url);
    }
    let out = cmd.output().expect("zr runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

/// One of the providers' SSE fixtures.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        repo()
            .join("crates/zr-providers/tests/it/fixtures")
            .join(name),
    )
    .expect("the providers' SSE fixture")
}

/// The SSE of one Anthropic answer: `text` (if any), then `tools` calls
/// (id, name, input).
pub(crate) fn anthropic_answer(text: Option<&str>, tools: &[(&str, &str, Value)]) -> Reply {
    use serde_json::json;
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ];
    let mut index = 0;
    if let Some(text) = text {
        events.extend([
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
            json!({"type": "content_block_stop", "index": index}),
        ]);
        index += 1;
    }
    for (id, name, input) in tools {
        events.extend([
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            json!({"type": "content_block_stop", "index": index}),
        ]);
        index += 1;
    }
    let stop = if tools.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.extend([
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ]);
    let mut body = String::new();
    for event in events {
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().expect("every event has a type")
        ));
    }
    Reply::sse(body.into_bytes())
}
