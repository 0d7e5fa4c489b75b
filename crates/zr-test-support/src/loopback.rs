//! A loopback HTTP/1.1 server standing in for a model API, on plain
//! threads (for `zr` run as a child process, and for benches): it records
//! every request (headers, body as JSON and as bytes) and answers each
//! with the next reply of its list (the last one again once the list is
//! used up), or with what a closure makes of the request, so a test can
//! script a whole session over the real wire. Every body goes to the
//! shared [`Capture`] too. [`crate::replay`] is its async sibling, with
//! byte-level faults (cuts, stalls) and the prompt cache.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::capture::Capture;
use crate::sse;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body as sent, byte for byte.
    pub raw: Vec<u8>,
}

impl Request {
    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One answer: an HTTP status and its body (SSE for 200, JSON otherwise).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    /// A 200 streaming `sse`.
    pub fn sse(sse: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            body: sse.into(),
        }
    }

    /// A 200 streaming one Anthropic answer ([`sse::anthropic`]).
    pub fn anthropic(text: Option<&str>, tools: &[(&str, &str, Value)]) -> Self {
        Self::sse(sse::anthropic(text, tools))
    }
}

/// The server: `url` is its base address.
#[derive(Debug)]
pub struct Server {
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    /// Answers every request with `sse`.
    pub fn start(sse: Vec<u8>) -> Self {
        Self::scripted(vec![Reply::sse(sse)])
    }

    /// Answers request `i` with `replies[i]` (the last one once they run
    /// out).
    pub fn scripted(replies: Vec<Reply>) -> Self {
        assert!(!replies.is_empty(), "a server needs a reply");
        Self::answering(move |_, i| replies[i.min(replies.len() - 1)].clone())
    }

    /// Answers each request with `answer(request, its number)`: a model
    /// whose answer depends on what it is asked (the agent, the history),
    /// for sessions whose requests come in no fixed order.
    pub fn answering(answer: impl Fn(&Request, usize) -> Reply + Send + 'static) -> Self {
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

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
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
