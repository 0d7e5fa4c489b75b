//! Integration tests of zr-engine: the agent loop end to end with the
//! scripted provider and real builtin tools, and with the Anthropic,
//! OpenAI Chat Completions and Responses providers against a loopback
//! replay server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod background;
mod budgets;
mod cache_tokens;
#[path = "../../../zr-providers/tests/it/capture.rs"]
mod capture;
mod compaction;
mod cost;
mod cron;
mod cut_off;
mod delegation;
mod effects;
mod engine;
mod exit_paths;
mod fan_out_cache;
mod fork_cache;
mod history;
mod hook_events;
mod hooks;
mod instructions;
mod nested;
mod nested_budgets;
mod openai_fan_out;
mod orphans;
mod permissions;
mod preview;
#[path = "../../../zr-providers/tests/it/prompt_cache.rs"]
#[allow(
    dead_code,
    reason = "zr-providers' model of the prompt cache, shared with its loopback server"
)]
mod prompt_cache;
#[path = "../../../zr-providers/tests/it/replay.rs"]
#[allow(
    dead_code,
    reason = "zr-providers' loopback server, shared rather than copied; the engine's tests use part of it"
)]
mod replay;
mod request_size;
mod responses;
mod resume;
mod resume_bounds;
mod services;
mod snapshot;
mod structured;
mod support;
mod task_model;
mod timeouts;
mod tracer;
mod tree_slots;
mod turn_calls;
mod type_listing;
mod worktree;
