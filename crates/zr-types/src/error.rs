//! Errors of the plain-data layer: invalid names and ids, failed tool calls.

use thiserror::Error;

/// A name (tool, server or skill) did not meet its rules.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name was empty.
    #[error("{kind} name is empty")]
    Empty {
        /// Which kind of name ("tool", "server", "skill").
        kind: &'static str,
    },
    /// The name was longer than allowed.
    #[error("{kind} name '{name}' is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// Which kind of name.
        kind: &'static str,
        /// The offending name.
        name: String,
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The name holds a character outside its alphabet.
    #[error("{kind} name '{name}' contains {ch:?} at position {position}; allowed: {allowed}")]
    InvalidChar {
        /// Which kind of name.
        kind: &'static str,
        /// The offending name.
        name: String,
        /// The first bad character.
        ch: char,
        /// Its character position (0-based).
        position: usize,
        /// A description of the allowed alphabet.
        allowed: &'static str,
    },
}

/// An agent or session id did not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IdError {
    /// The id text does not have the documented shape.
    #[error("invalid {kind} id '{text}': {expected}")]
    Malformed {
        /// "agent" or "session".
        kind: &'static str,
        /// The text that was given.
        text: String,
        /// What the shape should be.
        expected: &'static str,
    },
}

/// A tool call failed in a way the agent loop cannot hand to the model.
///
/// Failures the model should see and react to (a missing file, a bad
/// argument) are **not** errors: they are a [`crate::ToolOutput`] with
/// `is_error` set. A `ToolError` means the call could not be carried out at
/// all, and the engine turns it into an error result and logs it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The handler's backing service is gone (a closed connection, a dead
    /// process).
    #[error("tool '{tool}' is unavailable: {reason}")]
    Unavailable {
        /// The tool that was called.
        tool: String,
        /// What is gone.
        reason: String,
    },
    /// The handler failed with an underlying error.
    #[error("tool '{tool}' failed")]
    Failed {
        /// The tool that was called.
        tool: String,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

/// `error`'s message followed by the message of each of its sources,
/// joined by `: `, for a log line or a tool result that must say why.
///
/// ```
/// use zr_types::{ToolError, error_chain};
/// let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
/// let error = ToolError::Failed { tool: "Read".into(), source: Box::new(io) };
/// assert_eq!(error_chain(&error), "tool 'Read' failed: no such file");
/// ```
#[must_use]
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
