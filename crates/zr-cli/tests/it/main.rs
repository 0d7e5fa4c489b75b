//! The `zr` binary, run as a child process: every command's output and
//! exit codes; and every crate wired together through the engine.

mod inspect;
mod run;
mod scenario;
mod support;
mod wiring;
