//! Hot reload end to end: during one `zr run`, a Bash call writes
//! `.zr/agents/late.md`, and the root's next `Task` with `subagent_type:
//! late` runs that new type (it was not there when the run started).

use crate::support::{TempProject, stderr, stdout};

const SCRIPT: &str = r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Bash", "input": {"command": "mkdir -p .zr/agents && printf -- '---\\nname: late\\ndescription: Came late.\\n---\\nYou came late.\\n' > .zr/agents/late.md"}}]},
    {"tool_calls": [{"name": "Task", "input": {"description": "late work", "prompt": "do it", "subagent_type": "late"}}]},
    {"text": "All done."}]}],
  "late": [{"turns": [{"text": "late here"}]}]}}"#;

#[test]
fn an_agent_type_written_during_the_run_is_started_by_the_next_task() {
    let project = TempProject::new();
    project
        .write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write("script.json", SCRIPT);
    let out = project.zr(&["run", "--script", "script.json", "add a type, then use it"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out), "All done.\n");
    assert!(project.path().join(".zr/agents/late.md").is_file(), "{err}");
    let session = std::fs::read_dir(project.path().join(".zr/sessions"))
        .unwrap()
        .next()
        .expect("a session")
        .unwrap()
        .path();
    let late = std::fs::read_to_string(session.join("root.0001-late.jsonl"))
        .unwrap_or_else(|e| panic!("the late agent's transcript: {e}\n{err}"));
    assert!(
        late.contains("You came late."),
        "its prompt is the new file's body: {late}"
    );
    assert!(late.contains("late here"), "{late}");
    let root = std::fs::read_to_string(session.join("root.jsonl")).unwrap();
    assert!(
        root.contains(r#""agent_type":"late","description":"late work""#)
            && root.contains(r#""output":"late here","status":"completed""#),
        "the Task completed: {root}"
    );
}
