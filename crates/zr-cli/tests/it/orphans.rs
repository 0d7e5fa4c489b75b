//! `kill -9` of a real `zr run`: no process of the run is left a second
//! later; the session's lock dies with it; a process that escaped its group
//! is reported by `zr sessions` and killed by `zr resume`; two resumes of
//! one session are refused by the lock.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::collections::BTreeSet;
use std::process::Child;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::signal::{LiveStderr, cmdline, descendants, stat, wait_until, with_cmdline};
use crate::support::{TempProject, everything_js, spawn_zr, stderr, stdout};

/// The correctness bound of the must-show test.
const GONE_WITHIN: Duration = Duration::from_secs(1);

/// A root whose MultiTask runs two subagents, each in a `sleep`: one the
/// shell's own process (bash execs a lone command), one a grandchild
/// (`; echo` keeps the shell). With `escape`, the root first starts a
/// `setsid` sleep that leaves its process group.
fn script(escape: bool) -> String {
    let mut root_calls = Vec::new();
    if escape {
        // The shell waits until the sleep has its own session: were the
        // shell's group killed first, the sleep would die with it.
        let sleep = escaped_sleep();
        let command = format!(
            "setsid {sleep} >/dev/null 2>&1 < /dev/null & until pgrep -x -f '{sleep}' >/dev/null; do sleep 0.05; done; echo started"
        );
        root_calls.push(serde_json::json!({"name": "Bash", "input": {"command": command}}));
    }
    root_calls.push(serde_json::json!({"name": "MultiTask", "input": {"tasks": [
        {"description": "one", "prompt": "first sleeper", "subagent_type": "general-purpose"},
        {"description": "two", "prompt": "second sleeper", "subagent_type": "general-purpose"}
    ]}}));
    let turns: Vec<serde_json::Value> = root_calls
        .into_iter()
        .map(|call| serde_json::json!({"tool_calls": [call]}))
        .chain([serde_json::json!({"text": "never reached"})])
        .collect();
    serde_json::json!({"agents": {
        "root": [{"turns": turns}],
        "general-purpose": [
            {"match": "first sleeper", "turns": [
                {"tool_calls": [{"name": "Bash", "input": {"command": "sleep 611", "timeout": 600_000}}]},
                {"text": "slept"}]},
            {"match": "second sleeper", "turns": [
                {"tool_calls": [{"name": "Bash", "input": {"command": "sleep 612; echo after", "timeout": 600_000}}]},
                {"text": "slept"}]}
        ]
    }})
    .to_string()
}

/// The escaped command, unique to this test process (a copy of the suite
/// may run beside it).
fn escaped_sleep() -> String {
    format!("sleep 613.{}", std::process::id())
}

fn project(escape: bool) -> TempProject {
    let project = TempProject::new();
    let mcp = serde_json::json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [everything_js().display().to_string(), "stdio", project.path().display().to_string()]
    }}});
    project
        .write(".mcp.json", &mcp.to_string())
        .write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write("script.json", &script(escape))
        .write(
            "resume.json",
            r#"{"agents": {"root": [{"turns": [{"text": "finished after the kill"}]}]}}"#,
        )
        .write(
            "hang.json",
            r#"{"agents": {"root": [{"turns": [{"tool_calls": [{"name": "Bash", "input": {"command": "sleep 614", "timeout": 600000}}]}, {"text": "done"}]}]}}"#,
        );
    project
}

/// Live (not zombie) pids among `pids`.
fn alive(pids: &BTreeSet<i32>) -> Vec<(i32, String)> {
    pids.iter()
        .filter(|&&pid| stat(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X'))
        .map(|&pid| (pid, cmdline(pid).unwrap_or_default()))
        .collect()
}

/// A running `zr`, killed if the test fails before it does.
struct Zr(Child);

impl Drop for Zr {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the run and waits until the server and both sleeps (and the
/// escaped sleep) run; returns zr, its stderr and every process under it.
fn started_run(project: &TempProject, escape: bool) -> (Zr, LiveStderr, BTreeSet<i32>) {
    let mut child = spawn_zr(
        project,
        &["run", "--script", "script.json", "sleep in two subagents"],
    );
    let err = LiveStderr::of(&mut child);
    let child = Zr(child);
    let zr = i32::try_from(child.0.id()).unwrap();
    let marker = project.path().display().to_string();
    wait_until("the server and both sleeps run", || {
        assert!(
            !err.contains("warning: MCP server 'everything'"),
            "server-everything did not start:\n{}",
            err.text()
        );
        let under: Vec<String> = descendants(zr).into_iter().filter_map(cmdline).collect();
        with_cmdline(&marker)
            .iter()
            .any(|(_, l)| l.contains("server-everything"))
            && under.iter().any(|l| l.starts_with("sleep 611"))
            && under.iter().any(|l| l.starts_with("sleep 612"))
            && (!escape || !with_cmdline(&escaped_sleep()).is_empty())
    });
    let started = descendants(zr);
    (child, err, started)
}

fn sigkill(child: &mut Zr) {
    kill(
        Pid::from_raw(i32::try_from(child.0.id()).unwrap()),
        Signal::SIGKILL,
    )
    .unwrap();
    child.0.wait().unwrap();
}

/// The session id `zr sessions --format json` lists first.
fn only_session(project: &TempProject) -> (String, String) {
    let listed = project.zr(&["sessions", "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    (
        rows[0]["id"].as_str().unwrap().to_owned(),
        rows[0]["status"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn sigkill_of_zr_run_leaves_no_process_within_a_second() {
    let project = project(false);
    let (mut child, _err, started) = started_run(&project, false);
    assert!(
        started.len() >= 5,
        "server, two shells or sleeps, the grandchild sleep, the watcher: {:?}",
        alive(&started)
    );
    let killed_at = Instant::now();
    sigkill(&mut child);
    let mut left = alive(&started);
    while !left.is_empty() && killed_at.elapsed() < GONE_WITHIN {
        std::thread::sleep(Duration::from_millis(20));
        left = alive(&started);
    }
    for (pid, _) in &left {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    assert!(
        left.is_empty(),
        "alive {GONE_WITHIN:?} after SIGKILL of zr: {left:?}"
    );
    assert!(
        with_cmdline(&project.path().display().to_string()).is_empty(),
        "nothing names the project"
    );

    // The kernel dropped the session's lock with zr: it is interrupted,
    // not running, and resumes.
    let (session, status) = only_session(&project);
    assert_eq!(status, "interrupted");
    let listed = project.zr(&["sessions"]);
    assert!(!stderr(&listed).contains("left"), "{}", stderr(&listed));
    let resumed = project.zr(&["resume", "--script", "resume.json", &session]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert!(!stderr(&resumed).contains("killed"), "{}", stderr(&resumed));
}

#[test]
fn what_escaped_its_group_is_reported_then_killed_by_resume() {
    let project = project(true);
    let (mut child, _err, _started) = started_run(&project, true);
    let escaped = with_cmdline(&escaped_sleep());
    assert_eq!(escaped.len(), 1, "{escaped:?}");
    let escaped = escaped[0].0;
    sigkill(&mut child);
    // It left its group: neither the death signal nor the watcher reach it.
    std::thread::sleep(Duration::from_millis(500));
    assert!(stat(escaped).is_some(), "setsid sleep escaped");

    let (session, _) = only_session(&project);
    let listed = project.zr(&["sessions"]);
    assert!(
        stderr(&listed).contains(&format!(
            "warning: session {session}: a zr that was killed left 1 process (pid {escaped}: {}) running; `zr resume {session}` kills them", escaped_sleep()
        )),
        "{}",
        stderr(&listed)
    );
    let resumed = project.zr(&["resume", "--script", "resume.json", &session]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains(&format!(
            "killed 1 process (pid {escaped}: {}) that an earlier run of session {session} left running when it was killed", escaped_sleep()
        )),
        "{}",
        stderr(&resumed)
    );
    assert_eq!(stdout(&resumed), "finished after the kill\n");
    let gone = Instant::now() + GONE_WITHIN;
    while stat(escaped).is_some_and(|(s, _)| s != 'Z') && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(20));
    }
    let state = stat(escaped);
    if state.is_some_and(|(s, _)| s != 'Z') {
        let _ = kill(Pid::from_raw(escaped), Signal::SIGKILL);
    }
    assert!(
        state.is_none_or(|(s, _)| s == 'Z'),
        "still running: {state:?}"
    );
    let listed = project.zr(&["sessions"]);
    assert!(!stderr(&listed).contains("left"), "{}", stderr(&listed));
}

#[test]
fn two_resumes_of_one_session_are_refused_by_its_lock() {
    let project = project(false);
    let (mut child, _err, _) = started_run(&project, false);
    sigkill(&mut child);
    let (session, _) = only_session(&project);
    let mut first = spawn_zr(
        &project,
        &["resume", "--script", "hang.json", &session, "hang"],
    );
    let first_err = LiveStderr::of(&mut first);
    let mut first = Zr(first);
    wait_until("the first resume runs its sleep", || {
        !with_cmdline("sleep 614").is_empty()
    });
    let second = project.zr(&["resume", "--script", "resume.json", &session]);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert!(
        stderr(&second).contains(&format!(
            "error: session {session} is running now, in zr process {}",
            first.0.id()
        )),
        "{}",
        stderr(&second)
    );
    // SIGKILL: no code of the first resume runs again, yet its lock is gone.
    sigkill(&mut first);
    drop(first_err);
    let third = project.zr(&["resume", "--script", "resume.json", &session]);
    assert_eq!(third.status.code(), Some(0), "{}", stderr(&third));
    assert_eq!(stdout(&third), "finished after the kill\n");
    wait_until("the first resume's sleep is gone", || {
        with_cmdline("sleep 614").is_empty()
    });
}

/// A project whose root starts `sleep NEEDLE` with `setsid` (it leaves its
/// process group), waits until it runs, then runs `then` (a Bash command,
/// or nothing) and answers.
fn escaping_project(needle: &str, then: Option<&str>) -> TempProject {
    let escape = format!(
        "setsid {needle} >/dev/null 2>&1 < /dev/null & until pgrep -x -f '{needle}' >/dev/null; do sleep 0.05; done; echo started"
    );
    let mut turns = vec![serde_json::json!({"tool_calls": [
        {"name": "Bash", "input": {"command": escape}}]})];
    if let Some(then) = then {
        turns.push(serde_json::json!({"tool_calls": [
            {"name": "Bash", "input": {"command": then, "timeout": 600_000}}]}));
    }
    turns.push(serde_json::json!({"text": "done"}));
    let project = TempProject::new();
    project
        .write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write(
            "script.json",
            &serde_json::json!({"agents": {"root": [{"turns": turns}]}}).to_string(),
        );
    project
}

/// Waits (a second at most) until no live process has `needle` in its
/// command line; returns those left (killed then, so the test leaves none).
fn still_running(needle: &str) -> Vec<(i32, String)> {
    let live = || -> Vec<(i32, String)> {
        with_cmdline(needle)
            .into_iter()
            .filter(|(pid, _)| stat(*pid).is_some_and(|(s, _)| s != 'Z' && s != 'X'))
            .collect()
    };
    let until = Instant::now() + GONE_WITHIN;
    let mut left = live();
    while !left.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        left = live();
    }
    for (pid, _) in &left {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    left
}

#[test]
fn what_escaped_its_group_is_killed_when_zr_run_ends() {
    let needle = format!("sleep 615.{}", std::process::id());
    let project = escaping_project(&needle, None);
    let out = project.zr(&["run", "--script", "script.json", "escape"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
    let left = still_running(&needle);
    assert!(left.is_empty(), "left running after zr run: {left:?}");
    let err = stderr(&out);
    assert!(
        err.contains("warning: killed 1 process that zr's commands or hooks left running: pid ")
            && err.contains(&format!(": {needle}")),
        "{err}"
    );
}

#[test]
fn what_escaped_its_group_is_killed_after_ctrl_c() {
    let needle = format!("sleep 616.{}", std::process::id());
    let long = format!("sleep 617.{}", std::process::id());
    let project = escaping_project(&needle, Some(&long));
    let mut child = spawn_zr(&project, &["run", "--script", "script.json", "escape"]);
    let err = LiveStderr::of(&mut child);
    wait_until("the escaped sleep and the long sleep run", || {
        !with_cmdline(&needle).is_empty() && !with_cmdline(&long).is_empty()
    });
    kill(
        Pid::from_raw(i32::try_from(child.id()).unwrap()),
        Signal::SIGINT,
    )
    .unwrap();
    let out = crate::signal::wait_output(child, err);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let left = still_running(&needle);
    assert!(left.is_empty(), "left running after Ctrl-C: {left:?}");
    assert!(
        stderr(&out).contains("that zr's commands or hooks left running: pid "),
        "{}",
        stderr(&out)
    );
}
