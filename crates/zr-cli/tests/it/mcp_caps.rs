//! MCP the way hosts use it, through the `zr` binary and server-everything
//! over stdio: a server's form answered at a real pseudo-terminal (and
//! declined without one), the resource tools in the request body the model
//! receives (and absent from a subagent without the server), a server's
//! prompt as `zr run /server:prompt ARGS`, and the resolver's pools.

use serde_json::{Value, json};

use crate::hooks::tool_results;
use crate::loopback::run_against;
use crate::support::{TempProject, everything_js, stderr, stdout};
use crate::tree::Terminal;
use zr_test_support::loopback::{Reply, Server};

const ELICIT: &str = "mcp__everything__trigger-elicitation-request";

/// A project with server-everything as `everything`, its tools advertised
/// (no FindTool step), the elicitation tool allowed, and an agent type
/// `reader` without any MCP server.
fn project() -> TempProject {
    let p = TempProject::new();
    p.write(
        "zr.toml",
        &format!("[policy]\nlazy = \"never\"\n\n[permissions]\nallow = [\"{ELICIT}\"]\n"),
    )
    .write(
        ".mcp.json",
        &format!(
            r#"{{"mcpServers": {{"everything": {{"command": "node", "args": [{:?}]}}}}}}"#,
            everything_js().display().to_string()
        ),
    )
    .write(
        ".zr/agents/reader.md",
        "---\nname: reader\ndescription: Reads files.\ntools: Read, Grep\n---\nYou read.\n",
    );
    p
}

fn call(id: &str, tool: &str, input: Value) -> Reply {
    Reply::anthropic(None, &[(id, tool, input)])
}

/// The names of the tools in request `n`'s body.
fn tool_names(server: &Server, n: usize) -> Vec<String> {
    server.requests()[n].body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

#[test]
fn a_servers_form_is_filled_in_at_the_terminal_and_can_be_declined() {
    let p = project();
    let server = Server::scripted(vec![
        call("c1", ELICIT, json!({})),
        call("c2", ELICIT, json!({})),
        Reply::anthropic(Some("done"), &[]),
    ]);
    let mut t = Terminal::spawn_with(
        &p,
        &["run", "go"],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
            ("ANTHROPIC_BASE_URL", &server.url),
        ],
    );
    let (rows, _) = t.wait_for("the form's question", |rows| {
        rows.iter().any(|r| r.starts_with("Answer 1-3:"))
    });
    let screen = rows.join("\n");
    // Long lines wrap at the terminal's width.
    assert!(
        rows.concat().contains(
            "? MCP server 'everything' asks (during a call of root): Please provide inputs for the following fields:"
        ),
        "{screen}"
    );
    let fields: usize = rows
        .iter()
        .find_map(|r| r.trim().split_once(" fields: "))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("the number of fields: {screen}"));
    assert!(fields >= 10, "{screen}");
    t.type_text("1\r");
    // Field by field: the name (required) and the integer are typed, every
    // other field takes its default or stays empty.
    let mut last = String::new();
    for _ in 0..fields {
        let (rows, _) = t.wait_for("the next field", |rows| {
            rows.last()
                .is_some_and(|r| *r != last && (r.ends_with("):") || r.ends_with("]:")))
        });
        let current = rows.last().expect("a row").clone();
        let answer = if current.ends_with("(text, required):") {
            "Ada"
        } else if current.ends_with("[42]:") {
            "7"
        } else {
            ""
        };
        t.type_text(&format!("{answer}\r"));
        last = current;
    }
    // The second call's form: declined.
    t.wait_for("the second form", |rows| {
        rows.last().is_some_and(|r| r.starts_with("Answer 1-3:"))
    });
    t.type_text("2\r");
    let (_, screen) = t.finish(0);
    assert!(screen.contains("done"), "{screen}");

    let results = tool_results(&server, 1);
    let (is_error, text) = &results[0];
    assert!(!is_error, "{text}");
    assert!(
        text.contains("User provided the requested information"),
        "{text}"
    );
    assert!(text.contains("- Name: Ada"), "{text}");
    assert!(text.contains("- Favorite Integer: 7"), "{text}");
    // Defaults were sent for the fields left empty.
    assert!(text.contains("- Favorite Number: 3.14"), "{text}");
    assert!(
        text.contains(r#""untitledSingleSelectEnum": "Monica""#),
        "{text}"
    );
    let results = tool_results(&server, 2);
    assert!(results[1].1.contains("User declined"), "{results:?}");
}

#[test]
fn without_a_terminal_zr_does_not_offer_to_answer_forms() {
    let p = project();
    let server = Server::scripted(vec![Reply::anthropic(Some("done"), &[])]);
    run_against(&p, &server, false, "go");
    // The server was not told zr can ask, so it lists no tool that needs
    // a form; its other tools are there.
    let tools = tool_names(&server, 0);
    assert!(!tools.iter().any(|t| t == ELICIT), "{tools:?}");
    assert!(
        tools.iter().any(|t| t == "mcp__everything__get-roots-list"),
        "{tools:?}"
    );
}

#[test]
fn the_model_gets_the_resource_tools_of_its_servers_and_a_subagent_without_them_does_not() {
    let p = project();
    let server = Server::scripted(vec![
        call("c1", "mcp__everything__ListMcpResources", json!({})),
        call(
            "c2",
            "mcp__everything__ReadMcpResource",
            json!({"uri": "demo://resource/static/document/features.md"}),
        ),
        call(
            "c3",
            "Task",
            json!({"description": "read", "prompt": "read the notes", "subagent_type": "reader"}),
        ),
        Reply::anthropic(Some("nothing to read"), &[]),
        Reply::anthropic(Some("done"), &[]),
    ]);
    run_against(&p, &server, false, "go");

    let root = tool_names(&server, 0);
    for name in [
        "mcp__everything__ListMcpResources",
        "mcp__everything__ReadMcpResource",
    ] {
        assert!(root.iter().any(|n| n == name), "{name} in {root:?}");
    }
    let body = &server.requests()[0].body;
    let read = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__everything__ReadMcpResource")
        .unwrap();
    assert_eq!(
        read["description"],
        "Read one resource of the MCP server 'everything' by its URI."
    );
    assert_eq!(read["input_schema"]["required"], json!(["uri"]));

    let listed = &tool_results(&server, 1)[0];
    assert!(!listed.0, "{listed:?}");
    assert!(
        listed
            .1
            .contains("demo://resource/static/document/features.md - features.md (text/markdown)"),
        "{listed:?}"
    );
    let read = &tool_results(&server, 2)[1];
    assert!(
        read.1.starts_with(
            "[resource demo://resource/static/document/features.md (text/markdown)]\n"
        ),
        "{read:?}"
    );
    // The subagent's own request (the fourth): none of the server's tools.
    let reader = tool_names(&server, 3);
    assert_eq!(reader, ["Read", "Grep"], "{reader:?}");
}

/// `zr ARGS` in `p` with `server` as the model API.
fn zr_with(p: &TempProject, server: &Server, args: &[&str]) -> std::process::Output {
    let mut cmd = crate::support::zr();
    cmd.args(args)
        .current_dir(p.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", &server.url);
    cmd.output().expect("zr runs")
}

#[test]
fn a_servers_prompt_filled_with_words_is_the_first_message() {
    let p = project();
    let server = Server::scripted(vec![Reply::anthropic(Some("sunny"), &[])]);
    let out = zr_with(
        &p,
        &server,
        &["run", "/everything:args-prompt", "Austin", "state=TX"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("sunny"));
    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "What's weather in Austin, TX?"
    );
}

#[test]
fn an_unknown_server_or_prompt_and_a_missing_argument_are_explained() {
    let p = project();
    let server = Server::scripted(vec![Reply::anthropic(Some("never asked"), &[])]);
    let out = zr_with(&p, &server, &["run", "/nope:args-prompt", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: no MCP server 'nope' in .mcp.json\n  help: the servers are: everything\n"
    );
    let out = zr_with(&p, &server, &["run", "/everything:args-prompt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "error: prompt '/everything:args-prompt': missing the required argument 'city'; usage: /everything:args-prompt <city> [state]\n  help: zr run /everything:args-prompt <city> [state]\n"
        ),
        "{}",
        stderr(&out)
    );
    let out = zr_with(&p, &server, &["run", "/everything:nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: MCP server 'everything' has no prompt 'nope'; it has: simple-prompt, args-prompt"),
        "{}",
        stderr(&out)
    );
    let out = zr_with(&p, &server, &["run", "hello", "world"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("zr run takes one prompt, and got 2 words"),
        "{}",
        stderr(&out)
    );
    // Nothing reached the model.
    assert!(server.requests().is_empty());
}

#[test]
fn an_agent_sees_resource_tools_only_of_its_own_servers() {
    let p = TempProject::new();
    let js = everything_js().display().to_string();
    p.write("zr.toml", "[policy]\nlazy = \"never\"\n")
        .write(
            ".mcp.json",
            &format!(
                r#"{{"mcpServers": {{"docs": {{"command": "node", "args": [{js:?}]}}, "notes": {{"command": "node", "args": [{js:?}]}}}}}}"#
            ),
        )
        .write(
            ".zr/agents/reader.md",
            "---\nname: reader\ndescription: Reads the docs.\ntools: Read\nmcpServers: [docs]\n---\nYou read.\n",
        );
    let out = p.zr_ok(&["resolve", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let names = |agent: &str, list: &str| -> Vec<String> {
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["agent"] == agent)
            .unwrap()[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let root = names("root", "executable");
    assert!(
        root.contains(&"mcp__notes__ListMcpResources".to_owned()),
        "{root:?}"
    );
    assert!(
        root.contains(&"mcp__docs__ListMcpResources".to_owned()),
        "{root:?}"
    );
    let reader = names("reader", "executable");
    assert!(
        reader.contains(&"mcp__docs__ReadMcpResource".to_owned()),
        "{reader:?}"
    );
    assert!(
        !reader.iter().any(|n| n.starts_with("mcp__notes__")),
        "the reader has no tool of notes: {reader:?}"
    );
    // A built-in type names no server: none of anyone's (C2).
    let explore = names("explore", "executable");
    assert!(
        !explore.iter().any(|n| n.starts_with("mcp__")),
        "{explore:?}"
    );

    let out = p.zr_ok(&["resolve", "--agent", "reader"]);
    insta::assert_snapshot!(stdout(&out));
}
