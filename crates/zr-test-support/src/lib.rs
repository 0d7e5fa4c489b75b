//! The workspace's test helpers, shared as a crate (a dev-dependency of
//! the crates whose tests use them, never a normal one: `cargo xtask tidy`
//! refuses that edge) instead of `#[path]` includes and copies:
//!
//! - [`replay`]: a loopback HTTP/1.1 server answering with scripted
//!   responses byte for byte (async, tokio), recording every request;
//!   with [`prompt_cache`] it plays the Messages API's prompt cache.
//!   Also the stream checks the provider tests share.
//! - [`loopback`]: the same idea on plain threads, answering by a closure
//!   of the request (for `zr` run as a child process, and benches).
//! - [`capture`]: every model request body either server receives, written
//!   to `$ZR_CAPTURED_BODIES` for `cargo xtask ci`'s validation against
//!   the official SDKs' request types.
//! - [`sse`]: model answers as the three wires stream them (Anthropic
//!   Messages, OpenAI Chat Completions, OpenAI Responses), and
//!   [`fixture`]: the recorded SSE fixtures in `fixtures/`.
//! - [`files`]: aged modification times, for the registries' benches.
//! - [`deps`]: where `cargo xtask deps` installed the outside programs.
//! - `restate` (feature `restate`): a real `restate-server` on loopback;
//!   [`proxy`]: a TCP proxy in front of workers.
//! - `bench` (feature `engine`): the engine benchmarks' session.
//! - `services` (feature `tools`): fake host services of the builtins.
//! - [`receive`]: the receiving side of OTLP/HTTP export requests;
//!   `phoenix` (feature `phoenix`): Arize Phoenix as a real receiver.
//!
//! The helpers speak bytes and JSON, and zr-types/zr-providers types
//! where a check needs them; zr-providers' own integration tests link
//! the same zr-providers library as this crate, so the types are one
//! (see docs/decisions.md).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    missing_docs,
    reason = "test helpers: a failed expectation is the test's failure"
)]

#[cfg(feature = "engine")]
pub mod bench;
pub mod capture;
pub mod deps;
pub mod files;
pub mod fixture;
pub mod loopback;
#[cfg(feature = "phoenix")]
pub mod phoenix;
pub mod prompt_cache;
pub mod proxy;
pub mod receive;
pub mod replay;
#[cfg(feature = "restate")]
pub mod restate;
#[cfg(feature = "tools")]
pub mod services;
pub mod sse;
