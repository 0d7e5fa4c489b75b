//! Integration tests of zr-engine: providers against loopback replay
//! servers, and the agent loop end to end with the scripted provider and
//! real builtin tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod delegation;
mod engine;
mod exit_paths;
mod history;
mod openai;
mod replay;
mod resume;
mod support;
