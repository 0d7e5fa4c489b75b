//! The OS sandbox of the processes tools start: a call's [`Confinement`]
//! applied through zr-process (Landlock and seccomp on Linux).
//!
//! A confined call's process, and whatever it starts, writes only beneath
//! the confinement's writable folders (nowhere, for a read-only agent) and
//! opens no network socket unless the network is on. Where the kernel
//! cannot confine, the engine refuses a read-only agent's commands
//! ([`sandbox_missing`]); a writing agent's run unconfined, with a warning
//! once per process: the file tools' boundary still holds for them.

use std::sync::Once;

use zr_process::{ProcessGroup, Sandbox};
use zr_types::Confinement;

/// What this system lacks to confine commands, in words (`None`: nothing;
/// commands are confined as asked).
#[must_use]
pub fn sandbox_missing() -> Option<String> {
    zr_process::sandbox_support().missing()
}

/// zr-process' sandbox for `confinement`.
fn sandbox(confinement: &Confinement) -> Sandbox {
    let sandbox = if confinement.writable.is_empty() {
        Sandbox::read_only()
    } else {
        Sandbox::writable(confinement.writable.iter().cloned())
    };
    sandbox.with_network(confinement.network)
}

/// Whether to confine a process of a call with `confinement`: not without
/// one, nor a writing agent's where the kernel cannot (said once).
fn confined(confinement: Option<&Confinement>) -> Option<Sandbox> {
    let confinement = confinement?;
    if !confinement.writable.is_empty()
        && let Some(missing) = sandbox_missing()
    {
        static WARNED: Once = Once::new();
        WARNED.call_once(|| {
            tracing::warn!(%missing, "commands run without an OS sandbox: this system cannot confine them");
        });
        return None;
    }
    Some(sandbox(confinement))
}

/// Starts `command` (tokio) as zr-process does, confined as the call says.
pub(crate) fn spawn(
    command: tokio::process::Command,
    label: &str,
    confinement: Option<&Confinement>,
) -> std::io::Result<(tokio::process::Child, ProcessGroup)> {
    match confined(confinement) {
        Some(sandbox) => zr_process::spawn_sandboxed(command, label, &sandbox),
        None => zr_process::spawn(command, label),
    }
}

/// Starts `command` (std) as zr-process does, confined as the call says.
pub(crate) fn spawn_std(
    command: std::process::Command,
    label: &str,
    confinement: Option<&Confinement>,
) -> std::io::Result<(std::process::Child, ProcessGroup)> {
    match confined(confinement) {
        Some(sandbox) => zr_process::spawn_std_sandboxed(command, label, &sandbox),
        None => zr_process::spawn_std(command, label),
    }
}
