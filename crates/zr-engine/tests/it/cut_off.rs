//! A tool call cut short by the output limit (the answer stopped at
//! `max_tokens` / `finish_reason: "length"` inside the call's JSON) is
//! answered to the model as an error result, not run, and the run goes
//! on: on loopback servers speaking the Anthropic Messages and OpenAI Chat
//! Completions wires, request bodies checked.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{
    Agent, AgentConfig, AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiProvider,
};

use crate::structured::openai_config;
use crate::support::runtime_in;
use zr_test_support::replay::{Replay, Reply, fast_retry};
use zr_test_support::sse;

/// The start of a Write call's input, as a model cut off mid-content
/// writes it.
const PARTIAL: &str = r#"{"file_path": "notes.txt", "content": "a very long te"#;

/// An Anthropic answer: some text, then a Write call whose input the
/// output limit cut off.
fn anthropic_cut_off() -> Reply {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Writing the notes."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_cut", "name": "Write", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": PARTIAL}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 4096}}),
        json!({"type": "message_stop"}),
    ];
    Reply::sse(sse::anthropic_events(events))
}

/// A Chat Completions answer: a Write call cut off, `finish_reason:
/// "length"`.
fn openai_cut_off() -> Reply {
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_cut", "type": "function", "function": {"name": "Write", "arguments": PARTIAL}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 4096, "total_tokens": 4116}}),
    ];
    Reply::sse(sse::chat_chunks(chunks))
}

/// A Chat Completions answer of `text`.
fn openai_text(text: &str) -> Reply {
    Reply::sse(sse::chat_chunks([
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}),
    ]))
}

/// Runs a root over `provider` in a fresh folder; its answer, and the
/// folder.
async fn run_root(provider: Arc<dyn ModelProvider>, model: &str) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime_in(dir.path(), model, provider);
    let agent = Agent::new(runtime, AgentConfig::new("You are the root."));
    let result = tokio::time::timeout(Duration::from_secs(60), agent.prompt("Write the notes."))
        .await
        .expect("the query ends within a minute")
        .expect("a cut-off call does not fail the run");
    (result.output, dir)
}

/// The text of the one tool result in `messages` answering `id`, and
/// whether it is an error (Anthropic's shape).
fn anthropic_result(body: &Value, id: &str) -> (bool, String) {
    for message in body["messages"].as_array().unwrap() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" && block["tool_use_id"] == id {
                let text = block["content"].to_string();
                return (block["is_error"] == json!(true), text);
            }
        }
    }
    panic!("no result for {id} in {body}");
}

#[tokio::test]
async fn anthropic_a_call_cut_off_at_max_tokens_is_answered_as_an_error_and_the_run_goes_on() {
    let server = Replay::start(vec![
        anthropic_cut_off(),
        Reply::anthropic(
            None,
            &[(
                "toolu_short",
                "Write",
                json!({"file_path": "notes.txt", "content": "short"}),
            )],
        ),
        Reply::anthropic(Some("Wrote them in short."), &[]),
    ])
    .await;
    let mut config = AnthropicConfig::new("test-key")
        .with_base_url(server.url())
        .with_retry(fast_retry(1));
    config.http.idle_timeout = Duration::from_secs(30);
    let provider = Arc::new(AnthropicProvider::new(config).unwrap());
    let (output, dir) = run_root(provider, "claude-test").await;
    assert_eq!(output, "Wrote them in short.");
    // The cut-off call did not run; the second one did.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "short"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1].json();
    let (is_error, text) = anthropic_result(&second, "toolu_cut");
    assert!(is_error, "{text}");
    assert!(text.contains("reached the output limit"), "{text}");
    // The call stays in the history with an object input (the API takes
    // nothing else), holding the start of what was written.
    let assistant = &second["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    let call = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .unwrap();
    assert!(call["input"].is_object(), "{call}");
    assert!(
        call["input"].to_string().contains("a very long te"),
        "{call}"
    );
}

#[tokio::test]
async fn openai_a_call_cut_off_at_length_is_answered_as_an_error_and_the_run_goes_on() {
    let server = Replay::start(vec![
        openai_cut_off(),
        openai_text("Gave up on the long notes."),
    ])
    .await;
    let provider = Arc::new(OpenAiProvider::new(openai_config(&server)).unwrap());
    let (output, dir) = run_root(provider, "gpt-test").await;
    assert_eq!(output, "Gave up on the long notes.");
    assert!(!dir.path().join("notes.txt").exists(), "nothing ran");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    let call = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .and_then(|m| m["tool_calls"][0].as_object())
        .expect("the cut-off call is in the history");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert!(arguments.is_object());
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_cut")
        .expect("the call is answered");
    assert!(
        result["content"]
            .to_string()
            .contains("reached the output limit"),
        "{result}"
    );
}
