//! Integration tests of zr-providers: the Anthropic and OpenAI providers
//! against a loopback server that replays their real wire format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod cache_model;
mod capture;
mod captured;
mod openai;
mod prompt_cache;
mod replay;
mod responses;
mod robustness;
