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

/// A server that never answers the handshake: it writes its pid, then,
/// for up to 3 s, marks whether the other server is alive beside it.
fn hanging_server(me: &str, other: &str) -> String {
    format!(
        "echo $$ > {me}.pid\nfor i in $(seq 30); do\n  if [ -f {other}.pid ] && kill -0 \"$(cat {other}.pid)\" 2>/dev/null; then touch {me}.saw-{other}; break; fi\n  sleep 0.1\ndone\nsleep 600\n"
    )
}

/// The MCP servers start at once: a server whose handshake hangs does not
/// hold the next one back until its connect timeout (`[mcp]
/// connect_timeout_secs`, 4 s here) ends; both are left out with a warning
/// and the run goes on.
#[test]
fn mcp_servers_start_at_once_and_a_hanging_one_is_left_out() {
    let project = TempProject::new();
    project
        .write("script.json", r#"{"agents": {"root": [{"turns": [{"text": "ok"}]}]}}"#)
        .write("a.sh", &hanging_server("a", "b"))
        .write("b.sh", &hanging_server("b", "a"))
        .write("zr.toml", "[mcp]\nconnect_timeout_secs = 4\n")
        .write(
            ".mcp.json",
            r#"{"mcpServers": {"a": {"command": "sh", "args": ["a.sh"]}, "b": {"command": "sh", "args": ["b.sh"]}}}"#,
        );
    let out = project.zr(&["run", "--script", "script.json", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ok\n");
    let err = stderr(&out);
    for server in ["'a'", "'b'"] {
        assert!(
            err.contains(&format!("warning: MCP server {server}")),
            "{err}"
        );
    }
    assert!(
        project.path().join("a.saw-b").exists() || project.path().join("b.saw-a").exists(),
        "the two servers were never alive at the same time"
    );
}

/// A value of zr.toml the engine refuses (here a bad tool pattern) stops
/// the run before any MCP server starts.
#[test]
fn a_bad_setting_stops_the_run_before_any_server_starts() {
    let project = TempProject::new();
    project
        .write(
            "script.json",
            r#"{"agents": {"root": [{"turns": [{"text": "ok"}]}]}}"#,
        )
        .write("server.sh", "touch started\nsleep 600\n")
        .write(
            ".mcp.json",
            r#"{"mcpServers": {"s": {"command": "sh", "args": ["server.sh"]}}}"#,
        )
        .write("zr.toml", "[tools]\ndeny = [\"Bash(\"]\n");
    let out = project.zr(&["run", "--script", "script.json", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("zr.toml:2:1: tools.deny"),
        "{}",
        stderr(&out)
    );
    assert!(
        !project.path().join("started").exists(),
        "the server was started"
    );
}

/// `zr run -` takes the prompt from standard input.
#[test]
fn a_prompt_from_standard_input() {
    let project = TempProject::new();
    project.write(
        "script.json",
        r#"{"agents": {"root": [
          {"match": "piped task", "turns": [{"text": "read it from the pipe"}]},
          {"turns": [{"text": "the wrong prompt"}]}]}}"#,
    );
    let out = crate::support::zr()
        .args(["run", "--script", "script.json", "-"])
        .current_dir(project.path())
        .write_stdin("a piped task\nwith two lines\n")
        .output()
        .expect("the zr binary runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "read it from the pipe\n");
    // Nothing on standard input is an empty prompt.
    let out = crate::support::zr()
        .args(["run", "--script", "script.json", "-"])
        .current_dir(project.path())
        .write_stdin("")
        .output()
        .expect("the zr binary runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: the prompt is empty\n"),
        "{}",
        stderr(&out)
    );
}

/// Telemetry never fails a run: an endpoint that is not HTTP is a warning,
/// and a receiver that is down (a loopback port nobody listens on) costs
/// the run nothing but failed exports, within the flush's bound.
#[test]
fn telemetry_to_a_receiver_that_is_down_never_fails_the_run() {
    let project = TempProject::new();
    project.write("script.json", SCRIPT);
    project.write("zr.toml", "[telemetry]\nendpoint = \"ftp://nowhere\"\n");
    let out = project.zr(&["run", "--script", "script.json", "list the json files"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "All done.\n");
    let err = stderr(&out);
    assert!(
        err.contains("warning: telemetry is off for this run: telemetry endpoint 'ftp://nowhere' is not an http:// or https:// URL"),
        "{err}"
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    project.write(
        "zr.toml",
        &format!("[telemetry]\nendpoint = \"http://127.0.0.1:{port}/v1/traces\"\n"),
    );
    let start = std::time::Instant::now();
    let out = project.zr(&["run", "--script", "script.json", "list the json files"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "All done.\n");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
}

/// A receiver that accepts the connection and never answers holds the run
/// no longer than the final flush's bound (5 s): `zr` exits 0 with the
/// answer, and the receiver did see the export arrive.
#[test]
fn telemetry_to_a_receiver_that_hangs_never_holds_the_run() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hung.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&accepted);
    // Holds every connection open, unanswered, until the test ends.
    std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in hung.incoming().flatten() {
            seen.fetch_add(1, Ordering::SeqCst);
            open.push(stream);
        }
    });
    let project = TempProject::new();
    project.write("script.json", SCRIPT);
    project.write(
        "zr.toml",
        &format!("[telemetry]\nendpoint = \"http://127.0.0.1:{port}/v1/traces\"\n"),
    );
    let start = std::time::Instant::now();
    let out = project.zr(&["run", "--script", "script.json", "list the json files"]);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "All done.\n");
    assert!(
        accepted.load(Ordering::SeqCst) >= 1,
        "the export reached the receiver"
    );
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    assert!(
        stderr(&out).contains("telemetry: the final flush"),
        "{}",
        stderr(&out)
    );
}

/// With `[telemetry]`, `zr run` exports the run's spans: the receiver (a
/// loopback server answering 200) gets the session's agents, requests and
/// calls, named as the GenAI conventions name them.
#[test]
fn telemetry_exports_the_runs_spans() {
    let receiver = crate::otlp_receiver::OtlpReceiver::start();
    let project = TempProject::new();
    project.write("script.json", SCRIPT);
    project.write(
        "zr.toml",
        &format!("[telemetry]\nendpoint = \"{}\"\n", receiver.endpoint()),
    );
    let out = project.zr(&["run", "--script", "script.json", "list the json files"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for name in [
        "session",
        "invoke_agent root",
        "invoke_agent explore",
        "execute_tool Task",
        "execute_tool Glob",
        "gen_ai.usage.input_tokens",
    ] {
        assert!(receiver.has(name), "{name} is not in the export");
    }
}
