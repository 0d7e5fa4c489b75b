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
        private_folder(dir).map_err(failed)?;
        // Written beside and renamed: a reader never sees half a file, and
        // the file is private from its first byte. The temporary name is
        // new (`create_new`: O_CREAT|O_EXCL) and never a link
        // (O_NOFOLLOW), so nothing planted in the folder redirects the
        // write onto another file.
        let (temporary, mut file) = temporary_beside(&self.path).map_err(failed)?;
        let written = file
            .write_all(&text)
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::rename(&temporary, &*self.path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written.map_err(failed)
    }
}

/// Makes `dir` (and its parents) if missing, and makes it private (0700)
/// if it is not: a folder that others may read or write (a 0777 folder
/// made by hand or by an old umask) would expose or let them swap the
/// token files. A folder zr cannot make private is an error.
fn private_folder(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "the token folder is a link or not a folder",
        ));
    }
    if meta.permissions().mode() & 0o777 != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// A new file beside `path`, `.NAME.RANDOM.tmp`, created (never opened
/// if it exists, never through a link) with mode 0600.
fn temporary_beside(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut last = None;
    for _ in 0..8 {
        let temporary = path.with_file_name(format!(".{name}.{:016x}.tmp", fastrand::u64(..)));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o600)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no temporary name was free")))
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
