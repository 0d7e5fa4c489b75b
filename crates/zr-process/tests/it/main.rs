//! zr-process against real processes: groups, the death signal, the
//! watcher, the record, what a killed process left, and the OS sandbox.

#![allow(clippy::unwrap_used, reason = "test helpers")]

mod death;
mod record;
mod sandbox;
mod support;
