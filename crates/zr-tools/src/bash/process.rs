//! Process groups: signalling a whole group, and a guard that kills the
//! group when dropped (cancellation of a call, end of a background shell).

/// A signal to send to a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sig {
    /// Ask to terminate.
    Term,
    /// Kill.
    Kill,
}

/// Sends `sig` to every process of the group `pgid`. A group that is gone
/// already is not an error.
#[cfg(unix)]
pub(crate) fn signal_group(pgid: u32, sig: Sig) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pgid) else {
        return;
    };
    // pid 0 or 1 would address the caller's own group or init: never.
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

/// Without process groups, nothing to signal beyond the direct child (which
/// `kill_on_drop` covers).
#[cfg(not(unix))]
pub(crate) fn signal_group(_pgid: u32, _sig: Sig) {}

/// Kills a process group when dropped.
#[derive(Debug)]
pub(crate) struct GroupGuard {
    pgid: Option<u32>,
}

impl GroupGuard {
    /// Guards the group led by the child with pid `pgid`.
    pub(crate) fn new(pgid: Option<u32>) -> Self {
        Self { pgid }
    }

    /// The group id.
    pub(crate) fn pgid(&self) -> Option<u32> {
        self.pgid
    }

    /// Stops guarding: the group is never signalled again (its id may be
    /// reused once its leader is reaped).
    #[cfg_attr(
        not(target_os = "linux"),
        expect(dead_code, reason = "only Linux keeps leaders unreaped")
    )]
    pub(crate) fn disarm(&mut self) {
        self.pgid = None;
    }

    /// Signals the group now.
    pub(crate) fn signal(&self, sig: Sig) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, sig);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(Sig::Kill);
    }
}
