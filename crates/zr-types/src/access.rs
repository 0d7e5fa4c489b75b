//! What a tool call would touch, declared by its tool before it runs, and
//! the confinement its child processes run in: the inputs of the engine's
//! effects boundary (DESIGN.md section 11).

use std::path::PathBuf;

/// One thing a call would touch, as its tool reads the call's input.
///
/// The engine checks each against the calling agent's places (writable
/// and readable roots, protected files) and the permission rules before
/// the call runs. Paths are absolute and lexically clean (no `.` or `..`),
/// resolved against the agent's folder the way the tool itself will open
/// them; the engine resolves symbolic links before it compares.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// Reads this file, or lists or searches this folder.
    Read(PathBuf),
    /// Creates, changes or deletes this file.
    Write(PathBuf),
    /// Runs this shell command (in the agent's sandbox, see
    /// [`Confinement`]).
    Command(String),
    /// Fetches from this host (lowercase; the URL's host as written).
    Fetch {
        /// The host name or address literal.
        host: String,
    },
}

/// What the processes a call starts may touch: the OS sandbox of Bash
/// and every child process of a tool (zr-process applies it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Confinement {
    /// Folders the processes may write beneath; empty: a read-only file
    /// system (only device files such as `/dev/null` can be written).
    pub writable: Vec<PathBuf>,
    /// Whether they may open network sockets (local sockets always work).
    pub network: bool,
}
