//! `zr host`: the host protocol over a real `zr` process, against the
//! loopback model server. Every line zr writes is checked against the
//! committed JSON Schema (schema/host-protocol.schema.json).

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{TempProject, repo, zr_process};
use zr_test_support::loopback::{Reply, Request, Server};

/// A `zr host` process and the lines it wrote.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Host {
    fn start(project: &TempProject, server: &Server) -> Self {
        let mut child = zr_process()
            .arg("host")
            .current_dir(project.path())
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("ANTHROPIC_BASE_URL", &server.url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("zr host starts");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("zr wrote a line that is not JSON ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut host = Self {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        };
        host.send(&json!({"type": "hello", "protocol": 1, "client": "zr-cli tests"}));
        let hello = host.next();
        assert_eq!(hello["type"], "hello", "{hello}");
        assert_eq!(hello["protocol"], 1);
        host
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("zr reads its standard input");
        stdin.flush().expect("flushed");
    }

    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("zr wrote nothing for 30 s; so far: {:#?}", self.seen));
        self.seen.push(line.clone());
        line
    }

    /// Reads lines until `result`, answering questions with `answer`.
    fn until_result(&mut self, answer: &mut dyn FnMut(&Value) -> Option<Value>) -> Value {
        loop {
            let line = self.next();
            if line["type"] == "result" {
                return line;
            }
            if let Some(reply) = answer(&line) {
                self.send(&reply);
            }
        }
    }

    /// Closes zr's standard input; zr must exit 0.
    fn close(self) -> Vec<Value> {
        let (status, lines) = self.close_with_status();
        assert!(status.success(), "zr host exited with {status}");
        lines
    }

    /// Closes zr's standard input: how zr exited (1 when the last query
    /// did not complete), and every line it wrote.
    fn close_with_status(mut self) -> (std::process::ExitStatus, Vec<Value>) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("zr exits");
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (status, std::mem::take(&mut self.seen))
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every line validates against the committed schema's `ZrMessage`.
fn assert_valid(lines: &[Value]) {
    let text = std::fs::read_to_string(repo().join("schema/host-protocol.schema.json"))
        .expect("the committed schema");
    let mut schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    schema["oneOf"] = json!([{"$ref": "#/$defs/ZrMessage"}]);
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    for line in lines {
        let errors: Vec<String> = validator.iter_errors(line).map(|e| e.to_string()).collect();
        assert!(
            errors.is_empty(),
            "{line}\ndoes not match the schema: {errors:#?}"
        );
    }
}

/// The system prompt of a request, as text.
fn system(request: &Request) -> String {
    request.body["system"].to_string()
}

fn tool_names(request: &Request) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

fn turns(request: &Request) -> usize {
    request.body["messages"].as_array().map_or(0, Vec::len)
}

/// A model: the root delegates to `agent_type`; that agent calls
/// `lookup`, then answers; the root answers.
fn delegating_model(agent_type: &'static str) -> Server {
    Server::answering(move |request, _| {
        let sub = system(request).contains("You are the worker.");
        match (sub, turns(request)) {
            (false, 1) => Reply::anthropic(
                None,
                &[(
                    "t1",
                    "Task",
                    json!({"subagent_type": agent_type, "description": "look it up", "prompt": "find the answer"}),
                )],
            ),
            (true, 1) => Reply::anthropic(None, &[("l1", "lookup", json!({"key": "answer"}))]),
            (true, _) => Reply::anthropic(Some("the worker found it"), &[]),
            (false, _) => Reply::anthropic(Some("all done"), &[]),
        }
    })
}

fn lookup_tool() -> Value {
    json!({
        "name": "lookup",
        "description": "Looks a key up in the host's table.",
        "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
        "read_only": true
    })
}

#[test]
fn a_subagent_calls_a_host_tool_and_every_line_matches_the_schema() {
    let project = TempProject::new();
    let server = delegating_model("worker");
    let mut host = Host::start(&project, &server);
    host.send(&json!({"type": "query", "prompt": "look it up", "options": {
        "tools": [lookup_tool()],
        "agents": {"worker": {"description": "Looks things up.", "prompt": "You are the worker.", "tools": ["lookup"]}},
    }}));
    let mut calls = Vec::new();
    let result = host.until_result(&mut |line| {
        (line["type"] == "tool_call").then(|| {
            calls.push(line.clone());
            json!({"type": "tool_result", "id": line["id"], "content": "the value is 42"})
        })
    });
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["output"], "all done");
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["tool"], "lookup");
    assert_eq!(calls[0]["input"], json!({"key": "answer"}));
    assert!(
        calls[0]["agent"]
            .as_str()
            .is_some_and(|a| a.starts_with("root.")),
        "{}",
        calls[0]
    );
    // The model got the host's answer as the tool's result.
    let requests = server.requests();
    let worker_second = requests
        .iter()
        .find(|r| system(r).contains("You are the worker.") && turns(r) == 3)
        .expect("the worker's second request");
    assert!(
        worker_second.body["messages"][2]
            .to_string()
            .contains("the value is 42"),
        "{}",
        worker_second.body["messages"][2]
    );
    let worker_first = requests
        .iter()
        .find(|r| system(r).contains("You are the worker.") && turns(r) == 1)
        .expect("the worker's first request");
    assert!(tool_names(worker_first).contains(&"lookup".to_owned()));
    let lines = host.close();
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "event" && l["event"] == "subagent_finished")
    );
    assert_valid(&lines);
}

#[test]
fn a_host_tool_cannot_reach_an_agent_whose_pool_does_not_hold_it() {
    let project = TempProject::new();
    // The worker is not given `lookup`; its model calls it anyway.
    let server = delegating_model("worker");
    let mut host = Host::start(&project, &server);
    host.send(&json!({"type": "query", "prompt": "look it up", "options": {
        "tools": [lookup_tool()],
        "agents": {"worker": {"description": "Reads files.", "prompt": "You are the worker.", "tools": ["Read"]}},
    }}));
    let result = host.until_result(&mut |line| {
        assert_ne!(
            line["type"], "tool_call",
            "the host was asked to run a tool: {line}"
        );
        None
    });
    assert_eq!(result["status"], "completed", "{result}");
    let requests = server.requests();
    let worker_first = requests
        .iter()
        .find(|r| system(r).contains("You are the worker.") && turns(r) == 1)
        .expect("the worker's first request");
    assert!(
        !tool_names(worker_first).contains(&"lookup".to_owned()),
        "{:?}",
        tool_names(worker_first)
    );
    let root_first = requests
        .iter()
        .find(|r| !system(r).contains("You are the worker.") && turns(r) == 1)
        .expect("the root's first request");
    assert!(tool_names(root_first).contains(&"lookup".to_owned()));
    let worker_second = requests
        .iter()
        .find(|r| system(r).contains("You are the worker.") && turns(r) == 3)
        .expect("the worker's second request");
    let refused = worker_second.body["messages"][2].to_string();
    assert!(
        refused.contains("is_error") && refused.contains("lookup"),
        "{refused}"
    );
    assert_valid(&host.close());
}

#[test]
fn can_use_tool_denies_a_call_and_a_hook_sees_the_calls() {
    let project = TempProject::new();
    let server = Server::answering(|request, _| match turns(request) {
        1 => Reply::anthropic(
            None,
            &[
                ("n1", "note", json!({"text": "first"})),
                ("n2", "note", json!({"text": "second"})),
            ],
        ),
        _ => Reply::anthropic(Some("noted"), &[]),
    });
    let mut host = Host::start(&project, &server);
    host.send(&json!({"type": "query", "prompt": "take notes", "options": {
        "tools": [{"name": "note", "description": "Writes a note.", "input_schema": {"type": "object"}}],
        "can_use_tool": true,
        "hooks": [{"event": "PostToolUse", "matcher": "note"}],
    }}));
    let mut asked = Vec::new();
    let mut hooked = Vec::new();
    let result = host.until_result(&mut |line| match line["type"].as_str() {
        Some("can_use_tool") => {
            asked.push(line.clone());
            Some(if line["input"]["text"] == "second" {
                json!({"type": "permission_answer", "id": line["id"], "behavior": "deny", "message": "no second notes"})
            } else {
                json!({"type": "permission_answer", "id": line["id"], "behavior": "allow"})
            })
        }
        Some("tool_call") => Some(json!({"type": "tool_result", "id": line["id"], "content": "written"})),
        Some("hook_call") => {
            hooked.push(line.clone());
            Some(json!({"type": "hook_answer", "id": line["id"]}))
        }
        _ => None,
    });
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(asked.len(), 2, "{asked:#?}");
    assert_eq!(asked[0]["agent"], "root");
    assert_eq!(hooked.len(), 1, "only the call that ran: {hooked:#?}");
    assert_eq!(hooked[0]["event"], "PostToolUse");
    assert_eq!(hooked[0]["output"], "written");
    let second = server
        .requests()
        .into_iter()
        .find(|r| turns(r) == 3)
        .expect("a second request");
    let results = second.body["messages"][2].to_string();
    assert!(
        results.contains("written") && results.contains("no second notes"),
        "{results}"
    );
    let lines = host.close();
    assert!(lines.iter().any(|l| l["event"] == "permission_denied"));
    assert_valid(&lines);
}

#[test]
fn a_bad_first_message_is_a_fatal_error_with_the_cli_text() {
    let project = TempProject::new();
    let mut child = zr_process()
        .arg("host")
        .current_dir(project.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zr host starts");
    writeln!(
        child.stdin.as_mut().expect("piped"),
        r#"{{"type":"hello","protocol":99}}"#
    )
    .expect("written");
    let out = child.wait_with_output().expect("zr exits");
    let line: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(line["type"], "error");
    assert_eq!(line["fatal"], true);
    assert!(
        line["message"]
            .as_str()
            .is_some_and(|m| m.contains("protocol 99")),
        "{line}"
    );
    assert!(!out.status.success());
    assert_valid(&[line]);
}

#[test]
fn a_hook_stop_reaches_the_host_as_an_event() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        r#"[[hooks.PostToolUse]]
matcher = "Glob"
hooks = [{ type = "command", command = '''echo '{"continue": false, "stopReason": "enough looking"}' ''' }]
"#,
    );
    let server = Server::answering(|request, _| match turns(request) {
        1 => Reply::anthropic(None, &[("g1", "Glob", json!({"pattern": "*.md"}))]),
        _ => Reply::anthropic(Some("never asked"), &[]),
    });
    let mut host = Host::start(&project, &server);
    host.send(&json!({"type": "query", "prompt": "look around"}));
    let result = host.until_result(&mut |_| None);
    assert_eq!(result["status"], "stopped", "{result}");
    let (status, lines) = host.close_with_status();
    assert_eq!(status.code(), Some(1), "the last query did not complete");
    let stopped: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "event" && l["event"] == "hook_stopped")
        .collect();
    assert_eq!(stopped.len(), 1, "{lines:#?}");
    assert_eq!(stopped[0]["agent"], "root");
    assert!(
        stopped[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("PostToolUse") && r.contains("enough looking")),
        "{}",
        stopped[0]
    );
    assert_valid(&lines);
}

#[test]
fn a_spent_session_budget_is_named_in_the_result() {
    let project = TempProject::new();
    // Each loopback answer uses 16 tokens.
    project.write("zr.toml", "[budget]\ntokens = 5\n");
    let server = Server::answering(|request, _| match turns(request) {
        1 => Reply::anthropic(None, &[("g1", "Glob", json!({"pattern": "*.md"}))]),
        _ => Reply::anthropic(Some("a summary"), &[]),
    });
    let mut host = Host::start(&project, &server);
    host.send(&json!({"type": "query", "prompt": "look around"}));
    let result = host.until_result(&mut |_| None);
    assert_eq!(result["status"], "budget_exhausted", "{result}");
    assert_eq!(
        result["budget_ended"],
        json!({"budget": "tokens", "limit": 5}),
        "{result}"
    );
    let (status, lines) = host.close_with_status();
    assert_eq!(status.code(), Some(1), "the last query did not complete");
    assert_valid(&lines);
}
