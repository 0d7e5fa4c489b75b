//! zr-telemetry against receivers: a loopback OTLP/HTTP one
//! (`transport.rs`: gzip, headers, retries, JSON, trace context), and
//! Arize Phoenix over gRPC and HTTP, installed by `cargo xtask deps` into
//! `.deps/phoenix`, started on loopback by the test, and read back through
//! its own REST API. The tests that need Phoenix are ignored: `cargo xtask
//! ci` runs them in its receiver step, once the background install is
//! done.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../zr-providers/tests/it/capture.rs"]
mod capture;
mod phoenix;
#[path = "../../../zr-providers/tests/it/prompt_cache.rs"]
#[allow(
    dead_code,
    reason = "zr-providers' model of the prompt cache, which its loopback server uses"
)]
mod prompt_cache;
#[path = "../../../zr-providers/tests/it/replay.rs"]
#[allow(
    dead_code,
    reason = "zr-providers' loopback server, shared rather than copied; these tests use part of it"
)]
mod replay;
mod session;
mod transport;
mod wire;
