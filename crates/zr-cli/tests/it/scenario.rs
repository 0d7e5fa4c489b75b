//! `zr resolve --scenario FILE`: the scenario format's table, JSON and
//! errors.

use crate::support::{TempProject, stderr, stdout, zr_in_repo as zr};

#[test]
fn resolve_prints_the_example_as_a_table() {
    let out = zr(&["resolve", "--scenario", "examples/research-team.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).is_empty());
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn resolve_prints_the_documented_json() {
    let out = zr(&[
        "resolve",
        "--scenario",
        "examples/research-team.json",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
    // The exact bytes, key order included, of one agent.
    let one = zr(&[
        "resolve",
        "--scenario",
        "examples/research-team.json",
        "--format",
        "json",
        "--agent",
        "researcher",
    ]);
    assert!(one.status.success(), "{}", stderr(&one));
    insta::assert_snapshot!(stdout(&one));
    let agents: Vec<&str> = json["agents"]
        .as_array()
        .expect("agents is a list")
        .iter()
        .map(|a| a["agent"].as_str().expect("agent is a string"))
        .collect();
    assert_eq!(agents, ["root", "researcher", "writer", "helper"]);
}

#[test]
fn resolve_shows_one_agent() {
    let out = zr(&[
        "resolve",
        "--scenario",
        "examples/research-team.json",
        "--agent",
        "writer",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("== writer (general-purpose, background) =="),
        "{text}"
    );
    assert!(!text.contains("== root"));
}

#[test]
fn unknown_agent_lists_the_agents() {
    let out = zr(&[
        "resolve",
        "--scenario",
        "examples/research-team.json",
        "--agent",
        "nobody",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: no agent 'nobody' in examples/research-team.json\n  help: agents: root, researcher, writer, helper\n"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn bad_scenarios_exit_non_zero_naming_the_json_path() {
    let cases = [
        (
            "unknown_key.json",
            r#"{"options": {"custom_tools": [{"name": "x", "readonly": true}]}}"#,
            "scenario: at options.custom_tools[0].readonly: unknown field `readonly`",
        ),
        (
            "bad_name.json",
            r#"{"subagents": {"w": {"kind": "explore", "capabilities": {"custom_tools": [{"name": "a b"}]}}}}"#,
            "at subagents.w.capabilities.custom_tools[0].name: tool name 'a b' contains ' '",
        ),
        (
            "wrong_type.json",
            r#"{"policy": {"delegation": "no"}}"#,
            "at policy.delegation: invalid type: string \"no\", expected a boolean",
        ),
        (
            "reserved.json",
            r#"{"options": {"custom_tools": [{"name": "Task"}]}}"#,
            "cannot resolve agent 'root': custom tool 'Task' uses a reserved name (R1)",
        ),
        ("syntax.json", r#"{"options": "#, "EOF while parsing"),
    ];
    // The test's own folder: another copy of the suite may write files of
    // the same names at the same time.
    let folder = TempProject::new();
    for (name, text, expected) in cases {
        folder.write(name, text);
        let path = folder.path().join(name);
        let out = zr(&["resolve", "--scenario", path.to_str().expect("utf-8 path")]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{name}: {err}");
        assert!(
            err.contains(name),
            "{name}: the message names the file: {err}"
        );
        assert!(stdout(&out).is_empty(), "{name}");
    }
}

#[test]
fn missing_file_is_a_clear_error() {
    let out = zr(&["resolve", "--scenario", "no/such/file.json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: cannot read scenario file no/such/file.json: "),
        "{err}"
    );
    assert!(
        err.ends_with("\n  help: check the path (relative to the current folder)\n"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_with_clap_code() {
    let out = zr(&["resolve", "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid value 'yaml' for '--format <FORMAT>'"));
}
