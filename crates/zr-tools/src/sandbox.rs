//! The OS sandbox of the processes tools start: a call's
//! [`Confinement`](zr_types::Confinement) applied through zr-process.

/// What this system lacks to confine a read-only agent's commands, in
/// words (`None`: nothing; commands are confined as asked).
#[must_use]
pub fn sandbox_missing() -> Option<String> {
    None
}
