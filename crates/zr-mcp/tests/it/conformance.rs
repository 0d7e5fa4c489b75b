//! The MCP conformance suite's client scenarios, run against `zr-mcp-conformance`.
//!
//! The suite's exit status and its "OVERALL: PASSED" line are not enough: a
//! client that does nothing at all passes `initialize` with "Passed: 0/0".
//! So each scenario is judged on the checks it must report as `SUCCESS`,
//! and a do-nothing client is run to prove the judgement can fail.

use std::path::Path;
use std::process::{Command, ExitStatus};

use crate::support::*;

/// Runs the suite's client `scenario` against `client`; the exit status
/// and the report (both streams, without colours).
fn run_suite(scenario: &str, client: &Path) -> (ExitStatus, String) {
    let cli = dep("node/node_modules/@modelcontextprotocol/conformance/dist/index.js");
    // The suite writes its results under the working folder.
    let work = tempfile::tempdir().unwrap();
    let output = Command::new(node())
        .arg(cli)
        .arg("client")
        .arg("--command")
        .arg(client)
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
    (output.status, report)
}

/// Whether the suite passed the scenario: exit status 0, "OVERALL: PASSED",
/// every check it ran passed, and each of `checks` among them with
/// `SUCCESS`.
fn judge(status: ExitStatus, report: &str, checks: &[&str]) -> Result<(), String> {
    if !status.success() {
        return Err(format!("the suite exited with {status}"));
    }
    if !report.contains("OVERALL: PASSED") {
        return Err("no 'OVERALL: PASSED'".to_owned());
    }
    // "Passed: 3/3, 0 failed, 0 warnings"
    let summary = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("Passed: "))
        .ok_or("no 'Passed:' summary")?;
    let numbers: Vec<usize> = summary
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let [passed, ran, failed, ..] = numbers[..] else {
        return Err(format!("unreadable summary '{summary}'"));
    };
    if failed != 0 || passed != ran || ran < checks.len() {
        return Err(format!("summary '{summary}'"));
    }
    for check in checks {
        // "2026-11-30T08:42:53.751Z [mcp-client-initialization] SUCCESS ..."
        let succeeded = report.lines().any(|line| {
            line.split_once('[')
                .and_then(|(_, rest)| rest.split_once(']'))
                .is_some_and(|(id, outcome)| {
                    id.trim() == *check && outcome.trim_start().starts_with("SUCCESS")
                })
        });
        if !succeeded {
            return Err(format!("check '{check}' did not succeed"));
        }
    }
    Ok(())
}

fn run_scenario(scenario: &str, checks: &[&str]) {
    let client = Path::new(env!("CARGO_BIN_EXE_zr-mcp-conformance"));
    let (status, report) = run_suite(scenario, client);
    if let Err(why) = judge(status, &report, checks) {
        panic!("conformance scenario {scenario} failed ({why}):\n{report}");
    }
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

const INITIALIZE: &[&str] = &["mcp-client-initialization"];
const TOOLS_CALL: &[&str] = &["tool-add-numbers"];
const SSE_RETRY: &[&str] = &[
    "client-sse-graceful-reconnect",
    "client-sse-retry-timing",
    "client-sse-last-event-id",
];

#[test]
fn initialize() {
    run_scenario("initialize", INITIALIZE);
}

#[test]
fn tools_call() {
    run_scenario("tools_call", TOOLS_CALL);
}

#[test]
fn sse_retry() {
    run_scenario("sse-retry", SSE_RETRY);
}

const ELICITATION_DEFAULTS: &[&str] = &[
    "client-elicitation-sep1034-string-default",
    "client-elicitation-sep1034-integer-default",
    "client-elicitation-sep1034-number-default",
    "client-elicitation-sep1034-enum-default",
    "client-elicitation-sep1034-boolean-default",
];

#[test]
fn elicitation_defaults() {
    run_scenario("elicitation-sep1034-client-defaults", ELICITATION_DEFAULTS);
}

#[test]
fn a_client_that_does_nothing_fails_the_judgement() {
    // `true` exits at once without connecting. The suite itself passes
    // `initialize` for it ("Passed: 0/0", exit status 0).
    let idle = Path::new("/bin/true");
    for (scenario, checks) in [
        ("initialize", INITIALIZE),
        ("tools_call", TOOLS_CALL),
        ("elicitation-sep1034-client-defaults", ELICITATION_DEFAULTS),
    ] {
        let (status, report) = run_suite(scenario, idle);
        assert!(
            judge(status, &report, checks).is_err(),
            "{scenario} passed with a client that does nothing:\n{report}"
        );
    }
}
