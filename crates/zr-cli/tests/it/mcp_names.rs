//! MCP tools as zr names and trusts them, with real servers
//! (`servers/tools.py`, whose tools are given on its command line): a tool
//! that says it is both read-only and destructive is not read-only (plan
//! mode refuses it); two servers whose names make the same tool name both
//! keep their tool, the later one renamed, with a warning naming both.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{TempProject, repo, stderr, stdout};

/// A `.mcp.json` entry of `servers/tools.py` with `tools`; each tool writes
/// `NAME.ran` into `folder` when it runs.
fn tools_server(folder: &Path, tools: &[Value]) -> Value {
    std::fs::create_dir_all(folder).expect("the server's folder");
    let script = repo().join("crates/zr-cli/tests/it/servers/tools.py");
    let mut args = vec![json!(script), json!(folder)];
    args.extend(tools.iter().map(|t| json!(t.to_string())));
    json!({"command": zr_test_support::deps::installed("venv/bin/python"), "args": args})
}

/// The root calls each of `tools` (no input) in one turn each, then
/// answers "done".
fn script(tools: &[&str]) -> String {
    let mut turns: Vec<Value> = tools
        .iter()
        .map(|t| json!({"tool_calls": [{"name": t, "input": {}}]}))
        .collect();
    turns.push(json!({"text": "done"}));
    json!({"agents": {"root": [{"turns": turns}]}}).to_string()
}

#[test]
fn a_tool_both_read_only_and_destructive_does_not_run_in_plan_mode() {
    let project = TempProject::new();
    let ran = project.path().join("ran");
    let servers = json!({"mcpServers": {"srv": tools_server(&ran, &[
        json!({"name": "peek", "annotations": {"readOnlyHint": true}}),
        json!({"name": "wipe", "annotations": {"readOnlyHint": true, "destructiveHint": true}}),
    ])}});
    project
        .write(".mcp.json", &servers.to_string())
        .write(
            "zr.toml",
            "[policy]\nlazy = \"never\"\n\n[permissions]\nmode = \"plan\"\n",
        )
        .write("s.json", &script(&["mcp__srv__peek", "mcp__srv__wipe"]));
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        ran.join("peek.ran").exists(),
        "a read-only tool runs: {err}"
    );
    assert!(
        !ran.join("wipe.ran").exists(),
        "a destructive tool ran in plan mode: {err}"
    );
    assert!(err.contains("[root] mcp__srv__wipe denied"), "{err}");
}

#[test]
fn servers_whose_tool_names_collide_keep_both_tools_and_say_so() {
    let project = TempProject::new();
    let (first, second) = (project.path().join("first"), project.path().join("second"));
    // `trusted_` + `x` and `trusted` + `_x` both make mcp__trusted___x.
    let servers = format!(
        "{{\"mcpServers\": {{\"trusted_\": {}, \"trusted\": {}}}}}",
        tools_server(&first, &[json!({"name": "x"})]),
        tools_server(&second, &[json!({"name": "_x"})]),
    );
    project.write(".mcp.json", &servers).write(
        "zr.toml",
        "[policy]\nlazy = \"never\"\n\n[permissions]\nmode = \"bypassPermissions\"\n",
    );
    let out = project.zr_ok(&["resolve"]);
    let err = stderr(&out);
    let warning = err
        .lines()
        .find(|l| l.contains("mcp__trusted___x"))
        .unwrap_or_else(|| panic!("no warning about the collision: {err}"));
    assert_eq!(
        warning,
        "warning: MCP servers 'trusted_' and 'trusted' both make the tool name mcp__trusted___x: 'trusted_''s tool 'x' keeps it, 'trusted''s tool '_x' is named mcp__trusted___x_80622f4b"
    );
    // Both run: the first under the name, the second under its new name.
    project.write(
        "s.json",
        &script(&["mcp__trusted___x", "mcp__trusted___x_80622f4b"]),
    );
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(first.join("x.ran").exists(), "{err}");
    assert!(second.join("_x.ran").exists(), "{err}");
    // `zr mcp list` shows the names the run uses, and says why.
    let out = project.zr(&["mcp", "list"]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.contains("mcp__trusted___x_80622f4b"), "{text}");
    assert!(
        err.contains("both make the tool name mcp__trusted___x"),
        "{err}"
    );
}
