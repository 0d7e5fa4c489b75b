//! Starting a child that dies with zr: its own process group, the
//! parent-death signal, the owner variable, forked on the spawner thread
//! and entered in the table of live groups before anyone sees it.

use crate::group::ProcessGroup;
use crate::live::{self, OWNER_VAR};
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
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|e| std::io::Error::other(format!("no async runtime to start {label}: {e}")))?;
    let label = label.to_owned();
    on_spawner(move || {
        let mut command = command;
        prepare(command.as_std_mut());
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
    let label = label.to_owned();
    on_spawner(move || {
        let mut command = command;
        prepare(&mut command);
        let child = command.spawn()?;
        let pgid = child.id();
        live::add(pgid, &label);
        Ok((child, ProcessGroup::new(pgid)))
    })
}

/// The group, the death signal and the owner variable.
fn prepare(command: &mut std::process::Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    crate::death::die_with_parent(command);
    command.env(OWNER_VAR, live::owner_token());
}
