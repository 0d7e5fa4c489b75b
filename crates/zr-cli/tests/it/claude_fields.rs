//! Claude Code's agent-file fields take effect, seen on the request bodies
//! of `zr run` against a loopback Anthropic server: `memory` (the folder's
//! MEMORY.md in the agent's system prompt, the folder writable by that
//! agent and by no other), `skills` preloaded into the first user turn,
//! `initialPrompt` opening it.

use serde_json::json;

use crate::loopback::run_against;
use crate::support::TempProject;
use zr_test_support::loopback::{Reply, Server};

#[test]
fn memory_preloaded_skills_and_the_initial_prompt_reach_the_agent_and_only_it_writes_its_memory() {
    let task = |id: &str, ty: &str| {
        Reply::anthropic(
            None,
            &[(
                id,
                "Task",
                json!({"description": id, "prompt": format!("Task for {ty}."), "subagent_type": ty}),
            )],
        )
    };
    let write = |id: &str, path: &str, text: &str| {
        Reply::anthropic(
            None,
            &[(id, "Write", json!({"file_path": path, "content": text}))],
        )
    };
    let project = TempProject::new();
    let memory = project.path().join(".claude/agent-memory/keeper");
    let notes = memory.join("notes.md");
    let planted = memory.join("planted.md");
    let server = Server::scripted(vec![
        task("toolu_keeper", "keeper"),
        write(
            "toolu_w1",
            &notes.display().to_string(),
            "Tests: cargo test.\n",
        ),
        Reply::anthropic(Some("remembered"), &[]),
        task("toolu_intruder", "intruder"),
        write("toolu_w2", &planted.display().to_string(), "planted\n"),
        write(
            "toolu_w3",
            &project
                .path()
                .join(".claude/agent-memory/intruder/../keeper/planted.md")
                .display()
                .to_string(),
            "planted through ..\n",
        ),
        Reply::anthropic(Some("tried"), &[]),
        Reply::anthropic(Some("All done."), &[]),
    ]);
    project
        .write(
            "zr.toml",
            "[model]\nname = \"claude-test\"\n\n[permissions]\nallow = [\"Write\"]\n",
        )
        .write(
            ".claude/agents/keeper.md",
            "---\nname: keeper\ndescription: Keeps notes.\ntools: Read, Write, Edit\nmemory: project\nskills: [sql-style]\ninitialPrompt: Read your memory before anything else.\n---\nYou keep notes.\n",
        )
        .write(
            ".claude/agents/intruder.md",
            "---\nname: intruder\ndescription: Writes files.\ntools: Write\nmemory: project\n---\nYou write files.\n",
        )
        .write(
            ".zr/skills/sql-style/SKILL.md",
            "---\nname: sql-style\ndescription: How this project writes SQL.\n---\nWrite SQL keywords in capitals.\n",
        )
        .write(".claude/agent-memory/keeper/MEMORY.md", "- The DB is sqlite.\n");
    let out = run_against(&project, &server, false, "go");
    assert_eq!(crate::support::stdout(&out), "All done.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 8);

    // The keeper's first request: its memory in its system prompt, its
    // skill and initial prompt before its task.
    let keeper = &requests[1].body;
    let system = keeper["system"].to_string();
    assert!(system.contains("You keep notes."), "{system}");
    assert!(system.contains("# Your memory"), "{system}");
    assert!(
        system.contains("MEMORY.md:\\n- The DB is sqlite."),
        "{system}"
    );
    assert_eq!(
        keeper["messages"][0]["content"],
        json!([
            {"type": "text", "text": "<skill name=\"sql-style\">\nWrite SQL keywords in capitals.\n</skill>"},
            {"type": "text", "text": "Read your memory before anything else.\n\nTask for keeper.", "cache_control": {"type": "ephemeral"}}
        ])
    );
    // Its write went through.
    let result = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(!result.contains("\"is_error\":true"), "{result}");

    // The intruder, whose memory is its own folder, cannot write the
    // keeper's, directly or through `..`.
    let intruder_system = requests[4].body["system"].to_string();
    assert!(
        intruder_system.contains(".claude/agent-memory/intruder"),
        "{intruder_system}"
    );
    for (request, what) in [(5, "directly"), (6, "through ..")] {
        let result = requests[request].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .to_string();
        assert!(result.contains("\"is_error\":true"), "{what}: {result}");
        assert!(
            result.contains("a protected file"),
            "refused by the boundary, {what}: {result}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "Tests: cargo test.\n"
    );
    assert!(!planted.exists());
}

/// The names of the tools in `request`'s body.
fn tool_names(request: &zr_test_support::loopback::Request) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

#[test]
fn an_inline_mcp_server_starts_for_its_agent_and_no_other_agent_gets_its_tools() {
    let task = |id: &str, ty: &str| {
        Reply::anthropic(
            None,
            &[(
                id,
                "Task",
                json!({"description": id, "prompt": "Go.", "subagent_type": ty}),
            )],
        )
    };
    let server = Server::scripted(vec![
        task("toolu_db", "db"),
        Reply::anthropic(
            None,
            &[(
                "toolu_echo",
                "mcp__local-db__echo",
                json!({"message": "inline"}),
            )],
        ),
        Reply::anthropic(Some("db done"), &[]),
        task("toolu_other", "other"),
        Reply::anthropic(Some("other done"), &[]),
        Reply::anthropic(Some("All done."), &[]),
    ]);
    let everything = crate::support::everything_js().display().to_string();
    let project = TempProject::new();
    project
        .write(
            "zr.toml",
            "[model]\nname = \"claude-test\"\n\n[policy]\nlazy = \"never\"\n\n[permissions]\nallow = [\"mcp__local-db__echo\"]\n",
        )
        // Claude Code's list form, a name-only entry beside the inline one.
        .write(
            ".claude/agents/db.md",
            &format!(
                "---\nname: db\ndescription: Has its own server.\ntools: Read\nmcpServers:\n  - local-db:\n      command: node\n      args: [{everything:?}]\n---\nYou use the database.\n"
            ),
        )
        // Naming another type's inline server gets nothing.
        .write(
            ".claude/agents/other.md",
            "---\nname: other\ndescription: Names the server too.\ntools: Read\nmcpServers: [local-db]\n---\nYou are another.\n",
        );
    let out = run_against(&project, &server, false, "go");
    assert_eq!(crate::support::stdout(&out), "All done.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    let has_server = |n: usize| {
        tool_names(&requests[n])
            .iter()
            .any(|t| t.starts_with("mcp__local-db__"))
    };
    assert!(!has_server(0), "the root: {:?}", tool_names(&requests[0]));
    assert!(has_server(1), "db: {:?}", tool_names(&requests[1]));
    assert!(!has_server(4), "other: {:?}", tool_names(&requests[4]));
    // The call ran on the server.
    let result = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(result.contains("Echo: inline"), "{result}");
}

/// The TypeScript SDK's `SSEServerTransport` (zr-mcp's test server),
/// killed when dropped.
pub(crate) struct SseServer(std::process::Child);

impl Drop for SseServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts zr-mcp's `sse_server.mjs`; its stream URL.
pub(crate) fn sse_server() -> (SseServer, String) {
    use std::io::BufRead as _;
    let sdk =
        zr_test_support::deps::dir().join("node/node_modules/@modelcontextprotocol/sdk/dist/esm");
    assert!(
        sdk.is_dir(),
        "{} is missing: run `cargo xtask deps`",
        sdk.display()
    );
    let mut child = std::process::Command::new("node")
        .arg(crate::support::repo().join("crates/zr-mcp/tests/it/sse_server.mjs"))
        .arg(sdk)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs");
    let stdout = child.stdout.take().expect("its stdout");
    let server = SseServer(child);
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("its URL");
    (server, line.trim().to_owned())
}

#[test]
fn an_sse_server_of_mcp_json_serves_the_run_and_a_broken_entry_beside_it_is_only_a_warning() {
    let (_sse, url) = sse_server();
    let server = Server::scripted(vec![
        Reply::anthropic(
            None,
            &[(
                "toolu_echo",
                "mcp__legacy__echo",
                json!({"message": "over sse"}),
            )],
        ),
        Reply::anthropic(Some("Done."), &[]),
    ]);
    let project = TempProject::new();
    project
        .write(
            "zr.toml",
            "[model]\nname = \"claude-test\"\n\n[policy]\nlazy = \"never\"\n\n[permissions]\nallow = [\"mcp__legacy__echo\"]\n",
        )
        .write(
            ".mcp.json",
            &format!(
                "{{\"mcpServers\": {{\n  \"legacy\": {{\"type\": \"sse\", \"url\": \"{url}\"}},\n  \"broken\": {{\"type\": \"stdio\"}}\n}}}}\n"
            ),
        );
    let out = run_against(&project, &server, false, "go");
    assert_eq!(crate::support::stdout(&out), "Done.\n");
    let err = crate::support::stderr(&out);
    assert!(
        err.starts_with("warning: .mcp.json:3:3: mcpServers.broken: 'command' is required (the server is left out)"),
        "{err}"
    );
    let requests = server.requests();
    let result = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(result.contains("Echo: over sse"), "{result}");
}
