//! Tokens on disk: one file per server, readable only by the user, under the user's config folder.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::transport::auth::{AuthError, AuthorizationMetadata, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use zr_types::{ServerName, stable_hash};

use crate::error::McpError;

/// The variable that moves the user's zr configuration folder (tests set
/// it); without it, `$XDG_CONFIG_HOME/zr`, else `$HOME/.config/zr`.
pub const CONFIG_DIR_ENV: &str = "ZR_CONFIG_DIR";

/// Where OAuth tokens are kept: a folder (mode 0700) of one file per
/// server (mode 0600), never inside a project.
///
/// A file is named after the server and a hash of its URL, so a server
/// whose URL changed in `.mcp.json` never receives the old server's
/// token. It holds the client id (and secret, for a client that the
/// authorization server registered as confidential), the redirect URI and
/// the token response (access and refresh token, scopes, when it was
/// received).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenStore {
    dir: PathBuf,
}

impl TokenStore {
    /// A store in `dir`.
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The user's store: `mcp-auth` under `$ZR_CONFIG_DIR`, else
    /// `$XDG_CONFIG_HOME/zr`, else `$HOME/.config/zr`; `None` when none of
    /// them is set. `vars` reads the environment.
    #[must_use]
    pub fn for_user(vars: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        let set = |name| vars(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let config = set(CONFIG_DIR_ENV)
            .or_else(|| set("XDG_CONFIG_HOME").map(|d| d.join("zr")))
            .or_else(|| set("HOME").map(|d| d.join(".config").join("zr")))?;
        Some(Self::new(config.join("mcp-auth")))
    }

    /// The folder.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `server` at `url`.
    #[must_use]
    pub fn path(&self, server: &ServerName, url: &str) -> PathBuf {
        self.dir.join(format!(
            "{server}-{:016x}.json",
            stable_hash(url.as_bytes())
        ))
    }

    /// Whether tokens for `server` at `url` are stored.
    #[must_use]
    pub fn contains(&self, server: &ServerName, url: &str) -> bool {
        self.path(server, url).is_file()
    }

    /// Forgets `server`'s tokens; `false` when there were none.
    ///
    /// # Errors
    ///
    /// [`McpError::TokenStore`] when the file exists but cannot be removed.
    pub fn remove(&self, server: &ServerName, url: &str) -> Result<bool, McpError> {
        let path = self.path(server, url);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(McpError::TokenStore { path, source }),
        }
    }

    /// The store of one server, as rmcp's credential store.
    pub(crate) fn server(&self, server: &ServerName, url: &str) -> ServerTokens {
        ServerTokens {
            path: Arc::new(self.path(server, url)),
            record: Arc::new(Mutex::new(ClientRecord {
                server: server.to_string(),
                url: url.to_owned(),
                ..ClientRecord::default()
            })),
        }
    }
}

/// What the file holds besides rmcp's credentials.
#[derive(Clone, Default, Serialize, Deserialize)]
pub(crate) struct ClientRecord {
    pub(crate) server: String,
    pub(crate) url: String,
    #[serde(default)]
    pub(crate) redirect_uri: Option<String>,
    #[serde(default)]
    pub(crate) client_secret: Option<String>,
    /// The authorization server's metadata found at login: a connection
    /// refreshes with it and does not discover again.
    #[serde(default)]
    pub(crate) metadata: Option<AuthorizationMetadata>,
}

impl std::fmt::Debug for ClientRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRecord")
            .field("server", &self.server)
            .field("url", &self.url)
            .field("redirect_uri", &self.redirect_uri)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize)]
struct TokenFile {
    #[serde(flatten)]
    record: ClientRecord,
    credentials: StoredCredentials,
}

/// One server's file, shared by the manager that refreshes its token and
/// the code that logs in.
#[derive(Debug, Clone)]
pub(crate) struct ServerTokens {
    path: Arc<PathBuf>,
    record: Arc<Mutex<ClientRecord>>,
}

impl ServerTokens {
    /// Sets what the next save writes besides the credentials.
    pub(crate) fn set_client(&self, redirect_uri: Option<String>, client_secret: Option<String>) {
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        record.redirect_uri = redirect_uri;
        record.client_secret = client_secret;
    }

    /// Sets the metadata the next save writes.
    pub(crate) fn set_metadata(&self, metadata: AuthorizationMetadata) {
        self.record
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .metadata = Some(metadata);
    }

    /// The file's client record and credentials, when there is a file.
    pub(crate) fn read(&self) -> Result<Option<(ClientRecord, StoredCredentials)>, McpError> {
        let text = match std::fs::read(&*self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(McpError::TokenStore {
                    path: self.path.to_path_buf(),
                    source,
                });
            }
        };
        let file: TokenFile =
            serde_json::from_slice(&text).map_err(|source| McpError::TokenFile {
                path: self.path.to_path_buf(),
                source,
            })?;
        *self.record.lock().unwrap_or_else(PoisonError::into_inner) = file.record.clone();
        Ok(Some((file.record, file.credentials)))
    }

    fn write(&self, credentials: StoredCredentials) -> Result<(), McpError> {
        let record = self
            .record
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let text = serde_json::to_vec_pretty(&TokenFile {
            record,
            credentials,
        })
        .map_err(|source| McpError::TokenFile {
            path: self.path.to_path_buf(),
            source,
        })?;
        let failed = |source| McpError::TokenStore {
            path: self.path.to_path_buf(),
            source,
        };
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(failed)?;
        // Written beside and renamed: a reader never sees half a file, and
        // the file is private from its first byte.
        let temporary = self.path.with_extension("json.tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .map_err(failed)?;
        // A file left by an older umask keeps its mode; make sure.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(failed)?;
        file.write_all(&text).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        std::fs::rename(&temporary, &*self.path).map_err(failed)
    }
}

fn store_error(error: &McpError) -> AuthError {
    // The path and the cause, never the content.
    AuthError::CredentialStoreError(zr_types::error_chain(error))
}

#[async_trait::async_trait]
impl CredentialStore for ServerTokens {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
            .map(|file| file.map(|(_, credentials)| credentials))
            .map_err(|e| store_error(&e))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials).map_err(|e| store_error(&e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&*self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(store_error(&McpError::TokenStore {
                path: self.path.to_path_buf(),
                source,
            })),
        }
    }
}

#[cfg(test)]
mod tests;
