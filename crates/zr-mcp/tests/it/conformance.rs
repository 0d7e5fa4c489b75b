//! The MCP conformance suite's client scenarios, run against `zr-mcp-conformance`.

use std::process::Command;

use crate::support::*;

fn run_scenario(scenario: &str) {
    let cli = dep("node/node_modules/@modelcontextprotocol/conformance/dist/index.js");
    // The suite writes its results under the working folder.
    let work = tempfile::tempdir().unwrap();
    let output = Command::new(node())
        .arg(cli)
        .args([
            "client",
            "--command",
            env!("CARGO_BIN_EXE_zr-mcp-conformance"),
        ])
        .args(["--scenario", scenario, "--timeout", "60000"])
        .current_dir(work.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    // The report goes to both streams (the summary to stderr).
    let report = strip_ansi(&format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ));
    assert!(
        output.status.success()
            && report.contains("OVERALL: PASSED")
            && report.contains(", 0 failed"),
        "conformance scenario {scenario} failed ({}):\n{report}",
        output.status
    );
}

/// The suite colours its report even when not on a terminal.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // Skip `ESC [ ... letter`.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn initialize() {
    run_scenario("initialize");
}

#[test]
fn tools_call() {
    run_scenario("tools_call");
}

#[test]
fn sse_retry() {
    run_scenario("sse-retry");
}
