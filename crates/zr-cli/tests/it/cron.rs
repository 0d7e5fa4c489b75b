//! `zr cron` end to end: a prompt that `CronCreate` stored during one
//! `zr run` fires in a later `zr cron` process as a new session; one
//! scheduler per project, whose lock the kernel releases when it dies;
//! `zr cron list`; on a terminal, a fired prompt never stops to ask.

use std::io::{BufRead as _, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::support::{TempProject, spawn_zr, stderr, stdout, transcripts, zr_process};

/// The test-only clock offset of `zr cron` (debug builds).
const CLOCK_VAR: &str = "ZR_TEST_CLOCK_OFFSET_SECS";

/// The root schedules a one-shot prompt for the next minute (CronCreate is
/// deferred: FindTool loads it first); the fired prompt is answered.
const SCRIPT: &str = r#"{"agents": {"root": [
  {"match": "schedule", "turns": [
    {"tool_calls": [{"name": "FindTool", "input": {"query": "select:CronCreate"}}]},
    {"tool_calls": [{"name": "CronCreate", "input": {"cron": "* * * * *", "prompt": "say tick", "recurring": false}}]},
    {"text": "scheduled"}]},
  {"match": "tick", "turns": [{"text": "tick answered"}]}
]}}"#;

fn project() -> TempProject {
    let project = TempProject::new();
    project
        .write("zr.toml", "[permissions]\nallow = [\"CronCreate\"]\n")
        .write("script.json", SCRIPT);
    project
}

/// Lines of a child's pipe, read on a thread.
fn lines(pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Reads `rx` until a line contains `needle` (returning everything read),
/// or panics after `within`.
fn wait_for(rx: &mpsc::Receiver<String>, needle: &str, within: Duration, seen: &mut Vec<String>) {
    let deadline = Instant::now() + within;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                let found = line.contains(needle);
                seen.push(line);
                if found {
                    return;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => break,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("the output ended before {needle:?}:\n{}", seen.join("\n"))
            }
        }
    }
    panic!("no {needle:?} within {within:?}:\n{}", seen.join("\n"));
}

/// The value of `ZR_TEST_CLOCK_OFFSET_SECS` (`src/clock.rs`) that puts
/// the scheduler's clock three seconds before the next whole minute, so
/// that a prompt scheduled for "the next minute" fires in seconds.
fn three_seconds_before_the_minute() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_secs();
    let left = 60 - secs % 60;
    left.saturating_sub(3).to_string()
}

fn stop(mut child: Child, signal: Signal) {
    let pid = i32::try_from(child.id()).expect("a pid fits in i32");
    kill(Pid::from_raw(pid), signal).expect("the signal is sent");
    let _ = child.wait();
}

#[test]
fn zr_cron_fires_a_prompt_cron_create_stored_in_an_earlier_run() {
    let project = project();
    let out = project.zr_ok(&["run", "--script", "script.json", "schedule a tick"]);
    assert_eq!(stdout(&out), "scheduled\n");

    // The model was told where the prompt fires.
    let sessions = project.path().join(".zr/sessions");
    let transcripts = transcripts(&project);
    assert!(
        transcripts.contains("Scheduled cron-1")
            && transcripts.contains("It fires while `zr cron` runs in this project"),
        "CronCreate's answer:\n{transcripts}"
    );

    let list = stdout(&project.zr_ok(&["cron", "list"]));
    let rows: Vec<&str> = list.lines().collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(rows[0].starts_with("ID      SCHEDULE (UTC)"), "{list}");
    assert!(
        rows[1].starts_with("cron-1  * * * * * (Every minute)  20")
            && rows[1].ends_with("once  say tick"),
        "{list}"
    );
    let json = stdout(&project.zr_ok(&["cron", "list", "--format", "json"]));
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(value["jobs"][0]["id"], "cron-1");
    assert_eq!(value["jobs"][0]["recurring"], false);
    assert_eq!(value["jobs"][0]["prompt"], "say tick");

    let mut child = zr_process()
        .args(["cron", "--script", "script.json"])
        .env(CLOCK_VAR, three_seconds_before_the_minute())
        .current_dir(project.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the zr binary starts");
    let err = lines(child.stderr.take().expect("stderr is piped"));
    let out = lines(child.stdout.take().expect("stdout is piped"));
    let mut seen = Vec::new();
    wait_for(
        &err,
        "zr cron: firing the prompts scheduled in .zr/cron.json",
        Duration::from_secs(30),
        &mut seen,
    );
    assert!(
        seen.last()
            .is_some_and(|l| l.contains("1 prompt scheduled; next: cron-1 at ")),
        "{seen:?}"
    );

    // A second scheduler for the same project refuses, naming the first.
    let second = project.zr(&["cron", "--script", "script.json"]);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    let pid = child.id();
    assert!(
        stderr(&second).contains(&format!(
            "another process (pid {pid}) is already running the scheduler of this cron store"
        )),
        "{}",
        stderr(&second)
    );

    // The next whole minute of the shifted clock: seconds away.
    wait_for(
        &err,
        "fired cron-1 (scheduled for ",
        Duration::from_secs(75),
        &mut seen,
    );
    let fired = seen.last().expect("a line").clone();
    assert!(fired.ends_with(": say tick"), "{fired}");
    let mut answer = Vec::new();
    wait_for(&out, "tick answered", Duration::from_secs(30), &mut answer);
    wait_for(
        &err,
        "cron-1 finished (session s-",
        Duration::from_secs(30),
        &mut seen,
    );
    assert!(
        seen.last().is_some_and(|l| l.ends_with(
            "No prompt is scheduled: waiting for CronCreate (during `zr run`) to add one."
        )),
        "{seen:?}"
    );

    // Fired in a new session, and a one-shot prompt is gone from the store.
    let session = fired
        .split(" as session ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .expect("the session id");
    assert!(sessions.join(session).is_dir(), "{session}");
    let list = stdout(&project.zr_ok(&["cron", "list"]));
    assert!(
        list.starts_with("No scheduled prompts in .zr/cron.json."),
        "{list}"
    );
    stop(child, Signal::SIGINT);
}

#[test]
fn the_scheduler_lock_dies_with_its_process() {
    let project = project();
    let mut first = spawn_zr(&project, &["cron", "--script", "script.json"]);
    let err = lines(first.stderr.take().expect("stderr is piped"));
    let mut seen = Vec::new();
    wait_for(
        &err,
        "No prompt is scheduled",
        Duration::from_secs(30),
        &mut seen,
    );
    // SIGKILL: no destructor runs; the kernel drops the lock.
    stop(first, Signal::SIGKILL);
    let mut again = spawn_zr(&project, &["cron", "--script", "script.json"]);
    let err = lines(again.stderr.take().expect("stderr is piped"));
    wait_for(
        &err,
        "zr cron: firing the prompts",
        Duration::from_secs(30),
        &mut seen,
    );
    stop(again, Signal::SIGTERM);
}

#[test]
fn a_broken_store_is_named_with_what_to_do() {
    let project = project();
    project.write(".zr/cron.json", "{\"jobs\": 3}");
    let out = project.zr(&["cron", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("the cron store ")
            && err.contains(".zr/cron.json is not valid JSON of the expected shape")
            && err.contains("help: fix or remove .zr/cron.json"),
        "{err}"
    );
}

#[test]
fn on_a_terminal_zr_cron_fires_and_a_fired_prompt_is_refused_not_asked() {
    // The fired prompt runs Bash, which zr.toml does not allow: nobody
    // watches a firing, so it is refused with the key, never asked.
    const FIRES_BASH: &str = r#"{"agents": {"root": [
  {"match": "schedule", "turns": [
    {"tool_calls": [{"name": "FindTool", "input": {"query": "select:CronCreate"}}]},
    {"tool_calls": [{"name": "CronCreate", "input": {"cron": "* * * * *", "prompt": "say tick", "recurring": false}}]},
    {"text": "scheduled"}]},
  {"match": "tick", "turns": [
    {"tool_calls": [{"name": "Bash", "input": {"command": "echo fired > fired.txt"}}]},
    {"text": "tick answered"}]}
]}}"#;
    let project = project();
    project.write("script.json", FIRES_BASH);
    let out = project.zr_ok(&["run", "--script", "script.json", "schedule a tick"]);
    assert_eq!(stdout(&out), "scheduled\n");

    let offset = three_seconds_before_the_minute();
    let mut t = crate::tree::Terminal::spawn_with(
        &project,
        &["cron", "--script", "script.json"],
        &[(CLOCK_VAR, &offset)],
    );
    let has = |text: &'static str| move |rows: &[String]| rows.iter().any(|r| r.contains(text));
    t.wait_for(
        "the scheduler's first line",
        has("zr cron: firing the prompts"),
    );
    // The next whole minute of the shifted clock: seconds away.
    t.wait_within(
        Duration::from_secs(75),
        "the firing",
        has("fired cron-1 (scheduled for "),
    );
    let (rows, _) = t.wait_for("its end", has("cron-1 finished (session s-"));
    let screen = rows.join("\n");
    assert!(screen.contains("tick answered"), "{screen}");
    assert!(!screen.contains("Answer 1-4:"), "{screen}");
    assert!(!project.path().join("fired.txt").exists());
    let text = transcripts(&project);
    assert!(
        text.contains("permission to run 'Bash' was denied"),
        "{text}"
    );
    let pid = i32::try_from(t.child.id()).expect("a pid fits in i32");
    kill(Pid::from_raw(pid), Signal::SIGINT).expect("the signal is sent");
    t.finish(130);
}
