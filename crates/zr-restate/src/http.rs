//! The client side's HTTP exchanges with a Restate server's admin API or
//! ingress (reqwest): a request, its status and body, each within a time
//! limit.

use std::sync::OnceLock;
use std::time::Duration;

use crate::error::{HttpError, RestateError};

/// How long one admin call, or the sending of a turn, may take in all
/// (connecting, asking, reading the answer) unless the caller says.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long connecting may take, for every call (an attach, which waits
/// for a turn to end, has no other limit).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `HOST:PORT` of an `http://HOST:PORT[/]` URL.
pub(crate) fn authority(url: &str) -> Result<&str, RestateError> {
    url.strip_prefix("http://")
        .map(|rest| rest.trim_end_matches('/'))
        .filter(|rest| !rest.is_empty() && !rest.contains('/'))
        .ok_or_else(|| RestateError::Url {
            url: url.to_owned(),
        })
}

/// One `POST path` of `body` (JSON) to `base` (`http://HOST:PORT`) that
/// must have answered within `timeout`: the status and the body.
pub(crate) async fn post_json(
    base: &str,
    path: &str,
    body: &serde_json::Value,
    timeout: Duration,
) -> Result<(u16, String), HttpError> {
    let url = url(base, path);
    let request = client(&url)?
        .post(&url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .timeout(timeout);
    exchange(url, request, Some(timeout)).await
}

/// One `GET path` of `base`: the status and the body; within `timeout`,
/// or (`None`) as long as the answer takes once connected.
pub(crate) async fn get(
    base: &str,
    path: &str,
    timeout: Option<Duration>,
) -> Result<(u16, String), HttpError> {
    let url = url(base, path);
    let mut request = client(&url)?.get(&url);
    if let Some(timeout) = timeout {
        request = request.timeout(timeout);
    }
    exchange(url, request, timeout).await
}

fn url(base: &str, path: &str) -> String {
    format!("{}{path}", base.trim_end_matches('/'))
}

/// The one client (its connection pool is shared by every call).
fn client(url: &str) -> Result<&'static reqwest::Client, HttpError> {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    if let Some(client) = CLIENT.get() {
        return Ok(client);
    }
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        // The server is on loopback or a private network: no proxy.
        .no_proxy()
        .build()
        .map_err(|source| HttpError::Request {
            url: url.to_owned(),
            source,
        })?;
    Ok(CLIENT.get_or_init(|| client))
}

/// Sends `request` to `url`; the status and the whole body (decoded from
/// its transfer encoding by reqwest, then read as UTF-8).
async fn exchange(
    url: String,
    request: reqwest::RequestBuilder,
    timeout: Option<Duration>,
) -> Result<(u16, String), HttpError> {
    let failed = |source: reqwest::Error| match timeout {
        Some(timeout) if source.is_timeout() => HttpError::Timeout {
            url: url.clone(),
            timeout,
        },
        _ => HttpError::Request {
            url: url.clone(),
            source,
        },
    };
    let response = request
        .header("accept", "application/json")
        .send()
        .await
        .map_err(failed)?;
    let status = response.status().as_u16();
    let bytes = response.bytes().await.map_err(failed)?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

#[cfg(test)]
mod tests;
