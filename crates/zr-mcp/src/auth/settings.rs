//! The `oauth` key of an HTTP server in `.mcp.json`: a pre-registered client, scopes, the callback port, client credentials.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::expand;
use crate::error::ConfigError;

/// How zr authorizes itself to one HTTP server (the `oauth` object of its
/// `.mcp.json` entry). Every field is optional: with none, `zr mcp login`
/// discovers the authorization server and registers itself dynamically.
///
/// ```json
/// "oauth": {"clientId": "zr-at-acme", "clientSecret": "${ACME_SECRET}",
///           "scopes": ["read", "write"], "callbackPort": 8976}
/// ```
///
/// `clientId`, `clientSecret` and `privateKeyFile` take `${VAR}`
/// references, so a secret stays in the environment, never in the file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// `clientId`: a client registered with the authorization server
    /// beforehand; no dynamic registration then.
    pub client_id: Option<String>,
    /// `clientSecret`: that client's secret (a confidential client), sent
    /// as the authorization server's metadata asks (HTTP Basic or the
    /// request body).
    pub client_secret: Option<String>,
    /// `scopes`: the scopes to ask for; empty lets the server's challenge
    /// or its `scopes_supported` decide.
    pub scopes: Vec<String>,
    /// `callbackPort`: the loopback port of the redirect
    /// (`http://127.0.0.1:PORT/callback`); `None` picks a free one (a
    /// pre-registered client usually needs a fixed one).
    pub callback_port: Option<u16>,
    /// `clientMetadataUrl`: an HTTPS URL where this client's metadata
    /// document is published, used as the client id when the
    /// authorization server supports client ID metadata documents.
    pub client_metadata_url: Option<String>,
    /// `grant: "client_credentials"`: a machine client with no browser;
    /// the token is fetched at connect time with `clientId` and
    /// `clientSecret`, or with a JWT signed by `privateKeyFile`.
    pub client_credentials: bool,
    /// `privateKeyFile` (PEM, PKCS#8) and `signingAlgorithm` (`ES256` by
    /// default): `private_key_jwt` client authentication.
    pub private_key: Option<PrivateKey>,
}

/// A key that signs the client's JWT assertion (RFC 7523).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PrivateKey {
    /// Where the PEM text is.
    pub source: KeySource,
    /// `ES256`, `ES384`, `RS256`, `RS384` or `RS512`.
    pub algorithm: String,
}

/// Where a private key's PEM text is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum KeySource {
    /// A file, relative to the hub's folder; read at connect time.
    File(PathBuf),
    /// The PEM text itself (set in code, never read from `.mcp.json`).
    Pem(String),
}

impl PrivateKey {
    /// A key from PEM text, signing with `algorithm`.
    #[must_use]
    pub fn pem(text: impl Into<String>, algorithm: impl Into<String>) -> Self {
        Self {
            source: KeySource::Pem(text.into()),
            algorithm: algorithm.into(),
        }
    }
}

const ALGORITHMS: [&str; 5] = ["ES256", "ES384", "RS256", "RS384", "RS512"];

const KEYS: [&str; 8] = [
    "clientId",
    "clientSecret",
    "scopes",
    "callbackPort",
    "clientMetadataUrl",
    "grant",
    "privateKeyFile",
    "signingAlgorithm",
];

/// Parses the `oauth` object of `server`'s entry.
pub(crate) fn parse(
    server: &str,
    value: &Value,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthSettings, ConfigError> {
    let wrong = |key: &str, expected| ConfigError::WrongType {
        server: server.to_owned(),
        key: format!("oauth.{key}"),
        expected,
    };
    let Value::Object(object) = value else {
        return Err(ConfigError::WrongType {
            server: server.to_owned(),
            key: "oauth".to_owned(),
            expected: "an object",
        });
    };
    for key in object.keys() {
        if !KEYS.contains(&key.as_str()) {
            tracing::warn!(server, key = %format!("oauth.{key}"), "unknown key in .mcp.json, ignored");
        }
    }
    let text = |key: &str, expand_vars: bool| -> Result<Option<String>, ConfigError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if expand_vars => expand(s, vars)
                .map(Some)
                .map_err(|e| e.into_config(server, format!("oauth.{key}"))),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(wrong(key, "a string")),
        }
    };
    let scopes = scopes(object).ok_or_else(|| wrong("scopes", "an array of strings"))?;
    let callback_port = match object.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .ok_or_else(|| wrong("callbackPort", "a port number (0 to 65535)"))?,
        ),
    };
    let client_credentials = match text("grant", false)?.as_deref() {
        None | Some("authorization_code") => false,
        Some("client_credentials") => true,
        Some(_) => {
            return Err(wrong(
                "grant",
                "\"authorization_code\" (the default) or \"client_credentials\"",
            ));
        }
    };
    let algorithm = text("signingAlgorithm", false)?.unwrap_or_else(|| "ES256".to_owned());
    if !ALGORITHMS.contains(&algorithm.as_str()) {
        return Err(wrong(
            "signingAlgorithm",
            "one of ES256, ES384, RS256, RS384, RS512",
        ));
    }
    let private_key = text("privateKeyFile", true)?.map(|path| PrivateKey {
        source: KeySource::File(PathBuf::from(path)),
        algorithm,
    });
    let settings = OAuthSettings {
        client_id: text("clientId", true)?.filter(|s| !s.is_empty()),
        client_secret: text("clientSecret", true)?.filter(|s| !s.is_empty()),
        scopes,
        callback_port,
        client_metadata_url: text("clientMetadataUrl", true)?,
        client_credentials,
        private_key,
    };
    if settings.client_credentials && settings.client_id.is_none() {
        return Err(ConfigError::MissingKey {
            server: server.to_owned(),
            key: "oauth.clientId",
        });
    }
    if settings.client_credentials
        && settings.client_secret.is_none()
        && settings.private_key.is_none()
    {
        return Err(ConfigError::MissingKey {
            server: server.to_owned(),
            key: "oauth.clientSecret",
        });
    }
    Ok(settings)
}

fn scopes(object: &Map<String, Value>) -> Option<Vec<String>> {
    match object.get("scopes") {
        None | Some(Value::Null) => Some(Vec::new()),
        // "read write", as OAuth writes them.
        Some(Value::String(s)) => Some(s.split_whitespace().map(str::to_owned).collect()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests;
