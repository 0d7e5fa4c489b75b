//! `zr worker` and `zr run --durable` against a real `restate-server`.

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::Duration;

use crate::restate_server::RestateServer;
use crate::support::{TempProject, spawn_zr, stderr, stdout};

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
    project.write(
        "zr.toml",
        &format!(
            "[durable]\ningress = \"{}\"\nadmin = \"{}\"\n",
            server.ingress_url(),
            server.admin_url()
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
    let lines = BufReader::new(worker.stderr.take().expect("piped"));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
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
}
