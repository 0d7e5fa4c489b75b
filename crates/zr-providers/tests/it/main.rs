//! Integration tests of zr-providers: the Anthropic and OpenAI providers
//! against a loopback server that replays their real wire format
//! (zr-test-support's `replay`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod cache_model;
mod captured;
mod openai;
mod responses;
mod robustness;
