//! Why a child could not be sandboxed.

use std::path::PathBuf;

/// Why [`crate::spawn_sandboxed`] refused to start a child, carried inside
/// the `io::Error` it returns (`error.get_ref()` then `downcast_ref`). The
/// child never runs unconfined: every variant means it did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The kernel (or the platform) lacks what the policy needs; the caller
    /// decides what to do (a read-only agent loses Bash, say so).
    #[error("cannot sandbox the child: {missing}")]
    Unsupported {
        /// What is missing, in words.
        missing: String,
    },
    /// A writable root could not be opened (missing, unreadable).
    #[error("cannot sandbox the child: writable root {}", path.display())]
    Root {
        /// The root as given.
        path: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: std::io::Error,
    },
    /// Building the Landlock ruleset failed.
    #[error("cannot sandbox the child: the Landlock ruleset")]
    Landlock {
        /// The landlock crate's error.
        #[source]
        source: std::io::Error,
    },
    /// Building the seccomp filter failed.
    #[error("cannot sandbox the child: the seccomp filter")]
    Seccomp {
        /// The seccompiler crate's error.
        #[source]
        source: std::io::Error,
    },
}

impl From<SandboxError> for std::io::Error {
    fn from(error: SandboxError) -> Self {
        let kind = match error {
            SandboxError::Unsupported { .. } => std::io::ErrorKind::Unsupported,
            _ => std::io::ErrorKind::Other,
        };
        std::io::Error::new(kind, error)
    }
}
