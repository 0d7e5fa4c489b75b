//! zr-telemetry against a real receiver: Arize Phoenix, installed by
//! `cargo xtask deps` into `.deps/phoenix`, started on loopback by the
//! test, and read back through its own REST API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod phoenix;
mod session;
