//! A process group zr started, killed (whole group) when its guard is
//! dropped, and signalling a group by id.

use std::sync::atomic::{AtomicU32, Ordering};

/// A signal to send to a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sig {
    /// Ask to terminate (SIGTERM).
    Term,
    /// Kill (SIGKILL).
    Kill,
}

/// Sends `sig` to every process of the group `pgid`. A group that is gone
/// already is not an error; ids 0 and 1 (the caller's own group, init) are
/// never signalled.
#[cfg(unix)]
pub fn signal_group(pgid: u32, sig: Sig) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pgid) else {
        return;
    };
    if raw <= 1 {
        return;
    }
    let signal = match sig {
        Sig::Term => Signal::SIGTERM,
        Sig::Kill => Signal::SIGKILL,
    };
    if let Err(err) = killpg(Pid::from_raw(raw), signal) {
        tracing::trace!(pgid, ?sig, %err, "signalling a process group failed");
    }
}

/// Without process groups there is nothing to signal beyond the direct
/// child, which its owner kills.
#[cfg(not(unix))]
pub fn signal_group(_pgid: u32, _sig: Sig) {}

/// The process group of a child started by [`crate::spawn`]: its leader is
/// the child, its id the child's pid.
///
/// While the guard is armed, the group is in this process's table of live
/// groups: the watcher kills it if this process dies, and the record file
/// (see [`crate::record_in`]) lists it. Dropping the guard sends SIGKILL to
/// the whole group and takes it out of the table.
///
/// A group id is the leader's pid: once the leader is reaped and the group
/// is empty, the number may name someone else's process. Call
/// [`ProcessGroup::release`] (or drop the guard) before or right after the
/// leader is reaped, never much later.
#[derive(Debug)]
pub struct ProcessGroup {
    /// 0 once released.
    pgid: AtomicU32,
}

impl ProcessGroup {
    /// Guards the group `pgid`, already in the table.
    pub(crate) fn new(pgid: u32) -> Self {
        Self {
            pgid: AtomicU32::new(pgid),
        }
    }

    /// The group id, until released.
    pub fn pgid(&self) -> Option<u32> {
        match self.pgid.load(Ordering::Acquire) {
            0 => None,
            pgid => Some(pgid),
        }
    }

    /// Sends `sig` to the whole group now (nothing once released).
    pub fn signal(&self, sig: Sig) {
        if let Some(pgid) = self.pgid() {
            signal_group(pgid, sig);
        }
    }

    /// Stops guarding: the group is never signalled again and leaves the
    /// table (the watcher and the record forget it). For a leader that is
    /// about to be reaped, after the group was killed.
    pub fn release(&self) {
        let pgid = self.pgid.swap(0, Ordering::AcqRel);
        if pgid != 0 {
            crate::live::remove(pgid);
        }
    }

    /// SIGKILL to the whole group, then [`ProcessGroup::release`]: what to
    /// do once the leader has exited (what it left in its group dies with
    /// it; the id cannot have been reused while the leader was unreaped).
    pub fn end(&self) {
        self.signal(Sig::Kill);
        self.release();
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.end();
    }
}
