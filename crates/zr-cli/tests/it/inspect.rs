//! `zr resolve` on a project, `zr agents`, `zr skills` and `zr mcp list`:
//! real MCP servers (server-everything over stdio and streamable HTTP), a
//! server that cannot start, broken agent and skill files, unknown names.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{TempProject, everything_js, stderr, stdout};

/// A project with server-everything over stdio, a server whose command
/// does not exist, a file agent type, a broken one, a skill and a broken
/// one.
fn project() -> TempProject {
    let p = TempProject::new();
    p.write("zr.toml", "")
        .write(
            ".mcp.json",
            &format!(
                r#"{{"mcpServers": {{
  "everything": {{"command": "node", "args": [{:?}]}},
  "broken": {{"command": "zr-test-no-such-command"}}
}}}}"#,
                everything_js().display().to_string()
            ),
        )
        .write(
            ".zr/agents/scout.md",
            "---\nname: scout\ndescription: Finds things in the code base.\ntools: Read, Grep, Glob\nmcpServers: [everything]\nbackground: true\n---\nYou scout.\n",
        )
        .write(
            ".zr/agents/broken.md",
            "---\nname: broken\ndescription: [unclosed\n---\nx\n",
        )
        .write(
            ".zr/skills/notes/SKILL.md",
            "---\nname: notes\ndescription: Writes notes.\nlicense: MIT\nmetadata:\n  owner: docs\n---\n\n# Notes\n\nWrite them down.\n",
        )
        .write(".zr/skills/bad/SKILL.md", "---\nname: wrong\n---\nbody\n");
    p
}

const AGENT_DIAGNOSTIC: &str = "warning: .zr/agents/broken.md:3: invalid YAML in the front matter (column 14): unclosed bracket '[' (the file is left out)\n";
const SKILL_DIAGNOSTICS: &str = "warning: .zr/skills/bad/SKILL.md:1: required key 'description' is missing or empty; add 'description: <what the skill does and when to use it>' (the file is left out)\nwarning: .zr/skills/bad/SKILL.md:2: 'name' is 'wrong' but the folder is 'bad'; the skill loads as 'wrong'; rename the folder or the name so that they match\n";

fn json(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out)).expect("valid JSON on stdout")
}

// --- zr agents ---

#[test]
fn agents_lists_builtin_and_file_types_and_reports_broken_files() {
    let p = project();
    let out = p.zr_ok(&["agents"]);
    assert_eq!(stderr(&out), AGENT_DIAGNOSTIC);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn agents_json_has_every_type_and_the_diagnostics() {
    let p = project();
    let out = p.zr_ok(&["agents", "--format", "json"]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let v = json(&out);
    let names: Vec<&str> = v["agents"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|a| a["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        [
            "explore",
            "general-purpose",
            "guide",
            "plan",
            "scout",
            "verification"
        ]
    );
    let scout = &v["agents"][4];
    assert_eq!(
        scout["source"],
        serde_json::json!({"kind": "project", "root": ".zr/agents", "path": ".zr/agents/scout.md"})
    );
    assert_eq!(scout["background"], true);
    assert_eq!(v["agents"][0]["source"]["kind"], "built-in");
    assert_eq!(
        v["diagnostics"],
        serde_json::json!([{
            "path": ".zr/agents/broken.md",
            "line": 3,
            "severity": "error",
            "message": "invalid YAML in the front matter (column 14): unclosed bracket '['"
        }])
    );
}

#[test]
fn agents_show_prints_the_whole_definition() {
    let p = project();
    let out = p.zr_ok(&["agents", "show", "scout"]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));

    let out = p.zr_ok(&["agents", "show", "scout", "--format", "json"]);
    let v = json(&out);
    assert_eq!(v["name"], "scout");
    assert_eq!(v["definition"]["prompt"], "You scout.");
    assert_eq!(v["source"]["path"], ".zr/agents/scout.md");
}

#[test]
fn agents_show_of_a_broken_or_unknown_type_exits_2_with_help() {
    let p = project();
    let out = p.zr(&["agents", "show", "broken"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    assert_eq!(
        stderr(&out),
        "error: agent type 'broken' did not load, its file is broken:\n  .zr/agents/broken.md:3: error: invalid YAML in the front matter (column 14): unclosed bracket '['\n  help: fix the file as the lines above say; loaded agent types: explore, general-purpose, guide, plan, scout, verification\n"
    );

    let out = p.zr(&["agents", "show", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    assert_eq!(
        stderr(&out),
        "error: no agent type 'nobody'\n  help: agent types: explore, general-purpose, guide, plan, scout, verification; add one as .zr/agents/nobody.md\n"
    );
}

// --- zr skills ---

#[test]
fn skills_lists_and_shows_and_reports_broken_files() {
    let p = project();
    let out = p.zr_ok(&["skills"]);
    assert_eq!(stderr(&out), SKILL_DIAGNOSTICS);
    assert_eq!(
        stdout(&out),
        "NAME   SOURCE              FOLDER            DESCRIPTION\nnotes  project .zr/skills  .zr/skills/notes  Writes notes.\n"
    );

    let out = p.zr_ok(&["skills", "show", "notes"]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));

    let out = p.zr_ok(&["skills", "--format", "json"]);
    let v = json(&out);
    assert_eq!(v["skills"][0]["name"], "notes");
    assert_eq!(v["skills"][0]["metadata"]["owner"], "docs");
    assert_eq!(v["skills"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(2));

    let out = p.zr_ok(&["skills", "show", "notes", "--format", "json"]);
    assert_eq!(json(&out)["body"], "# Notes\n\nWrite them down.\n");
}

#[test]
fn skills_show_of_a_broken_or_unknown_skill_exits_2_with_help() {
    let p = project();
    let out = p.zr(&["skills", "show", "bad"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    // Inside the error, each problem is quoted as the file's diagnostic.
    let lines = "  .zr/skills/bad/SKILL.md:1: error: required key 'description' is missing or empty; add 'description: <what the skill does and when to use it>'\n";
    assert_eq!(
        stderr(&out),
        format!(
            "error: skill 'bad' did not load, its file is broken:\n{lines}  help: fix the file as the lines above say; loaded skills: notes\n"
        )
    );

    let out = p.zr(&["skills", "show", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: no skill 'nobody'\n  help: skills: notes; add one as .zr/skills/nobody/SKILL.md\n"
    );
}

// --- zr mcp list ---

/// Temporary paths, ports and the server's version, which change between
/// machines and dependency updates.
fn filters(p: &TempProject) -> Vec<(String, String)> {
    vec![
        (
            regex_escape(&everything_js().display().to_string()),
            "[EVERYTHING_JS]".to_owned(),
        ),
        (
            regex_escape(&p.path().display().to_string()),
            "[PROJECT]".to_owned(),
        ),
        (
            r"mcp-servers/everything \d+\.\d+\.\d+".to_owned(),
            "mcp-servers/everything [VERSION]".to_owned(),
        ),
        (
            r"127\.0\.0\.1:\d+".to_owned(),
            "127.0.0.1:[PORT]".to_owned(),
        ),
    ]
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

#[test]
fn mcp_list_shows_each_server_and_fails_for_one_that_does_not_start() {
    let p = project();
    let out = p.zr(&["mcp", "list"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let f = filters(&p);
    insta::with_settings!({filters => f.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect::<Vec<_>>()}, {
        insta::assert_snapshot!(stdout(&out));
    });
}

#[test]
fn mcp_list_json_and_the_lazy_policy() {
    let p = project();
    // Only the working server, and no tool deferred.
    p.write("zr.toml", "[policy]\nlazy = \"never\"\n").write(
        ".mcp.json",
        &format!(
            r#"{{"mcpServers": {{"everything": {{"command": "node", "args": [{:?}]}}}}}}"#,
            everything_js().display().to_string()
        ),
    );
    let out = p.zr_ok(&["mcp", "list", "--format", "json"]);
    let v = json(&out);
    let server = &v["servers"][0];
    assert_eq!(server["status"], "connected");
    assert_eq!(server["server"]["name"], "mcp-servers/everything");
    assert!(server["protocol_version"].is_string(), "{server}");
    let tools = server["tools"].as_array().expect("tools");
    let echo = tools
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .expect("echo is listed");
    assert_eq!(echo["read_only"], true);
    assert!(tools.iter().all(|t| t["deferred"] == false), "{server}");

    // The default policy defers every MCP tool.
    p.write("zr.toml", "");
    let out = p.zr_ok(&["mcp", "list", "--format", "json"]);
    let v = json(&out);
    let tools = v["servers"][0]["tools"].as_array().expect("tools").clone();
    assert!(!tools.is_empty());
    assert!(tools.iter().all(|t| t["deferred"] == true), "{v}");
}

#[test]
fn mcp_list_without_servers_says_so() {
    let p = TempProject::new();
    p.write("zr.toml", "");
    let out = p.zr_ok(&["mcp", "list"]);
    assert_eq!(
        stdout(&out).replace(&p.path().display().to_string(), "[PROJECT]"),
        "no MCP servers in [PROJECT]/.mcp.json\n"
    );
}

/// server-everything over streamable HTTP on a free loopback port; killed
/// when dropped.
struct HttpServer(Child, u16);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http_everything() -> HttpServer {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = Command::new("node")
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("node starts");
    let server = HttpServer(child, port);
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "server-everything did not listen on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

#[test]
fn mcp_list_connects_to_a_streamable_http_server() {
    let server = start_http_everything();
    let p = TempProject::new();
    p.write("zr.toml", "").write(
        ".mcp.json",
        &format!(
            r#"{{"mcpServers": {{"remote": {{"type": "http", "url": "http://127.0.0.1:{}/mcp"}}}}}}"#,
            server.1
        ),
    );
    let out = p.zr_ok(&["mcp", "list"]);
    let text = stdout(&out);
    let first = text.lines().next().unwrap_or_default().to_owned();
    let f = filters(&p);
    insta::with_settings!({filters => f.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect::<Vec<_>>()}, {
        insta::assert_snapshot!(first);
    });
    assert!(
        text.contains("\n    mcp__remote__echo  "),
        "the tools are named after the server: {text}"
    );
}

// --- zr resolve on the project ---

#[test]
fn resolve_the_project_with_its_real_servers() {
    let p = project();
    let out = p.zr_ok(&["resolve", "--agent", "scout"]);
    assert_eq!(
        stderr(&out),
        format!(
            "{AGENT_DIAGNOSTIC}{SKILL_DIAGNOSTICS}warning: MCP server 'broken' did not start, its tools are left out: MCP server 'broken': cannot start 'zr-test-no-such-command': No such file or directory (os error 2)\n  help: check that `zr-test-no-such-command` runs from the project folder and speaks MCP on stdio, or fix the server's entry in .mcp.json; `zr mcp list` shows every server's status\n"
        )
    );
    insta::assert_snapshot!(stdout(&out));

    let out = p.zr_ok(&["resolve", "--format", "json"]);
    let v = json(&out);
    let agents: Vec<(&str, &str, bool)> = v["agents"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|a| {
            (
                a["agent"].as_str().expect("a name"),
                a["role"].as_str().expect("a role"),
                a["background"].as_bool().expect("a flag"),
            )
        })
        .collect();
    assert_eq!(
        agents,
        [
            ("root", "root", false),
            ("explore", "explore", false),
            ("general-purpose", "general-purpose", false),
            ("guide", "explore", false),
            ("plan", "plan", false),
            ("scout", "custom", true),
            ("verification", "general-purpose", false),
            ("fork", "fork", false),
        ]
    );
    // The root defers the MCP tools (the default lazy policy).
    let deferred: Vec<&str> = v["agents"][0]["deferred"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(deferred.contains(&"mcp__everything__echo"), "{deferred:?}");
}

#[test]
fn resolve_an_unknown_agent_of_the_project_lists_the_agents() {
    let p = TempProject::new();
    p.write("zr.toml", "");
    let out = p.zr(&["resolve", "--agent", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    assert_eq!(
        stderr(&out),
        "error: no agent 'nobody' in this project\n  help: agents: root, explore, general-purpose, guide, plan, verification, fork\n"
    );
}

/// The processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .expect("/proc lists the processes")
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
        .filter(|line| line.contains(marker))
        .collect()
}

#[test]
fn mcp_list_gives_up_on_silent_servers_together_and_stops_them() {
    let p = TempProject::new();
    // Two servers that never answer the handshake: waited for at once,
    // each for zr.toml's 4 s handshake limit, not one after the other.
    // Their command lines are this test process's own (another copy of
    // the suite may run beside it).
    let marker = format!("sleep 9{:07}", std::process::id());
    let [silent, mute] = [1, 2].map(|n| format!("{marker}{n}"));
    let arg = |command: &str| command.trim_start_matches("sleep ").to_owned();
    p.write("zr.toml", "[mcp]\nconnect_timeout_secs = 4\n")
        .write(
            ".mcp.json",
            &format!(
                r#"{{"mcpServers": {{
  "silent": {{"command": "sleep", "args": ["{}"]}},
  "mute": {{"command": "sleep", "args": ["{}"]}}
}}}}"#,
                arg(&silent),
                arg(&mute)
            ),
        );
    let start = Instant::now();
    let out = p.zr(&["mcp", "list"]);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "silent: failed (stdio: {silent})\n  error: MCP server 'silent' did not complete the handshake within 4000 ms\n  help: check that `sleep` runs from the project folder and speaks MCP on stdio, or fix the server's entry in .mcp.json; if it only needs longer to start, raise `[mcp] connect_timeout_secs` in zr.toml (now 4 s)\n\nmute: failed (stdio: {mute})\n  error: MCP server 'mute' did not complete the handshake within 4000 ms\n  help: check that `sleep` runs from the project folder and speaks MCP on stdio, or fix the server's entry in .mcp.json; if it only needs longer to start, raise `[mcp] connect_timeout_secs` in zr.toml (now 4 s)\n"
        )
    );
    // One after the other would take 8 s.
    assert!(took < Duration::from_millis(7500), "took {took:?}");
    // zr's hub SIGKILLs them as it goes but does not wait for them: on a
    // loaded machine they may outlive zr by a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_with(&marker), Vec::<String>::new());
}

#[test]
fn agents_show_of_something_that_is_not_a_name_says_so() {
    let p = project();
    let out = p.zr(&["agents", "show", "../../etc/passwd"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.starts_with("error: '../../etc/passwd' is not an agent type name: "),
        "{err}"
    );
    assert!(!err.contains(".zr/agents/../"), "{err}");
    assert!(
        err.contains("help: see `zr agents` for the agent types"),
        "{err}"
    );
}

#[test]
fn agents_show_json_gives_the_model_as_written_and_the_id_it_resolves_to() {
    let p = project();
    p.write(
        ".zr/agents/sonnet-user.md",
        "---\nname: sonnet-user\ndescription: Uses sonnet\nmodel: sonnet\n---\nHi.\n",
    );
    let out = p.zr_ok(&["agents", "show", "sonnet-user", "--format", "json"]);
    let v = json(&out);
    assert_eq!(v["model"], "sonnet", "{v}");
    let id = v["model_id"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(id.starts_with("claude-sonnet-"), "{v}");
}

/// A `${VAR}` of `.mcp.json` is shown as written, never its value:
/// `zr mcp list` and the warning of a server left out of a run.
#[test]
fn mcp_list_and_left_out_servers_show_variables_unexpanded() {
    let p = TempProject::new();
    p.write("zr.toml", "").write(
        ".mcp.json",
        r#"{"mcpServers": {
  "broken": {"command": "zr-test-no-such-command", "args": ["--token", "${SECRET_TOKEN}"]},
  "web": {"type": "http", "url": "http://127.0.0.1:9/mcp?key=${SECRET_TOKEN}"}
}}"#,
    );
    let zr = |args: &[&str]| {
        crate::support::zr()
            .args(args)
            .env("SECRET_TOKEN", "hunter2-secret")
            .current_dir(p.path())
            .output()
            .expect("zr runs")
    };
    let out = zr(&["mcp", "list"]);
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        text.contains("stdio: zr-test-no-such-command --token ${SECRET_TOKEN}"),
        "{text}"
    );
    assert!(
        text.contains("http: http://127.0.0.1:9/mcp?key=${SECRET_TOKEN}"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
    let out = zr(&["mcp", "list", "--format", "json"]);
    assert!(!stdout(&out).contains("hunter2"), "{}", stdout(&out));

    p.write(
        "s.json",
        r#"{"agents": {"root": [{"turns": [{"text": "done"}]}]}}"#,
    );
    let out = zr(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out);
    assert!(err.contains("MCP server 'broken' is left out"), "{err}");
    assert!(err.contains("MCP server 'web' is left out"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}
