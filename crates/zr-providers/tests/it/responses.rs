//! The Responses API provider against the loopback replay server.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zr_providers::{
    Effort, ModelEvent, ModelProvider, OpenAiConfig, OutputFormat, ProviderError,
    ResponsesProvider, ToolChoice,
};
use zr_types::{ContentBlock, Message, MessageRole, StopReason, ToolResultContent, Usage};

use crate::anthropic::rich_request;
use zr_test_support::replay::{
    Replay, Reply, assert_api_error, assert_partial_then_retried,
    check_cut_connections_are_retried, check_text_fixture, collect, fast_retry, metadata_of,
    retries, simple_request, stream_from, text,
};

fn provider(server: &Replay, attempts: u32) -> ResponsesProvider {
    let mut config = OpenAiConfig::new(format!("{}/v1", server.url()))
        .with_api_key("sk-test")
        .with_retry(fast_retry(attempts));
    config.http.idle_timeout = Duration::from_secs(5);
    ResponsesProvider::new(config).expect("client")
}

/// input_tokens 120 of which 100 cached, output_tokens 9.
const TEXT_USAGE: Usage = Usage {
    input_tokens: 20,
    output_tokens: 9,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 0,
};

/// The reasoning item of `responses/tools.sse` as a thinking block.
fn reasoning_block() -> ContentBlock {
    ContentBlock::Thinking {
        thinking: "I should read the file.".into(),
        signature: Some(
            json!({"id": "rs_68af1c30c1d48190aa11bb22cc33dd44", "encrypted_content": "gAAAAABor-ENCRYPTED-1=="})
                .to_string(),
        ),
    }
}

#[tokio::test]
async fn text_streams_as_deltas_then_completes_with_cached_usage() {
    let request =
        check_text_fixture(provider, "responses/text.sse", TEXT_USAGE, "/v1/responses").await;
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        request.json(),
        json!({
            "model": "test-model",
            "instructions": "You are terse.",
            "input": [{"type": "message", "role": "user", "content": "hi"}],
            "max_output_tokens": 1024,
            "stream": true,
            "store": false,
            "include": ["reasoning.encrypted_content"],
        })
    );
}

#[tokio::test]
async fn reasoning_and_function_calls_are_assembled_from_finished_items() {
    let server = Replay::start(vec![Reply::fixture("responses/tools.sse")]).await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("read"))).await;
    assert_eq!(
        events,
        vec![
            ModelEvent::ThinkingDelta {
                text: "I should read ".into()
            },
            ModelEvent::ThinkingDelta {
                text: "the file.".into()
            },
            ModelEvent::ToolUseStarted {
                id: "call_A".into(),
                name: "Read".into()
            },
            ModelEvent::ToolUseStarted {
                id: "call_B".into(),
                name: "Glob".into()
            },
        ]
    );
    let response = outcome.expect("completed");
    assert_eq!(
        response.content,
        vec![
            reasoning_block(),
            ContentBlock::ToolUse {
                id: "call_A".into(),
                name: "Read".into(),
                input: json!({"path": "src/main.rs"})
            },
            ContentBlock::ToolUse {
                id: "call_B".into(),
                name: "Glob".into(),
                input: json!({"pattern": "*.rs"})
            },
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 300,
            output_tokens: 40,
            ..Usage::default()
        }
    );
}

#[tokio::test]
async fn the_next_request_feeds_the_reasoning_item_back_and_never_holds_display() {
    let server = Replay::start(vec![Reply::fixture("responses/text.sse")]).await;
    let mut request = rich_request();
    // The history's thinking block is the Responses API's own (the rich
    // request's Anthropic signature is another provider's: not sent).
    Arc::make_mut(&mut request.messages)[1]
        .content
        .insert(0, reasoning_block());
    let (_, outcome) = collect(provider(&server, 3).stream(request)).await;
    outcome.expect("completed");
    let requests = server.requests();
    assert!(
        !String::from_utf8_lossy(&requests[0].body).contains("SECRET-DISPLAY"),
        "display reached the model"
    );
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    assert_eq!(
        requests[0].json(),
        json!({
            "model": "test-model",
            "instructions": "You are terse.",
            "input": [
                {"type": "message", "role": "user", "content": "Read the file."},
                {"type": "reasoning", "id": "rs_68af1c30c1d48190aa11bb22cc33dd44",
                 "summary": [{"type": "summary_text", "text": "I should read the file."}],
                 "encrypted_content": "gAAAAABor-ENCRYPTED-1=="},
                {"type": "message", "role": "assistant", "content": "Reading."},
                {"type": "function_call", "call_id": "call_1", "name": "Read", "arguments": "{\"path\":\"a.txt\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "Error: line one\n\n{\"lines\":1}"},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "Image returned by tool call call_1:"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K", "detail": "auto"},
                ]},
            ],
            "tools": [
                {"type": "function", "name": "Read", "description": "Reads a file.", "parameters": schema, "strict": false},
                {"type": "function", "name": "Glob", "description": "Finds files.", "parameters": schema, "strict": false},
            ],
            "tool_choice": "none",
            "max_output_tokens": 1024,
            "stream": true,
            "store": false,
            "include": ["reasoning.encrypted_content"],
        })
    );
}

#[tokio::test]
async fn effort_and_an_output_format_are_sent_and_answer_means_no_tools() {
    let server = Replay::start(vec![Reply::fixture("responses/answer.sse")]).await;
    let schema = json!({"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string"}}},
                        "required": ["files"], "additionalProperties": false});
    let mut request = rich_request();
    request.tool_choice = ToolChoice::Answer;
    request.effort = Some(Effort::Max);
    request.output = Some(Arc::new(OutputFormat::new(schema.clone())));
    let (_, outcome) = collect(provider(&server, 3).stream(request)).await;
    let response = outcome.expect("completed");
    assert_eq!(
        response.content,
        vec![ContentBlock::Text {
            text: r#"{"files":["a.rs","b.rs"]}"#.into()
        }]
    );
    let body = server.requests()[0].json();
    assert_eq!(body["tool_choice"], json!("none"));
    assert_eq!(body["reasoning"], json!({"effort": "high"}));
    assert_eq!(
        body["text"],
        json!({"format": {"type": "json_schema", "name": "StructuredOutput", "schema": schema, "strict": true}})
    );
}

#[tokio::test]
async fn an_incomplete_response_is_cut_at_max_tokens() {
    let server = Replay::start(vec![Reply::fixture("responses/incomplete.sse")]).await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    assert_eq!(events, vec![text("The answer is")]);
    let response = outcome.expect("completed");
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    assert_eq!(
        response.content,
        vec![ContentBlock::Text {
            text: "The answer is".into()
        }]
    );
}

#[tokio::test]
async fn a_failed_response_mid_stream_starts_over() {
    let (_, events, outcome) = stream_from(
        provider,
        3,
        vec![
            Reply::fixture("responses/failed.sse"),
            Reply::fixture("responses/text.sse"),
        ],
    )
    .await;
    assert_partial_then_retried(&events, outcome, "You can retry your request");
}

#[tokio::test]
async fn a_rate_limit_error_event_mid_stream_starts_over() {
    let (_, events, outcome) = stream_from(
        provider,
        3,
        vec![
            Reply::fixture("responses/rate_limited.sse"),
            Reply::fixture("responses/text.sse"),
        ],
    )
    .await;
    assert_partial_then_retried(&events, outcome, "Rate limit reached");
}

#[tokio::test]
async fn an_error_event_of_another_kind_is_final() {
    let (server, events, outcome) =
        stream_from(provider, 3, vec![Reply::fixture("responses/error.sse")]).await;
    assert_eq!(retries(&events), 0);
    assert_api_error(
        outcome,
        "openai",
        "invalid_prompt",
        "Invalid prompt: your prompt was flagged.",
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_http_error_is_classified_as_for_chat_completions() {
    let (_, _, outcome) = stream_from(
        provider,
        3,
        vec![Reply::json(
            401,
            r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        )],
    )
    .await;
    assert!(
        matches!(&outcome, Err(ProviderError::Auth { status: 401, .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn cut_connections_are_retried() {
    check_cut_connections_are_retried(
        provider,
        "openai",
        "responses/text.sse",
        &[700, 1500, 40],
        TEXT_USAGE,
    )
    .await;
}

#[tokio::test]
async fn a_tool_result_round_trip_keeps_call_ids() {
    // The tools fixture's answer, then its results, as the engine sends
    // them in the next request.
    let server = Replay::start(vec![
        Reply::fixture("responses/tools.sse"),
        Reply::fixture("responses/text.sse"),
    ])
    .await;
    let provider = provider(&server, 3);
    let first = simple_request("read");
    let (_, outcome) = collect(provider.stream(first.clone())).await;
    let answer = outcome.expect("completed");
    let mut next = first;
    Arc::make_mut(&mut next.messages).push(Message {
        role: MessageRole::Assistant,
        content: answer.content,
    });
    Arc::make_mut(&mut next.messages).push(Message {
        role: MessageRole::User,
        content: ["call_A", "call_B"]
            .into_iter()
            .map(|id| ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: vec![ToolResultContent::Text {
                    text: format!("result of {id}"),
                }],
                is_error: false,
                display: None,
            })
            .collect(),
    });
    let (_, outcome) = collect(provider.stream(next)).await;
    outcome.expect("completed");
    let input = &server.requests()[1].json()["input"];
    let kinds: Vec<(&str, &str)> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["type"].as_str().unwrap(),
                item.get("call_id")
                    .or_else(|| item.get("id"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("message", "-"),
            ("reasoning", "rs_68af1c30c1d48190aa11bb22cc33dd44"),
            ("function_call", "call_A"),
            ("function_call", "call_B"),
            ("function_call_output", "call_A"),
            ("function_call_output", "call_B"),
        ]
    );
}

#[tokio::test]
async fn a_whole_response_object_instead_of_a_stream_is_read_as_the_answer() {
    let whole = json!({"id": "resp_2", "object": "response", "status": "completed",
        "output": [{"id": "msg_2", "type": "message", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "annotations": [], "text": "Hello, world"}]}],
        "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100}, "output_tokens": 9,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 129}});
    let server = Replay::start(vec![Reply::json(200, &whole.to_string())]).await;
    let (_, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    let response = outcome.expect("completed");
    assert_eq!(
        (response.content, response.usage),
        (
            vec![ContentBlock::Text {
                text: "Hello, world".into()
            }],
            TEXT_USAGE
        )
    );
}

#[tokio::test]
async fn the_answering_model_and_response_id_come_as_metadata_once() {
    let server = Replay::start(vec![Reply::fixture("responses/text.sse")]).await;
    let mut stream = provider(&server, 1).stream(simple_request("hi"));
    let mut metadata = Vec::new();
    while let Some(item) = futures_util::StreamExt::next(&mut stream).await {
        if let ModelEvent::Metadata { model, id } = item.expect("an event") {
            metadata.push((model, id));
        }
    }
    // response.created, response.in_progress and response.completed each
    // carry the response object; the event comes once, from the first.
    assert_eq!(
        metadata,
        [(
            "gpt-5-2025-08-07".to_owned(),
            Some("resp_68af1c2e5f0c8190a1b2c3d4e5f60718".to_owned())
        )]
    );
    assert_eq!(provider(&server, 1).name(), "openai");
}

#[tokio::test]
async fn a_whole_response_object_names_its_model_and_id_too() {
    let whole = json!({"id": "resp_2", "object": "response", "status": "completed",
        "model": "gpt-5-mini-2025-08-07",
        "output": [{"id": "msg_2", "type": "message", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "annotations": [], "text": "Hello, world"}]}]});
    let server = Replay::start(vec![Reply::json(200, &whole.to_string())]).await;
    assert_eq!(
        metadata_of(provider(&server, 1).stream(simple_request("hi"))).await,
        Some((
            "gpt-5-mini-2025-08-07".to_owned(),
            Some("resp_2".to_owned())
        ))
    );
}
