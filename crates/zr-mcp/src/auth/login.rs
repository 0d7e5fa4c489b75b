//! `zr mcp login`: the browser flow. Discovery from the server's challenge, the client (pre-registered, metadata document or registered now), PKCE, the loopback redirect, the code exchange.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::AuthorizationManager;
use rmcp::transport::auth::{AuthorizationCallback, AuthorizationRequest, AuthorizationSession};

use crate::auth::callback::{Callback, Redirect};
use crate::auth::discovery;
use crate::auth::store::TokenStore;
use crate::config::{ServerConfig, TransportConfig};
use crate::connection::Connection;
use crate::error::McpError;
use crate::host::Host;
use crate::options::HubOptions;

/// How long `zr mcp login` waits for the browser by default.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// What a login asks for.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoginOptions {
    /// The `client_name` of a dynamic registration.
    pub client_name: String,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    /// Scopes to ask for, over the server's `oauth.scopes`; empty lets
    /// the server's challenge (or its `scopes_supported`) decide.
    pub scopes: Vec<String>,
    /// A `WWW-Authenticate` header already received (from
    /// [`McpError::AuthRequired`]); `None` asks the server for one.
    pub challenge: Option<String>,
    /// Accept authorization-server metadata whose `issuer` is only the
    /// origin of the identifier it was found under (RFC 8414 wants them
    /// identical; some servers write the origin). Off by default.
    pub origin_issuer: bool,
}

impl LoginOptions {
    /// Registers as `client_name`, waits [`DEFAULT_LOGIN_TIMEOUT`].
    #[must_use]
    pub fn new(client_name: impl Into<String>) -> Self {
        Self {
            client_name: client_name.into(),
            timeout: DEFAULT_LOGIN_TIMEOUT,
            scopes: Vec::new(),
            challenge: None,
            origin_issuer: false,
        }
    }

    /// Sets the time limit.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the scopes to ask for.
    #[must_use]
    pub fn with_scopes(mut self, scopes: Vec<String>) -> Self {
        self.scopes = scopes;
        self
    }

    /// Sets [`LoginOptions::origin_issuer`].
    #[must_use]
    pub fn with_origin_issuer(mut self, tolerate: bool) -> Self {
        self.origin_issuer = tolerate;
        self
    }

    /// Starts discovery from this challenge.
    #[must_use]
    pub fn with_challenge(mut self, challenge: Option<String>) -> Self {
        self.challenge = challenge;
        self
    }
}

/// What the person has to open, given to the caller before the wait.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoginPrompt {
    /// The authorization URL (it holds no secret: a PKCE challenge and a
    /// random state).
    pub url: String,
    /// Where the browser comes back: `http://127.0.0.1:PORT/callback`.
    pub redirect_uri: String,
}

/// A finished login.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoginOutcome {
    /// The scopes the authorization server granted (as it said; empty
    /// when it did not say).
    pub scopes: Vec<String>,
    /// The token file.
    pub path: std::path::PathBuf,
}

/// Logs zr in to `config`'s server and stores its tokens in `tokens`:
///
/// 1. the server's `WWW-Authenticate` challenge (from `login.challenge`,
///    else by connecting without a token);
/// 2. discovery: the protected-resource metadata (the challenge's
///    `resource_metadata`, else the well-known paths), whose `resource`
///    must be this server, then the authorization server's metadata
///    (OAuth and OpenID paths, and the 2025-03-26 fallbacks: metadata at
///    the server's root, then `/authorize`, `/token`, `/register`);
/// 3. the client: `oauth.clientId` (and secret) when set, else the
///    `oauth.clientMetadataUrl` when the authorization server supports
///    client ID metadata documents, else dynamic registration;
/// 4. the authorization URL (PKCE S256, `state`, `resource`, scopes from
///    `login.scopes`, `oauth.scopes`, the challenge's `scope` or the
///    resource's `scopes_supported`), given to `show`;
/// 5. the redirect to a loopback listener, then the code exchange
///    (client authentication as the metadata says: HTTP Basic, request
///    body or none), and the tokens written to the server's file.
///
/// # Errors
///
/// [`McpError::NotHttp`] for a stdio server; [`McpError::Authorization`]
/// when discovery, registration or the exchange fails (a resource
/// metadata document naming another server included);
/// [`McpError::AuthorizationDenied`], [`McpError::LoginTimeout`],
/// [`McpError::Listen`], [`McpError::TokenStore`].
pub async fn login(
    config: &ServerConfig,
    options: &HubOptions,
    tokens: &TokenStore,
    login: &LoginOptions,
    show: impl FnOnce(&LoginPrompt),
) -> Result<LoginOutcome, McpError> {
    let server = &config.name;
    let TransportConfig::Http(http) = &config.transport else {
        return Err(McpError::NotHttp {
            server: server.clone(),
        });
    };
    let failed = |e: rmcp::transport::AuthError| McpError::Authorization {
        server: server.clone(),
        source: Box::new(e),
    };
    let challenge = match &login.challenge {
        Some(challenge) => Some(challenge.clone()),
        None => probe(config, options).await?,
    };
    let settings = http.oauth.clone().unwrap_or_default();
    let redirect = Redirect::bind(server, settings.callback_port).await?;
    let store = tokens.server(server, &http.url);

    let mut manager = AuthorizationManager::new(http.url.as_str())
        .await
        .map_err(failed)?;
    manager.set_credential_store(store.clone());
    let metadata =
        discovery::authorization_server(&manager, challenge.as_deref(), login.origin_issuer)
            .await
            .map_err(failed)?;
    let cimd = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    store.set_metadata(metadata.clone());
    manager.set_metadata(metadata);

    let scopes = if login.scopes.is_empty() {
        settings.scopes.clone()
    } else {
        login.scopes.clone()
    };
    // The challenge's scope wins over `scopes_supported` (the spec's scope
    // selection); a later 403 asks for more with its own challenge.
    let mut request = AuthorizationRequest::new(redirect.uri())
        .with_client_name(&login.client_name)
        .with_initial_scope_selection();
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    let secret = match (&settings.client_id, &settings.client_metadata_url) {
        (Some(id), _) => {
            request = request.with_preregistered_client(id);
            if let Some(secret) = &settings.client_secret {
                request = request.with_client_secret(secret);
            }
            settings.client_secret.clone()
        }
        (None, Some(url)) if cimd => {
            request = request.with_client_metadata_url(url);
            None
        }
        (None, _) => {
            // Registered here rather than inside the session, so that a
            // secret the server issues is kept for refreshing later.
            let wanted = if request.scopes.is_empty() {
                manager.select_initial_scopes(&[]).await
            } else {
                request.scopes.clone()
            };
            let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
            let client = manager
                .register_client(&login.client_name, &redirect.uri(), &wanted)
                .await
                .map_err(failed)?;
            tracing::debug!(%server, client_id = %client.client_id, "registered an OAuth client");
            request = request.with_preregistered_client(&client.client_id);
            if let Some(secret) = &client.client_secret {
                request = request.with_client_secret(secret);
            }
            client.client_secret
        }
    };
    store.set_client(Some(redirect.uri()), secret);
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed(e))?;
    show(&LoginPrompt {
        url: session.get_authorization_url().to_owned(),
        redirect_uri: redirect.uri(),
    });
    let callback = match redirect.wait(login.timeout).await? {
        Callback::Redirected(url) => url,
        Callback::Refused { error, description } => {
            return Err(McpError::AuthorizationDenied {
                server: server.clone(),
                error,
                description,
            });
        }
    };
    let callback = AuthorizationCallback::from_redirect_url(&callback).map_err(failed)?;
    session
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(failed)?;
    let scopes = store
        .read()?
        .map(|(_, credentials)| credentials.granted_scopes)
        .unwrap_or_default();
    tracing::info!(%server, "OAuth login stored");
    Ok(LoginOutcome {
        scopes,
        path: tokens.path(server, &http.url),
    })
}

/// The server's challenge: connects without a token and lists its tools
/// (some servers let the handshake through and ask only then). `None`
/// when it answered both without asking.
async fn probe(config: &ServerConfig, options: &HubOptions) -> Result<Option<String>, McpError> {
    let plain = options.clone().without_tokens();
    // A probe asks nobody anything: no elicitor, the configured roots.
    let host = Arc::new(Host::new(plain.roots.clone()));
    let outcome = match Connection::connect(config, &plain, &host).await {
        Ok(connection) => {
            let listed = connection.tools(plain.connect_timeout).await.map(|_| ());
            connection.abandon();
            listed
        }
        Err(e) => Err(e),
    };
    match outcome {
        Ok(()) => Ok(None),
        Err(McpError::AuthRequired { challenge, .. }) => Ok(challenge),
        Err(other) => Err(other),
    }
}
