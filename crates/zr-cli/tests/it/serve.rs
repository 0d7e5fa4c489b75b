//! `zr mcp serve`: driven by a real MCP host (the official TypeScript
//! SDK's client, `host/mcp_host.mjs`) over stdio, and by the MCP
//! conformance suite's server scenarios over streamable HTTP.
//!
//! The suite's server scenarios that apply to a server whose tools are
//! agent types run against a project whose agent types carry the names
//! the suite calls (`test-simple-text` is the tool `test_simple_text`),
//! answered by the scripted model. The others do not apply: image, audio,
//! embedded-resource and mixed-content results (a subagent's conclusion
//! is text), sampling and elicitation (zr does not ask the caller), the
//! JSON Schema 2020-12 tool (a tool's input is a `Task` call's), SSE
//! polling and multiple streams (rmcp's transport, not zr's), resources,
//! prompts and completion (a tools-only server).

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::support::{TempProject, repo, stderr, zr_process};

/// The project of the host test: one agent type with a script; `Bash`
/// allowed so that a call can run a command to cancel.
fn host_project() -> TempProject {
    let project = TempProject::new();
    project
        .write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write("hello.txt", "hello wrld\n")
        .write(
            ".zr/agents/code-reviewer.md",
            "---\nname: code-reviewer\ndescription: Reviews a change and reports problems\ntools: Read, Bash\n---\nYou review code.\n",
        )
        .write(
            ".zr/agents/counter.md",
            "---\nname: counter\ndescription: Counts lines\ntools: Read\noutputSchema:\n  type: object\n  properties:\n    count: {type: integer}\n  required: [count]\n---\nCount.\n",
        )
        .write(
            "script.json",
            r#"{"agents": {"counter": [{"turns": [{"text": "{\"count\": 1}"}]}], "code-reviewer": [
  {"match": "slow", "turns": [{"tool_calls": [{"name": "Bash", "input": {"command": "sleep 31.4159; echo slept"}}]}, {"text": "slow done"}]},
  {"turns": [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "hello.txt"}}]},
    {"delay_ms": 200, "text": "hello.txt misspells 'world'."}
  ]}
]}}"#,
        );
    project
}

/// Runs the host script in `mode` against `zr mcp serve` in `project`;
/// its JSON report.
fn host(project: &TempProject, mode: &str) -> Value {
    let script = repo().join("crates/zr-cli/tests/it/host/mcp_host.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_zr"))
        .arg(project.path())
        .arg(project.path().join("script.json"))
        .arg(mode)
        .env("ZR_DEPS_DIR", zr_test_support::deps::dir())
        .env("HOME", crate::support::empty_home())
        .output()
        .expect("node runs");
    assert!(out.status.success(), "the host failed: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the host's report is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The one session folder of `project`'s server run.
fn session_folder(project: &TempProject) -> std::path::PathBuf {
    let sessions: Vec<_> = std::fs::read_dir(project.path().join(".zr/sessions"))
        .expect("a sessions folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        sessions.len(),
        1,
        "one session per server run: {sessions:?}"
    );
    sessions[0].clone()
}

#[test]
fn a_real_host_lists_the_agent_types_calls_one_and_gets_progress_and_the_conclusion() {
    let project = host_project();
    let report = host(&project, "call");
    assert_eq!(report["server"]["name"], "zr");
    let names: Vec<&str> = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect();
    // The project's types and the built-in ones, in name order.
    assert_eq!(
        names,
        [
            "code_reviewer",
            "counter",
            "explore",
            "general_purpose",
            "guide",
            "plan",
            "verification"
        ]
    );
    assert_eq!(report["tools"][0]["title"], "code-reviewer");
    // A type without an output schema takes one per call, as Task does.
    assert_eq!(
        report["tools"][0]["schema"]["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .collect::<Vec<_>>(),
        ["description", "output_schema", "prompt"]
    );

    let result = &report["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], "hello.txt misspells 'world'.");
    let zr = &result["_meta"]["zr"];
    assert_eq!(zr["status"], "completed");
    assert_eq!(zr["agent_id"], "root.0001-code-reviewer");
    assert_eq!(zr["description"], "review hello");
    assert_eq!(zr["turns"], 2);

    let progress = report["progress"].as_array().expect("progress");
    let messages: Vec<&str> = progress
        .iter()
        .map(|p| p["message"].as_str().expect("a message"))
        .collect();
    assert_eq!(
        messages.get(..3),
        Some(
            &[
                "root.0001-code-reviewer running",
                "root.0001-code-reviewer: turn 1 finished",
                "root.0001-code-reviewer: calling Read",
            ][..]
        ),
        "{progress:?}"
    );
    // The last turn's progress goes out just before the result; the
    // TypeScript client drops a notification it reads together with the
    // response (noted in docs/decisions.md), so on a loaded machine it may
    // be missing, but never different.
    if let Some(fourth) = messages.get(3) {
        assert_eq!(
            *fourth, "root.0001-code-reviewer: turn 2 finished",
            "{progress:?}"
        );
    }
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().expect("a number"))
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");

    // The counter's answer is its value, as structured content the SDK
    // checked against the tool's output schema, and as text.
    let structured = &report["structured"];
    assert_eq!(structured["isError"], false, "{structured}");
    assert_eq!(
        structured["structuredContent"],
        serde_json::json!({"count": 1})
    );
    assert_eq!(structured["content"][0]["text"], r#"{"count":1}"#);
    assert_eq!(
        report["counter_tool"]["outputSchema"]["required"],
        serde_json::json!(["count"])
    );

    // The transcript of the call's subagent, in the run's one session.
    let transcript = session_folder(&project).join("root.0001-code-reviewer.jsonl");
    let text = std::fs::read_to_string(&transcript).expect("the subagent's transcript");
    assert!(
        text.contains(r#""task":{"call":"host-1","index":0,"description":"review hello"}"#),
        "{text}"
    );
    assert!(text.contains("Review the greeting in hello.txt"), "{text}");
    assert!(text.contains(r#""kind":"finished""#), "{text}");
}

#[test]
fn a_host_that_cancels_a_call_stops_its_subagent_and_the_server_serves_on() {
    let project = host_project();
    let report = host(&project, "cancel");
    assert_eq!(report["command_seen"], true, "{report}");
    assert_eq!(
        report["call"],
        "rejected: MCP error -32001: the host changed its mind"
    );
    // The subagent's command was killed while the server still ran.
    assert_eq!(report["command_left"], 0, "{report}");
    let after = &report["after"];
    assert_eq!(after["isError"], false, "{after}");
    assert_eq!(after["_meta"]["zr"]["agent_id"], "root.0002-code-reviewer");
    let folder = session_folder(&project);
    let cancelled = std::fs::read_to_string(folder.join("root.0001-code-reviewer.jsonl"))
        .expect("the cancelled subagent's transcript");
    assert!(!cancelled.contains("slow done"), "{cancelled}");
}

/// A host calls the `lead` type of a project whose agents nest three
/// levels (`[subagents] max_depth = 3`): the lead's worker and reviewer,
/// and the reviewer's own worker, run under the call's subagent; the
/// host gets the lead's conclusion and the progress of every agent of
/// the subtree, by id; each has its transcript in the server's session.
#[test]
fn a_host_calling_a_type_whose_subagents_delegate_gets_the_nested_progress_and_result() {
    let project = crate::nested::tree_project();
    let script = std::fs::read_to_string(project.path().join("tree.json")).unwrap();
    project.write("script.json", &script);
    let report = host(&project, "nested");
    let result = &report["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["content"][0]["text"],
        "lead done: the first part is done and reviewed"
    );
    assert_eq!(result["_meta"]["zr"]["agent_id"], "root.0001-lead");
    assert_eq!(result["_meta"]["zr"]["turns"], 3);
    let messages: Vec<&str> = report["progress"]
        .as_array()
        .expect("progress")
        .iter()
        .map(|p| p["message"].as_str().expect("a message"))
        .collect();
    // Up to the reviewer's end: the lead's last turn waits 300 ms, so
    // these are read well before the response (the TypeScript client may
    // drop a notification read together with it: see the test above).
    let reviewed = "root.0001-lead.0003-reviewer finished: completed";
    let end = messages
        .iter()
        .position(|m| *m == reviewed)
        .unwrap_or_else(|| panic!("no '{reviewed}': {messages:#?}"));
    insta::assert_snapshot!("nested_call_progress", messages[..=end].join("\n"));
    let rest = &messages[end + 1..];
    let last = [
        "root.0001-lead: turn 3 finished",
        "root.0001-lead finished: completed",
    ];
    assert!(last.starts_with(rest), "{rest:?}");
    let folder = session_folder(&project);
    for id in [
        "root.0001-lead",
        "root.0001-lead.0002-worker",
        "root.0001-lead.0003-reviewer",
        "root.0001-lead.0003-reviewer.0004-worker",
    ] {
        assert!(
            folder.join(format!("{id}.jsonl")).is_file(),
            "{id} has its transcript"
        );
    }
}

#[test]
fn a_call_the_rules_leave_open_is_denied_with_the_key_to_set() {
    let project = TempProject::new();
    project
        .write("zr.toml", "")
        .write(
            ".zr/agents/runner.md",
            "---\nname: runner\ndescription: Runs commands\ntools: Bash\n---\nRun it.\n",
        )
        .write(
            "script.json",
            r#"{"agents": {"runner": [{"turns": [
  {"tool_calls": [{"name": "Bash", "input": {"command": "echo should-not-run > ran.txt"}}]},
  {"text": "Bash was refused."}
]}]}}"#,
        );
    let mut server = Server::stdio(&project);
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
    server.reply(1);
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    server.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}"#,
    );
    server.reply(2);
    server.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"runner","arguments":{"prompt":"Run it"}}}"#);
    let (reply, before) = server.reply(3);
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "Bash was refused.");
    assert!(!project.path().join("ran.txt").exists(), "Bash ran");
    let denied = before
        .iter()
        .find(|m| m["method"] == "notifications/message")
        .unwrap_or_else(|| panic!("no log message: {before:?}"));
    assert_eq!(denied["params"]["level"], "warning");
    let text = denied["params"]["data"]["message"]
        .as_str()
        .expect("a message");
    assert!(
        text.starts_with("root.0001-runner: Bash denied: ") && text.contains("[permissions] allow"),
        "{text}"
    );
}

#[test]
fn http_serves_loopback_addresses_only() {
    let project = TempProject::new();
    project.write("zr.toml", "");
    let out = project.zr(&[
        "mcp",
        "serve",
        "--http",
        "0.0.0.0:0",
        "--provider",
        "scripted",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(
            "error: zr mcp serve --http serves loopback addresses only, not 0.0.0.0:0"
        ),
        "{}",
        stderr(&out)
    );
}

/// How long a test waits for one answer of the server.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// A `zr mcp serve` child, killed when dropped.
struct Server {
    child: Child,
    /// Its standard output's lines, read by a thread of their own so
    /// that a test waiting for an answer that never comes ends.
    lines: Option<std::sync::mpsc::Receiver<String>>,
}

impl Server {
    fn stdio(project: &TempProject) -> Self {
        let script = project.path().join("script.json");
        let mut child = zr_process()
            .args(["mcp", "serve", "--provider", "scripted", "--script"])
            .arg(&script)
            .current_dir(project.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("zr starts");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines: Some(lines),
        }
    }

    fn http(project: &TempProject) -> (Self, String) {
        let (server, url, _) = Self::http_limited(project, "", None);
        (server, url)
    }

    /// `zr mcp serve --http` with the test limits `limits`
    /// (`ZR_TEST_SERVE_LIMITS`) and, with `nofile`, that many file
    /// descriptors at most (`ulimit -n`); its standard error's lines after
    /// the address are collected.
    fn http_limited(
        project: &TempProject,
        limits: &str,
        nofile: Option<u32>,
    ) -> (Self, String, Arc<Mutex<Vec<String>>>) {
        let script = project.path().join("script.json");
        let mut command = match nofile {
            Some(n) => {
                let mut sh = zr_process();
                // zr_process's environment, with sh in front.
                let zr = std::path::PathBuf::from(sh.get_program());
                sh = Command::new("sh");
                sh.envs(zr_process().get_envs().filter_map(|(k, v)| Some((k, v?))))
                    .arg("-c")
                    .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                    .arg(zr);
                sh
            }
            None => zr_process(),
        };
        for var in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ZR_LOG", "RUST_LOG"] {
            command.env_remove(var);
        }
        let mut child = command
            .args([
                "mcp",
                "serve",
                "--http",
                "127.0.0.1:0",
                "--provider",
                "scripted",
                "--script",
            ])
            .arg(&script)
            .env("ZR_TEST_SERVE_LIMITS", limits)
            .current_dir(project.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("zr starts");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let url = loop {
            let mut line = String::new();
            assert!(
                err.read_line(&mut line).expect("zr writes its address") > 0,
                "zr ended before it listened"
            );
            if let Some(url) = line.trim().strip_prefix("zr mcp serve: listening on ") {
                break url.to_owned();
            }
        };
        let lines = Arc::new(Mutex::new(Vec::new()));
        let collected = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                collected.lock().expect("the lines").push(line);
            }
        });
        (Self { child, lines: None }, url, lines)
    }

    fn send(&mut self, line: &str) {
        use std::io::Write as _;
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").expect("zr reads");
    }

    /// The response to request `id`, and the messages before it.
    fn reply(&mut self, id: u64) -> (Value, Vec<Value>) {
        let lines = self.lines.as_mut().expect("a stdio server");
        let mut before = Vec::new();
        loop {
            let line = match lines.recv_timeout(ANSWER_WITHIN) {
                Ok(line) => line,
                Err(e) => panic!("no answer to request {id} ({e}) after {before:?}"),
            };
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id {
                return (message, before);
            }
            before.push(message);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The conformance project: one agent type per test tool the suite calls.
fn conformance_project() -> TempProject {
    let project = TempProject::new();
    project.write("zr.toml", "").write("hello.txt", "hello\n");
    for name in [
        "test-simple-text",
        "test-tool-with-progress",
        "test-error-handling",
        "test-tool-with-logging",
    ] {
        project.write(
            &format!(".zr/agents/{name}.md"),
            &format!("---\nname: {name}\ndescription: The conformance suite's {name}, as an agent type\ntools: Read\n---\nAnswer the suite.\n"),
        );
    }
    // `test-error-handling` has no script: its model request fails, so
    // the subagent ends `failed` and the call is an error result.
    project.write(
        "script.json",
        r#"{"agents": {
  "test-simple-text": [{"turns": [{"text": "This is a simple text response for testing."}]}],
  "test-tool-with-progress": [{"turns": [{"tool_calls": [{"name": "Read", "input": {"file_path": "hello.txt"}}]}, {"delay_ms": 100, "text": "Progress test completed."}]}],
  "test-tool-with-logging": [{"turns": [{"tool_calls": [{"name": "Read", "input": {"file_path": "hello.txt"}}]}, {"text": "Logging test completed."}]}]
}}"#,
    );
    project
}

/// The scenarios that apply, each with the checks it must pass.
const SCENARIOS: &[(&str, &[&str])] = &[
    ("server-initialize", &["server-initialize"]),
    ("ping", &["ping"]),
    ("tools-list", &["tools-list"]),
    ("tools-call-simple-text", &["tools-call-simple-text"]),
    ("tools-call-error", &["tools-call-error"]),
    ("tools-call-with-progress", &["tools-call-with-progress"]),
    ("tools-call-with-logging", &["tools-call-with-logging"]),
    ("logging-set-level", &["logging-set-level"]),
    (
        "dns-rebinding-protection",
        &[
            "localhost-host-rebinding-rejected",
            "localhost-host-valid-accepted",
        ],
    ),
];

/// The suite's verdict on `scenario` against `url`: its exit status and
/// its checks as `(id, outcome)`, from the lines
/// `TIME [id] OUTCOME description`.
fn run_scenario(url: &str, scenario: &str) -> (bool, Vec<(String, String)>, String) {
    let suite = zr_test_support::deps::installed(
        "node/node_modules/@modelcontextprotocol/conformance/dist/index.js",
    );
    let work = tempfile::tempdir().expect("a folder for the suite's results");
    let out = Command::new("node")
        .arg(suite)
        .args(["server", "--url", url, "--scenario", scenario])
        .current_dir(work.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("node runs");
    let colour = regex::Regex::new("\x1b\\[[0-9;]*m").expect("a valid pattern");
    let report = colour
        .replace_all(
            &format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            "",
        )
        .into_owned();
    let checks = report
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once(" [")?;
            let (id, rest) = rest.split_once(']')?;
            let outcome = rest.split_whitespace().next()?;
            Some((id.trim().to_owned(), outcome.to_owned()))
        })
        .collect();
    (out.status.success(), checks, report)
}

/// Passes when the suite exited 0 and reported exactly `expected`, each
/// `SUCCESS`.
fn judge(ok: bool, checks: &[(String, String)], expected: &[&str]) -> Result<(), String> {
    if !ok {
        return Err("the suite exited non-zero".to_owned());
    }
    let ids: Vec<&str> = checks.iter().map(|(id, _)| id.as_str()).collect();
    if ids != expected {
        return Err(format!("checks {ids:?}, expected {expected:?}"));
    }
    match checks.iter().find(|(_, outcome)| outcome != "SUCCESS") {
        Some((id, outcome)) => Err(format!("check {id}: {outcome}")),
        None => Ok(()),
    }
}

#[test]
fn the_conformance_suites_server_scenarios_that_apply_pass_over_http() {
    let project = conformance_project();
    let (_server, url) = Server::http(&project);
    // Each scenario is its own MCP session; they run at once.
    let runs: Vec<_> = SCENARIOS
        .iter()
        .map(|&(scenario, expected)| {
            let url = url.clone();
            std::thread::spawn(move || {
                let (ok, checks, report) = run_scenario(&url, scenario);
                (scenario, judge(ok, &checks, expected), report)
            })
        })
        .collect();
    let mut failures = Vec::new();
    for run in runs {
        let (scenario, verdict, report) = run.join().expect("the scenario's thread");
        if let Err(why) = verdict {
            failures.push(format!("{scenario}: {why}\n{report}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));

    // The judgement can fail: a scenario that does not apply (an image
    // result) fails against the same server.
    let (ok, checks, report) = run_scenario(&url, "tools-call-image");
    assert!(
        judge(ok, &checks, &["tools-call-image"]).is_err(),
        "tools-call-image passed against agent types:\n{report}"
    );
}

#[test]
fn the_http_server_refuses_a_foreign_host_and_origin() {
    let project = conformance_project();
    let (_server, url) = Server::http(&project);
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let post = |host: &str, origin: &str| -> String {
        use std::io::{Read as _, Write as _};
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let mut stream = std::net::TcpStream::connect(&addr).expect("zr listens");
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("the request is written");
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response.lines().next().unwrap_or_default().to_owned()
    };
    let port = addr.rsplit(':').next().expect("a port");
    assert_eq!(
        post("evil.example.com", "http://evil.example.com"),
        "HTTP/1.1 403 Forbidden"
    );
    // A loopback host with a foreign origin (a page of another site).
    assert_eq!(
        post(&addr, "http://evil.example.com"),
        "HTTP/1.1 403 Forbidden"
    );
    assert_eq!(
        post(
            &format!("localhost:{port}"),
            &format!("http://localhost:{port}")
        ),
        "HTTP/1.1 200 OK"
    );
}

/// One HTTP/1.1 request to `addr` (`Connection: close`, the MCP
/// headers): the head (status line and headers) and the body as sent.
fn http(addr: &str, headers: &[(&str, &str)], body: &str) -> (String, String) {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(addr).expect("zr listens");
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    write!(stream, "{head}\r\n{body}").expect("the request is written");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.to_owned(), body.to_owned())
}

/// The address of a `zr mcp serve --http` URL.
fn address(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// A new MCP session on the HTTP server at `addr`: its id.
fn http_session(addr: &str) -> String {
    let (head, _) = http(addr, &[], INITIALIZE);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let id = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {head}"));
    let (head, _) = http(
        addr,
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");
    id
}

/// A project with one agent type, `runner`, and no script for it.
fn runner_project() -> TempProject {
    let project = TempProject::new();
    project
        .write("zr.toml", "")
        .write(
            ".zr/agents/runner.md",
            "---\nname: runner\ndescription: Runs\ntools: Read\n---\nRun.\n",
        )
        .write("script.json", r#"{"agents": {}}"#);
    project
}

#[test]
fn a_stdio_message_over_the_size_limit_is_answered_with_an_error_naming_the_limit() {
    let project = runner_project();
    let mut server = Server::stdio(&project);
    server.send(INITIALIZE);
    server.reply(1);
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let long = "a".repeat(17 * 1024 * 1024);
    server.send(&format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"runner","arguments":{{"prompt":"{long}"}}}}}}"#
    ));
    let (reply, _) = server.reply(7);
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    let message = reply["error"]["message"].as_str().expect("a message");
    assert!(message.contains("limit of 16777216 bytes"), "{message}");
    // An id the start of the line does not show: a null id.
    server.send(&format!(
        r#"{{"jsonrpc":"2.0","params":{{"prompt":"{long}"}},"id":8,"method":"tools/call"}}"#
    ));
    // The server reads on.
    server.send(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    let (pong, before) = server.reply(9);
    assert_eq!(pong["result"], serde_json::json!({}), "{pong}");
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["id"], Value::Null, "{before:?}");
    assert_eq!(before[0]["error"]["code"], -32600, "{before:?}");
}

#[test]
fn tools_call_with_arguments_that_are_not_an_object_is_invalid_params() {
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"runner","arguments":"x"}}"#;
    let expected = "invalid params for tools/call: arguments must be an object, not a string";
    let project = runner_project();

    let mut server = Server::stdio(&project);
    server.send(INITIALIZE);
    server.reply(1);
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    server.send(call);
    let (reply, _) = server.reply(2);
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["error"]["message"], expected, "{reply}");
    // A method nobody serves is still not found.
    server.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/nothing","params":{}}"#);
    let (reply, _) = server.reply(3);
    assert_eq!(reply["error"]["code"], -32601, "{reply}");

    let (_server, url) = Server::http(&project);
    let addr = address(&url);
    let session = http_session(&addr);
    let (head, body) = http(
        &addr,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        call,
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    assert!(
        body.contains(&format!(r#""code":-32602,"message":"{expected}""#)),
        "{body}"
    );
}

#[test]
fn a_body_that_is_not_json_rpc_gets_a_json_rpc_error_over_http() {
    let project = runner_project();
    let (_server, url) = Server::http(&project);
    let addr = address(&url);
    let (head, body) = http(&addr, &[], r#"{"jsonrpc":"2.0","id":1,"method""#);
    assert!(head.starts_with("HTTP/1.1 400 Bad Request"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    let error: Value = serde_json::from_str(&body).expect("a JSON body");
    assert_eq!(error["jsonrpc"], "2.0");
    assert_eq!(error["id"], Value::Null, "{error}");
    assert_eq!(error["error"]["code"], -32700, "{error}");
    // JSON that is no JSON-RPC message: -32600, with its id.
    let (head, body) = http(&addr, &[], r#"{"id":4,"hello":"world"}"#);
    assert!(head.starts_with("HTTP/1.1 400 Bad Request"), "{head}");
    let error: Value = serde_json::from_str(&body).expect("a JSON body");
    assert_eq!(error["id"], 4, "{error}");
    assert_eq!(error["error"]["code"], -32600, "{error}");
    // A foreign host is still refused first.
    let (head, _) = http(&addr, &[("Origin", "http://evil.example.com")], "{");
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
}

/// Whether the server closed `stream` within `within`: a read ends (the
/// end of the stream, or a reset) instead of timing out.
fn closed_within(stream: &mut std::net::TcpStream, within: std::time::Duration) -> bool {
    use std::io::Read as _;
    stream
        .set_read_timeout(Some(within))
        .expect("a read timeout");
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            // A response (to a request sent), then the close.
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn half_open_and_idle_connections_are_closed_after_the_head_timeout() {
    use std::io::Write as _;
    let project = runner_project();
    let (_server, url, _) = Server::http_limited(&project, "head_ms=1000", None);
    let addr = address(&url);
    let started = std::time::Instant::now();
    // Connections that send nothing, one that stops inside its head, and
    // one idle after a whole request.
    let mut streams: Vec<std::net::TcpStream> = (0..50)
        .map(|_| std::net::TcpStream::connect(&addr).expect("zr listens"))
        .collect();
    let mut partial = std::net::TcpStream::connect(&addr).expect("zr listens");
    write!(partial, "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").expect("written");
    streams.push(partial);
    let mut idle = std::net::TcpStream::connect(&addr).expect("zr listens");
    write!(idle, "GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n").expect("written");
    streams.push(idle);
    for (n, stream) in streams.iter_mut().enumerate() {
        assert!(
            closed_within(stream, std::time::Duration::from_secs(10)),
            "connection {n} still open after {:?}",
            started.elapsed()
        );
    }
    let took = started.elapsed();
    assert!(
        took >= std::time::Duration::from_millis(900) && took < std::time::Duration::from_secs(8),
        "{took:?}"
    );
    // The server serves on.
    http_session(&addr);
}

#[test]
fn out_of_file_descriptors_the_server_pauses_warns_once_per_burst_and_recovers() {
    let project = runner_project();
    let (_server, url, stderr) =
        Server::http_limited(&project, "head_ms=3000,connections=1000", Some(64));
    let addr = address(&url);
    // More connections than the process has descriptors: accept fails
    // with EMFILE while they are open.
    let held: Vec<std::net::TcpStream> = (0..120)
        .map(|_| std::net::TcpStream::connect(&addr).expect("the listen queue takes it"))
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let warnings = |lines: &[String]| {
        lines
            .iter()
            .filter(|l| l.contains("cannot accept a connection"))
            .count()
    };
    let during = stderr.lock().expect("the lines").clone();
    assert_eq!(warnings(&during), 1, "{during:#?}");
    assert!(during.len() < 20, "{during:#?}");
    // Once the head timeout closed them, the server serves again.
    drop(held);
    let started = std::time::Instant::now();
    loop {
        let (head, _) = http(&addr, &[], INITIALIZE);
        if head.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "no answer since: {head}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // Accepting the queued connections as they close may start another
    // burst or two; never a warning per failed accept.
    let after = stderr.lock().expect("the lines").clone();
    assert!((1..=3).contains(&warnings(&after)), "{after:#?}");
    assert!(after.len() < 20, "{after:#?}");
}

#[test]
fn idle_sessions_expire_and_the_oldest_idle_one_makes_room_at_the_cap() {
    let project = runner_project();
    let (_server, url, _) = Server::http_limited(&project, "session_idle_ms=1500,sessions=3", None);
    let addr = address(&url);
    let ping = |session: &str| -> String {
        let (head, _) = http(
            &addr,
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
        );
        head.lines().next().unwrap_or_default().to_owned()
    };
    let first = http_session(&addr);
    let second = http_session(&addr);
    let third = http_session(&addr);
    assert_eq!(ping(&second), "HTTP/1.1 200 OK");
    assert_eq!(ping(&third), "HTTP/1.1 200 OK");
    // A fourth at the cap of three: the first, idle the longest, goes.
    let fourth = http_session(&addr);
    assert_eq!(ping(&first), "HTTP/1.1 404 Not Found");
    assert_eq!(ping(&fourth), "HTTP/1.1 200 OK");
    // Unused for the idle time, all expire.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    for session in [&second, &third, &fourth] {
        assert_eq!(ping(session), "HTTP/1.1 404 Not Found", "{session}");
    }
    // New sessions are made as before.
    let fifth = http_session(&addr);
    assert_eq!(ping(&fifth), "HTTP/1.1 200 OK");
}
