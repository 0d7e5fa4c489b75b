//! zr-mcp against real MCP servers: the reference servers, a fault server, the hub's sharing rules.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod capabilities;
mod conformance;
mod everything;
mod fault;
mod filesystem;
mod http;
mod hub;
mod probe;
mod sse;
mod support;
