//! Starting the project's MCP servers as a person sees it: a line on
//! standard error when one takes longer than a second, and for one that
//! failed, its error and what to do (a warning quotes only the line of the
//! server's stderr that names its error; `zr mcp list` and `ZR_LOG=debug`
//! show its last lines, stack trace and all): the `[mcp] connect_timeout_secs` key when it ran out of time, the
//! `cargo xtask deps` hint only for servers run from a `.deps` folder (the
//! tests' and benchmarks' pinned servers). One copy for `zr run`, `zr resume`, `zr resolve` and
//! `zr mcp list`.

use std::io::Write as _;
use std::path::Component;
use std::time::{Duration, Instant};

use zr_mcp::{McpError, ServerConfig, TransportConfig};

use crate::project::{MCP_FILE, Project};

/// After this long, a server that has not finished starting is announced.
pub(crate) const SLOW_START: Duration = Duration::from_secs(1);

/// A server that did not start.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    /// The server.
    pub(crate) name: String,
    /// What went wrong, with its causes and the server's last stderr
    /// lines (`zr mcp list`).
    pub(crate) error: String,
    /// The same in one line for a warning: of the server's stderr, only
    /// the line that names its error ([`McpError::headline`]).
    pub(crate) summary: String,
    /// What to do about it.
    pub(crate) help: String,
    /// The server asks for OAuth (a 401, or a 403 for more scope): not
    /// broken, only not logged in to.
    pub(crate) needs_login: bool,
}

impl Failure {
    /// The failure of `config`'s server with `error`.
    pub(crate) fn of(project: &Project, config: &ServerConfig, error: &McpError) -> Self {
        if let McpError::AuthRequired {
            scope,
            insufficient_scope,
            ..
        } = error
        {
            let name = &config.name;
            let scope = scope
                .as_deref()
                .filter(|s| *insufficient_scope && !s.trim().is_empty())
                .map(|s| format!(" --scope '{s}'"))
                .unwrap_or_default();
            let error = config.conceal(&zr_types::error_chain(error));
            return Self {
                name: name.to_string(),
                summary: error.clone(),
                error,
                help: format!("run `zr mcp login {name}{scope}` to authorize zr in a browser"),
                needs_login: true,
            };
        }
        let timed_out = matches!(error, McpError::ConnectTimeout { .. });
        let full = config.conceal(&zr_types::error_chain(error));
        tracing::debug!(server = %config.name, error = %full, "MCP server did not start");
        Self {
            summary: config.conceal(&headline_chain(error)),
            ..Self::text(project, config, full, timed_out)
        }
    }

    /// A failure zr described itself (`timed_out`: it ran out of the
    /// connect time).
    pub(crate) fn text(
        project: &Project,
        config: &ServerConfig,
        error: String,
        timed_out: bool,
    ) -> Self {
        Self {
            name: config.name.to_string(),
            summary: config.conceal(&error),
            error: config.conceal(&error),
            help: help(project, config, timed_out),
            needs_login: false,
        }
    }
}

/// `error`'s [`McpError::headline`] followed by its causes, as
/// [`zr_types::error_chain`] joins them.
fn headline_chain(error: &McpError) -> String {
    let mut text = error.headline();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// What to do about a server of `config` that failed.
fn help(project: &Project, config: &ServerConfig, timed_out: bool) -> String {
    let mut help = match &config.transport {
        TransportConfig::Stdio(_) => format!(
            "check that `{}` runs from the project folder and speaks MCP on stdio, or fix the server's entry in {MCP_FILE}",
            config.shown_target()
        ),
        TransportConfig::Http(_) => format!(
            "check that a server is listening at {} and speaks streamable HTTP, or fix the server's entry in {MCP_FILE}",
            config.shown_target()
        ),
        TransportConfig::Sse(_) => format!(
            "check that a server is listening at {} and sends an event stream with an 'endpoint' event (the HTTP+SSE transport), or fix the server's entry in {MCP_FILE}",
            config.shown_target()
        ),
        _ => format!("fix the server's entry in {MCP_FILE}"),
    };
    if timed_out {
        help.push_str(&format!(
            "; if it only needs longer to start, raise `[mcp] connect_timeout_secs` in zr.toml (now {} s)",
            project.hub_options().connect_timeout.as_secs()
        ));
    }
    if is_deps_server(config) {
        help.push_str("; the servers in `.deps` are installed by `cargo xtask deps`");
    }
    help
}

/// A server run from a `.deps` folder or from `ZR_DEPS_DIR`, where `cargo
/// xtask deps` installs the servers the tests and benchmarks run.
fn is_deps_server(config: &ServerConfig) -> bool {
    let TransportConfig::Stdio(s) = &config.transport else {
        return false;
    };
    let deps_dir = std::env::var("ZR_DEPS_DIR").ok().filter(|d| !d.is_empty());
    std::iter::once(&s.command).chain(&s.args).any(|word| {
        deps_dir.as_deref().is_some_and(|d| word.starts_with(d))
            || std::path::Path::new(word)
                .components()
                .any(|c| c == Component::Normal(".deps".as_ref()))
    })
}

/// Runs `work`, the start of server `name`; when it takes longer than
/// [`SLOW_START`], says `starting MCP server 'NAME' ...` and, once it
/// started, how long it took.
pub(crate) async fn shown<T, E>(
    name: &str,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    let began = Instant::now();
    tokio::pin!(work);
    tokio::select! {
        done = &mut work => return done,
        () = tokio::time::sleep(SLOW_START) => {}
    }
    say(&format!("starting MCP server '{name}' ..."));
    let done = work.await;
    if done.is_ok() {
        say(&format!(
            "MCP server '{name}' started ({:.1} s)",
            began.elapsed().as_secs_f64()
        ));
    }
    done
}

fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}
