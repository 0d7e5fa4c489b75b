//! zr-telemetry against receivers: a loopback OTLP/HTTP one
//! (`transport.rs`: gzip, headers, retries, JSON, trace context), and
//! Arize Phoenix over gRPC and HTTP, installed by `cargo xtask deps` into
//! `.deps/phoenix`, started on loopback by the test (zr-test-support's
//! `phoenix`), and read back through its own REST API. The tests that need
//! Phoenix are ignored: `cargo xtask ci` runs them in its receiver step,
//! once the background install is done. `nested` exports to a loopback
//! receiver of its own (zr-test-support's `receive`) and decodes the
//! requests with `opentelemetry-proto`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod nested;
mod session;
mod transport;
mod wire;
