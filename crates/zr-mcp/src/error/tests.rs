//! The one-line headline of a server's error: the line of its stderr that
//! names the error, not the stack trace around it.

use std::os::unix::process::ExitStatusExt as _;
use std::process::ExitStatus;

use zr_types::ServerName;

use super::McpError;

fn exited(stderr: &[&str]) -> McpError {
    McpError::Exited {
        server: "fs".parse::<ServerName>().expect("a valid server name"),
        status: ExitStatus::from_raw(256),
        stderr: stderr.iter().map(|l| (*l).to_owned()).collect(),
    }
}

/// What Node 20 writes for a script that does not exist, as the stderr
/// tail keeps it (indentation trimmed).
const NODE_MISSING_SCRIPT: &[&str] = &[
    "^",
    "Error: Cannot find module '/x/dist/index.js'",
    "at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
    "at Module._load (node:internal/modules/cjs/loader:1051:27)",
    "at node:internal/main/run_main_module:28:49 {",
    "code: 'MODULE_NOT_FOUND',",
    "requireStack: []",
    "}",
    "Node.js v20.20.2",
];

#[test]
fn a_node_stack_trace_is_reduced_to_its_error_line() {
    let error = exited(NODE_MISSING_SCRIPT);
    assert_eq!(
        error.headline(),
        "MCP server 'fs' exited (exit status: 1); its error on stderr: \"Error: Cannot find module '/x/dist/index.js'\""
    );
    // Display keeps every line.
    assert!(error.to_string().contains("Node.js v20.20.2"));
}

#[test]
fn the_error_lines_of_node_esm_python_and_rust_are_found() {
    for (line, stack) in [
        (
            "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /x/index.js",
            "at packageResolve (node:internal/modules/esm/resolve:854:9)",
        ),
        (
            "ModuleNotFoundError: No module named 'mcp'",
            "File \"/x/server.py\", line 1, in <module>",
        ),
        (
            "error: unexpected argument '--port' found",
            "Usage: server [OPTIONS]",
        ),
    ] {
        let headline = exited(&["Traceback (most recent call last):", stack, line]).headline();
        assert!(
            headline.ends_with(&format!("; its error on stderr: {line:?}")),
            "{headline}"
        );
    }
}

#[test]
fn without_an_error_line_the_last_lines_stay() {
    let error = exited(&["github server 1.0", "GITHUB_TOKEN is not set"]);
    assert_eq!(error.headline(), error.to_string());
    assert_eq!(
        exited(&[]).headline(),
        "MCP server 'fs' exited (exit status: 1)"
    );
}
