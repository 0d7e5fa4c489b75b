//! Integration tests of zr-engine: the agent loop end to end with the
//! scripted provider and real builtin tools, and with the Anthropic,
//! OpenAI Chat Completions and Responses providers against a loopback
//! replay server (zr-test-support's).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod background;
mod budgets;
mod cache_tokens;
mod check;
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
