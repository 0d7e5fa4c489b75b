//! Serving the session object over HTTP, and registering it with a
//! Restate server's admin API.

use std::sync::Arc;

use restate_sdk::prelude::{Endpoint, HttpServer};
use tokio::net::TcpListener;

use crate::admin::{attach, send};
use crate::agent::AgentObject;
use crate::error::RestateError;
use crate::http::{DEFAULT_TIMEOUT, authority, post_json};
use zr_types::SessionId;

use crate::object::{SessionHost, SessionObject, TurnAnswer};

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
    let answer = post_json(admin, "/deployments", &body, DEFAULT_TIMEOUT)
        .await
        .map_err(|source| RestateError::RegisterCall {
            admin: admin.to_owned(),
            endpoint: endpoint.to_owned(),
            source,
        })?;
    match answer {
        (200..300, _) => Ok(()),
        (status, body) => Err(failed(format!("HTTP {status}: {body}"))),
    }
}

/// Runs one turn of `session` through the ingress at `ingress` and waits
/// for its answer: [`send`] then [`attach`].
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
    let invocation = send(ingress, session, prompt).await?;
    attach(ingress, session, &invocation).await
}

#[cfg(test)]
mod tests;
