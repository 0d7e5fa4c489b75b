//! Integration tests of zr-engine: providers against loopback replay
//! servers, and the agent loop end to end with the scripted provider and
//! real builtin tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod background;
mod compaction;
mod cron;
mod delegation;
mod effects;
mod engine;
mod exit_paths;
mod fork_cache;
mod history;
mod hooks;
mod openai;
mod orphans;
mod permissions;
mod preview;
mod replay;
mod resume;
mod support;
mod worktree;
