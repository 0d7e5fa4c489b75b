//! Errors of the capability model.

use thiserror::Error;

/// A tool pattern (allow or deny list entry) is not usable.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PatternError {
    /// The pattern is empty.
    #[error("tool pattern is empty; use '*' for every tool")]
    Empty,
    /// The pattern holds white space.
    #[error("tool pattern '{pattern}' contains white space; tool names never do")]
    Whitespace {
        /// The pattern.
        pattern: String,
    },
}

/// A permission mode name is not one of the six.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "unknown permission mode '{0}'; expected one of plan, dontAsk, default, auto, acceptEdits, bypassPermissions"
)]
pub struct UnknownPermissionMode(pub String);
