//! The one place in the workspace that uses `unsafe`: a child asks the
//! kernel to kill it when its parent goes.

use std::process::Command;

/// Arranges that the child `command` starts gets SIGKILL from the kernel
/// when the thread that spawned it ends, and that it does not start at all
/// if this process is already gone by the time it runs.
///
/// `PR_SET_PDEATHSIG` follows the spawning *thread*, not the process: a
/// child forked from a tokio blocking thread would be killed when that
/// thread retires after its idle timeout. Every spawn therefore happens on
/// the spawner thread (`spawner.rs`), which lives as long as the process,
/// so the signal comes exactly when the process dies, SIGKILL included.
/// The `getppid` check closes the window between `fork` and `prctl`: a
/// parent that died in it would never send the signal.
///
/// The setting survives `exec` and is cleared in the child's own children,
/// which is why every child also leads its own process group and the
/// watcher (`watcher.rs`) kills the group.
#[cfg(target_os = "linux")]
#[allow(
    unsafe_code,
    reason = "CommandExt::pre_exec; the workspace's one audited exception"
)]
pub(crate) fn die_with_parent(command: &mut Command) {
    use nix::errno::Errno;
    use nix::sys::signal::Signal;
    use nix::unistd::{Pid, getppid};
    use std::os::unix::process::CommandExt as _;

    let parent = Pid::this();
    // SAFETY: `pre_exec` runs the closure in the forked child before
    // `exec`, where only async-signal-safe work is allowed (other threads
    // of the parent may have held locks at the fork). The closure makes two
    // system calls, prctl(PR_SET_PDEATHSIG) and getppid, through nix's thin
    // wrappers, which neither allocate nor lock, and turns an errno into an
    // `io::Error` (`from_raw_os_error`, no allocation). It reads only the
    // copied `Pid` it owns and shares no memory with the parent's threads.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if getppid() != parent {
                // The parent died between fork and prctl.
                return Err(Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

/// Without a parent-death signal, the watcher alone kills the child's
/// group when this process dies.
#[cfg(not(target_os = "linux"))]
pub(crate) fn die_with_parent(_command: &mut Command) {}
