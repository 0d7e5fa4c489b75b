//! The provider choice (flag > zr.toml > environment), its error messages,
//! and real wire tests: `zr run` against a loopback HTTP server speaking
//! the Anthropic Messages and OpenAI Chat Completions SSE formats (the
//! engine's own fixtures, byte for byte).

use serde_json::Value;

use crate::support::{TempProject, stderr, stdout};
use zr_test_support::fixture;
use zr_test_support::loopback::{Request, Server};

/// The text of the last user message of an Anthropic or OpenAI request.
fn last_user_text(body: &Value) -> String {
    let message = body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("{other}"),
    }
}

/// `zr run "say hello"` against `server` in a project whose zr.toml is
/// `toml`, with `env` set: the answer is the fixture's, and exactly one
/// request came; returns it.
fn say_hello(server: &Server, toml: &str, env: &[(&str, &str)]) -> Request {
    let project = TempProject::new();
    project.write("zr.toml", toml);
    let out = crate::support::zr()
        .args(["run", "say hello"])
        .envs(env.iter().copied())
        .current_dir(project.path())
        .output()
        .expect("zr runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hello, world\n");
    let mut requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    requests.remove(0)
}

#[test]
fn anthropic_over_the_wire_with_the_model_from_zr_toml() {
    let server = Server::start(fixture::bytes("anthropic/text.sse"));
    let r = &say_hello(
        &server,
        "[model]\nname = \"claude-from-toml\"\n",
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
            ("ANTHROPIC_BASE_URL", &server.url),
        ],
    );
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.body["model"], "claude-from-toml");
    assert_eq!(r.body["stream"], true);
    assert_eq!(last_user_text(&r.body), "say hello");
}

#[test]
fn openai_over_the_wire_with_the_model_from_zr_toml() {
    let server = Server::start(fixture::bytes("openai/text.sse"));
    let r = &say_hello(
        &server,
        "[model]\nname = \"gpt-from-toml\"\n",
        &[
            ("OPENAI_API_KEY", "sk-openai-test"),
            ("OPENAI_BASE_URL", &format!("{}/v1", server.url)),
        ],
    );
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-openai-test"));
    assert_eq!(r.header("x-api-key"), None);
    assert_eq!(r.body["model"], "gpt-from-toml");
    assert_eq!(r.body["stream"], true);
    assert_eq!(last_user_text(&r.body), "say hello");
}

#[test]
fn the_responses_api_over_the_wire_from_zr_toml() {
    let server = Server::start(fixture::bytes("responses/text.sse"));
    let r = &say_hello(
        &server,
        "[model]\nprovider = \"openai-responses\"\nname = \"gpt-from-toml\"\n",
        &[
            ("OPENAI_API_KEY", "sk-openai-test"),
            ("OPENAI_BASE_URL", &format!("{}/v1", server.url)),
        ],
    );
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(r.header("authorization"), Some("Bearer sk-openai-test"));
    assert_eq!(r.body["model"], "gpt-from-toml");
    assert_eq!(
        (&r.body["stream"], &r.body["store"]),
        (&Value::Bool(true), &Value::Bool(false))
    );
    assert_eq!(r.body["input"][0]["content"], "say hello");
}

/// Runs `zr run` with both providers' servers in the environment and
/// `args`; returns which server got the request.
fn chosen(toml: &str, args: &[&str], anthropic_key: bool) -> &'static str {
    let anthropic = Server::start(fixture::bytes("anthropic/text.sse"));
    let openai = Server::start(fixture::bytes("openai/text.sse"));
    let project = TempProject::new();
    project.write("zr.toml", toml);
    let mut cmd = crate::support::zr();
    cmd.arg("run")
        .args(args)
        .arg("hi")
        .env("ANTHROPIC_BASE_URL", &anthropic.url)
        .env("OPENAI_API_KEY", "sk-openai-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", openai.url))
        .current_dir(project.path());
    if anthropic_key {
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-test");
    }
    let out = cmd.output().expect("zr runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hello, world\n");
    match (anthropic.requests().len(), openai.requests().len()) {
        (1, 0) => "anthropic",
        (0, 1) => "openai",
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_environment_chooses_anthropic_first_then_openai() {
    assert_eq!(chosen("", &[], true), "anthropic");
    assert_eq!(chosen("", &[], false), "openai");
}

#[test]
fn zr_toml_beats_the_environment() {
    assert_eq!(
        chosen("[model]\nprovider = \"openai\"\n", &[], true),
        "openai"
    );
}

#[test]
fn the_flag_beats_zr_toml() {
    let toml = "[model]\nprovider = \"openai\"\n";
    assert_eq!(
        chosen(toml, &["--provider", "anthropic"], true),
        "anthropic"
    );
}

/// `zr run` refused for its provider: exit 2, the message on stderr.
fn refused(toml: &str, args: &[&str]) -> String {
    let project = TempProject::new();
    project.write("zr.toml", toml);
    let out = project.zr(&[&["run"], args, &["hi"]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    stderr(&out)
}

#[test]
fn no_provider_says_what_to_set() {
    insta::assert_snapshot!(refused("", &[]));
}

#[test]
fn anthropic_without_a_key() {
    insta::assert_snapshot!(refused("", &["--provider", "anthropic"]));
}

#[test]
fn openai_without_a_key_or_url() {
    insta::assert_snapshot!(refused("[model]\nprovider = \"openai\"\n", &[]));
}

#[test]
fn a_custom_key_variable_that_is_not_set() {
    insta::assert_snapshot!(refused(
        "[model]\nprovider = \"anthropic\"\napi_key_env = \"TEAM_KEY\"\n",
        &[]
    ));
}

#[test]
fn scripted_without_a_script() {
    insta::assert_snapshot!(refused("", &["--provider", "scripted"]));
}

#[test]
fn base_url_and_key_variable_from_zr_toml() {
    let server = Server::start(fixture::bytes("openai/text.sse"));
    let toml = format!(
        "[model]\nprovider = \"openai\"\nname = \"local-model\"\nbase_url = \"{}/v1\"\napi_key_env = \"TEAM_KEY\"\n",
        server.url
    );
    let r = say_hello(
        &server,
        &toml,
        &[
            ("TEAM_KEY", "team-secret"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ],
    );
    assert_eq!(r.header("authorization"), Some("Bearer team-secret"));
    assert_eq!(r.body["model"], "local-model");
}
