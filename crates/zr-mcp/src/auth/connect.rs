//! The HTTP client of one connection: the server's stored token (refreshed when it expires), a client-credentials token, or none; and a 401/403 challenge read as "authorization required".

use std::path::Path;

use rmcp::transport::AuthorizationManager;
use rmcp::transport::auth::{
    AuthError, ClientCredentialsConfig, CredentialStore as _, JwtSigningAlgorithm,
    OAuthClientConfig, OAuthState,
};
use zr_types::ServerName;

use crate::auth::settings::{KeySource, OAuthSettings, PrivateKey};
use crate::auth::store::TokenStore;
use crate::config::HttpConfig;
use crate::error::McpError;

/// The authorization manager the transport asks for a token before each
/// request, or `None` to send requests without one.
///
/// - `grant: "client_credentials"`: a token fetched now (kept in memory
///   only; the next connection fetches another);
/// - a stored login for this server and URL: that token, refreshed by
///   the manager when it expires (the refreshed token is written back);
/// - else none: a server that wants a token answers 401, which
///   [`challenge_error`] turns into [`McpError::AuthRequired`].
pub(crate) async fn manager(
    server: &ServerName,
    http: &HttpConfig,
    tokens: Option<&TokenStore>,
    cwd: &Path,
) -> Result<Option<AuthorizationManager>, McpError> {
    let failed = |e: AuthError| McpError::Authorization {
        server: server.clone(),
        source: Box::new(e),
    };
    if let Some(settings) = http.oauth.as_ref().filter(|s| s.client_credentials) {
        let config = client_credentials(server, &http.url, settings, cwd)?;
        let manager = client_credentials_token(http.url.clone(), config)
            .await
            .map_err(failed)?;
        tracing::debug!(%server, "client-credentials token received");
        return Ok(manager);
    }
    let Some(tokens) = tokens else {
        return Ok(None);
    };
    let store = tokens.server(server, &http.url);
    let Some((record, _)) = store.read()? else {
        return Ok(None);
    };
    let mut manager = AuthorizationManager::new(http.url.as_str())
        .await
        .map_err(failed)?;
    manager.set_credential_store(store.clone());
    if let Some(metadata) = record.metadata {
        manager.set_metadata(metadata);
    }
    if !manager.initialize_from_store().await.map_err(failed)? {
        // Bound to an authorization server that is no longer this one's.
        store.clear().await.map_err(failed)?;
        return Ok(None);
    }
    if let Some(secret) = record.client_secret {
        // A confidential client refreshes with its secret.
        let (client_id, _) = manager.get_credentials().await.map_err(failed)?;
        let redirect = record.redirect_uri.unwrap_or_else(|| http.url.clone());
        manager
            .configure_client(
                OAuthClientConfig::new(client_id, redirect).with_client_secret(secret),
            )
            .map_err(failed)?;
    }
    tracing::debug!(%server, "using the stored OAuth login");
    Ok(Some(manager))
}

/// The client-credentials exchange, on a thread of its own: rmcp's future
/// for it is not `Send` (it holds a form serializer across an `.await`),
/// so it cannot run on the hub's tasks.
async fn client_credentials_token(
    url: String,
    config: ClientCredentialsConfig,
) -> Result<Option<AuthorizationManager>, AuthError> {
    let exchange = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| AuthError::InternalError(format!("cannot start a runtime: {e}")))?;
        runtime.block_on(async {
            let mut state = OAuthState::new(url.as_str(), None).await?;
            state.authenticate_client_credentials(config).await?;
            Ok(state.into_authorization_manager())
        })
    });
    exchange
        .await
        .map_err(|e| AuthError::InternalError(format!("the token request stopped: {e}")))?
}

fn client_credentials(
    server: &ServerName,
    url: &str,
    settings: &OAuthSettings,
    cwd: &Path,
) -> Result<ClientCredentialsConfig, McpError> {
    // The parser made sure a client id and a secret or key are set.
    let client_id = settings.client_id.clone().unwrap_or_default();
    let resource = Some(url.to_owned());
    let scopes = settings.scopes.clone();
    Ok(match &settings.private_key {
        Some(PrivateKey { source, algorithm }) => {
            let pem = match source {
                KeySource::Pem(text) => text.clone(),
                KeySource::File(path) => {
                    let path = cwd.join(path);
                    std::fs::read_to_string(&path).map_err(|source| McpError::KeyFile {
                        server: server.clone(),
                        path,
                        source,
                    })?
                }
            };
            ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key: pem.into_bytes(),
                signing_algorithm: algorithm_of(algorithm),
                token_endpoint_audience: None,
                scopes,
                resource,
            }
        }
        None => ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: settings.client_secret.clone().unwrap_or_default(),
            scopes,
            resource,
        },
    })
}

fn algorithm_of(name: &str) -> JwtSigningAlgorithm {
    match name {
        "ES384" => JwtSigningAlgorithm::ES384,
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        // The parser allows only these and ES256.
        _ => JwtSigningAlgorithm::ES256,
    }
}

/// [`McpError::AuthRequired`] for a `WWW-Authenticate` header.
pub(crate) fn challenge_error(server: &ServerName, header: &str, forbidden: bool) -> McpError {
    McpError::AuthRequired {
        server: server.clone(),
        scope: parameter(header, "scope"),
        insufficient_scope: forbidden
            || parameter(header, "error").as_deref() == Some("insufficient_scope"),
        challenge: Some(header.to_owned()),
    }
}

/// A `name="value"` (or `name=value`) parameter of a `WWW-Authenticate`
/// header.
fn parameter(header: &str, name: &str) -> Option<String> {
    let mut rest = header;
    while let Some(at) = rest.find(name) {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + name.len()..];
        rest = after;
        let at_start = before.is_none_or(|c| c == ' ' || c == ',');
        let Some(value) = after.trim_start().strip_prefix('=') else {
            continue;
        };
        if !at_start {
            continue;
        }
        let value = value.trim_start();
        return Some(match value.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default().to_owned(),
            None => value
                .split([',', ' '])
                .next()
                .unwrap_or_default()
                .to_owned(),
        });
    }
    None
}

#[cfg(test)]
mod tests;
