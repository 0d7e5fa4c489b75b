//! The one HTTP/1.1 exchange of the client side: a request to a Restate
//! server's admin API or ingress, its status and body.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::RestateError;

/// `HOST:PORT` of an `http://HOST:PORT[/]` URL.
pub(crate) fn authority(url: &str) -> Result<&str, RestateError> {
    url.strip_prefix("http://")
        .map(|rest| rest.trim_end_matches('/'))
        .filter(|rest| !rest.is_empty() && !rest.contains('/'))
        .ok_or_else(|| RestateError::Url {
            url: url.to_owned(),
        })
}

/// One `POST path` of `body` (JSON) to `base` (`http://HOST:PORT`): the
/// status and the body. `Err` holds why nothing came back.
pub(crate) async fn post_json(
    base: &str,
    path: &str,
    body: &serde_json::Value,
) -> Result<(u16, String), String> {
    exchange(base, "POST", path, Some(&body.to_string())).await
}

/// One `GET path` of `base`: the status and the body.
pub(crate) async fn get(base: &str, path: &str) -> Result<(u16, String), String> {
    exchange(base, "GET", path, None).await
}

/// `method path` (with a JSON `body`) to `base` over HTTP/1.1, the
/// connection closed after the answer.
async fn exchange(
    base: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let host = authority(base).map_err(|e| e.to_string())?;
    let addr: SocketAddr = tokio::net::lookup_host(host)
        .await
        .map_err(|e| e.to_string())?
        .next()
        .ok_or_else(|| format!("{host} has no address"))?;
    let body = body.unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .await
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&raw);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("not an HTTP answer: {text}"))?;
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP answer: {head}"))?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    Ok((status, body))
}

/// The body of a chunked answer.
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || tail.len() < size {
            break;
        }
        out.push_str(&tail[..size]);
        rest = tail[size..].trim_start_matches("\r\n");
    }
    out
}
