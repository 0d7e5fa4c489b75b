//! MCP start-up as a person sees it: a slow server is announced, a failing
//! one is reported in its own words (in one line: the line of its stderr
//! that names the error) with what to do, and the `cargo xtask deps` hint
//! is given only for servers in `.deps`.

use crate::support::{TempProject, everything_js, is_start_progress, raw_stderr, stdout, zr};

const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [{"text": "ok"}]}]}}"#;

fn run_with(mcp: &serde_json::Value, toml: &str) -> (String, TempProject) {
    let project = TempProject::new();
    project
        .write("script.json", SCRIPT)
        .write(".mcp.json", &mcp.to_string())
        .write("zr.toml", toml);
    let out = project.zr(&["run", "--script", "script.json", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", raw_stderr(&out));
    assert_eq!(stdout(&out), "ok\n");
    (raw_stderr(&out), project)
}

#[test]
fn a_server_slower_than_a_second_is_announced() {
    let slow = format!("sleep 1.5; exec node '{}' stdio", everything_js().display());
    let quick = everything_js().display().to_string();
    let mcp = serde_json::json!({"mcpServers": {
        "slow": {"command": "sh", "args": ["-c", slow]},
        "quick": {"command": "node", "args": [quick, "stdio"]}
    }});
    let (err, _project) = run_with(&mcp, "[mcp]\nconnect_timeout_secs = 60\n");
    assert!(err.contains("starting MCP server 'slow' ...\n"), "{err}");
    let started = err
        .lines()
        .find(|l| l.starts_with("MCP server 'slow' started ("))
        .unwrap_or_else(|| panic!("no started line: {err}"));
    let secs: f64 = started
        .trim_start_matches("MCP server 'slow' started (")
        .trim_end_matches(" s)")
        .parse()
        .unwrap();
    assert!(secs >= 1.5, "{started}");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn a_failing_server_is_reported_with_its_own_stderr() {
    let mcp = serde_json::json!({"mcpServers": {"github": {"command": "sh", "args": [
        "-c", "echo 'github server 1.0' >&2; echo 'GITHUB_TOKEN is not set' >&2; exit 1"
    ]}}});
    let (err, _project) = run_with(&mcp, "");
    assert!(
        err.contains(
            "warning: MCP server 'github' is left out, the run goes on without its tools: MCP server 'github' exited (exit status: 1); its last lines on stderr: \"github server 1.0\" \"GITHUB_TOKEN is not set\"\n  help: check that `sh` runs from the project folder and speaks MCP on stdio, or fix the server's entry in .mcp.json; `zr mcp list` shows every server's status\n"
        ),
        "{err}"
    );
    assert!(
        !err.contains("cargo xtask deps"),
        "not an example's server: {err}"
    );
}

#[test]
fn a_hanging_server_names_the_key_that_sets_the_limit() {
    let mcp = serde_json::json!({"mcpServers": {"db": {"command": "sh", "args": [
        "-c", "echo 'waiting for the database' >&2; exec sleep 600"
    ]}}});
    let (err, _project) = run_with(&mcp, "[mcp]\nconnect_timeout_secs = 2\n");
    assert!(err.contains("starting MCP server 'db' ...\n"), "{err}");
    assert!(
        err.contains(
            "MCP server 'db' did not complete the handshake within 2000 ms; its last lines on stderr: \"waiting for the database\"\n  help: check that `sh` runs from the project folder and speaks MCP on stdio, or fix the server's entry in .mcp.json; if it only needs longer to start, raise `[mcp] connect_timeout_secs` in zr.toml (now 2 s); `zr mcp list`"
        ),
        "{err}"
    );
    assert!(!err.contains("cargo xtask deps"), "{err}");
}

/// A server whose script does not exist (Node's `Cannot find module`
/// stack trace on its stderr): the warning is one line quoting Node's
/// error line, plus the help line with the `cargo xtask deps` hint (the
/// script was to be in `.deps`); `zr mcp list` and `ZR_LOG=debug` show
/// the stack trace.
#[test]
fn a_missing_server_script_is_one_warning_line_and_its_help() {
    let missing = everything_js()
        .parent()
        .unwrap()
        .join("no-such-entry.js")
        .display()
        .to_string();
    assert!(
        missing.contains("/.deps/"),
        "the test's servers live in .deps: {missing}"
    );
    let mcp = serde_json::json!({"mcpServers": {"fs": {"command": "node", "args": [missing]}}});
    let (err, project) = run_with(&mcp, "");
    // Everything but the run's own lines (`[root] ...`, `session ...`).
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !is_start_progress(l) && !l.starts_with('[') && !l.starts_with("session "))
        .collect();
    assert_eq!(
        lines,
        [
            format!(
                "warning: MCP server 'fs' is left out, the run goes on without its tools: MCP server 'fs' exited (exit status: 1); its error on stderr: \"Error: Cannot find module '{missing}'\""
            ),
            "  help: check that `node` runs from the project folder and speaks MCP on stdio, or fix the server's entry in .mcp.json; the servers in `.deps` are installed by `cargo xtask deps`; `zr mcp list` shows every server's status".to_owned(),
        ],
        "{err}"
    );

    // The stack trace is kept where one looks for the details.
    let list = project.zr(&["mcp", "list"]);
    let list = stdout(&list);
    assert!(
        list.contains("its last lines on stderr: ") && list.contains("\"Node.js v"),
        "{list}"
    );
    let debug = zr()
        .args(["run", "--script", "script.json", "hi"])
        .current_dir(project.path())
        .env("ZR_LOG", "debug")
        .output()
        .expect("the zr binary runs");
    let debug = raw_stderr(&debug);
    assert!(debug.contains("Node.js v"), "{debug}");
}
