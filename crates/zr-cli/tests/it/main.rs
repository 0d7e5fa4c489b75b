//! The `zr` binary, run as a child process: every command's output and
//! exit codes; and every crate wired together through the engine.

mod aliases;
mod ask;
mod attack;
mod builtin_flags;
#[path = "../../../zr-providers/tests/it/capture.rs"]
mod capture;
mod claude_code;
mod claude_fields;
mod claude_hooks;
mod claude_project;
mod config;
mod config_tool;
mod corpus;
mod cron;
mod durable;
mod escapes;
mod example;
mod hangs;
mod help;
mod hooks;
mod init;
mod inspect;
mod loopback;
mod mcp_caps;
mod mcp_names;
mod mcp_start;
mod nested;
mod oauth;
mod orphans;
mod otlp_receiver;
mod permissions;
mod protocol;
mod provider;
#[path = "../../../zr-telemetry/benches/fanout/receive.rs"]
mod receive;
mod reload;
#[path = "../../../zr-restate/tests/it/proxy.rs"]
#[allow(
    dead_code,
    reason = "zr-restate's proxy, shared; not every helper is used here"
)]
mod restate_proxy;
#[path = "../../../zr-restate/tests/it/server.rs"]
#[allow(
    dead_code,
    reason = "zr-restate's test server, shared; not every helper is used here"
)]
mod restate_server;
mod run;
mod ruser;
mod scale_out;
mod scenario;
mod serve;
mod sessions;
mod signal;
mod skill_listing;
mod support;
mod timeline;
mod tree;
mod web_search;
mod wiring;
mod worker;
