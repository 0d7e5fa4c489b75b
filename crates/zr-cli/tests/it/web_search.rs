//! `[web_search]` in zr.toml: the backend reaches `WebSearch` in a run, and
//! without one `WebSearch` is in no pool, with the reason in `zr resolve`.

use crate::support::{TempProject, stderr, stdout, transcripts};
use zr_test_support::loopback::{Reply, Server};

const SEARXNG_BODY: &str = r#"{"query": "tokio", "number_of_results": 0, "results": [{"url": "https://tokio.rs/", "title": "Tokio", "content": "An asynchronous runtime.", "engine": "duckduckgo", "template": "default.html", "parsed_url": ["https", "tokio.rs", "/", "", "", ""], "engines": ["duckduckgo"], "positions": [1], "score": 1.0, "category": "general"}], "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}"#;

const SCRIPT: &str = r#"{"agents": {"root": [{"turns": [
  {"tool_calls": [{"name": "WebSearch", "input": {"query": "tokio"}}]},
  {"text": "searched"}]}]}}"#;

#[test]
fn a_searxng_backend_answers_web_search_in_a_run() {
    let server = Server::scripted(vec![Reply {
        status: 200,
        body: SEARXNG_BODY.as_bytes().to_vec(),
    }]);
    let project = TempProject::new();
    project
        .write(
            "zr.toml",
            &format!(
                "[web_search]\nbackend = \"searxng\"\nurl = \"{}\"\n",
                server.url
            ),
        )
        .write("script.json", SCRIPT);
    let out = project.zr_ok(&["run", "--script", "script.json", "find tokio"]);
    assert_eq!(stdout(&out), "searched\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/search?q=tokio&format=json");
    let text = transcripts(&project);
    assert!(
        text.contains(r#"Results for \"tokio\":\n1. Tokio\n   https://tokio.rs/\n   An asynchronous runtime.\n"#),
        "{text}"
    );

    let pools = stdout(&project.zr_ok(&["resolve", "--agent", "explore"]));
    assert!(
        pools.contains("  WebSearch        builtin  read-only\n"),
        "{pools}"
    );
}

#[test]
fn without_a_backend_web_search_is_in_no_pool() {
    let project = TempProject::new();
    let pools = stdout(&project.zr_ok(&["resolve"]));
    for agent in pools.split("\n== ") {
        assert!(
            agent.contains("  WebSearch        R1    no service configured\n")
                && agent.contains("  AskUserQuestion  R1    no service configured\n")
                && !agent.contains("  Config           R1"),
            "{agent}"
        );
    }
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&project.zr_ok(&["resolve", "--format", "json"]))).unwrap();
    assert_eq!(
        json["agents"][0]["removed"][0],
        serde_json::json!({"name": "WebSearch", "step": "R1", "reason": "no service configured"})
    );

    // A Brave backend without its key: left out, with a warning.
    project.write("zr.toml", "[web_search]\nbackend = \"brave\"\n");
    let out = project.zr_ok(&["resolve"]);
    assert!(stdout(&out).contains("  WebSearch        R1    no service configured\n"));
    assert!(
        stderr(&out).contains("warning: [web_search] backend = \"brave\" needs the API key in BRAVE_SEARCH_API_KEY, which is not set; WebSearch is left out"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_searxng_backend_without_its_address_is_a_project_file_error() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        "[model]\nname = \"x\"\n\n[web_search]\nbackend = \"searxng\"\n",
    );
    let out = project.zr(&["resolve"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(
            "zr.toml:5:1: web_search.backend: backend = \"searxng\" needs the instance's address"
        ),
        "{err}"
    );
    assert!(
        err.contains("help: add url = \"http://localhost:8888\""),
        "{err}"
    );
}
