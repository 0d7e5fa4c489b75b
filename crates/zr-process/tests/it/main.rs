//! zr-process against real processes: groups, the death signal, the
//! watcher, the record and what a killed process left.

#![allow(clippy::unwrap_used, reason = "test helpers")]

mod death;
mod record;
mod support;
