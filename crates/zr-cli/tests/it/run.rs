//! `zr run` end to end with the scripted provider: the answer on standard
//! output, progress on standard error, transcripts in .zr/sessions.

use crate::support::{TempProject, stderr, stdout};

const SCRIPT: &str = r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "look", "prompt": "list the json files", "subagent_type": "explore"}}]},
    {"text": "All done."}]}],
  "explore": [{"turns": [
    {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.json"}}]},
    {"text": "found script.json"}]}]}}"#;

#[test]
fn a_scripted_run_delegates_and_prints_the_answer() {
    let project = TempProject::new();
    project.write("script.json", SCRIPT);
    let out = project.zr(&["run", "--script", "script.json", "list the json files"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "All done.\n");
    let err = stderr(&out);
    assert!(err.contains("[root.0001-explore] Glob *.json\n"), "{err}");
    let sessions: Vec<_> = std::fs::read_dir(project.path().join(".zr/sessions"))
        .expect("the sessions folder")
        .collect();
    assert_eq!(sessions.len(), 1);
}
