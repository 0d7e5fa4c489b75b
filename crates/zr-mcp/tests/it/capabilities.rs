//! The client capabilities and the resource and prompt bridges against server-everything over stdio: elicitation, roots, resources, prompts.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use zr_mcp::{
    ElicitationAnswer, ElicitationRequest, Elicitor, FieldKind, McpError, McpTool, PromptRole,
};
use zr_types::{AgentId, ToolCall, ToolHandler, ToolOutput};

use crate::support::*;

/// Answers every form with `answer` and keeps what it was asked.
#[derive(Debug)]
struct Recorder {
    answer: ElicitationAnswer,
    asked: Mutex<Vec<ElicitationRequest>>,
}

impl Recorder {
    fn new(answer: ElicitationAnswer) -> Arc<Self> {
        Arc::new(Self {
            answer,
            asked: Mutex::new(Vec::new()),
        })
    }

    fn asked(&self) -> Vec<ElicitationRequest> {
        self.asked.lock().unwrap().clone()
    }
}

impl Elicitor for Recorder {
    fn elicit<'a>(
        &'a self,
        request: &'a ElicitationRequest,
    ) -> zr_types::BoxFuture<'a, ElicitationAnswer> {
        self.asked.lock().unwrap().push(request.clone());
        Box::pin(async move { self.answer.clone() })
    }
}

async fn call_as(tools: &[McpTool], remote: &str, input: Value, background: bool) -> ToolOutput {
    let handler = handler_of(tools, remote);
    let call = ToolCall {
        id: "toolu_1".into(),
        name: handler.name().to_string(),
        input,
    };
    ToolHandler::call(
        handler.as_ref(),
        &call,
        tool_context().with_background(background),
    )
    .await
    .unwrap_or_else(|e| panic!("{remote} failed: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_goes_to_the_elicitor_and_its_answer_back_to_the_server() {
    let marker = marker();
    let hub = hub(vec![everything("every", &marker)], options());
    let mut answer = serde_json::Map::new();
    answer.insert("name".into(), json!("Ada Lovelace"));
    answer.insert("integer".into(), json!(7));
    let recorder = Recorder::new(ElicitationAnswer::Accept(answer));
    hub.set_elicitor(Some(recorder.clone()));
    let lease = hub.acquire("every").await.unwrap();
    // Registered by the server only for a client that declares elicitation.
    let tools = lease.tools().await.unwrap();
    let out = call_as(&tools, "trigger-elicitation-request", json!({}), false).await;
    let text = text_of(&out);
    assert!(
        text.contains("User provided the requested information"),
        "{text}"
    );
    assert!(text.contains("- Name: Ada Lovelace"), "{text}");
    assert!(text.contains("- Favorite Integer: 7"), "{text}");

    let asked = recorder.asked();
    assert_eq!(asked.len(), 1);
    let form = &asked[0];
    assert_eq!(form.server.as_str(), "every");
    assert_eq!(
        form.message,
        "Please provide inputs for the following fields:"
    );
    assert_eq!(form.agents, [AgentId::root()]);
    let field = |n: &str| form.fields.iter().find(|f| f.name == n).unwrap();
    assert!(field("name").required);
    assert!(!field("check").required);
    assert_eq!(field("integer").default, Some(json!(42)));
    assert!(matches!(
        field("integer").kind,
        FieldKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(100.0)
        }
    ));
    assert!(matches!(&field("titledMultipleSelectEnum").kind,
        FieldKind::Choice { options, multiple: true, .. } if options[1].label == "Salmon"));
    assert!(matches!(&field("legacyTitledEnum").kind,
        FieldKind::Choice { options, multiple: false, .. } if options[0].label == "Cats"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_agents_and_a_host_without_an_elicitor_decline() {
    // Without an elicitor the capability is not declared: the server
    // offers no tool that needs it.
    let idle_marker = marker();
    let idle = hub(vec![everything("every", &idle_marker)], options());
    let tools = idle.acquire("every").await.unwrap().tools().await.unwrap();
    assert!(
        !tools
            .iter()
            .any(|t| t.handler.remote_name() == "trigger-elicitation-request")
    );

    let marker = marker();
    let hub = hub(vec![everything("every", &marker)], options());
    let recorder = Recorder::new(ElicitationAnswer::Cancel);
    hub.set_elicitor(Some(recorder.clone()));
    let lease = hub.acquire("every").await.unwrap();
    let tools = lease.tools().await.unwrap();
    // A background agent's call: declined without asking.
    let out = call_as(&tools, "trigger-elicitation-request", json!({}), true).await;
    assert!(text_of(&out).contains("User declined"), "{out:?}");
    assert!(recorder.asked().is_empty());
    // A foreground agent's call is asked, and the answer is the elicitor's.
    let out = call_as(&tools, "trigger-elicitation-request", json!({}), false).await;
    assert!(text_of(&out).contains("User cancelled"), "{out:?}");
    assert_eq!(recorder.asked().len(), 1);
    // The elicitor removed: declined.
    hub.set_elicitor(None);
    let out = call_as(&tools, "trigger-elicitation-request", json!({}), false).await;
    assert!(text_of(&out).contains("User declined"), "{out:?}");
    assert_eq!(recorder.asked().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_roots_are_the_working_folder_and_a_change_is_announced() {
    let marker = marker();
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let hub = hub(
        vec![everything("every", &marker)],
        options().with_roots(vec![first.path().to_path_buf()]),
    );
    let lease = hub.acquire("every").await.unwrap();
    let tools = lease.tools().await.unwrap();
    let uri = |p: &std::path::Path| format!("file://{}", p.display());
    let out = call_as(&tools, "get-roots-list", json!({}), false).await;
    let text = text_of(&out);
    assert!(text.contains("(1 total)"), "{text}");
    assert!(text.contains(&uri(first.path())), "{text}");

    hub.set_roots(vec![
        first.path().to_path_buf(),
        second.path().to_path_buf(),
    ])
    .await;
    assert_eq!(hub.roots().len(), 2);
    // The server asks again on notifications/roots/list_changed.
    let mut text = String::new();
    for _ in 0..100 {
        text = text_of(&call_as(&tools, "get-roots-list", json!({}), false).await);
        if text.contains(&uri(second.path())) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(text.contains("(2 total)"), "{text}");
    assert!(text.contains(&uri(second.path())), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_listed_and_read_through_two_read_only_tools_of_their_server() {
    let marker = marker();
    let hub = hub(vec![everything("every", &marker)], options());
    let lease = hub.acquire("every").await.unwrap();
    assert!(lease.offers_resources());
    let tools = lease.tools().await.unwrap();
    for name in [
        "mcp__every__ListMcpResources",
        "mcp__every__ReadMcpResource",
    ] {
        let tool = tools
            .iter()
            .find(|t| t.definition.name.as_str() == name)
            .unwrap_or_else(|| panic!("no {name}"));
        assert!(tool.definition.annotations.read_only, "{name}");
        assert_eq!(
            tool.definition.origin,
            zr_types::ToolOrigin::Connection {
                server: "every".parse().unwrap()
            }
        );
    }
    let out = call_as(&tools, "ListMcpResources", json!({}), false).await;
    let listing = text_of(&out);
    assert!(!out.is_error);
    assert!(
        listing.contains(
            "demo://resource/static/document/architecture.md - architecture.md (text/markdown): Static document file exposed from /docs: architecture.md"
        ),
        "{listing}"
    );
    assert!(
        listing.contains("demo://resource/dynamic/text/{resourceId}"),
        "{listing}"
    );

    let out = call_as(
        &tools,
        "ReadMcpResource",
        json!({"uri": "demo://resource/static/document/features.md"}),
        false,
    )
    .await;
    let text = text_of(&out);
    assert!(
        text.starts_with(
            "[resource demo://resource/static/document/features.md (text/markdown)]\n"
        ),
        "{text}"
    );
    assert!(text.len() > 200, "the document itself: {text}");

    // An unknown URI is the server's error, for the model.
    let out = call_as(
        &tools,
        "ReadMcpResource",
        json!({"uri": "demo://resource/none"}),
        false,
    )
    .await;
    assert!(out.is_error, "{out:?}");
    assert!(text_of(&out).contains("demo://resource/none"), "{out:?}");
    let out = call_as(&tools, "ReadMcpResource", json!({}), false).await;
    assert!(
        out.is_error && text_of(&out).contains("needs 'uri'"),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_and_filled_from_words() {
    let marker = marker();
    let hub = hub(vec![everything("every", &marker)], options());
    let lease = hub.acquire("every").await.unwrap();
    let prompts = lease.prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"simple-prompt"), "{names:?}");
    let args = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
    assert_eq!(
        args.usage(lease.server()),
        "/every:args-prompt <city> [state]"
    );

    let messages = lease
        .get_prompt("args-prompt", &["Austin".into(), "state=TX".into()])
        .await
        .unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].role, PromptRole::User);
    assert_eq!(messages[0].text, "What's weather in Austin, TX?");

    let missing = lease.get_prompt("args-prompt", &[]).await.unwrap_err();
    assert!(
        matches!(missing, McpError::PromptArguments { .. }),
        "{missing}"
    );
    let unknown = lease.get_prompt("nope", &[]).await.unwrap_err();
    let message = unknown.to_string();
    assert!(
        message.starts_with(
            "MCP server 'every' has no prompt 'nope'; it has: simple-prompt, args-prompt"
        ),
        "{message}"
    );
}
