//! Serving the session object over HTTP, and registering it with a
//! Restate server's admin API.

use std::net::SocketAddr;
use std::sync::Arc;

use restate_sdk::prelude::{Endpoint, HttpServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::agent::AgentObject;
use crate::error::RestateError;
use zr_types::SessionId;

use crate::object::{SESSION_OBJECT, SessionHost, SessionObject, TurnAnswer, TurnRequest};

/// Serves the sessions of `host` on `listener` until `shutdown` ends: the
/// session object and the subagent object (`ZrAgent`), so that every
/// worker of a deployment runs turns and subagents alike.
pub async fn serve(
    listener: TcpListener,
    host: Arc<dyn SessionHost>,
    shutdown: impl Future<Output = ()>,
) {
    let endpoint = Endpoint::builder()
        .bind(SessionObject::new(Arc::clone(&host)))
        .bind(AgentObject::new(host))
        .build();
    HttpServer::new(endpoint)
        .serve_with_cancel(listener, shutdown)
        .await;
}

/// Binds `addr` for [`serve`].
///
/// # Errors
///
/// [`RestateError::Listen`].
pub async fn listen(addr: &str) -> Result<TcpListener, RestateError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| RestateError::Listen {
            addr: addr.to_owned(),
            source,
        })
}

/// `HOST:PORT` of an `http://HOST:PORT[/]` URL.
fn authority(url: &str) -> Result<&str, RestateError> {
    url.strip_prefix("http://")
        .map(|rest| rest.trim_end_matches('/'))
        .filter(|rest| !rest.is_empty() && !rest.contains('/'))
        .ok_or_else(|| RestateError::Url {
            url: url.to_owned(),
        })
}

/// One `POST path` of `body` (JSON) to `base` (`http://HOST:PORT`) over
/// HTTP/1.1: the status and the body. `Err` holds why nothing came back.
async fn post_json(
    base: &str,
    path: &str,
    body: &serde_json::Value,
) -> Result<(u16, String), String> {
    let host = authority(base).map_err(|e| e.to_string())?;
    let addr: SocketAddr = tokio::net::lookup_host(host)
        .await
        .map_err(|e| e.to_string())?
        .next()
        .ok_or_else(|| format!("{host} has no address"))?;
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
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

/// Registers the endpoint at `endpoint` (`http://HOST:PORT`) with the admin
/// API at `admin` (`POST /deployments`, forcing an update of a deployment
/// with the same URL: a restarted worker registers again).
///
/// # Errors
///
/// [`RestateError::Url`] or [`RestateError::Register`] with what the API
/// answered.
pub async fn register(admin: &str, endpoint: &str) -> Result<(), RestateError> {
    let failed = |message: String| RestateError::Register {
        admin: admin.to_owned(),
        endpoint: endpoint.to_owned(),
        message,
    };
    authority(admin)?;
    authority(endpoint)?;
    let body = serde_json::json!({ "uri": endpoint, "force": true });
    match post_json(admin, "/deployments", &body)
        .await
        .map_err(failed)?
    {
        (200..300, _) => Ok(()),
        (status, body) => Err(failed(format!("HTTP {status}: {body}"))),
    }
}

/// Runs one turn of `session` through the ingress at `ingress`
/// (`POST /ZrSession/{session}/run`) and waits for its answer.
///
/// # Errors
///
/// [`RestateError::Url`]; [`RestateError::Turn`] when the ingress cannot
/// be reached or the turn failed.
pub async fn submit(
    ingress: &str,
    session: &SessionId,
    prompt: &str,
) -> Result<TurnAnswer, RestateError> {
    let failed = |message: String| RestateError::Turn {
        ingress: ingress.to_owned(),
        session: session.to_string(),
        message,
    };
    authority(ingress)?;
    let path = format!("/{SESSION_OBJECT}/{session}/run");
    let request = TurnRequest {
        prompt: prompt.to_owned(),
    };
    let body = serde_json::to_value(request).map_err(|e| failed(e.to_string()))?;
    match post_json(ingress, &path, &body).await.map_err(failed)? {
        (200, body) => serde_json::from_str(&body).map_err(|e| failed(format!("{e}: {body}"))),
        (status, body) => Err(failed(format!("HTTP {status}: {body}"))),
    }
}

#[cfg(test)]
mod tests;
