//! The command's errors and its exit codes.

use std::path::PathBuf;

use thiserror::Error;

/// Exit code: the work was done.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit code: the run failed (the model, a server, the agent).
pub(crate) const EXIT_FAILED: u8 = 1;
/// Exit code: the command line, a project file or the environment is
/// wrong; nothing ran.
pub(crate) const EXIT_USAGE: u8 = 2;
/// Exit code: interrupted by Ctrl-C (128 + SIGINT).
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// Everything that can go wrong in a command; each says what, where, and
/// what to do.
#[derive(Debug, Error)]
#[non_exhaustive]
pub(crate) enum CliError {
    /// A file could not be read or written.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done: `read`, `write`, `read scenario file`, ...
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A project file is wrong.
    #[error("{}: {}{message}\n  help: {help}", location(path, *line, *column), key_prefix(key))]
    Config {
        /// The file.
        path: PathBuf,
        /// 1-based line (0: unknown).
        line: usize,
        /// 1-based column (0: unknown).
        column: usize,
        /// The dotted key (`subagents.max_concurrent`), empty when the
        /// problem is not in one key.
        key: String,
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: String,
    },
    /// Something the user must set or change before anything can run (no
    /// provider, an unknown agent, a missing script).
    #[error("{message}\n  help: {help}")]
    Usage {
        /// What is wrong.
        message: String,
        /// What to do.
        help: String,
    },
    /// The engine failed.
    #[error(transparent)]
    Engine(Box<zr_engine::EngineError>),
    /// A provider could not be set up.
    #[error(transparent)]
    Provider(Box<zr_engine::ProviderError>),
    /// An MCP server or `.mcp.json` failed.
    #[error(transparent)]
    Mcp(Box<zr_mcp::McpError>),
    /// A durable run or worker could not reach Restate, or its turn
    /// failed.
    #[error(transparent)]
    Restate(Box<zr_restate::RestateError>),
    /// A scenario file is wrong.
    #[error("invalid scenario file {}", path.display())]
    Scenario {
        /// The file.
        path: PathBuf,
        /// The problem.
        #[source]
        source: Box<zr_resolve::ScenarioError>,
    },
    /// Several problems, found together and reported together (the
    /// project's files are checked whole before anything runs); never
    /// empty, never nested ([`CliError::all`]).
    #[error("{}", each(.0))]
    Several(Vec<CliError>),
    /// Stopped by a signal: Ctrl-C (SIGINT), SIGTERM or SIGHUP.
    #[error("stopped by {signal}")]
    Stopped {
        /// The signal's name.
        signal: &'static str,
        /// The exit code (128 + the signal's number).
        code: u8,
    },
}

/// `file:line:column`, or just the file when the line is unknown.
fn location(path: &std::path::Path, line: usize, column: usize) -> String {
    match (line, column) {
        (0, _) => path.display().to_string(),
        (line, 0) => format!("{}:{line}", path.display()),
        (line, column) => format!("{}:{line}:{column}", path.display()),
    }
}

/// Each error with its causes, the second and later after `error: ` on a
/// line of its own (the first gets its `error: ` from `main`).
fn each(errors: &[CliError]) -> String {
    errors
        .iter()
        .map(|e| zr_types::error_chain(e))
        .collect::<Vec<_>>()
        .join("\nerror: ")
}

fn key_prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}: ")
    }
}

impl CliError {
    /// A [`CliError::Usage`].
    pub(crate) fn usage(message: impl Into<String>, help: impl Into<String>) -> Self {
        Self::Usage {
            message: message.into(),
            help: help.into(),
        }
    }

    /// A [`CliError::Config`] at `line` and `column` of `path` (0: not
    /// known).
    pub(crate) fn config(
        path: impl Into<PathBuf>,
        (line, column): (usize, usize),
        key: impl Into<String>,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        Self::Config {
            path: path.into(),
            line,
            column,
            key: key.into(),
            message: message.into(),
            help: help.into(),
        }
    }

    /// `Ok` when `errors` is empty, else all of them as one error (one
    /// alone as itself), in the order given.
    pub(crate) fn all(errors: impl IntoIterator<Item = CliError>) -> Result<(), CliError> {
        let mut flat: Vec<CliError> = errors
            .into_iter()
            .flat_map(|e| match e {
                Self::Several(list) => list,
                one => vec![one],
            })
            .collect();
        match flat.len() {
            0 => Ok(()),
            1 => Err(flat.remove(0)),
            _ => Err(Self::Several(flat)),
        }
    }

    /// The errors this one stands for: its list, or itself.
    pub(crate) fn into_list(self) -> Vec<CliError> {
        match self {
            Self::Several(list) => list,
            one => vec![one],
        }
    }

    /// The exit code for this error.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Self::Several(list) => list.iter().map(Self::exit_code).max().unwrap_or(EXIT_USAGE),
            Self::Config { .. } | Self::Usage { .. } | Self::Scenario { .. } => EXIT_USAGE,
            Self::Stopped { code, .. } => *code,
            Self::Io { .. }
            | Self::Engine(_)
            | Self::Provider(_)
            | Self::Mcp(_)
            | Self::Restate(_) => EXIT_FAILED,
        }
    }
}

macro_rules! boxed_from {
    ($($variant:ident: $ty:ty),*) => {$(
        impl From<$ty> for CliError {
            fn from(e: $ty) -> Self {
                Self::$variant(Box::new(e))
            }
        }
    )*};
}

boxed_from!(
    Engine: zr_engine::EngineError,
    Provider: zr_engine::ProviderError,
    Mcp: zr_mcp::McpError,
    Restate: zr_restate::RestateError
);
