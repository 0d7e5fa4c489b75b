//! The MCP conformance suite's client scenarios, run against `zr-mcp-conformance`.
//!
//! The suite's exit status and its "OVERALL: PASSED" line are not enough: a
//! client that does nothing at all passes `initialize` with "Passed: 0/0".
//! So each scenario is judged on the checks it must report as `SUCCESS`,
//! and a do-nothing client is run to prove the judgement can fail.
//!
//! [`SCENARIOS`] holds every client scenario of the pinned suite (a test
//! compares it with the suite's own `list`), each with its checks. They
//! run in parallel threads, a few at a time: each starts the suite's
//! Node.js process and its servers, and most of a scenario's time is
//! spent waiting.

use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::Mutex;

use crate::support::*;

/// Runs the suite's client `scenario` against `client`; the exit status
/// and the report (both streams, without colours).
fn run_suite(scenario: &str, client: &Path) -> (ExitStatus, String) {
    let cli = zr_test_support::deps::installed(
        "node/node_modules/@modelcontextprotocol/conformance/dist/index.js",
    );
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

/// The PKCE checks every authorization-code scenario makes.
const PKCE: [&str; 4] = [
    "pkce-code-challenge-sent",
    "pkce-s256-method-used",
    "pkce-code-verifier-sent",
    "pkce-verifier-matches-challenge",
];

/// A whole authorization-code flow: discovery, registration, the
/// authorization and token requests, then the token accepted.
const CODE_FLOW: [&str; 5] = [
    "authorization-server-metadata",
    "client-registration",
    "authorization-request",
    "token-request",
    "valid-bearer-token",
];

/// RFC 8707 `resource` in both requests, the same and well formed.
const RESOURCE: [&str; 4] = [
    "resource-parameter-in-authorization",
    "resource-parameter-in-token",
    "resource-parameter-valid-uri",
    "resource-parameter-consistency",
];

const INITIALIZE: &[&str] = &["mcp-client-initialization"];
const TOOLS_CALL: &[&str] = &["tool-add-numbers"];

/// One client scenario of the suite and the checks that must succeed.
struct Scenario {
    name: &'static str,
    checks: Vec<&'static str>,
}

fn scenario(name: &'static str, groups: &[&[&'static str]]) -> Scenario {
    Scenario {
        name,
        checks: groups.iter().flat_map(|g| g.iter().copied()).collect(),
    }
}

/// Every client scenario of `@modelcontextprotocol/conformance` 0.1.13, in
/// the suite's order.
fn scenarios() -> Vec<Scenario> {
    let path_prm: &[&str] = &["prm-pathbased-requested"];
    vec![
        scenario("initialize", &[INITIALIZE]),
        scenario("tools_call", &[TOOLS_CALL]),
        Scenario {
            name: "elicitation-sep1034-client-defaults",
            checks: vec![
                "client-elicitation-sep1034-string-default",
                "client-elicitation-sep1034-integer-default",
                "client-elicitation-sep1034-number-default",
                "client-elicitation-sep1034-enum-default",
                "client-elicitation-sep1034-boolean-default",
            ],
        },
        scenario(
            "sse-retry",
            &[&[
                "client-sse-graceful-reconnect",
                "client-sse-retry-timing",
                "client-sse-last-event-id",
            ]],
        ),
        scenario("auth/metadata-default", &[path_prm, &CODE_FLOW, &PKCE]),
        scenario("auth/metadata-var1", &[path_prm, &CODE_FLOW, &PKCE]),
        scenario("auth/metadata-var2", &[&CODE_FLOW, &PKCE]),
        scenario("auth/metadata-var3", &[&CODE_FLOW, &PKCE]),
        scenario(
            "auth/basic-cimd",
            &[
                &[
                    "cimd-client-id-used",
                    "authorization-request",
                    "token-request",
                    "valid-bearer-token",
                ],
                &PKCE,
            ],
        ),
        scenario(
            "auth/scope-from-www-authenticate",
            &[&["scope-from-www-authenticate", "valid-bearer-token"]],
        ),
        scenario(
            "auth/scope-from-scopes-supported",
            &[&["scope-from-scopes-supported", "valid-bearer-token"]],
        ),
        scenario(
            "auth/scope-omitted-when-undefined",
            &[&["scope-omitted-when-undefined", "valid-bearer-token"]],
        ),
        scenario(
            "auth/scope-step-up",
            &[&["scope-step-up-initial", "scope-step-up-escalation"]],
        ),
        scenario("auth/scope-retry-limit", &[&["scope-retry-limit"]]),
        scenario(
            "auth/token-endpoint-auth-basic",
            &[&["token-endpoint-auth-method"], &RESOURCE],
        ),
        scenario(
            "auth/token-endpoint-auth-post",
            &[&["token-endpoint-auth-method"], &RESOURCE],
        ),
        scenario(
            "auth/token-endpoint-auth-none",
            &[&["token-endpoint-auth-method"], &RESOURCE],
        ),
        scenario("auth/resource-mismatch", &[&["resource-mismatch-rejected"]]),
        scenario(
            "auth/pre-registration",
            &[&["pre-registration-auth", "valid-bearer-token"]],
        ),
        scenario(
            "auth/2025-03-26-oauth-metadata-backcompat",
            &[&CODE_FLOW, &PKCE],
        ),
        scenario(
            "auth/2025-03-26-oauth-endpoint-fallback",
            &[&[
                "client-registration",
                "authorization-request",
                "token-request",
            ]],
        ),
        scenario(
            "auth/client-credentials-jwt",
            &[&["client-credentials-jwt-verified", "valid-bearer-token"]],
        ),
        scenario(
            "auth/client-credentials-basic",
            &[&["client-credentials-basic-auth", "valid-bearer-token"]],
        ),
    ]
}

/// How many scenarios run at once.
const PARALLEL: usize = 6;

#[test]
fn the_table_holds_every_client_scenario_of_the_suite() {
    let cli = zr_test_support::deps::installed(
        "node/node_modules/@modelcontextprotocol/conformance/dist/index.js",
    );
    let output = Command::new(node()).arg(cli).arg("list").output().unwrap();
    let listing = strip_ansi(&String::from_utf8_lossy(&output.stdout));
    let client: Vec<&str> = listing
        .split("Client scenarios")
        .nth(1)
        .expect("a client section")
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .collect();
    let ours: Vec<&str> = scenarios().iter().map(|s| s.name).collect();
    assert_eq!(ours, client);
    assert_eq!(ours.len(), 23);
}

#[test]
fn every_client_scenario_passes_on_its_checks() {
    let queue = Mutex::new(scenarios());
    let failures = Mutex::new(Vec::new());
    let client = Path::new(env!("CARGO_BIN_EXE_zr-mcp-conformance"));
    std::thread::scope(|threads| {
        for _ in 0..PARALLEL {
            threads.spawn(|| {
                while let Some(s) = queue.lock().unwrap().pop() {
                    let (status, report) = run_suite(s.name, client);
                    if let Err(why) = judge(status, &report, &s.checks) {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{} failed ({why}):\n{report}", s.name));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn a_client_that_does_nothing_fails_the_judgement() {
    // `true` exits at once without connecting. The suite itself passes
    // `initialize` for it ("Passed: 0/0", exit status 0).
    let idle = Path::new("/bin/true");
    let all = scenarios();
    let named = |name: &str| {
        let s = all.iter().find(|s| s.name == name).expect("in the table");
        (s.name, &s.checks[..])
    };
    for (scenario, checks) in [
        ("initialize", INITIALIZE),
        ("tools_call", TOOLS_CALL),
        named("auth/metadata-default"),
        named("elicitation-sep1034-client-defaults"),
    ] {
        let (status, report) = run_suite(scenario, idle);
        assert!(
            judge(status, &report, checks).is_err(),
            "{scenario} passed with a client that does nothing:\n{report}"
        );
    }
}
