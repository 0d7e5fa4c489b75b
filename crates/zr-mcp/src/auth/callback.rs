//! The loopback redirect of a login: a listener on 127.0.0.1 that takes the browser's one `GET /callback?...` and answers it with a page saying to go back to the terminal.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use zr_types::ServerName;

use crate::error::McpError;

/// The path the browser is sent back to.
const PATH: &str = "/callback";

/// The most of a request head that is read.
const MAX_HEAD: usize = 16 * 1024;

/// How long one browser connection may take to send its request.
const READ_LIMIT: Duration = Duration::from_secs(10);

/// A bound loopback redirect.
#[derive(Debug)]
pub(crate) struct Redirect {
    server: ServerName,
    listener: TcpListener,
    port: u16,
}

/// What the browser brought back.
#[derive(Debug)]
pub(crate) enum Callback {
    /// The full redirect URL (`code`, `state`, perhaps `iss`).
    Redirected(String),
    /// `error` (and `error_description`) instead of a code.
    Refused {
        error: String,
        description: Option<String>,
    },
}

impl Redirect {
    /// Listens on `127.0.0.1:port` (`None`: a free port).
    pub(crate) async fn bind(server: &ServerName, port: Option<u16>) -> Result<Self, McpError> {
        let address = format!("127.0.0.1:{}", port.unwrap_or(0));
        let failed = |source| McpError::Listen {
            server: server.clone(),
            address: address.clone(),
            source,
        };
        let listener = TcpListener::bind(&address).await.map_err(failed)?;
        let port = listener.local_addr().map_err(failed)?.port();
        Ok(Self {
            server: server.clone(),
            listener,
            port,
        })
    }

    /// `http://127.0.0.1:PORT/callback`.
    pub(crate) fn uri(&self) -> String {
        format!("http://127.0.0.1:{}{PATH}", self.port)
    }

    /// Waits up to `limit` for the browser's request to the callback path;
    /// anything else (a `favicon.ico`) is answered 404 and the wait goes
    /// on.
    pub(crate) async fn wait(self, limit: Duration) -> Result<Callback, McpError> {
        let timed_out = || McpError::LoginTimeout {
            server: self.server.clone(),
            redirect_uri: self.uri(),
            timeout_secs: limit.as_secs(),
        };
        let accept = async {
            loop {
                let Ok((stream, _)) = self.listener.accept().await else {
                    continue;
                };
                if let Some(callback) = answer(stream, self.port).await {
                    return callback;
                }
            }
        };
        tokio::time::timeout(limit, accept)
            .await
            .map_err(|_| timed_out())
    }
}

/// Reads one request; the callback when it is one.
async fn answer(mut stream: TcpStream, port: u16) -> Option<Callback> {
    let target = match tokio::time::timeout(READ_LIMIT, request_target(&mut stream)).await {
        Ok(Some(target)) => target,
        _ => {
            respond(&mut stream, "400 Bad Request", "Bad request.").await;
            return None;
        }
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    if path != PATH {
        respond(&mut stream, "404 Not Found", "Not found.").await;
        return None;
    }
    let pairs = query_pairs(query);
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let callback = match get("error") {
        Some(error) => Callback::Refused {
            error,
            description: get("error_description"),
        },
        None => Callback::Redirected(format!("http://127.0.0.1:{port}{target}")),
    };
    let page = match &callback {
        Callback::Redirected(_) => {
            "zr received the authorization. You can close this window and go back to the terminal."
        }
        Callback::Refused { .. } => {
            "The authorization was refused. Go back to the terminal for details."
        }
    };
    respond(&mut stream, "200 OK", page).await;
    Some(callback)
}

/// The target of a `GET` request line, once the head has arrived.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0_u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 || head.len() + read > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = std::str::from_utf8(&head).ok()?.lines().next()?;
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    Some(parts.next()?.to_owned())
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>zr</title></head><body><p>{text}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    // A browser that went away misses the page; the login goes on.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// `a=1&b=x%20y` decoded (`+` is a space).
fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
