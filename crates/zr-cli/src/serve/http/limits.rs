//! The bounds of `zr mcp serve --http`, so that local clients cannot tie
//! it up: how long a connection may take to send a request's head (a
//! half-open connection, and one idle between requests, is closed after
//! it) and its body, how many connections are served at once, how long an
//! MCP session may sit unused and how many there are.
//!
//! A debug build reads `ZR_TEST_SERVE_LIMITS` (`key=value,...` with the
//! keys `head_ms`, `body_ms`, `connections`, `session_idle_ms`,
//! `sessions`) so that tests wait seconds, not minutes; it says so on
//! standard error. Release builds never read it.

use std::time::Duration;

/// The variable a debug build reads.
pub(crate) const VAR: &str = "ZR_TEST_SERVE_LIMITS";

/// The bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Time to send a request's head, counted from the connection's start
    /// or the end of its last response.
    pub(crate) head: Duration,
    /// Time to send a request's body.
    pub(crate) body: Duration,
    /// Connections served at once; more wait in the listen queue.
    pub(crate) connections: usize,
    /// Time an MCP session may sit with no request or stream open.
    pub(crate) session_idle: Duration,
    /// MCP sessions at once.
    pub(crate) sessions: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            head: Duration::from_secs(10),
            body: Duration::from_secs(30),
            connections: 256,
            session_idle: Duration::from_secs(30 * 60),
            sessions: 128,
        }
    }
}

impl Limits {
    /// The defaults, with a debug build's test override from `var`.
    pub(crate) fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Self {
        let mut limits = Self::default();
        if !cfg!(debug_assertions) {
            return limits;
        }
        let Some(text) = var(VAR) else {
            return limits;
        };
        for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
            let Some((key, value)) = pair.split_once('=') else {
                continue;
            };
            let Ok(n) = value.trim().parse::<u64>() else {
                continue;
            };
            let count = usize::try_from(n).unwrap_or(usize::MAX);
            match key.trim() {
                "head_ms" => limits.head = Duration::from_millis(n),
                "body_ms" => limits.body = Duration::from_millis(n),
                "connections" => limits.connections = count.max(1),
                "session_idle_ms" => limits.session_idle = Duration::from_millis(n),
                "sessions" => limits.sessions = count.max(1),
                _ => {}
            }
        }
        eprintln!("zr mcp serve: test limits from {VAR}: {limits:?}");
        limits
    }
}
