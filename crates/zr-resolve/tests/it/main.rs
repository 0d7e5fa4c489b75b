//! Integration tests of the resolver: scenario snapshots and properties.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod depth;
mod memo;
mod origins;
mod parsing;
mod properties;
mod scenarios;
mod world;
