//! Asking at a terminal, in a real pseudo-terminal: the permission
//! question (allow once, for the session, always with the change to
//! zr.toml shown first, deny with and without a reason, Ctrl-C) and
//! AskUserQuestion (an option, several, own words), each checked on the
//! tool result the model receives in the next request; a hook that blocks
//! a call before anything is asked; a hook's `ask`, with the Notification
//! hook before the question. Without a terminal AskUserQuestion is
//! in no pool (the requests never advertise it, `zr resolve` says why).

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use crate::hooks::tool_results;
use crate::support::{TempProject, stderr, stdout};
use crate::tree::Terminal;
use zr_test_support::loopback::{Reply, Server};

/// What Bash answers for a command that prints nothing.
const RAN: &str = "(no output)\n[exit code 0]";

fn bash(id: &str, command: &str) -> Reply {
    Reply::anthropic(None, &[(id, "Bash", json!({"command": command}))])
}

/// `zr run go` on a terminal in `project`, with `server` as the model API.
fn run_on_terminal(project: &TempProject, server: &Server) -> Terminal {
    Terminal::spawn_with(
        project,
        &["run", "go"],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
            ("ANTHROPIC_BASE_URL", &server.url),
        ],
    )
}

/// The tool names request `n` advertises.
fn advertised(server: &Server, n: usize) -> Vec<String> {
    server.requests()[n].body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// How many rows of the screen hold `text`.
fn count(rows: &[String], text: &str) -> usize {
    rows.iter().filter(|r| r.contains(text)).count()
}

/// Waits until the screen shows `text` on `n` rows.
fn wait_rows(t: &Terminal, text: &str, n: usize) -> Vec<String> {
    t.wait_for(&format!("{n} x {text:?}"), |rows| count(rows, text) >= n)
        .0
}

#[test]
fn the_permission_question_allows_once_then_denies_with_and_without_a_reason() {
    let project = TempProject::new();
    let server = Server::scripted(vec![
        bash("c1", "echo one > one.txt"),
        bash("c2", "echo two > two.txt"),
        bash("c3", "echo three > three.txt"),
        Reply::anthropic(Some("done"), &[]),
    ]);
    let mut t = run_on_terminal(&project, &server);
    let rows = wait_rows(&t, "Answer 1-4:", 1);
    assert!(
        rows.iter()
            .any(|r| r.contains("? Permission: root wants to run Bash")),
        "{}",
        rows.join("\n")
    );
    assert!(
        rows.iter()
            .any(|r| r.contains(r#"{"command":"echo one > one.txt"}"#))
    );
    assert!(
        rows.iter()
            .any(|r| r.contains(r#"3. Always allow: add "Bash" to zr.toml [permissions] allow"#))
    );
    t.type_text("1\r");
    wait_rows(&t, "Answer 1-4:", 2);
    t.type_text("4\r");
    wait_rows(&t, "Reason for the agent", 1);
    t.type_text("not now\r");
    wait_rows(&t, "Answer 1-4:", 3);
    t.type_text("4\r");
    wait_rows(&t, "Reason for the agent", 2);
    t.type_text("\r");
    let (_, screen) = t.finish(0);
    assert!(screen.contains("done"), "{screen}");
    assert!(project.path().join("one.txt").exists());
    assert!(!project.path().join("two.txt").exists());
    assert!(!project.path().join("three.txt").exists());
    assert_eq!(tool_results(&server, 1), [(false, RAN.to_owned())]);
    assert_eq!(
        tool_results(&server, 2)[1],
        (
            true,
            "permission to run 'Bash' was denied: the user said no: not now".to_owned()
        )
    );
    assert_eq!(
        tool_results(&server, 3)[2],
        (
            true,
            "permission to run 'Bash' was denied: the user said no".to_owned()
        )
    );
}

#[test]
fn allow_for_this_session_asks_once_and_a_wrong_answer_asks_again() {
    let project = TempProject::new();
    let server = Server::scripted(vec![
        bash("c1", "echo one > one.txt"),
        bash("c2", "echo two > two.txt"),
        Reply::anthropic(Some("done"), &[]),
    ]);
    let mut t = run_on_terminal(&project, &server);
    wait_rows(&t, "Answer 1-4:", 1);
    t.type_text("yes please\r");
    wait_rows(&t, "Please answer 1, 2, 3 or 4.", 1);
    t.type_text("2\r");
    let (rows, _) = t.finish(0);
    assert_eq!(count(&rows, "wants to run Bash"), 1, "{}", rows.join("\n"));
    assert!(project.path().join("one.txt").exists() && project.path().join("two.txt").exists());
    assert!(tool_results(&server, 2).iter().all(|(error, _)| !error));
    // Nothing was written to zr.toml.
    assert!(!project.path().join("zr.toml").exists());
}

#[test]
fn always_shows_the_change_to_zr_toml_writes_it_keeping_the_file_and_runs_the_call() {
    let project = TempProject::new();
    let original = "# my project\n[agent]\nmax_turns = 10  # enough\n";
    project.write("zr.toml", original);
    let server = Server::scripted(vec![
        bash("c1", "echo one > one.txt"),
        Reply::anthropic(Some("done"), &[]),
    ]);
    let mut t = run_on_terminal(&project, &server);
    wait_rows(&t, "Answer 1-4:", 1);
    t.type_text("3\r");
    let rows = wait_rows(&t, "Write it? [y/N]", 1);
    let shown = rows.join("\n");
    assert!(shown.contains("zr.toml will change:"), "{shown}");
    assert!(shown.contains("  + [permissions]"), "{shown}");
    assert!(shown.contains(r#"  + allow = ["Bash"]"#), "{shown}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("zr.toml")).unwrap(),
        original,
        "nothing is written before the answer"
    );
    t.type_text("y\r");
    t.finish(0);
    assert_eq!(
        std::fs::read_to_string(project.path().join("zr.toml")).unwrap(),
        format!("{original}\n[permissions]\nallow = [\"Bash\"]\n")
    );
    assert!(project.path().join("one.txt").exists());
    assert_eq!(tool_results(&server, 1), [(false, RAN.to_owned())]);
}

#[test]
fn ctrl_c_while_asking_stops_the_run_without_running_the_call() {
    let project = TempProject::new();
    let server = Server::scripted(vec![
        bash("c1", "echo one > one.txt"),
        Reply::anthropic(Some("done"), &[]),
    ]);
    let mut t = run_on_terminal(&project, &server);
    wait_rows(&t, "Answer 1-4:", 1);
    let pid = Pid::from_raw(i32::try_from(t.child.id()).unwrap());
    // What the terminal does on Ctrl-C.
    kill(pid, Signal::SIGINT).unwrap();
    let (_, screen) = t.finish(130);
    assert!(screen.contains("interrupted; session"), "{screen}");
    assert!(!project.path().join("one.txt").exists());
    assert_eq!(server.requests().len(), 1, "the run stopped");
}

#[test]
fn ask_user_question_is_answered_with_an_option_several_options_or_own_words() {
    let project = TempProject::new();
    let option = |label: &str| json!({"label": label, "description": format!("the {label} one")});
    let questions = json!({"questions": [
        {"question": "Which color?", "header": "Color", "options": [option("Red"), option("Blue")]},
        {"question": "Which sizes?", "header": "Sizes", "multiSelect": true,
         "options": [option("S"), option("M"), option("L")]},
        {"question": "Which shape?", "header": "Shape", "options": [option("Square"), option("Star")]}
    ]});
    let server = Server::scripted(vec![
        Reply::anthropic(
            None,
            &[("f1", "FindTool", json!({"query": "select:AskUserQuestion"}))],
        ),
        Reply::anthropic(None, &[("q1", "AskUserQuestion", questions)]),
        Reply::anthropic(Some("done"), &[]),
    ]);
    let mut t = run_on_terminal(&project, &server);
    let rows = wait_rows(&t, "Answer with a number or in your own words:", 1);
    let shown = rows.join("\n");
    assert!(shown.contains("? Color (1/3): Which color?"), "{shown}");
    assert!(shown.contains("  2. Blue - the Blue one"), "{shown}");
    t.type_text("2\r");
    let rows = wait_rows(
        &t,
        "Answer with numbers (e.g. 1,3) or in your own words:",
        1,
    );
    assert!(
        rows.iter()
            .any(|r| r.contains("? Sizes (2/3): Which sizes?"))
    );
    t.type_text("1, 3\r");
    wait_rows(&t, "? Shape (3/3): Which shape?", 1);
    t.type_text("\r");
    wait_rows(&t, "Please answer (a number or words):", 1);
    t.type_text("a round one\r");
    t.finish(0);
    // On a terminal AskUserQuestion is offered: FindTool loads it and the
    // next request advertises it.
    assert!(
        tool_results(&server, 1)[0]
            .1
            .starts_with("loaded AskUserQuestion: "),
        "{:?}",
        tool_results(&server, 1)
    );
    assert!(advertised(&server, 1).contains(&"AskUserQuestion".to_owned()));
    assert_eq!(
        tool_results(&server, 2)[1..],
        [(
            false,
            "The user answered:\n- Which color? -> Blue\n- Which sizes? -> S, L\n- Which shape? -> a round one\n"
                .to_owned()
        )]
    );
}

#[test]
fn a_hook_that_blocks_a_call_answers_before_anyone_is_asked() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"echo 'no shell today' >&2; exit 2\" }]\n",
    );
    let server = Server::scripted(vec![
        bash("c1", "echo one > one.txt"),
        Reply::anthropic(Some("done"), &[]),
    ]);
    let mut t = run_on_terminal(&project, &server);
    let (rows, screen) = t.finish(0);
    assert_eq!(count(&rows, "Answer 1-4:"), 0, "{screen}");
    assert!(screen.contains("done"), "{screen}");
    assert!(!project.path().join("one.txt").exists());
    assert_eq!(
        tool_results(&server, 1),
        [(
            true,
            "tool 'Bash' was not run: a PreToolUse hook denied it: no shell today".to_owned()
        )]
    );
}

#[test]
fn a_hooks_ask_puts_an_accept_edits_write_to_the_person_after_a_notification() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        r#"[permissions]
mode = "acceptEdits"

[[hooks.PreToolUse]]
matcher = "Write"
hooks = [{ type = "command", command = '''echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "new files need a look"}}' ''' }]

[[hooks.Notification]]
matcher = "permission_prompt"
hooks = [{ type = "command", command = "cat > notified.json" }]
"#,
    );
    let server = Server::scripted(vec![
        Reply::anthropic(
            None,
            &[("c1", "Write", json!({"file_path": "a.txt", "content": "a"}))],
        ),
        Reply::anthropic(Some("done"), &[]),
    ]);
    let mut t = run_on_terminal(&project, &server);
    let rows = wait_rows(&t, "Answer 1-", 1);
    assert!(
        rows.iter().any(|r| r.contains("root wants to run Write")),
        "{}",
        rows.join("\n")
    );
    // The Notification hook ran before the question was put.
    let notified: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.path().join("notified.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(notified["hook_event_name"], "Notification");
    assert_eq!(notified["notification_type"], "permission_prompt");
    assert_eq!(notified["message"], "zr needs your permission to use Write");
    assert!(
        !project.path().join("a.txt").exists(),
        "not before the answer"
    );
    t.type_text("1\r");
    let (_, screen) = t.finish(0);
    assert!(screen.contains("done"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("a.txt")).unwrap(),
        "a"
    );
}

#[test]
fn concurrent_askers_queue_and_the_tree_stays_away_while_one_is_asked() {
    let project = TempProject::new();
    project.write(
        "s.json",
        r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "MultiTask", "input": {"tasks": [
      {"description": "first", "prompt": "alpha", "subagent_type": "general-purpose"},
      {"description": "second", "prompt": "beta", "subagent_type": "general-purpose"}]}}]},
    {"text": "root done"}]}],
  "general-purpose": [
    {"match": "alpha", "turns": [
      {"tool_calls": [{"name": "Bash", "input": {"command": "echo a > a.txt"}}]}, {"text": "a done"}]},
    {"match": "beta", "turns": [
      {"tool_calls": [{"name": "Bash", "input": {"command": "echo b > b.txt"}}]}, {"text": "b done"}]}]}}"#,
    );
    let mut t = Terminal::spawn_with(&project, &["run", "--script", "s.json", "go"], &[]);
    let rows = wait_rows(&t, "Answer 1-4:", 1);
    assert!(
        rows.iter()
            .any(|r| r.contains("(general-purpose) wants to run Bash")),
        "{}",
        rows.join("\n")
    );
    // Several ticks of the tree later: still one question, and nothing
    // drawn below it.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (rows, hidden) = t.rows();
    assert_eq!(count(&rows, "Answer 1-4:"), 1, "{}", rows.join("\n"));
    assert!(
        rows.last().is_some_and(|r| r.starts_with("Answer 1-4:")),
        "{}",
        rows.join("\n")
    );
    assert!(!hidden, "the cursor is shown while asking");
    t.type_text("1\r");
    wait_rows(&t, "Answer 1-4:", 2);
    t.type_text("4\r");
    wait_rows(&t, "Reason for the agent", 1);
    t.type_text("\r");
    let (_, screen) = t.finish(0);
    assert!(screen.contains("root done"), "{screen}");
    let made = [
        project.path().join("a.txt").exists(),
        project.path().join("b.txt").exists(),
    ];
    assert_eq!(
        made.iter().filter(|m| **m).count(),
        1,
        "one allowed, one denied"
    );
}

#[test]
fn without_a_terminal_ask_user_question_is_in_no_pool_and_zr_resolve_says_why() {
    let project = TempProject::new();
    let server = Server::scripted(vec![
        Reply::anthropic(
            None,
            &[("f1", "FindTool", json!({"query": "select:AskUserQuestion"}))],
        ),
        Reply::anthropic(Some("done"), &[]),
    ]);
    // Standard input and error are pipes: nobody can be asked.
    let out = crate::support::zr()
        .args(["run", "go"])
        .current_dir(project.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", &server.url)
        .output()
        .expect("zr runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
    assert_eq!(
        tool_results(&server, 1),
        [(false, "no deferred tool named 'AskUserQuestion'".to_owned())]
    );
    for n in 0..2 {
        assert!(!advertised(&server, n).contains(&"AskUserQuestion".to_owned()));
    }
    let pools = stdout(&project.zr_ok(&["resolve", "--agent", "root"]));
    assert!(
        pools.contains("  AskUserQuestion  R1    no service configured\n"),
        "{pools}"
    );
}
