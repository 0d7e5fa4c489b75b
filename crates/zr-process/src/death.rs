//! The one place in the workspace that uses `unsafe`: what a child does
//! between `fork` and `exec`. It asks the kernel to kill it when its parent
//! goes, and (for [`crate::spawn_sandboxed`]) confines itself.

use std::process::Command;

use crate::sandbox::Confinement;

/// Arranges that the child `command` starts gets SIGKILL from the kernel
/// when the thread that spawned it ends, that it does not start at all if
/// this process is already gone by the time it runs, and, with a
/// `confinement`, that it runs confined.
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
///
/// The confinement (`sandbox.rs`) was built in the parent: the child sets
/// `PR_SET_NO_NEW_PRIVS`, enters the Landlock ruleset and installs the
/// seccomp program, three system calls, all inherited by whatever it
/// starts. A failure fails the spawn: the child never runs unconfined. The
/// `confinement` lives in the closure, which lives in `command`: dropping
/// `command` after the spawn closes the ruleset in the parent.
#[cfg(target_os = "linux")]
#[allow(
    unsafe_code,
    reason = "CommandExt::pre_exec; the workspace's one audited exception"
)]
pub(crate) fn before_exec(command: &mut Command, confinement: Option<Confinement>) {
    use nix::errno::Errno;
    use nix::sys::signal::Signal;
    use nix::unistd::{Pid, getppid};
    use std::os::unix::process::CommandExt as _;

    let parent = Pid::this();
    // SAFETY: `pre_exec` runs the closure in the forked child before
    // `exec`, where only async-signal-safe work is allowed (other threads
    // of the parent may have held locks at the fork). The closure makes
    // system calls only, and allocates and locks nothing:
    // prctl(PR_SET_PDEATHSIG), getppid and prctl(PR_SET_NO_NEW_PRIVS)
    // through nix's thin wrappers; landlock_restrict_self and seccomp
    // through `libc::syscall`. Errors become `io::Error`s from an errno
    // (`from_raw_os_error`, `last_os_error`: no allocation). It reads only
    // what it owns, copied into the child by the fork: the parent's `Pid`,
    // the ruleset's descriptor number (open in the child: fork copies the
    // table; close-on-exec, so gone after `exec`) and the seccomp program
    // (a `Vec` built in the parent; `Confinement::filter` only takes its
    // pointer and length). The `sock_fprog` it passes points into that
    // program, which outlives the call; the kernel copies it and writes
    // nothing back. Passing `0` as the flags of landlock_restrict_self and
    // seccomp asks for nothing beyond the documented default.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            if getppid() != parent {
                // The parent died between fork and prctl.
                return Err(Errno::ESRCH.into());
            }
            let Some(confinement) = &confinement else {
                return Ok(());
            };
            nix::sys::prctl::set_no_new_privs()?;
            let ruleset = confinement.ruleset_fd();
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0_u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(program) = confinement.filter() {
                let program: *const libc::sock_fprog = &program;
                if libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0_u32,
                    program,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Without a parent-death signal, the watcher alone kills the child's
/// group when this process dies. There is no confinement off Linux
/// (`spawn_sandboxed` refuses before getting here).
#[cfg(not(target_os = "linux"))]
pub(crate) fn before_exec(_command: &mut Command, confinement: Option<Confinement>) {
    if let Some(never) = confinement {
        match never {}
    }
}
