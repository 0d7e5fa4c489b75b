//! Nested delegation through `zr`: with `[subagents] max_depth = 2` a
//! subagent delegates, and the grandchild shows in `zr run`'s tree, `zr
//! sessions show` and its HTML page.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use crate::support::{TempProject, stderr, stdout};

/// root -> lead (general-purpose) -> worker (general-purpose).
const CHAIN: &str = r#"{"turns_from": "history", "agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "lead", "prompt": "lead the job", "subagent_type": "general-purpose"}}]},
    {"text": "root done"}]}],
  "general-purpose": [
    {"match": "lead the job", "turns": [
      {"tool_calls": [{"name": "Task", "input": {"description": "work", "prompt": "work on it", "subagent_type": "general-purpose"}}]},
      {"text": "lead done"}]},
    {"match": "work on it", "turns": [{"text": "worker done"}]}]}}"#;

const GRANDCHILD: &str = "root.0001-general-purpose.0002-general-purpose";

#[test]
fn at_max_depth_2_the_grandchild_runs_and_shows_in_the_tree_sessions_and_the_page() {
    let project = TempProject::new();
    project
        .write("zr.toml", "[subagents]\nmax_depth = 2\n")
        .write("chain.json", CHAIN);
    let out = project.zr(&["run", "--script", "chain.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "root done\n");
    // The live tree names the grandchild.
    assert!(stderr(&out).contains(GRANDCHILD), "{}", stderr(&out));
    let folder = project.path().join(".zr/sessions");
    let session = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| !n.starts_with('.'))
        .unwrap();
    assert!(
        folder
            .join(&session)
            .join(format!("{GRANDCHILD}.jsonl"))
            .is_file(),
        "the grandchild has its transcript"
    );
    let show = project.zr(&["sessions", "show", &session]);
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    let text = stdout(&show);
    // The grandchild is drawn below its parent, one level further in.
    assert!(text.contains("\n└─ root.0001-general-purpose "), "{text}");
    assert!(text.contains(&format!("\n   └─ {GRANDCHILD} ")), "{text}");
    assert!(
        text.contains(&format!("{GRANDCHILD}: worker done")),
        "{text}"
    );
    let page = project.path().join("run.html");
    let html = project.zr(&[
        "sessions",
        "show",
        &session,
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(html.status.code(), Some(0), "{}", stderr(&html));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(GRANDCHILD),
        "the page has a row for the grandchild"
    );
}

#[test]
fn at_the_default_depth_the_subagent_cannot_delegate() {
    let project = TempProject::new();
    project.write("chain.json", CHAIN);
    let out = project.zr(&["run", "--script", "chain.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(GRANDCHILD), "{}", stderr(&out));
}
