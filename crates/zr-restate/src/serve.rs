//! Serving the session object over HTTP, and registering it with a
//! Restate server's admin API.

use std::sync::Arc;

use restate_sdk::prelude::{Endpoint, HttpServer};
use tokio::net::TcpListener;

use crate::agent::AgentObject;
use crate::error::RestateError;
use crate::http::{authority, post_json};
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
