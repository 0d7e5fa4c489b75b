//! Poison-tolerant locking shared by the engine's modules.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking the guard even when a thread panicked while holding
/// it: every engine state under a std lock stays valid between statements, so
/// a panic elsewhere must not make the session unusable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
