//! One Claude Code project of our own making, with everything at once:
//! instruction files with an import, settings files with rules, env and
//! hooks, an agent file using every field (inline and named MCP servers,
//! `memory`, `skills`, `initialPrompt`, `color`, front-matter `hooks`,
//! `Agent(type)` in `tools`), a legacy SSE server in `.mcp.json`, a
//! project skill and 200 of the user's skills. `zr resolve` and `zr
//! agents show` are snapshots of what each agent gets; `zr run` against a
//! loopback Anthropic server shows the same on the request bodies.

use serde_json::json;

use crate::claude_code::{ClaudeProject, system, tools};
use crate::claude_fields::sse_server;
use crate::support::{everything_js, stderr, stdout};
use zr_test_support::loopback::{Reply, Request, Server};

/// The user's skills: as many as a popular collection brings.
const USER_SKILLS: usize = 200;

/// Writes the project beside [`ClaudeProject::claude_code_files`]: the
/// `reviewer` agent file, the SSE server in `.mcp.json`, the skills.
fn whole_project(p: &ClaudeProject, sse_url: &str) {
    p.claude_code_files();
    let everything = everything_js().display().to_string();
    p.write(
        "repo/.mcp.json",
        &format!(r#"{{"mcpServers": {{"legacy": {{"type": "sse", "url": "{sse_url}"}}}}}}"#),
    )
    .write(
        "repo/.claude/agents/review/reviewer.md",
        &format!(
            "---
name: reviewer
description: Reviews a change for style and correctness.
tools: Read, Grep, Glob, Agent(explore)
model: sonnet
color: green
memory: project
skills: [house-style]
initialPrompt: Read the diff first.
mcpServers:
  - legacy
  - notes-db:
      command: node
      args: [{everything:?}]
hooks:
  Stop:
    - hooks:
        - type: command
          command: echo reviewer-stop >> stops.log
maxTurns: 6
unknown-key: kept
---
You review changes. Be brief.
"
        ),
    )
    .write(
        "repo/.claude/agent-memory/reviewer/MEMORY.md",
        "The team prefers early returns.\n",
    )
    .write(
        "repo/.claude/skills/house-style/SKILL.md",
        "---\nname: house-style\ndescription: The house style for Rust code in this repository.\n---\nUse early returns. Name errors by what went wrong.\n",
    );
    for i in 0..USER_SKILLS {
        p.write(
            &format!("home/.claude/skills/skill-{i:03}/SKILL.md"),
            &format!(
                "---\nname: skill-{i:03}\ndescription: A user skill number {i} that helps with a task of its own, described at some length as public skills are.\n---\nBody {i}.\n"
            ),
        );
    }
}

/// `text` with the temporary folder and the SSE server's port made stable.
fn stable(text: &str, p: &ClaudeProject, sse_url: &str) -> String {
    text.replace(sse_url, "http://127.0.0.1:PORT/sse")
        .replace(&p.project().display().to_string(), "[repo]")
        .replace(&p.home().display().to_string(), "[home]")
        .replace(
            &everything_js().display().to_string(),
            "[server-everything]",
        )
}

#[test]
fn a_whole_claude_code_project_gives_each_agent_its_instructions_pool_hooks_and_memory() {
    let (_sse, url) = sse_server();
    let p = ClaudeProject::new();
    whole_project(&p, &url);

    let out = p.zr(&["resolve"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("resolve", stable(&stdout(&out), &p, &url));

    let out = p.zr(&["agents", "show", "reviewer"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("agents_show_reviewer", stable(&stdout(&out), &p, &url));
}

/// The root starts the reviewer; the reviewer calls the SSE server's echo
/// and the inline server's echo, then answers; the root answers.
fn model() -> Server {
    Server::answering(|request: &Request, _| {
        let names = tools(request);
        let turn = request.body["messages"].as_array().map_or(0, Vec::len) / 2;
        if names.contains(&"Task".to_owned()) && !system(request).contains("You review changes") {
            return match turn {
                0 => Reply::anthropic(
                    None,
                    &[(
                        "t1",
                        "Task",
                        json!({"description": "review", "prompt": "Review the last commit.", "subagent_type": "reviewer"}),
                    )],
                ),
                _ => Reply::anthropic(Some("reviewed"), &[]),
            };
        }
        match turn {
            0 => Reply::anthropic(
                None,
                &[
                    ("e1", "mcp__legacy__echo", json!({"message": "over sse"})),
                    ("e2", "mcp__notes-db__echo", json!({"message": "inline"})),
                ],
            ),
            _ => Reply::anthropic(Some("looks fine"), &[]),
        }
    })
}

#[test]
fn a_whole_claude_code_project_reaches_the_request_bodies() {
    let (_sse, url) = sse_server();
    let p = ClaudeProject::new();
    whole_project(&p, &url);
    p.write(
        "repo/zr.toml",
        "[permissions]\nallow = [\"mcp__legacy__echo\", \"mcp__notes-db__echo\"]\n",
    );
    let server = model();
    let out = p.zr(
        &["run", "Review the last commit."],
        &[("ANTHROPIC_BASE_URL", server.url.as_str())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "reviewed\n", "{}", stderr(&out));
    let requests = server.requests();
    let (reviewer, root): (Vec<&Request>, Vec<&Request>) = requests
        .iter()
        .partition(|r| system(r).contains("You review changes"));
    assert_eq!((root.len(), reviewer.len()), (2, 2), "{requests:#?}");

    // The root: every skill listed, the project's first; the settings'
    // model; no tool of the reviewer's servers.
    let root_tools = tools(root[0]);
    assert!(!root_tools.iter().any(|t| t.starts_with("mcp__notes-db__")));
    let skill = root[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .expect("the Skill tool")["description"]
        .as_str()
        .unwrap()
        .to_owned();
    let first = skill.find("house-style").expect("the project's skill");
    let user = skill.find("skill-000").expect("a user skill");
    assert!(first < user, "{skill}");
    assert_eq!(root[0].body["model"], "claude-opus-4-5");

    // The reviewer: its model, the instructions then its memory at the
    // end of its system prompt, its skill and initial prompt before its
    // task, its tools (Agent(explore) gives it Task) and both servers'.
    let r = reviewer[0];
    assert_eq!(r.body["model"], "claude-sonnet-4-5");
    let sys = system(r);
    let instructions = sys.find("Contents of CLAUDE.md").expect("instructions");
    let memory = sys
        .find("The team prefers early returns.")
        .expect("MEMORY.md");
    assert!(instructions < memory, "{sys}");
    let first_turn = r.body["messages"][0].to_string();
    let style = first_turn.find("Use early returns.").expect("the skill");
    let initial = first_turn
        .find("Read the diff first.")
        .expect("initialPrompt");
    let task = first_turn
        .find("Review the last commit.")
        .expect("the task");
    assert!(style < initial && initial < task, "{first_turn}");
    let names = tools(r);
    for t in [
        "Read",
        "Grep",
        "Glob",
        "mcp__legacy__echo",
        "mcp__notes-db__echo",
    ] {
        assert!(names.contains(&t.to_owned()), "{t} in {names:?}");
    }
    assert!(!names.contains(&"Bash".to_owned()), "{names:?}");

    // Both servers answered, and the reviewer's own Stop hook ran once,
    // for it alone.
    let results = reviewer[1].body["messages"].to_string();
    assert!(results.contains("Echo: over sse"), "{results}");
    assert!(results.contains("Echo: inline"), "{results}");
    let stops = std::fs::read_to_string(p.project().join("stops.log")).expect("stops.log");
    assert_eq!(stops, "reviewer-stop\n");
}
