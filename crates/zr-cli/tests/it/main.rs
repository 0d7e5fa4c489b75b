//! The `zr` binary, run as a child process: every command's output and
//! exit codes; and every crate wired together through the engine.

mod run;
mod scenario;
mod support;
mod wiring;
mod sessions;
mod signal;
