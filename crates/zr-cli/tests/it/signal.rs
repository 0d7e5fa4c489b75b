//! Ctrl-C (and SIGTERM) in the middle of a real `zr run`: exit code, the
//! session named with `zr resume`, no process of the run left behind, the
//! transcripts on disk, and `zr resume` finishing the run.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::Path;
use std::process::{Child, Output};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::support::{TempProject, everything_js, spawn_zr, stderr, stdout};

/// Generous: the machine is shared and slow.
const PATIENCE: Duration = Duration::from_secs(90);

/// The root starts a background shell and a subagent whose Bash call
/// hangs; both run `slow.sh` from the project folder, so their command
/// lines name the test's unique temporary path. With `stubborn`, the
/// subagent first starts a background shell that ignores SIGTERM, so that
/// stopping it takes the engine's grace period before SIGKILL.
fn script(project: &Path, stubborn: bool) -> String {
    let slow = project.join("slow.sh").display().to_string();
    let mut calls = Vec::new();
    if stubborn {
        let stubborn = project.join("stubborn.sh").display().to_string();
        calls.push(serde_json::json!({"name": "Bash", "input": {"command": format!("sh {stubborn}"), "run_in_background": true}}));
    }
    calls.push(serde_json::json!({"name": "Bash", "input": {"command": format!("sh {slow} foreground"), "timeout": 600_000}}));
    serde_json::json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [
                {"name": "Bash", "input": {"command": format!("sh {slow} background"), "run_in_background": true}},
                {"name": "Task", "input": {"description": "wait", "prompt": "wait for it", "subagent_type": "general-purpose"}}
            ]},
            {"text": "never reached"}
        ]}],
        "general-purpose": [{"turns": [
            {"tool_calls": calls},
            {"text": "slept"}
        ]}]
    }})
    .to_string()
}

/// A project with server-everything (its command line also names the
/// project's path) and the hanging script.
fn project(stubborn: bool) -> TempProject {
    let project = TempProject::new();
    let everything = everything_js();
    let mcp = serde_json::json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [everything.display().to_string(), "stdio", project.path().display().to_string()]
    }}});
    project
        .write(".mcp.json", &mcp.to_string())
        // zr never asks: the shells must be allowed to run.
        .write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write("slow.sh", "sleep 600\n")
        .write("stubborn.sh", "trap '' TERM\nsleep 600\n")
        .write("script.json", &script(project.path(), stubborn))
        .write(
            "resume.json",
            r#"{"agents": {"root": [{"turns": [{"text": "finished after the interruption"}]}]}}"#,
        );
    project
}

/// `/proc/PID/cmdline` with its NULs as spaces; `None` when the process is
/// gone.
pub(crate) fn cmdline(pid: i32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(String::from_utf8_lossy(&bytes).replace('\0', " "))
}

/// `(state, parent)` from `/proc/PID/stat`.
pub(crate) fn stat(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces.
    let rest = text.get(text.rfind(')')? + 2..)?;
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((state, parent))
}

pub(crate) fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Every process descending from `root`.
pub(crate) fn descendants(root: i32) -> BTreeSet<i32> {
    let parents: Vec<(i32, i32)> = all_pids()
        .into_iter()
        .filter_map(|pid| Some((pid, stat(pid)?.1)))
        .collect();
    let mut found = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, _) in parents.iter().filter(|(_, p)| *p == parent) {
            if found.insert(pid) {
                frontier.push(pid);
            }
        }
    }
    found
}

/// Processes whose command line contains `needle` (other than this test).
pub(crate) fn with_cmdline(needle: &str) -> Vec<(i32, String)> {
    let me = i32::try_from(std::process::id()).unwrap();
    all_pids()
        .into_iter()
        .filter(|&pid| pid != me)
        .filter_map(|pid| Some((pid, cmdline(pid)?)))
        .filter(|(_, line)| line.contains(needle))
        .collect()
}

pub(crate) fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child's standard error, read while it runs.
pub(crate) struct LiveStderr {
    text: Arc<Mutex<Vec<u8>>>,
    reader: JoinHandle<()>,
}

impl LiveStderr {
    /// Takes `child`'s piped standard error and reads it on a thread.
    pub(crate) fn of(child: &mut Child) -> Self {
        let mut pipe = child.stderr.take().unwrap();
        let text = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&text);
        let reader = std::thread::spawn(move || {
            let mut buf = [0_u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self { text, reader }
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.text.lock().unwrap()).into_owned()
    }

    pub(crate) fn contains(&self, needle: &str) -> bool {
        self.text().contains(needle)
    }
}

/// Waits for `child` to exit; its output, standard error from `err`.
pub(crate) fn wait_output(mut child: Child, err: LiveStderr) -> Output {
    let deadline = Instant::now() + PATIENCE;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("zr did not exit after the signal");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out = child.wait_with_output().unwrap();
    err.reader.join().unwrap();
    out.stderr = std::mem::take(&mut *err.text.lock().unwrap());
    out
}

/// The session id in "To continue it: zr resume ID".
fn resume_hint(err: &str) -> String {
    let (_, rest) = err
        .split_once("To continue it: zr resume ")
        .unwrap_or_else(|| panic!("no resume hint in:\n{err}"));
    rest.lines().next().unwrap().trim().to_owned()
}

/// Starts the run, waits until the MCP server, the background shell and
/// the subagent's shell (with its `sleep`) are alive, sends `signals`
/// (each after the first once zr has said it is stopping), and returns
/// the output and every process the run had started.
fn interrupted_run(
    project: &TempProject,
    signals: &[Signal],
    stubborn: bool,
) -> (Output, BTreeSet<i32>) {
    let mut child = spawn_zr(
        project,
        &["run", "--script", "script.json", "wait for the shells"],
    );
    let err = LiveStderr::of(&mut child);
    let zr = i32::try_from(child.id()).unwrap();
    let marker = project.path().display().to_string();
    wait_until("the server and both shells run", || {
        // Left out (its handshake took longer than zr.toml's
        // connect_timeout_secs on a very loaded machine), it never shows
        // up: say so at once.
        assert!(
            !err.contains("warning: MCP server 'everything'"),
            "server-everything did not start:\n{}",
            err.text()
        );
        let lines: Vec<String> = with_cmdline(&marker).into_iter().map(|p| p.1).collect();
        let sleeping = descendants(zr)
            .into_iter()
            .filter(|&pid| cmdline(pid).is_some_and(|c| c.starts_with("sleep 600")))
            .count();
        lines.iter().any(|l| l.contains("server-everything"))
            && lines.iter().any(|l| l.contains("slow.sh background"))
            && lines.iter().any(|l| l.contains("slow.sh foreground"))
            && (!stubborn || lines.iter().any(|l| l.contains("stubborn.sh")))
            && sleeping == if stubborn { 3 } else { 2 }
    });
    let started = descendants(zr);
    check_while_running(project);
    for (i, &signal) in signals.iter().enumerate() {
        if i > 0 {
            // Once zr has taken the first signal (two signals before it
            // looks may count as one), well within the 2 s the engine
            // gives a background shell between SIGTERM and SIGKILL.
            wait_until("zr took the first signal", || {
                err.contains("stopping the agents and their processes")
            });
        }
        kill(Pid::from_raw(zr), signal).unwrap();
    }
    let out = wait_output(child, err);
    (out, started)
}

/// While the run goes on: `zr sessions` shows it running, and `zr resume`
/// refuses to run it a second time.
fn check_while_running(project: &TempProject) {
    let listed = project.zr(&["sessions", "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(rows[0]["status"], "running", "{rows}");
    let session = rows[0]["id"].as_str().unwrap();
    let refused = project.zr(&["resume", "--script", "resume.json", session]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(&format!(
            "error: session {session} is running now, in zr process "
        )),
        "{}",
        stderr(&refused)
    );
}

/// Within a few seconds nothing the run started is left: no process
/// naming the project's path, none of its descendants alive or a zombie.
fn assert_nothing_left(project: &TempProject, started: &BTreeSet<i32>) {
    let marker = project.path().display().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let named = with_cmdline(&marker);
        let alive: Vec<(i32, char)> = started
            .iter()
            .filter_map(|&pid| Some((pid, stat(pid)?.0)))
            .collect();
        if named.is_empty() && alive.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            // Do not leave them to the machine.
            for pid in named.iter().map(|p| p.0).chain(alive.iter().map(|p| p.0)) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        assert!(
            Instant::now() < deadline,
            "left behind: {named:?}; alive or zombie (pid, state): {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_kills_every_process_and_the_session_resumes() {
    let project = project(false);
    let (out, started) = interrupted_run(&project, &[Signal::SIGINT], false);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        started.len() >= 5,
        "the server, two shells and two sleeps ran: {started:?}"
    );
    assert_nothing_left(&project, &started);
    assert!(
        err.contains("SIGINT: stopping the agents and their processes"),
        "{err}"
    );
    let session = resume_hint(&err);
    assert!(
        err.contains(&format!("interrupted; session {session} is saved.")),
        "{err}"
    );
    assert_eq!(stdout(&out), "", "no answer");
    let folder = project.path().join(".zr/sessions").join(&session);
    let mut files: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files, ["root.0001-general-purpose.jsonl", "root.jsonl"]);
    let root = std::fs::read_to_string(folder.join("root.jsonl")).unwrap();
    assert!(root.contains("wait for the shells"), "{root}");
    assert!(!root.contains("\"kind\":\"finished\""), "cut short: {root}");

    let listed = project.zr(&["sessions"]);
    assert!(
        stdout(&listed).contains(&format!("{session}  "))
            && stdout(&listed).contains("interrupted"),
        "{}",
        stdout(&listed)
    );

    let resumed = project.zr(&["resume", "--script", "resume.json", &session]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(stdout(&resumed), "finished after the interruption\n");
    let root = std::fs::read_to_string(folder.join("root.jsonl")).unwrap();
    assert!(root.contains("finished after the interruption"), "{root}");
    let again = project.zr(&["resume", &session]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("ended (completed): there is no interrupted run to continue"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn a_second_ctrl_c_stops_at_once_and_still_kills_every_process() {
    let project = project(true);
    let (out, started) = interrupted_run(&project, &[Signal::SIGINT, Signal::SIGINT], true);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_nothing_left(&project, &started);
    assert!(
        err.contains("SIGINT: not waiting for the agents to stop; killing their processes"),
        "the second Ctrl-C came while the stubborn shell had its grace period: {err}"
    );
    let session = resume_hint(&err);
    assert!(
        project
            .path()
            .join(".zr/sessions")
            .join(&session)
            .join("root.jsonl")
            .is_file()
    );
}

#[test]
fn sigterm_stops_the_run_like_ctrl_c_with_exit_code_143() {
    let project = project(false);
    let (out, started) = interrupted_run(&project, &[Signal::SIGTERM], false);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert_nothing_left(&project, &started);
    assert!(err.contains("SIGTERM: stopping the agents"), "{err}");
    let session = resume_hint(&err);
    let resumed = project.zr(&["resume", "--script", "resume.json", &session]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(stdout(&resumed), "finished after the interruption\n");
}

#[test]
fn sighup_stops_the_run_like_ctrl_c_with_exit_code_129() {
    let project = project(false);
    let (out, started) = interrupted_run(&project, &[Signal::SIGHUP], false);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(129), "{err}");
    assert_nothing_left(&project, &started);
    assert!(err.contains("SIGHUP: stopping the agents"), "{err}");
    resume_hint(&err);
}

#[test]
fn ctrl_c_while_an_mcp_server_starts_stops_it_and_exits_130() {
    let project = TempProject::new();
    let hang = project.path().join("hang.sh").display().to_string();
    project
        .write("hang.sh", "sleep 600\n")
        .write(
            ".mcp.json",
            &serde_json::json!({"mcpServers": {"stuck": {"command": "sh", "args": [hang]}}})
                .to_string(),
        )
        .write(
            "script.json",
            r#"{"agents": {"root": [{"turns": [{"text": "never"}]}]}}"#,
        );
    let mut child = spawn_zr(&project, &["run", "--script", "script.json", "go"]);
    let err = LiveStderr::of(&mut child);
    let zr = i32::try_from(child.id()).unwrap();
    wait_until("the server that never answers runs", || {
        descendants(zr)
            .into_iter()
            .any(|pid| cmdline(pid).is_some_and(|c| c.starts_with("sleep 600")))
    });
    let started = descendants(zr);
    kill(Pid::from_raw(zr), Signal::SIGINT).unwrap();
    let out = wait_output(child, err);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "SIGINT: stopped while starting, before the run began\n"
    );
    assert_nothing_left(&project, &started);
    assert!(
        !project.path().join(".zr").exists(),
        "no session was started"
    );
}
