//! zr.toml `[permissions]`: a call the lists do not allow is denied (the
//! progress output shows it, the tool does not run); `allow` lets it run;
//! `deny` refuses even read-only tools, in every mode; the modes still
//! apply.

use crate::support::{TempProject, stderr, stdout};

/// The root calls `tool` with `input`, then answers "done".
fn script(tool: &str, input: &str) -> String {
    format!(
        r#"{{"agents": {{"root": [{{"turns": [
            {{"tool_calls": [{{"name": "{tool}", "input": {input}}}]}},
            {{"text": "done"}}]}}]}}}}"#
    )
}

const BASH: &str = r#"{"command": "echo hi > made.txt"}"#;

/// Runs the script in a project with `toml`; returns (stderr lines from
/// the root, whether made.txt exists).
fn run(toml: &str, tool: &str, input: &str) -> (Vec<String>, bool) {
    let project = TempProject::new();
    project
        .write("zr.toml", toml)
        .write("s.json", &script(tool, input));
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
    let lines = stderr(&out)
        .lines()
        .filter(|l| l.contains("denied"))
        .map(str::to_owned)
        .collect();
    (lines, project.path().join("made.txt").exists())
}

#[test]
fn a_tool_not_in_allow_is_denied_in_default_mode() {
    let (lines, made) = run("", "Bash", BASH);
    assert_eq!(
        lines,
        [
            "[root] Bash denied: permission to run 'Bash' was denied: 'Bash' is not in zr.toml [permissions] allow; add it there to let it run (or set mode = \"bypassPermissions\")"
        ]
    );
    assert!(!made);
}

#[test]
fn allow_lets_it_run() {
    let (lines, made) = run("[permissions]\nallow = [\"Bash\"]\n", "Bash", BASH);
    assert_eq!(lines, Vec::<String>::new());
    assert!(made);
}

#[test]
fn bypass_permissions_runs_it() {
    let (lines, made) = run(
        "[permissions]\nmode = \"bypassPermissions\"\n",
        "Bash",
        BASH,
    );
    assert_eq!(lines, Vec::<String>::new());
    assert!(made);
}

#[test]
fn deny_beats_allow_and_the_mode() {
    let toml = "[permissions]\nmode = \"bypassPermissions\"\nallow = [\"*\"]\ndeny = [\"Ba*\"]\n";
    let (lines, made) = run(toml, "Bash", BASH);
    assert_eq!(
        lines,
        [
            "[root] Bash denied: permission to run 'Bash' was denied: it matches \"Ba*\" in zr.toml [permissions] deny; remove it from there to let it run"
        ]
    );
    assert!(!made);
}

#[test]
fn deny_refuses_a_read_only_tool() {
    let (lines, _) = run(
        "[permissions]\ndeny = [\"Glob\"]\n",
        "Glob",
        r#"{"pattern": "*"}"#,
    );
    assert_eq!(
        lines,
        [
            "[root] Glob denied: permission to run 'Glob' was denied: it matches \"Glob\" in zr.toml [permissions] deny; remove it from there to let it run"
        ]
    );
}

#[test]
fn read_only_tools_run_without_an_allow_entry() {
    let (lines, _) = run("", "Glob", r#"{"pattern": "*"}"#);
    assert_eq!(lines, Vec::<String>::new());
}

#[test]
fn the_denial_is_an_event_in_json() {
    let project = TempProject::new();
    project.write("s.json", &script("Bash", BASH));
    let out = project.zr(&["run", "--json", "--script", "s.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let denied: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["type"] == "permission_denied")
        .collect();
    assert_eq!(denied.len(), 1, "{}", stdout(&out));
    assert_eq!(denied[0]["tool"], "Bash");
    assert_eq!(
        denied[0]["reason"],
        "permission to run 'Bash' was denied: 'Bash' is not in zr.toml [permissions] allow; add it there to let it run (or set mode = \"bypassPermissions\")"
    );
}

#[test]
fn todo_write_runs_without_an_allow_entry() {
    let input = r#"{"todos": [{"content": "look", "status": "pending", "activeForm": "Looking"}]}"#;
    let (lines, _) = run("", "TodoWrite", input);
    assert_eq!(lines, Vec::<String>::new());
    let (lines, _) = run(
        "[permissions]\ndeny = [\"TodoWrite\"]\n",
        "TodoWrite",
        input,
    );
    assert_eq!(
        lines,
        [
            "[root] TodoWrite denied: permission to run 'TodoWrite' was denied: it matches \"TodoWrite\" in zr.toml [permissions] deny; remove it from there to let it run"
        ]
    );
}

#[test]
fn permission_entries_that_name_no_tool_warn_with_the_closest_name() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        "[permissions]\nallow = [\"Bsh\", \"Read\", \"Cron*\", \"mcp__nope__*\", \"*\"]\ndeny = [\"WebSerch\"]\n",
    );
    let out = project.zr_ok(&["resolve"]);
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 3, "{err}");
    assert!(
        warnings[0].ends_with("zr.toml:2:1: permissions.allow: \"Bsh\" matches no tool"),
        "{err}"
    );
    assert!(
        err.contains("  help: did you mean \"Bash\"? tool names are case-sensitive: Bash, Read, "),
        "{err}"
    );
    assert!(
        warnings[1].ends_with("zr.toml:2:1: permissions.allow: \"mcp__nope__*\" names the MCP server 'nope', which .mcp.json does not define"),
        "{err}"
    );
    assert!(
        warnings[2].ends_with("zr.toml:3:1: permissions.deny: \"WebSerch\" matches no tool"),
        "{err}"
    );
    assert!(err.contains("  help: did you mean \"WebSearch\"?"), "{err}");
    // Known names and patterns say nothing.
    project.write(
        "zr.toml",
        "[permissions]\nallow = [\"Bash\", \"Cron*\", \"*\"]\n",
    );
    assert!(!stderr(&project.zr_ok(&["resolve"])).contains("warning:"));
}

#[test]
fn tools_entries_warn_and_claude_code_names_map_to_zr_names() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        "[tools]\ndeny = [\"bash\", \"Agent\", \"MultiEdit\", \"Raed\", \"NotebookEdit\"]\n",
    );
    let out = project.zr_ok(&["resolve"]);
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 5, "{err}");
    assert!(
        warnings[0].ends_with("zr.toml:2:1: tools.deny: \"bash\" matches no tool"),
        "{err}"
    );
    assert!(
        err.contains("  help: did you mean \"Bash\"? tool names are case-sensitive"),
        "{err}"
    );
    assert!(
        warnings[1].ends_with(
            "zr.toml:2:1: tools.deny: \"Agent\" is Claude Code's name for \"Task\"; zr reads it as \"Task\""
        ),
        "{err}"
    );
    assert!(
        warnings[2].ends_with(
            "zr.toml:2:1: tools.deny: \"MultiEdit\" is Claude Code's name for \"Edit\"; zr reads it as \"Edit\""
        ),
        "{err}"
    );
    assert!(
        warnings[3].ends_with("zr.toml:2:1: tools.deny: \"Raed\" matches no tool"),
        "{err}"
    );
    assert!(err.contains("  help: did you mean \"Read\"?"), "{err}");
    assert!(
        warnings[4].ends_with(
            "zr.toml:2:1: tools.deny: \"NotebookEdit\" is a Claude Code tool zr does not have; the entry is left out"
        ),
        "{err}"
    );
    // The mapped names are denied: the root has neither Task nor Edit.
    let pools = stdout(&out);
    let advertised: Vec<&str> = pools
        .lines()
        .skip_while(|l| !l.starts_with("advertised"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(advertised.contains(&"Bash"), "{pools}");
    assert!(!advertised.contains(&"Task"), "{pools}");
    assert!(!advertised.contains(&"Edit"), "{pools}");
    // Known names say nothing.
    project.write(
        "zr.toml",
        "[tools]\nallow = [\"Bash\", \"Read\", \"Cron*\"]\n",
    );
    assert!(!stderr(&project.zr_ok(&["resolve"])).contains("warning:"));
}

/// `[permissions]` rules read Claude Code's tool names as `[tools]` and
/// agent files do: `MultiEdit(src/**)` is `Edit(src/**)` (it lets Edit
/// run there), `Agent` is `Task`, each with a warning.
#[test]
fn permission_rules_read_claude_code_tool_names() {
    let project = TempProject::new();
    project
        .write(
            "zr.toml",
            "[permissions]\nallow = [\"MultiEdit(notes/**)\", \"Agent\"]\n",
        )
        .write("notes/a.txt", "old\n")
        .write(
            "s.json",
            r#"{"agents": {"root": [{"turns": [
                {"tool_calls": [{"name": "Read", "input": {"file_path": "notes/a.txt"}}]},
                {"tool_calls": [{"name": "Edit", "input": {"file_path": "notes/a.txt", "old_string": "old", "new_string": "new"}}]},
                {"text": "done"}]}]}}"#,
        );
    let out = project.zr_ok(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out);
    assert!(
        err.contains("permissions.allow: \"MultiEdit(notes/**)\" is Claude Code's name for \"Edit\"; zr reads it as \"Edit\""),
        "{err}"
    );
    assert!(
        err.contains("permissions.allow: \"Agent\" is Claude Code's name for \"Task\""),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes/a.txt")).unwrap(),
        "new\n",
        "{err}"
    );
}
