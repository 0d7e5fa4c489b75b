//! Starting a child that dies with zr: its own process group, the
//! parent-death signal, the owner variable, forked on the spawner thread
//! and entered in the table of live groups before anyone sees it; and,
//! when asked, confined by the OS sandbox.

use crate::group::ProcessGroup;
use crate::live::{self, OWNER_VAR};
use crate::sandbox::{self, Confinement, Sandbox};
use crate::spawner::on_spawner;

/// Starts `command` as a tokio child that dies with this process, and
/// returns it with the guard of its process group.
///
/// What is added to `command`: it leads a new process group (so a kill
/// reaches what it starts), gets SIGKILL from the kernel when this process
/// dies (Linux; even on SIGKILL of zr), carries `ZR_OWNER` (see
/// [`OWNER_VAR`]), and its group is known to the watcher, which kills the
/// group when this process dies. Everything else (arguments, environment,
/// pipes, `kill_on_drop`) is the caller's.
///
/// `label` names the child in the record (`Bash`, `MCP server github`).
///
/// Must be called inside a tokio runtime (the child is registered with it).
/// Blocks for as long as the fork takes, like [`tokio::process::Command::spawn`].
///
/// # Errors
///
/// The spawn's own error (program not found, bad working directory); an
/// error when called outside a runtime.
pub fn spawn(
    command: tokio::process::Command,
    label: &str,
) -> std::io::Result<(tokio::process::Child, ProcessGroup)> {
    spawn_confined(command, label, None)
}

/// [`spawn`], with the child and everything it starts confined by
/// `sandbox` (see [`Sandbox`] for what it allows): it may
/// write only beneath `sandbox.writable` and the [`crate::DEVICES`], and
/// open no network socket unless `sandbox.network`.
///
/// The ruleset and filter are built here, on the calling thread, before
/// the fork; the child applies them before `exec`.
///
/// # Errors
///
/// [`spawn`]'s errors; and, before anything starts, an error carrying a
/// [`crate::SandboxError`] (kind `Unsupported` when this kernel cannot
/// enforce `sandbox`, see [`crate::sandbox_support`]) or when a writable
/// root cannot be opened. The child never runs unconfined.
pub fn spawn_sandboxed(
    command: tokio::process::Command,
    label: &str,
    sandbox: &Sandbox,
) -> std::io::Result<(tokio::process::Child, ProcessGroup)> {
    let confinement = sandbox::confinement(sandbox)?;
    spawn_confined(command, label, Some(confinement))
}

fn spawn_confined(
    command: tokio::process::Command,
    label: &str,
    confinement: Option<Confinement>,
) -> std::io::Result<(tokio::process::Child, ProcessGroup)> {
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|e| std::io::Error::other(format!("no async runtime to start {label}: {e}")))?;
    let label = label.to_owned();
    on_spawner(move || {
        let mut command = command;
        prepare(command.as_std_mut(), confinement);
        let _entered = handle.enter();
        let child = command.spawn()?;
        let pgid = child
            .id()
            .ok_or_else(|| std::io::Error::other("the child has no pid"))?;
        live::add(pgid, &label);
        Ok((child, ProcessGroup::new(pgid)))
    })
}

/// [`spawn`] for a `std` child (one the caller reaps itself, for example to
/// keep a group id reserved by an unreaped leader). Needs no runtime.
///
/// # Errors
///
/// The spawn's own error.
pub fn spawn_std(
    command: std::process::Command,
    label: &str,
) -> std::io::Result<(std::process::Child, ProcessGroup)> {
    spawn_std_confined(command, label, None)
}

/// [`spawn_sandboxed`] for a `std` child. Needs no runtime.
///
/// # Errors
///
/// As [`spawn_sandboxed`].
pub fn spawn_std_sandboxed(
    command: std::process::Command,
    label: &str,
    sandbox: &Sandbox,
) -> std::io::Result<(std::process::Child, ProcessGroup)> {
    let confinement = sandbox::confinement(sandbox)?;
    spawn_std_confined(command, label, Some(confinement))
}

fn spawn_std_confined(
    command: std::process::Command,
    label: &str,
    confinement: Option<Confinement>,
) -> std::io::Result<(std::process::Child, ProcessGroup)> {
    let label = label.to_owned();
    on_spawner(move || {
        let mut command = command;
        prepare(&mut command, confinement);
        let child = command.spawn()?;
        let pgid = child.id();
        live::add(pgid, &label);
        Ok((child, ProcessGroup::new(pgid)))
    })
}

/// The group, the death signal, the confinement and the owner variable.
/// The confinement moves into `command`, dropped (its ruleset closed) with
/// it once the child started.
fn prepare(command: &mut std::process::Command, confinement: Option<Confinement>) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    crate::death::before_exec(command, confinement);
    command.env(OWNER_VAR, live::owner_token());
}
