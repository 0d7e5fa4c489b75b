//! A test-only hook: `ZR_TEST_SIGKILL_AFTER_RECORDS=N` makes a debug
//! build of `zr` send itself SIGKILL right after the Nth transcript record
//! of the run was written (counted over every agent of the session, in
//! the order the writes returned). The crash-matrix test kills `zr` at
//! many such points and resumes it.
//!
//! It cannot be set by accident: release builds never read the variable,
//! and a debug build that reads it says so on standard error before the
//! run starts.

use std::sync::atomic::{AtomicU64, Ordering};

/// The variable that arms the hook.
pub(crate) const VAR: &str = "ZR_TEST_SIGKILL_AFTER_RECORDS";

/// Kills the process after a number of records.
#[derive(Debug)]
pub(crate) struct KillAfter {
    left: AtomicU64,
}

impl KillAfter {
    /// The hook, when this is a debug build and `get(VAR)` is a positive
    /// number.
    pub(crate) fn from_env(get: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        if !cfg!(debug_assertions) {
            return None;
        }
        let n: u64 = get(VAR)?.trim().parse().ok().filter(|n| *n > 0)?;
        eprintln!(
            "warning: {VAR}={n}: this test build kills itself (SIGKILL) after {n} transcript records"
        );
        Some(Self {
            left: AtomicU64::new(n),
        })
    }

    /// One record was written: at the Nth, SIGKILL (no destructor, no
    /// flush, as a crash or `kill -9` would).
    pub(crate) fn record_written(&self) {
        if self.left.fetch_sub(1, Ordering::SeqCst) == 1 {
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
        }
    }
}
