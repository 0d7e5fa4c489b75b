//! The `zr` binary, run as a child process: every command's output and
//! exit codes; and every crate wired together through the engine.

mod aliases;
mod builtin_flags;
mod config;
mod corpus;
mod durable;
mod example;
mod help;
mod init;
mod inspect;
mod loopback;
mod permissions;
mod provider;
mod reload;
mod run;
mod ruser;
mod scenario;
mod sessions;
mod signal;
mod skill_listing;
mod support;
mod timeline;
mod tree;
mod wiring;
