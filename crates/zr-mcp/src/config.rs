//! `.mcp.json`: the servers a project uses, parsed with errors that name the server and the key.

mod expand;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zr_types::{ServerName, stable_hash};

use crate::auth::settings::{self, OAuthSettings};
use crate::error::ConfigError;

pub(crate) use expand::expand;

/// The MCP servers of a project, in file order.
///
/// ```
/// use zr_mcp::{McpConfig, TransportConfig};
///
/// let text = r#"{"mcpServers": {
///     "files": {"command": "mcp-files", "args": ["--root", "${ROOT:-/srv}"],
///               "env": {"TOKEN": "${TOKEN}"}},
///     "gh": {"type": "http", "url": "https://example.invalid/mcp", "deferred": true}
/// }}"#;
/// let vars = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
/// let config = McpConfig::parse(text, &vars).unwrap();
/// let files = config.get("files").unwrap();
/// let TransportConfig::Stdio(stdio) = &files.transport else { panic!() };
/// assert_eq!(stdio.args, ["--root", "/srv"]);
/// assert_eq!(stdio.env["TOKEN"], "s3cret");
/// assert_eq!(config.get("gh").unwrap().deferred, Some(true));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    servers: Vec<ServerConfig>,
}

/// One server of `.mcp.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Its name: the `{server}` of `mcp__{server}__{tool}`.
    pub name: ServerName,
    /// How to reach it.
    pub transport: TransportConfig,
    /// `deferred`: whether its tools are kept out of the advertised pool
    /// (found through `FindTool`); `None` leaves it to the lazy policy.
    pub deferred: Option<bool>,
    /// `timeout_ms`: the time limit of each request (tool calls and
    /// `tools/list`); `None` uses the hub's default.
    pub timeout: Option<Duration>,
    /// How the entry is shown and what it conceals.
    shown: Shown,
}

/// How `.mcp.json` wrote a server's transport, for what zr prints about
/// it. It never makes two configurations differ (`PartialEq` is always
/// true), and its `Debug` form names the variables, never their values.
#[derive(Clone, Default, Eq)]
struct Shown {
    /// The transport before `${VAR}` expansion: the command and its
    /// arguments, or the URL. `None` for a server built in code.
    written: Option<Vec<String>>,
    /// Each variable's value that went into the transport, and the
    /// reference it came from (`${NAME}`), longest value first.
    expanded: Vec<(String, String)>,
}

impl PartialEq for Shown {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let references: Vec<&str> = self.expanded.iter().map(|(_, r)| r.as_str()).collect();
        f.debug_struct("Shown")
            .field("written", &self.written)
            .field("expanded", &references)
            .finish()
    }
}

impl ServerConfig {
    /// A server reached through `transport`, with no `deferred` or
    /// `timeout_ms` setting.
    #[must_use]
    pub fn new(name: ServerName, transport: TransportConfig) -> Self {
        Self {
            name,
            transport,
            deferred: None,
            timeout: None,
            shown: Shown::default(),
        }
    }

    /// The transport for people: `stdio: COMMAND ARGS...` or `http: URL`,
    /// as `.mcp.json` writes it (every `${VAR}` as written, never its
    /// value, which may be a secret). A server built in code shows its
    /// values.
    #[must_use]
    pub fn shown(&self) -> String {
        let (kind, values) = match &self.transport {
            TransportConfig::Stdio(s) => (
                "stdio",
                std::iter::once(&s.command)
                    .chain(&s.args)
                    .cloned()
                    .collect(),
            ),
            TransportConfig::Http(h) => ("http", vec![h.url.clone()]),
            TransportConfig::Sse(h) => ("sse", vec![h.url.clone()]),
        };
        format!(
            "{kind}: {}",
            self.shown.written.as_ref().unwrap_or(&values).join(" ")
        )
    }

    /// The command (stdio) or the URL (HTTP) as `.mcp.json` writes it, as
    /// [`ServerConfig::shown`].
    #[must_use]
    pub fn shown_target(&self) -> String {
        match (&self.shown.written, &self.transport) {
            (Some(written), _) => written.first().cloned().unwrap_or_default(),
            (None, TransportConfig::Stdio(s)) => s.command.clone(),
            (None, TransportConfig::Http(h) | TransportConfig::Sse(h)) => h.url.clone(),
        }
    }

    /// `text` (an error's message, a server's output) with the value of
    /// every variable the entry's transport expanded (`args`, `env`,
    /// `url`, `headers`, ...) written back as its `${NAME}`: what zr
    /// prints about a server never shows a secret it was given through
    /// the environment. Values shorter than three characters are left.
    #[must_use]
    pub fn conceal(&self, text: &str) -> String {
        self.shown
            .expanded
            .iter()
            .fold(text.to_owned(), |text, (value, reference)| {
                text.replace(value.as_str(), reference)
            })
    }

    /// Sets `deferred`.
    #[must_use]
    pub fn with_deferred(mut self, deferred: Option<bool>) -> Self {
        self.deferred = deferred;
        self
    }

    /// Sets the per-call time limit.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// The sharing key of the hub: a [`stable_hash`] of the transport
    /// settings (command, arguments, environment and folder, or URL and
    /// headers). Two servers with the same key share one connection.
    #[must_use]
    pub fn connection_key(&self) -> u64 {
        // Serialising plain strings and sorted maps cannot fail.
        let bytes = serde_json::to_vec(&self.transport).unwrap_or_default();
        stable_hash(&bytes)
    }
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum TransportConfig {
    /// A child process speaking MCP on its standard input and output.
    Stdio(StdioConfig),
    /// Streamable HTTP.
    Http(HttpConfig),
    /// The legacy HTTP+SSE transport (`"type": "sse"`, protocol
    /// 2024-11-05): an event stream at the URL and a message endpoint it
    /// names. `oauth` does not apply.
    Sse(HttpConfig),
}

/// A server started as a child process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StdioConfig {
    /// The program, looked up in the child's `PATH`, after `${VAR}`
    /// expansion.
    pub command: String,
    /// Its arguments, after `${VAR}` expansion.
    pub args: Vec<String>,
    /// Its environment, after `${VAR}` expansion: these variables plus the
    /// hub's minimal base (`PATH`, `HOME`, `LANG`), nothing else.
    pub env: BTreeMap<String, String>,
    /// Its working folder; relative to the hub's folder. `None`: the hub's
    /// folder.
    pub cwd: Option<PathBuf>,
}

impl StdioConfig {
    /// `command` with no arguments, environment or folder.
    #[must_use]
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
        }
    }

    /// Sets the arguments.
    #[must_use]
    pub fn with_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Sets the working folder.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }
}

/// A server reached over streamable HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The endpoint, after `${VAR}` expansion.
    pub url: String,
    /// Headers sent with every request, after `${VAR}` expansion.
    pub headers: BTreeMap<String, String>,
    /// `oauth`: how zr authorizes itself, when the server asks (see
    /// [`OAuthSettings`]); `None` behaves as an empty object.
    pub oauth: Option<OAuthSettings>,
}

impl HttpConfig {
    /// `url` with no headers.
    #[must_use]
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            headers: BTreeMap::new(),
            oauth: None,
        }
    }

    /// Adds a header.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Sets the OAuth settings.
    #[must_use]
    pub fn with_oauth(mut self, oauth: OAuthSettings) -> Self {
        self.oauth = Some(oauth);
        self
    }
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "mcpServers", deserialize_with = "zr_types::ordered_entries")]
    servers: Vec<(String, Value)>,
}

impl McpConfig {
    /// Parses the text of a `.mcp.json` file. `${VAR}` and `${VAR:-default}`
    /// in `command`, each `args` element, `env` values, `url` and `headers`
    /// values are replaced through `vars` (usually the host's environment:
    /// `|n| std::env::var(n).ok()`), as Claude Code does. Names, `cwd` and
    /// `type` are kept as written.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the server and the key (`args[1]`,
    /// `env.TOKEN`): bad JSON, a bad server name, a missing or mistyped key,
    /// an unset variable, a malformed reference, a `command` or `url` that
    /// is blank after expansion.
    pub fn parse(text: &str, vars: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let file: File =
            serde_json::from_str(text).map_err(|source| ConfigError::Json { source })?;
        let servers = file
            .servers
            .into_iter()
            .map(|(name, value)| parse_server(&name, value, vars))
            .collect::<Result<_, _>>()?;
        Ok(Self { servers })
    }

    /// Parses as [`McpConfig::parse`], except that a server whose entry is
    /// wrong is left out and its error returned beside the configuration
    /// of the others, in file order: one bad server does not stop the rest
    /// (Claude Code goes on likewise).
    ///
    /// # Errors
    ///
    /// [`ConfigError::Json`] when the file is not JSON of the right shape.
    pub fn parse_each(
        text: &str,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(Self, Vec<ConfigError>), ConfigError> {
        let file: File =
            serde_json::from_str(text).map_err(|source| ConfigError::Json { source })?;
        let mut servers = Vec::new();
        let mut errors = Vec::new();
        for (name, value) in file.servers {
            match parse_server(&name, value, vars) {
                Ok(server) => servers.push(server),
                Err(error) => errors.push(error),
            }
        }
        Ok((Self { servers }, errors))
    }

    /// One server entry as `.mcp.json` writes it under `mcpServers`
    /// (`{"command": ..., "args": [...]}`, `{"type": "sse", "url": ...}`),
    /// read as [`McpConfig::parse`] reads each: the form of an agent
    /// file's inline `mcpServers` definitions.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the server and the key.
    pub fn entry(
        name: &str,
        value: Value,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ServerConfig, ConfigError> {
        parse_server(name, value, vars)
    }

    /// Reads and parses a `.mcp.json` file as [`McpConfig::parse_each`].
    ///
    /// # Errors
    ///
    /// [`ConfigError::Read`] when the file cannot be read, else as
    /// [`McpConfig::parse_each`].
    pub fn load_each(
        path: &Path,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(Self, Vec<ConfigError>), ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse_each(&text, vars)
    }

    /// Reads and parses a `.mcp.json` file (see [`McpConfig::parse`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError::Read`] when the file cannot be read, else as
    /// [`McpConfig::parse`].
    pub fn load(path: &Path, vars: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, vars)
    }

    /// A configuration of these servers. A later server with an earlier
    /// one's name replaces it in place.
    #[must_use]
    pub fn from_servers(servers: impl IntoIterator<Item = ServerConfig>) -> Self {
        let mut config = Self::default();
        for server in servers {
            config.insert(server);
        }
        config
    }

    /// Adds a server, replacing one of the same name in place.
    pub fn insert(&mut self, server: ServerConfig) {
        match self.servers.iter_mut().find(|s| s.name == server.name) {
            Some(slot) => *slot = server,
            None => self.servers.push(server),
        }
    }

    /// The servers, in file order.
    #[must_use]
    pub fn servers(&self) -> &[ServerConfig] {
        &self.servers
    }

    /// The server named `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name.as_str() == name)
    }
}

const STDIO_KEYS: [&str; 4] = ["command", "args", "env", "cwd"];
const HTTP_KEYS: [&str; 3] = ["url", "headers", "oauth"];

fn parse_server(
    name: &str,
    value: Value,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, ConfigError> {
    let server_name: ServerName = name.parse().map_err(|source| ConfigError::ServerName {
        name: name.to_owned(),
        source,
    })?;
    let Value::Object(object) = value else {
        return Err(ConfigError::NotAnObject {
            server: name.to_owned(),
        });
    };
    let entry = Entry {
        server: name,
        object: &object,
    };
    for key in object.keys() {
        let known = matches!(key.as_str(), "type" | "deferred" | "timeout_ms")
            || STDIO_KEYS.contains(&key.as_str())
            || HTTP_KEYS.contains(&key.as_str());
        if !known {
            tracing::warn!(
                server = name,
                key = key.as_str(),
                "unknown key in .mcp.json, ignored"
            );
        }
    }
    let kind = entry.string("type")?;
    // The variables' values that go into the transport, to conceal them.
    let used: RefCell<Vec<(String, String)>> = RefCell::new(Vec::new());
    let recording = |name: &str| {
        let value = vars(name);
        if let Some(value) = value.as_ref().filter(|v| v.chars().count() >= 3) {
            used.borrow_mut()
                .push((value.clone(), format!("${{{name}}}")));
        }
        value
    };
    let vars: &dyn Fn(&str) -> Option<String> = &recording;
    let transport = match kind.as_deref() {
        Some("stdio") => entry.stdio(vars)?,
        None if object.contains_key("command") || !object.contains_key("url") => {
            entry.stdio(vars)?
        }
        Some("http") | None => entry.http(vars)?,
        Some("sse") => entry.sse(vars)?,
        Some(other) => {
            return Err(ConfigError::UnsupportedType {
                server: name.to_owned(),
                found: other.to_owned(),
            });
        }
    };
    let deferred = match object.get("deferred") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(entry.wrong("deferred", "true or false")),
    };
    let timeout = match object.get("timeout_ms") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(ms) if ms > 0 => Some(Duration::from_millis(ms)),
            _ => {
                return Err(ConfigError::InvalidTimeout {
                    server: name.to_owned(),
                });
            }
        },
    };
    let written = match &transport {
        TransportConfig::Stdio(_) => {
            let args = object.get("args").and_then(Value::as_array);
            let args = args.into_iter().flatten().filter_map(Value::as_str);
            entry
                .string("command")?
                .into_iter()
                .chain(args.map(str::to_owned))
                .collect()
        }
        TransportConfig::Http(_) | TransportConfig::Sse(_) => {
            entry.string("url")?.into_iter().collect()
        }
    };
    let mut expanded = used.into_inner();
    expanded.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
    expanded.dedup();
    Ok(ServerConfig {
        name: server_name,
        transport,
        deferred,
        timeout,
        shown: Shown {
            written: Some(written),
            expanded,
        },
    })
}

struct Entry<'a> {
    server: &'a str,
    object: &'a Map<String, Value>,
}

impl Entry<'_> {
    fn wrong(&self, key: impl Into<String>, expected: &'static str) -> ConfigError {
        ConfigError::WrongType {
            server: self.server.to_owned(),
            key: key.into(),
            expected,
        }
    }

    fn string(&self, key: &'static str) -> Result<Option<String>, ConfigError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.wrong(key, "a string")),
        }
    }

    fn required(&self, key: &'static str) -> Result<String, ConfigError> {
        match self.string(key)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            _ => Err(ConfigError::MissingKey {
                server: self.server.to_owned(),
                key,
            }),
        }
    }

    fn refuse(&self, keys: &[&'static str], transport: &'static str) -> Result<(), ConfigError> {
        match keys.iter().find(|k| self.object.contains_key(**k)) {
            Some(key) => Err(ConfigError::KeyForOtherTransport {
                server: self.server.to_owned(),
                key,
                transport,
            }),
            None => Ok(()),
        }
    }

    /// A string-to-string map with `${VAR}` expansion of the values.
    fn expanded_map(
        &self,
        key: &'static str,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        let object = match self.object.get(key) {
            None | Some(Value::Null) => return Ok(BTreeMap::new()),
            Some(Value::Object(object)) => object,
            Some(_) => return Err(self.wrong(key, "an object of strings")),
        };
        let mut out = BTreeMap::new();
        for (name, value) in object {
            let dotted = format!("{key}.{name}");
            let Value::String(text) = value else {
                return Err(self.wrong(dotted, "a string"));
            };
            let value = self.expanded(text, || dotted, vars)?;
            out.insert(name.clone(), value);
        }
        Ok(out)
    }

    /// `text` after `${VAR}` expansion; errors name `key`.
    fn expanded(
        &self,
        text: &str,
        key: impl FnOnce() -> String,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<String, ConfigError> {
        expand(text, vars).map_err(|e| e.into_config(self.server, key()))
    }

    /// A required string key, expanded; blank after expansion is an error.
    fn required_expanded(
        &self,
        key: &'static str,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<String, ConfigError> {
        let raw = self.required(key)?;
        let value = self.expanded(&raw, || key.to_owned(), vars)?;
        if value.trim().is_empty() {
            return Err(ConfigError::EmptyAfterExpansion {
                server: self.server.to_owned(),
                key,
            });
        }
        Ok(value)
    }

    fn stdio(&self, vars: &dyn Fn(&str) -> Option<String>) -> Result<TransportConfig, ConfigError> {
        self.refuse(&HTTP_KEYS, "stdio")?;
        let command = self.required_expanded("command", vars)?;
        let args = match self.object.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let raw = items
                    .iter()
                    .map(Value::as_str)
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| self.wrong("args", "an array of strings"))?;
                raw.into_iter()
                    .enumerate()
                    .map(|(i, text)| self.expanded(text, || format!("args[{i}]"), vars))
                    .collect::<Result<_, _>>()?
            }
            Some(_) => return Err(self.wrong("args", "an array of strings")),
        };
        let env = self.expanded_map("env", vars)?;
        let cwd = self.string("cwd")?.map(PathBuf::from);
        Ok(TransportConfig::Stdio(StdioConfig {
            command,
            args,
            env,
            cwd,
        }))
    }

    fn sse(&self, vars: &dyn Fn(&str) -> Option<String>) -> Result<TransportConfig, ConfigError> {
        self.refuse(&["oauth"], "sse")?;
        match self.http(vars)? {
            TransportConfig::Http(http) => Ok(TransportConfig::Sse(http)),
            other => Ok(other),
        }
    }

    fn http(&self, vars: &dyn Fn(&str) -> Option<String>) -> Result<TransportConfig, ConfigError> {
        self.refuse(&STDIO_KEYS, "http")?;
        let url = self.required_expanded("url", vars)?;
        let headers = self.expanded_map("headers", vars)?;
        for (name, value) in &headers {
            if http_header(name, value).is_none() {
                return Err(ConfigError::InvalidHeader {
                    server: self.server.to_owned(),
                    header: name.clone(),
                });
            }
        }
        let oauth = match self.object.get("oauth") {
            None | Some(Value::Null) => None,
            Some(value) => Some(settings::parse(self.server, value, vars)?),
        };
        Ok(TransportConfig::Http(HttpConfig {
            url,
            headers,
            oauth,
        }))
    }
}

/// `name: value` as an HTTP header, when both are valid.
pub(crate) fn http_header(
    name: &str,
    value: &str,
) -> Option<(http::HeaderName, http::HeaderValue)> {
    http::HeaderName::from_bytes(name.as_bytes())
        .ok()
        .zip(http::HeaderValue::from_str(value).ok())
}

#[cfg(test)]
mod tests;
