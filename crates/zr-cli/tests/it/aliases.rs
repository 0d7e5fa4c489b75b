//! Model aliases over the wire: `model: opus` reaches the Anthropic API as
//! its id; a model the API does not know (404) fails that subagent, and
//! the run says so although the root answers; on an OpenAI-compatible
//! server a Claude alias is a load-time warning naming file and line.

use serde_json::json;

use crate::loopback::run_against;
use crate::support::{TempProject, stderr, stdout};
use zr_test_support::fixture;
use zr_test_support::loopback::{Reply, Server};

fn agent(name: &str, model: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: The {name}.\nmodel: {model}\n---\nYou are the {name}.\n"
    )
}

fn task(id: &str, ty: &str) -> Reply {
    Reply::anthropic(
        None,
        &[(
            id,
            "Task",
            json!({"description": ty, "prompt": "Go.", "subagent_type": ty}),
        )],
    )
}

#[test]
fn an_alias_is_sent_as_its_id_and_an_unknown_model_fails_its_subagent_visibly() {
    let not_found = Reply {
        status: 404,
        body:
            br#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}"#
                .to_vec(),
    };
    let server = Server::scripted(vec![
        task("toolu_writer", "writer"),
        Reply::anthropic(Some("written"), &[]),
        task("toolu_nope", "nope"),
        not_found,
        Reply::anthropic(Some("Done anyway."), &[]),
    ]);
    let project = TempProject::new();
    project
        .write("zr.toml", "[model]\nname = \"claude-test\"\n")
        .write(".zr/agents/writer.md", &agent("writer", "opus"))
        .write(".zr/agents/nope.md", &agent("nope", "claude-nope"));
    let out = run_against(&project, &server, false, "go");
    let err = stderr(&out);
    assert_eq!(stdout(&out), "Done anyway.\n");
    let requests = server.requests();
    let models: Vec<&str> = requests
        .iter()
        .map(|r| r.body["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        [
            "claude-test",
            "claude-opus-4-5",
            "claude-test",
            "claude-nope",
            "claude-test"
        ],
        "opus is sent as its id; a 404 is not retried"
    );
    assert!(
        err.contains("warning: subagent root.0002-nope (nope) failed:")
            && err.contains("not_found_error"),
        "{err}"
    );
    // The root heard of the failure as a failed task.
    let result = requests[4].body["messages"].to_string();
    assert!(result.contains(r#"\"status\":\"failed\""#), "{result}");
}

#[test]
fn a_claude_alias_on_an_openai_server_warns_at_load_naming_file_and_line() {
    let server = Server::start(fixture::bytes("openai/text.sse"));
    let project = TempProject::new();
    project
        .write("zr.toml", "[model]\nname = \"local-model\"\n")
        .write(".zr/agents/writer.md", &agent("writer", "sonnet"));
    let out = run_against(&project, &server, true, "say hello");
    let err = stderr(&out);
    assert!(
        err.contains("warning: .zr/agents/writer.md:4: model 'sonnet' is a Claude alias with no id on this provider; agent 'writer' runs on the session's model"),
        "{err}"
    );
    // With a mapping in zr.toml there is nothing to warn about.
    project.write(
        "zr.toml",
        "[model]\nname = \"local-model\"\n\n[model.aliases]\nsonnet = \"local-big\"\n",
    );
    let out = run_against(&project, &server, true, "say hello");
    let err = stderr(&out);
    assert!(!err.contains("Claude alias"), "{err}");
}

#[test]
fn zr_agents_shows_the_id_an_alias_resolves_to() {
    let project = TempProject::new();
    project.write(".zr/agents/writer.md", &agent("writer", "haiku"));
    let out = project.zr_ok(&["agents"]);
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.starts_with("writer"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("claude-haiku-4-5 (haiku)"), "{row}");
    let out = project.zr_ok(&["agents", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let writer = json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "writer")
        .unwrap();
    assert_eq!(writer["model"], "haiku");
    assert_eq!(writer["model_id"], "claude-haiku-4-5");
}

/// Provider profiles: the root on the session's Anthropic server, a
/// subagent type on a `[providers.local]` OpenAI Chat server by `model:
/// local:ID`; each server hears only its own agent, and both wires'
/// bodies are captured for the SDK-type check.
#[test]
fn a_subagent_type_runs_on_its_provider_profile_over_another_wire() {
    let anthropic = Server::scripted(vec![
        task("toolu_worker", "worker"),
        Reply::anthropic(Some("Root done."), &[]),
    ]);
    let openai = Server::start(fixture::bytes("openai/text.sse"));
    let project = TempProject::new();
    project
        .write(
            "zr.toml",
            &format!(
                "[model]\nname = \"claude-test\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\naliases = {{ fast = \"qwen-fast\" }}\n",
                openai.url
            ),
        )
        .write(".zr/agents/worker.md", &agent("worker", "local:fast"))
        // A plain alias keeps working on the session's provider.
        .write(".zr/agents/writer.md", &agent("writer", "sonnet"));
    let out = run_against(&project, &anthropic, false, "go");
    assert_eq!(stdout(&out), "Root done.\n", "{}", stderr(&out));
    let root: Vec<String> = anthropic
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(root, ["claude-test", "claude-test"], "only the root's");
    let worker = openai.requests();
    assert_eq!(worker.len(), 1, "only the worker's request");
    assert_eq!(worker[0].path, "/v1/chat/completions");
    assert_eq!(
        worker[0].body["model"], "qwen-fast",
        "the profile's alias, prefix off"
    );
    assert!(
        worker[0].body["messages"]
            .to_string()
            .contains("You are the worker."),
        "{}",
        worker[0].body
    );
}

/// A Task call's own `model` picks the subagent's model over its type's
/// (`model: sonnet` here): `local:fast` reaches the `[providers.local]`
/// OpenAI server as the profile's alias, `haiku` the Anthropic server as
/// its id; a call without one runs on the type's.
#[test]
fn a_task_calls_model_overrides_its_types_on_the_wire() {
    let calls = [
        ("toolu_local", "local:fast"),
        ("toolu_haiku", "haiku"),
        ("toolu_type", ""),
    ]
    .map(|(id, model)| {
        let mut input = json!({"description": id, "prompt": "Go.", "subagent_type": "writer"});
        if !model.is_empty() {
            input["model"] = json!(model);
        }
        (id, "Task", input)
    });
    let anthropic = Server::scripted(vec![
        Reply::anthropic(None, &calls),
        Reply::anthropic(Some("written"), &[]),
        Reply::anthropic(Some("written"), &[]),
        Reply::anthropic(Some("Root done."), &[]),
    ]);
    let openai = Server::start(fixture::bytes("openai/text.sse"));
    let project = TempProject::new();
    project
        .write(
            "zr.toml",
            &format!(
                "[model]\nname = \"claude-test\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\naliases = {{ fast = \"qwen-fast\" }}\n",
                openai.url
            ),
        )
        .write(".zr/agents/writer.md", &agent("writer", "sonnet"));
    let out = run_against(&project, &anthropic, false, "go");
    assert_eq!(stdout(&out), "Root done.\n", "{}", stderr(&out));
    let mut models: Vec<String> = anthropic
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_owned())
        .collect();
    models[1..3].sort();
    assert_eq!(
        models,
        [
            "claude-test",
            "claude-haiku-4-5",
            "claude-sonnet-4-5",
            "claude-test"
        ]
    );
    let local = openai.requests();
    assert_eq!(local.len(), 1, "only the local writer's request");
    assert_eq!(local[0].body["model"], "qwen-fast");
}

/// `model: foo:bar` without `[providers.foo]`: a warning at load naming
/// the file, its line and the table to set, and a Task call for that
/// type fails with the same words (nothing started, no request for it).
#[test]
fn an_unknown_provider_profile_warns_at_load_and_fails_its_task_call() {
    let server = Server::scripted(vec![
        task("toolu_worker", "worker"),
        Reply::anthropic(Some("Root done."), &[]),
    ]);
    let project = TempProject::new();
    project
        .write("zr.toml", "[model]\nname = \"claude-test\"\n")
        .write(".zr/agents/worker.md", &agent("worker", "foo:bar"));
    let out = run_against(&project, &server, false, "go");
    let err = stderr(&out);
    assert!(
        err.contains("warning: .zr/agents/worker.md:4: agent 'worker': model 'foo:bar' names the provider profile 'foo', and zr.toml defines none; set [providers.foo] in zr.toml"),
        "{err}"
    );
    assert_eq!(stdout(&out), "Root done.\n", "{err}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "no request for the worker");
    let result = requests[1].body["messages"].to_string();
    assert!(
        result.contains("Task: subagent type 'worker': model 'foo:bar' (.zr/agents/worker.md:4) names the provider profile 'foo'")
            && result.contains("Nothing was started."),
        "{result}"
    );
}
