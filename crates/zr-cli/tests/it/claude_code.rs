//! A project set up for Claude Code, run by the real `zr` against a
//! loopback Anthropic server: its instruction files (`CLAUDE.md` with an
//! import, `AGENTS.md`, `CLAUDE.local.md`, the user's
//! `~/.claude/CLAUDE.md`) and its settings files (`permissions`, `env`,
//! `model`, `hooks`) reach the exact request bodies and the calls, and
//! `zr config`, `zr resolve` and `zr agents show` say where each comes
//! from.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::{stderr, stdout, zr};
use zr_test_support::loopback::{Reply, Request, Server};

/// A repository (`.git`) holding the project, and a home folder.
pub(crate) struct ClaudeProject {
    dir: tempfile::TempDir,
}

impl ClaudeProject {
    pub(crate) fn new() -> Self {
        // Under the target folder: agents here may write the temp dir.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder");
        let project = Self { dir };
        std::fs::create_dir_all(project.project().join(".git")).expect("git folder");
        std::fs::create_dir_all(project.home()).expect("home");
        project
    }

    pub(crate) fn project(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Writes `text` at `rel` beneath the temporary folder.
    pub(crate) fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("folders");
        std::fs::write(path, text).expect("written");
        self
    }

    /// `zr ARGS` in the project with this home folder.
    pub(crate) fn zr(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
        let mut cmd = zr();
        cmd.args(args)
            .current_dir(self.project())
            .env("HOME", self.home());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("zr runs")
    }

    /// The files of every test: instructions at every level, and the
    /// settings of the user, the project and the local file.
    pub(crate) fn claude_code_files(&self) -> &Self {
        self.write("home/.claude/CLAUDE.md", "Answer in English.\n")
            .write(
                "home/.claude/settings.json",
                r#"{"permissions": {"allow": ["Glob"]}, "statusLine": {"type": "command", "command": "x"}}"#,
            )
            .write("repo/CLAUDE.md", "Project rules. See @docs/style.md\n")
            .write("repo/docs/style.md", "Keep functions short.\n")
            .write("repo/AGENTS.md", "Run cargo test before you answer.\n")
            .write("repo/CLAUDE.local.md", "My sandbox is http://localhost:3000.\n")
            .write("repo/secret.txt", "TOKEN=abc\n")
            .write(
                "repo/.claude/settings.json",
                r#"{
  "permissions": {
    "allow": ["Bash(echo:*)"],
    "deny": ["Read(./secret.txt)"]
  },
  "env": {"ANTHROPIC_AUTH_TOKEN": "gw-token", "GREETING": "hello"},
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo \"hook saw $GREETING\" >> hook.log", "timeout": 5}]}
    ],
    "PermissionRequest": [{"hooks": [{"type": "command", "command": "true"}]}]
  }
}"#,
            )
            .write(
                "repo/.claude/settings.local.json",
                r#"{"permissions": {"defaultMode": "acceptEdits"}}"#,
            )
    }
}

/// The instructions block every agent's system prompt ends with, for the
/// files of [`ClaudeProject::claude_code_files`].
const INSTRUCTIONS: &str = "# Instructions

The user's and the project's instruction files follow (CLAUDE.md, AGENTS.md and what they import), from the most general to the most specific. Follow them: they take precedence over your default behaviour, and where two disagree, the later one wins.

Contents of ~/.claude/CLAUDE.md (the user's instructions for every project):

Answer in English.

Contents of CLAUDE.md (project instructions, checked in):

Project rules. See @docs/style.md

Contents of docs/style.md (imported by CLAUDE.md):

Keep functions short.

Contents of AGENTS.md (project instructions, checked in):

Run cargo test before you answer.

Contents of CLAUDE.local.md (the user's own instructions for this project, not checked in):

My sandbox is http://localhost:3000.";

/// The names of the tools a request advertised.
pub(crate) fn tools(request: &Request) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn system(request: &Request) -> &str {
    request.body["system"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The text of the tool results of a request's last message.
fn last_results(request: &Request) -> String {
    let messages = request.body["messages"].as_array().expect("messages");
    messages
        .last()
        .and_then(|m| m["content"].as_array())
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect()
}

/// A model that, as the root, delegates to explore, runs a Bash command
/// that also adds a line to `CLAUDE.local.md`, tries to read the denied
/// file, then answers; and answers at once as explore.
fn model() -> Server {
    Server::answering(|request, _| {
        if !tools(request).contains(&"Task".to_owned()) {
            return Reply::anthropic(Some("found it"), &[]);
        }
        let turn = request.body["messages"].as_array().map_or(0, Vec::len) / 2;
        match turn {
            0 => Reply::anthropic(
                None,
                &[(
                    "t1",
                    "Task",
                    json!({"description": "look", "prompt": "Find main.", "subagent_type": "explore"}),
                )],
            ),
            1 => Reply::anthropic(
                None,
                &[(
                    "t2",
                    "Bash",
                    json!({"command": "echo \"$GREETING\" && echo 'Reloaded rule.' >> CLAUDE.local.md"}),
                )],
            ),
            2 => Reply::anthropic(None, &[("t3", "Read", json!({"file_path": "secret.txt"}))]),
            _ => Reply::anthropic(Some("done"), &[]),
        }
    })
}

#[test]
fn instructions_settings_and_variables_reach_the_request_bodies() {
    let p = ClaudeProject::new();
    p.claude_code_files();
    let server = model();
    let out = p.zr(
        &["run", "Where is main?"],
        &[("ANTHROPIC_BASE_URL", server.url.as_str())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n", "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 5, "root 4, explore 1");

    // The bearer token of the settings' env, no key.
    for r in &requests {
        assert_eq!(r.header("authorization"), Some("Bearer gw-token"));
        assert_eq!(r.header("x-api-key"), None);
    }
    let (root, explore): (Vec<&Request>, Vec<&Request>) = requests
        .iter()
        .partition(|r| tools(r).contains(&"Task".to_owned()));
    // The settings' model (an alias) for the root, the small one for
    // explore.
    assert_eq!(root[0].body["model"], "claude-opus-4-5");
    assert_eq!(explore[0].body["model"], "claude-haiku-4-5");
    // The instructions end every system prompt, in Claude Code's order.
    assert!(
        system(root[0]).ends_with(&format!("\n\n{INSTRUCTIONS}")),
        "{}",
        system(root[0])
    );
    assert!(
        system(explore[0]).starts_with("You are a fast, read-only exploration agent.")
            && system(explore[0]).ends_with(&format!("\n\n{INSTRUCTIONS}")),
        "{}",
        system(explore[0])
    );
    // The settings' env reached the command and the hook; the allow rule
    // ran it (acceptEdits from settings.local.json does not allow Bash).
    assert!(
        last_results(root[2]).contains("hello"),
        "{}",
        last_results(root[2])
    );
    let log = std::fs::read_to_string(p.project().join("hook.log")).expect("the hook ran");
    assert_eq!(log, "hook saw hello\n");
    // The line the command added reached the root's next request.
    let local = std::fs::read_to_string(p.project().join("CLAUDE.local.md")).expect("the file");
    assert!(local.ends_with("Reloaded rule.\n"), "{local}");
    assert!(
        system(root[2]).ends_with("My sandbox is http://localhost:3000.\nReloaded rule."),
        "{}",
        system(root[2])
    );
    // The deny rule of .claude/settings.json refused the read, naming it.
    let refused = last_results(root[3]);
    assert!(
        refused.contains("Read(./secret.txt)")
            && refused.contains(".claude/settings.json permissions deny"),
        "{refused}"
    );
    assert!(!refused.contains("TOKEN=abc"));
    // The event zr does not run yet is said once.
    let err = stderr(&out);
    assert_eq!(
        err.matches("zr does not run PermissionRequest hooks yet")
            .count(),
        1,
        "{err}"
    );
}

#[test]
fn zr_config_shows_the_merged_settings_and_their_origins() {
    let p = ClaudeProject::new();
    p.claude_code_files().write(
        "repo/zr.toml",
        "[permissions]\ndeny = [\"Bash(rm:*)\"]\n\n[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"true\" }]\n",
    );
    let out = p.zr(&["config"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out).replace(&p.home().display().to_string(), "~");
    insta::assert_snapshot!(text);
    let out = p.zr(&["config", "--format", "json"], &[]);
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["permission_mode"]["value"], "acceptEdits");
    assert_eq!(json["model"]["value"], "claude-opus-4-5");
    assert_eq!(json["env"][0]["value"], "ANTHROPIC_AUTH_TOKEN = (hidden)");
    // ANTHROPIC_MODEL beats the settings' model, as in Claude Code.
    let out = p.zr(
        &["config", "--format", "json"],
        &[("ANTHROPIC_MODEL", "sonnet")],
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["model"]["value"], "claude-sonnet-4-5");
}

#[test]
fn resolve_and_agents_show_list_the_instruction_files_with_their_sizes() {
    let p = ClaudeProject::new();
    p.claude_code_files()
        .write("repo/CLAUDE.md", "Rules. @../outside.md @docs/style.md\n")
        .write("outside.md", "not for agents\n");
    let out = p.zr(&["resolve"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let start = text
        .find("instructions (")
        .expect("the instructions section");
    let section: String = text[start..]
        .lines()
        .take_while(|l| !l.is_empty() && !l.starts_with("what each request"))
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(section);
    let out = p.zr(&["agents", "show", "explore"], &[]);
    assert!(
        stdout(&out).contains(
            "instructions: ~/.claude/CLAUDE.md (19 bytes), CLAUDE.md (37 bytes), docs/style.md (22 bytes), AGENTS.md (34 bytes), CLAUDE.local.md (37 bytes) (every agent gets them)"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_mistake_in_a_settings_file_is_reported_with_zr_tomls_before_anything_runs() {
    let p = ClaudeProject::new();
    p.write("repo/zr.toml", "[subagents]\nmax_concurent = 3\n")
        .write(
            "repo/.claude/settings.json",
            "{\n  \"permissions\": {\"deny\": [\"Bash(\"]},\n  \"env\": {\"X\": [1]}\n}\n",
        )
        .write("home/.claude/settings.json", "{\"model\": \"opus\",}\n");
    let out = p.zr(
        &["run", "hi"],
        &[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let project = p.project().display().to_string();
    let home = p.home().display().to_string();
    for expected in [
        format!("{home}/.claude/settings.json:1:18: invalid JSON: trailing comma"),
        format!("{project}/.claude/settings.json:2:28: permissions.deny[0]: 'Bash('"),
        format!("{project}/.claude/settings.json:3:11: env.X: expected a string, found a list"),
        format!("{project}/zr.toml:2:1: subagents.max_concurent: unknown key"),
    ] {
        assert!(err.contains(&expected), "missing {expected:?} in\n{err}");
    }
}

#[test]
fn a_token_alone_chooses_the_anthropic_provider_and_anthropic_model_its_model() {
    let p = ClaudeProject::new();
    let server = Server::scripted(vec![Reply::anthropic(Some("ok"), &[])]);
    let out = p.zr(
        &["run", "hi"],
        &[
            ("ANTHROPIC_BASE_URL", server.url.as_str()),
            ("ANTHROPIC_AUTH_TOKEN", "tok"),
            ("ANTHROPIC_MODEL", "claude-test-model"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer tok"));
    assert_eq!(request.body["model"], "claude-test-model");
    // No instruction file: the system prompt is zr's alone.
    assert!(!system(request).contains("# Instructions"));
}

#[test]
fn small_follows_the_variables_and_zr_toml() {
    let p = ClaudeProject::new();
    let answer = |r: &Request, _| {
        if tools(r).contains(&"Task".to_owned())
            && r.body["messages"].as_array().map_or(0, Vec::len) == 1
        {
            Reply::anthropic(
                None,
                &[(
                    "t",
                    "Task",
                    json!({"description": "d", "prompt": "p", "subagent_type": "explore"}),
                )],
            )
        } else {
            Reply::anthropic(Some("ok"), &[])
        }
    };
    let server = Server::answering(answer);
    let env = [
        ("ANTHROPIC_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", server.url.as_str()),
        ("ANTHROPIC_SMALL_FAST_MODEL", "claude-small-test"),
    ];
    let out = p.zr(&["run", "hi"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let explore: Vec<Request> = server
        .requests()
        .into_iter()
        .filter(|r| !tools(r).contains(&"Task".to_owned()))
        .collect();
    assert_eq!(explore[0].body["model"], "claude-small-test");

    p.write(
        "repo/zr.toml",
        "[model.aliases]\nsmall = \"claude-from-toml\"\n",
    );
    let server = Server::answering(answer);
    let env = [
        ("ANTHROPIC_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", server.url.as_str()),
        ("ANTHROPIC_SMALL_FAST_MODEL", "claude-small-test"),
    ];
    let out = p.zr(&["run", "hi"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let explore: Vec<Request> = server
        .requests()
        .into_iter()
        .filter(|r| !tools(r).contains(&"Task".to_owned()))
        .collect();
    assert_eq!(explore[0].body["model"], "claude-from-toml");
}

#[test]
fn default_mode_and_additional_directories_of_the_settings_take_effect() {
    let p = ClaudeProject::new();
    p.write(
        "repo/.claude/settings.json",
        r#"{"permissions": {"defaultMode": "acceptEdits", "additionalDirectories": ["../shared"]}}"#,
    )
    .write("shared/.keep", "");
    let script = json!({"agents": {"root": [{"turns": [
        {"tool_calls": [
            {"name": "Write", "input": {"file_path": "../shared/notes.txt", "content": "shared"}},
            {"name": "Write", "input": {"file_path": "../elsewhere.txt", "content": "no"}},
        ]},
        {"text": "done"},
    ]}]}});
    p.write("repo/s.json", &script.to_string());
    let out = p.zr(&["run", "--script", "s.json", "go"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // acceptEdits writes inside the roots the settings widened, and no
    // further (nobody can be asked here).
    let shared = p.dir.path().join("shared/notes.txt");
    assert_eq!(std::fs::read_to_string(shared).expect("written"), "shared");
    assert!(!p.dir.path().join("elsewhere.txt").exists());
}
