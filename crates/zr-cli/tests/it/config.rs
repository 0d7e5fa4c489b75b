//! Errors in project files: zr.toml (file:line:column, key, what is wrong,
//! how to fix it), .mcp.json (the file named), agent and skill files
//! (warnings; the run goes on), and every problem of zr.toml, .mcp.json
//! and the script reported at once.

use crate::support::{TempProject, stderr, stdout};

const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [{"text": "ran"}]}]}}"#;

/// `zr run` in a project with `zr.toml` = `toml`: exit 2, nothing on
/// standard output; returns standard error with the folder as [PROJECT].
fn refused(toml: &str) -> String {
    let project = TempProject::new();
    project.write("zr.toml", toml).write("s.json", SCRIPT);
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out).replace(&project.path().display().to_string(), "[PROJECT]");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(stdout(&out), "");
    err
}

#[test]
fn toml_syntax_error() {
    insta::assert_snapshot!(refused("[model]\nname = claude\n"));
}

#[test]
fn unknown_key_suggests_the_closest() {
    insta::assert_snapshot!(refused("[subagents]\nmax_concurent = 2\n"));
}

#[test]
fn unknown_key_without_a_close_one_lists_the_keys() {
    insta::assert_snapshot!(refused("[compaction]\nfrobnicate = true\n"));
}

#[test]
fn unknown_table_suggests_the_closest() {
    insta::assert_snapshot!(refused("[permisions]\nmode = \"plan\"\n"));
}

#[test]
fn wrong_type() {
    insta::assert_snapshot!(refused("[subagents]\nmax_concurrent = \"3\"\n"));
}

#[test]
fn negative_number() {
    insta::assert_snapshot!(refused("[agent]\nmax_turns = -1\n"));
}

#[test]
fn unknown_provider() {
    insta::assert_snapshot!(refused("[model]\nprovider = \"antropic\"\n"));
}

#[test]
fn unknown_permission_mode() {
    insta::assert_snapshot!(refused("[permissions]\nmode = \"acceptedit\"\n"));
}

#[test]
fn unknown_lazy_word() {
    insta::assert_snapshot!(refused("[policy]\nlazy = \"sometimes\"\n"));
}

#[test]
fn lazy_of_the_wrong_type() {
    insta::assert_snapshot!(refused("[policy]\nlazy = true\n"));
}

#[test]
fn bad_tool_pattern() {
    insta::assert_snapshot!(refused("[tools]\nallow = [\"Read\", \"mcp github\"]\n"));
}

#[test]
fn bad_tool_name() {
    insta::assert_snapshot!(refused("[policy]\nderived_blocklist = [\"Ask User\"]\n"));
}

#[test]
fn bad_permission_pattern() {
    insta::assert_snapshot!(refused("[permissions]\ndeny = [\"\"]\n"));
}

#[test]
fn broken_mcp_json_names_the_file() {
    let project = TempProject::new();
    // One bad server is a warning naming the file, the line and the
    // server; the run goes on without it.
    project
        .write(
            ".mcp.json",
            "{\"mcpServers\": {\"fs\": {\"command\": 3}}}\n",
        )
        .write("s.json", SCRIPT);
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out).replace(&project.path().display().to_string(), "[PROJECT]");
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out), "ran\n");
    let warning: Vec<&str> = err.lines().take_while(|l| !l.starts_with('[')).collect();
    insta::assert_snapshot!("mcp_wrong_type", warning.join("\n"));

    project.write(
        ".mcp.json",
        "{\"mcpServers\": {\n  \"fs\": {\"command\": \"x\",}\n}}\n",
    );
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out).replace(&project.path().display().to_string(), "[PROJECT]");
    assert_eq!(out.status.code(), Some(2), "{err}");
    insta::assert_snapshot!("mcp_syntax", err);
}

#[test]
fn broken_agent_and_skill_files_are_warnings_and_the_run_goes_on() {
    let project = TempProject::new();
    project
        .write(
            ".zr/agents/broken.md",
            "---\nname: broken\n---\nno description\n",
        )
        .write(
            ".zr/skills/bad-skill/SKILL.md",
            "---\nname: Other_Name\ndescription: x\n---\nbody\n",
        )
        .write("s.json", SCRIPT);
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out).replace(&project.path().display().to_string(), "[PROJECT]");
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out), "ran\n");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    insta::assert_snapshot!(warnings.join("\n"));
}

#[test]
fn a_value_error_points_at_the_key_in_its_own_table() {
    let err = refused(
        "[tools]\nallow = [\"Read\"]\n\n[permissions]\nallow = [\"Read\", \"two words\"]\n",
    );
    assert!(
        err.starts_with("error: [PROJECT]/zr.toml:5:1: permissions.allow: 'two words': "),
        "{err}"
    );
}

#[test]
fn a_string_where_a_list_belongs() {
    insta::assert_snapshot!(refused("[tools]\ndeny = \"WebFetch\"\n"));
}

/// `zr run` in `project` with its script `s.json`: exit 2, nothing on
/// standard output; standard error with the folder as [PROJECT].
fn refused_in(project: &TempProject) -> String {
    let out = project.zr(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out).replace(&project.path().display().to_string(), "[PROJECT]");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(stdout(&out), "");
    err
}

#[test]
fn every_project_file_error_is_reported_at_once() {
    let project = TempProject::new();
    project
        .write(
            "zr.toml",
            "[subagents]\nmax_concurent = 3\n\n[tools]\nallow = \"Read\"\n\n[permisions]\nallow = [\"Bash\"]\n",
        )
        .write(
            ".mcp.json",
            "{\"mcpServers\": {\n  \"fs\": {\"command\": \"x\",}\n}}\n",
        )
        .write(
            "s.json",
            "{\"agents\": {\"root\": [\n  {\"turns\": [{\"txt\": \"hi\"}]}\n]}}\n",
        );
    insta::assert_snapshot!("every_file_at_once", refused_in(&project));

    // The syntax errors of zr.toml, all of them.
    project.write(
        "zr.toml",
        "[model\nname = \"x\"\n\n[agent]\nmax_turns = = 2\n",
    );
    insta::assert_snapshot!("every_syntax_error", refused_in(&project));

    // A shape that parses: its values are checked with the other files.
    project
        .write("zr.toml", "[permissions]\nmode = \"sometimes\"\n")
        .write(".mcp.json", "{\"mcpServers\": {}}\n");
    insta::assert_snapshot!("values_and_the_script", refused_in(&project));
}
