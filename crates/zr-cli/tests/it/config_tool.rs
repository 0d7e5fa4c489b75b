//! The `Config` tool in a run: it lists, reads and changes the safe
//! `zr.toml` settings (comments kept) and refuses every other key.

use crate::support::{TempProject, stdout, transcripts};

const ZR_TOML: &str = "# my project\n[permissions]\nallow = [\"Config\"]   # the tool writes zr.toml\n\n[subagents]\nmax_concurrent = 2 # two at once\n";

const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
  {"tool_calls": [{"name": "FindTool", "input": {"query": "select:Config"}}]},
  {"tool_calls": [
    {"name": "Config", "input": {}},
    {"name": "Config", "input": {"setting": "subagents.max_concurrent", "value": 5}},
    {"name": "Config", "input": {"setting": "compaction.enabled", "value": false}},
    {"name": "Config", "input": {"setting": "permissions.mode", "value": "bypassPermissions"}},
    {"name": "Config", "input": {"setting": "agent.max_turns", "value": 0}},
    {"name": "Config", "input": {"setting": "subagents.max_concurrent"}}
  ]},
  {"text": "configured"}]}]}}"#;

#[test]
fn config_changes_safe_settings_and_nothing_else() {
    let project = TempProject::new();
    project
        .write("zr.toml", ZR_TOML)
        .write("script.json", SCRIPT);
    let out = project.zr_ok(&["run", "--script", "script.json", "tune it"]);
    assert_eq!(stdout(&out), "configured\n");
    let toml = std::fs::read_to_string(project.path().join("zr.toml")).unwrap();
    assert_eq!(
        toml,
        "# my project\n[permissions]\nallow = [\"Config\"]   # the tool writes zr.toml\n\n[subagents]\nmax_concurrent = 5 # two at once\n\n[compaction]\nenabled = false\n"
    );
    let transcripts = transcripts(&project);
    for needle in [
        r"- subagents.max_concurrent (an integer) = 2: subagents of one call running at once (written to zr.toml; takes effect at the next run)",
        r"- agent.max_turns (an integer) = ",
        r"Set subagents.max_concurrent = 5.",
        r"Set compaction.enabled = false.",
        r"Config: 'permissions.mode' is not a settable key. Settable keys: model.name, agent.max_turns, ",
        r"configuration key 'agent.max_turns' takes a whole number from 1 to 10000",
        r"subagents.max_concurrent = 5",
    ] {
        assert!(transcripts.contains(needle), "{needle}\n{transcripts}");
    }
}
