//! Shared test helpers: where the external servers are, configurations for them, process counting.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use zr_mcp::{HubOptions, McpConfig, McpHub, ServerConfig, StdioConfig, TransportConfig};

/// The folder `cargo xtask deps` installs the external servers into.
pub(crate) fn deps_dir() -> PathBuf {
    match std::env::var_os("ZR_DEPS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.deps"),
    }
}

/// A file inside the deps folder; fails the test (never skips it) when it
/// is missing.
pub(crate) fn dep(relative: &str) -> PathBuf {
    let path = deps_dir().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run `cargo xtask deps` first (or set ZR_DEPS_DIR)",
        path.display()
    );
    path
}

pub(crate) fn node() -> String {
    "node".to_owned()
}

pub(crate) fn everything_js() -> String {
    dep("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

pub(crate) fn filesystem_js() -> String {
    dep("node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
        .display()
        .to_string()
}

pub(crate) fn python() -> String {
    dep("venv/bin/python").display().to_string()
}

pub(crate) fn fault_server_py() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers/fault_server.py")
        .display()
        .to_string()
}

pub(crate) fn probe_server_py() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/probe_server.py")
        .display()
        .to_string()
}

/// A marker unique to this test process and call, put on a server's command
/// line so that its processes can be counted.
pub(crate) fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "--zr-test-marker={}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

pub(crate) fn stdio(name: &str, command: String, args: Vec<String>) -> ServerConfig {
    ServerConfig::new(
        name.parse().unwrap(),
        TransportConfig::Stdio(StdioConfig::new(command).with_args(args)),
    )
}

/// server-everything over stdio, marked.
pub(crate) fn everything(name: &str, marker: &str) -> ServerConfig {
    stdio(
        name,
        node(),
        vec![everything_js(), "stdio".into(), marker.into()],
    )
}

/// The fault server, marked.
pub(crate) fn fault(name: &str, marker: &str) -> ServerConfig {
    stdio(name, python(), vec![fault_server_py(), marker.into()])
}

pub(crate) fn options() -> HubOptions {
    HubOptions::new(std::env::temp_dir())
        // Node and Python start slowly on a loaded machine.
        .with_connect_timeout(Duration::from_secs(30))
}

pub(crate) fn hub(servers: Vec<ServerConfig>, options: HubOptions) -> McpHub {
    McpHub::new(McpConfig::from_servers(servers), options)
}

/// Live (not zombie) processes whose command line holds `marker`.
pub(crate) fn count_processes(marker: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        panic!("/proc is not readable");
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .count()
}

/// Waits until `check` holds, up to `limit`; returns whether it did.
pub(crate) async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if check() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) fn text_of(output: &zr_types::ToolOutput) -> String {
    output
        .content
        .iter()
        .filter_map(|c| match c {
            zr_types::ToolResultContent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
