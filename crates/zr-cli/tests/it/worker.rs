//! `zr worker` and `zr run --durable` against a real `restate-server`.

use std::io::{BufRead, BufReader, Write as _};
use std::path::PathBuf;
use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use crate::support::{TempProject, spawn_zr, stderr, stdout};
use zr_test_support::restate::RestateServer;

/// A Restate server and a `zr worker` of `project` (replaying its
/// `script.json`) registered with it; `zr.toml` is `toml` followed by the
/// server's `[durable]` table.
fn served(project: &TempProject, toml: &str) -> (RestateServer, Child) {
    let server = RestateServer::start();
    project.write(
        "zr.toml",
        &format!(
            "{toml}[durable]\ningress = \"{}\"\nadmin = \"{}\"\n",
            server.ingress_url(),
            server.admin_url()
        ),
    );
    let mut worker = spawn_zr(
        project,
        &[
            "worker",
            "--listen",
            "127.0.0.1:0",
            "--script",
            "script.json",
        ],
    );
    registered(&mut worker, None, &server);
    (server, worker)
}

/// Waits until `worker` (a `zr worker` started with its standard error
/// piped) says it registered; returns the lines it wrote until then. The
/// lines go on to `log` (a file) when given.
pub(crate) fn registered(
    worker: &mut Child,
    log: Option<PathBuf>,
    server: &RestateServer,
) -> Vec<String> {
    let lines = BufReader::new(worker.stderr.take().expect("piped"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut log = log.map(|path| std::fs::File::create(path).expect("a log file"));
        for line in lines.lines().map_while(Result::ok) {
            if let Some(log) = &mut log {
                let _ = writeln!(log, "{line}");
            }
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|l: &String| l.starts_with("zr worker: registered with"))
    {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("the worker did not register: {seen:?}\n{}", server.log()),
        }
    }
    seen
}

const SCRIPT: &str = r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "MultiTask", "input": {"tasks": [
      {"description": "one", "prompt": "list the json files", "subagent_type": "explore"},
      {"description": "two", "prompt": "list them again", "subagent_type": "explore"}]}}]},
    {"text": "All done."}]}],
  "explore": [{"turns": [
    {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.json"}}]},
    {"text": "found script.json"}]}]}}"#;

#[test]
fn a_durable_run_without_an_ingress_says_where_to_set_one() {
    let project = TempProject::new();
    let out = project.zr(&["run", "--durable", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("[durable] ingress"), "{err}");
}

#[test]
fn a_worker_registers_and_a_durable_run_prints_the_local_answer() {
    let project = TempProject::new();
    project.write("script.json", SCRIPT);
    let local = project.zr(&["run", "--script", "script.json", "go"]);
    assert_eq!(local.status.code(), Some(0), "{}", stderr(&local));

    let server = RestateServer::start();
    // The worker exports its agents' spans, as `zr run` does.
    let receiver = crate::otlp_receiver::OtlpReceiver::start();
    project.write(
        "zr.toml",
        &format!(
            "[durable]\ningress = \"{}\"\nadmin = \"{}\"\n\n[telemetry]\nendpoint = \"{}\"\n",
            server.ingress_url(),
            server.admin_url(),
            receiver.endpoint()
        ),
    );
    let mut worker = spawn_zr(
        &project,
        &[
            "worker",
            "--listen",
            "127.0.0.1:0",
            "--script",
            "script.json",
        ],
    );
    let seen = registered(&mut worker, None, &server);
    assert!(seen[0].starts_with("zr worker: serving "), "{seen:?}");

    let out = project.zr(&["run", "--durable", "go"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stderr(&out),
        server.log()
    );
    assert_eq!(
        stdout(&out),
        stdout(&local),
        "the same answer as the local run"
    );
    assert!(stderr(&out).starts_with("session s-"), "{}", stderr(&out));

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(worker.id()).expect("a pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("the worker is signalled");
    let status = worker.wait().expect("the worker ends");
    assert_eq!(status.code(), Some(128 + 15), "a signal stops the worker");
    // Flushed when the signal stopped it.
    assert!(
        receiver.has("invoke_agent root"),
        "the worker exported the durable turn's agent"
    );
}

/// The subagents a durable turn calls are named in its progress, plain
/// and `--json`, from the real server's journal rows (restate-server 1.7
/// leaves `invoked_target` empty on `Command: Call` rows: before, the
/// lines were `  → ` and `"target": ""`).
#[test]
fn a_durable_run_names_the_subagents_it_calls() {
    let project = TempProject::new();
    project.write("script.json", SCRIPT);
    let (server, mut worker) = served(&project, "");

    let out = project.zr(&["run", "--durable", "go"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}\n{}", server.log());
    let session = err
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("session "))
        .and_then(|l| l.split_once(':'))
        .map(|(session, _)| session)
        .unwrap_or_else(|| panic!("no session line: {err}"))
        .to_owned();
    let mut calls: Vec<&str> = err
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("→"))
        .map(str::trim)
        .collect();
    calls.sort_unstable();
    assert_eq!(
        calls,
        [
            format!("ZrAgent/{session}/root.0001-explore/run"),
            format!("ZrAgent/{session}/root.0002-explore/run")
        ],
        "{err}"
    );

    let json = project.zr(&["resume", &session, "--json"]);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let mut targets: Vec<String> = stdout(&json)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"))
        })
        .filter(|l| l["type"] == "durable_call")
        .map(|l| l["target"].as_str().unwrap_or_default().to_owned())
        .collect();
    targets.sort_unstable();
    assert_eq!(
        targets,
        [
            format!("ZrAgent/{session}/root.0001-explore/run"),
            format!("ZrAgent/{session}/root.0002-explore/run")
        ],
        "{}",
        stdout(&json)
    );

    let _ = worker.kill();
    let _ = worker.wait();
}

/// A root that sleeps in Bash for a while before it answers; its next
/// turn answers at once.
const SLOW: &str = r#"{"turns_from": "history", "agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Bash", "input": {"command": "sleep 3; echo rested"}}]},
    {"text": "Slept well."},
    {"text": "Good morning."}]}]}}"#;

/// The durable sessions `zr sessions --format json` lists.
fn durable_sessions(project: &TempProject) -> Vec<serde_json::Value> {
    let out = project.zr(&["sessions", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).expect("JSON");
    all.into_iter()
        .filter(|s| !s["durable"].is_null())
        .collect()
}

#[test]
fn a_durable_turn_is_followed_listed_and_resumed_through_the_server() {
    let project = TempProject::new();
    project.write("script.json", SLOW);
    let (server, mut worker) = served(&project, "[permissions]\nallow = [\"Bash\"]\n\n");

    let run = spawn_zr(&project, &["run", "--durable", "rest a while"]);
    // While the turn sleeps, the server lists it as running.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let session = loop {
        let listed = durable_sessions(&project);
        if let Some(s) = listed.iter().find(|s| s["status"] == "running") {
            assert_ne!(s["durable"], "completed", "{s}");
            break s["id"].as_str().expect("an id").to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no running durable session: {listed:?}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };

    // `zr resume` attaches to the running turn and prints its answer.
    let attached = project.zr(&["resume", &session]);
    assert_eq!(attached.status.code(), Some(0), "{}", stderr(&attached));
    assert_eq!(stdout(&attached), "Slept well.\n");
    assert!(
        stderr(&attached).starts_with(&format!("session {session}: its turn inv_")),
        "{}",
        stderr(&attached)
    );

    // The run followed the journal live: each step as it ended.
    let out = run.wait_with_output().expect("the run ends");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Slept well.\n");
    let err = stderr(&out);
    let steps: Vec<&str> = err.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(
        steps,
        [
            "  ✓ model root #1",
            "  ✓ tool toolu_01_0_root",
            "  ✓ model root #2"
        ],
        "{err}"
    );
    assert!(
        err.starts_with(&format!("session {session}: submitted to ")),
        "{err}"
    );

    // Ended: listed as completed on both sides; resume says so and
    // shows the answer again.
    let listed = durable_sessions(&project);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["durable"], "completed");
    assert_eq!(listed[0]["status"], "completed");
    let table = project.zr(&["sessions"]);
    assert!(
        stdout(&table).contains("completed (durable)"),
        "{}",
        stdout(&table)
    );
    let again = project.zr(&["resume", &session]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again), "Slept well.\n");
    assert!(
        stderr(&again).contains("ended; its answer follows"),
        "{}",
        stderr(&again)
    );

    // `--json`: the journal's steps and the answer as JSON lines on
    // standard output, nothing else there.
    let json = project.zr(&["resume", &session, "--json"]);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let lines: Vec<serde_json::Value> = stdout(&json)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let steps: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["type"] == "durable_step")
        .map(|l| {
            assert_eq!(l["agent"], "root", "{l}");
            assert!(l["at_ms"].is_u64(), "{l}");
            (
                l["name"].as_str().unwrap_or_default(),
                l["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("model root #1", "ok"),
            ("tool toolu_01_0_root", "ok"),
            ("model root #2", "ok")
        ]
    );
    let result = lines.last().expect("a result line");
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["session"], session.as_str());
    assert_eq!(result["status"], "completed");
    assert_eq!(result["output"], "Slept well.");
    assert_eq!(result["turns"], 2);
    assert_eq!(lines.len(), 4, "three steps and the result: {lines:?}");

    // `--quiet`: the answer alone.
    let quiet = project.zr(&["resume", &session, "--quiet"]);
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    assert_eq!(stdout(&quiet), "Slept well.\n");
    assert!(!stderr(&quiet).contains('✓'), "{}", stderr(&quiet));

    // With a prompt, the next turn goes on from the first: the session's
    // transcript holds both turns, each once.
    let next = project.zr(&["resume", &session, "wake up"]);
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    assert_eq!(stdout(&next), "Good morning.\n");
    assert!(
        stderr(&next).contains("ended; running the next turn"),
        "{}",
        stderr(&next)
    );
    let transcript = project
        .path()
        .join(format!(".zr/sessions/{session}/root.jsonl"));
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&transcript)
        .expect("the root's transcript")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let prompts: Vec<&str> = records
        .iter()
        .filter(|r| r["kind"] == "message" && r["message"]["role"] == "user")
        .filter_map(|r| r["message"]["content"][0]["text"].as_str())
        .collect();
    assert_eq!(prompts, ["rest a while", "wake up"], "{records:#?}");
    let finished = records.iter().filter(|r| r["kind"] == "finished").count();
    assert_eq!(finished, 2, "{records:#?}");

    let _ = worker.kill();
    let _ = worker.wait();
}

/// A root that starts an explorer in the background and answers at once.
const BACKGROUND: &str = r#"{"turns_from": "history", "agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "look", "prompt": "list the json files", "subagent_type": "explore", "run_in_background": true}}]},
    {"text": "Started it."}]}],
  "explore": [{"turns": [
    {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.json"}}]},
    {"text": "found script.json"}]}]}}"#;

#[test]
fn a_durable_run_shows_its_background_agent_sent_and_ends_after_it() {
    let project = TempProject::new();
    project.write("script.json", BACKGROUND);
    let (server, mut worker) = served(&project, "");

    let out = project.zr(&["run", "--durable", "go"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}\n{}", server.log());
    assert_eq!(stdout(&out).trim_end(), "Started it.");
    let session = err
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("session "))
        .and_then(|l| l.split_once(':'))
        .map(|(session, _)| session)
        .unwrap_or_else(|| panic!("no session line: {err}"))
        .to_owned();
    assert!(
        err.contains(&format!(
            "→ ZrAgent/{session}/root.0001-explore/run (background)"
        )),
        "{err}"
    );
    assert!(err.contains("✓ background root.0001-explore"), "{err}");
    // The turn ended after its background agent, which the worker ran as
    // its own invocation: its transcript is complete.
    let transcript = std::fs::read_to_string(
        project
            .path()
            .join(".zr/sessions")
            .join(&session)
            .join("root.0001-explore.jsonl"),
    )
    .expect("the background agent's transcript");
    assert!(transcript.contains("found script.json"), "{transcript}");
    assert!(
        transcript
            .lines()
            .next()
            .is_some_and(|h| h.contains("\"background\":true")),
        "{transcript}"
    );

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(worker.id()).expect("a pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("the worker is signalled");
    let _ = worker.wait();
}
