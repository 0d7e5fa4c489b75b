//! The Anthropic provider against the loopback replay server.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zr_providers::{
    AnthropicConfig, AnthropicProvider, ModelEvent, ModelProvider, ProviderError, ToolChoice,
};
use zr_types::{
    ContentBlock, ImageSource, Message, MessageRole, StopReason, ToolDefinition, ToolName,
    ToolOrigin, ToolResultContent, Usage,
};

use zr_test_support::fixture;
use zr_test_support::replay::{
    Replay, Reply, assert_api_error, assert_drop_closes, assert_first_retry, assert_hello_world,
    assert_partial_then_retried, assert_protocol_error, assert_rejected,
    check_cut_connections_are_retried, check_text_fixture, collect, fast_retry, first_item,
    metadata_of, simple_request, stream_from, text,
};

fn config(server: &Replay, attempts: u32) -> AnthropicConfig {
    let mut config = AnthropicConfig::new("test-key")
        .with_base_url(server.url())
        .with_retry(fast_retry(attempts));
    config.http.idle_timeout = Duration::from_secs(5);
    config
}

pub(crate) fn provider(server: &Replay, attempts: u32) -> AnthropicProvider {
    AnthropicProvider::new(config(server, attempts)).expect("client")
}

/// HTTP 529 with the API's `overloaded_error` body.
fn overloaded() -> Reply {
    Reply::json(
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )
}

const FIXTURE_USAGE: Usage = Usage {
    input_tokens: 25,
    output_tokens: 15,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 20,
};

#[tokio::test]
async fn text_streams_as_deltas_then_completes_with_usage() {
    let request = check_text_fixture(
        provider,
        "anthropic/text.sse",
        FIXTURE_USAGE,
        "/v1/messages",
    )
    .await;
    assert_eq!(request.header("x-api-key"), Some("test-key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn a_bearer_token_is_sent_as_authorization_without_a_key() {
    // A gateway's token (Claude Code's ANTHROPIC_AUTH_TOKEN): no x-api-key.
    let server = Replay::start(vec![Reply::fixture("anthropic/text.sse")]).await;
    let mut config = AnthropicConfig::bearer("gw-token")
        .with_base_url(server.url())
        .with_retry(fast_retry(1));
    config.http.idle_timeout = Duration::from_secs(5);
    let provider = AnthropicProvider::new(config).expect("client");
    let (_, outcome) = collect(provider.stream(simple_request("hi"))).await;
    outcome.expect("completed");
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer gw-token"));
    assert_eq!(request.header("x-api-key"), None);
    assert!(!format!("{provider:?}").contains("gw-token"));
}

#[tokio::test]
async fn a_rejected_token_names_its_variable_and_is_redacted() {
    let server = Replay::start(vec![Reply::json(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"bad token gw-token"}}"#,
    )])
    .await;
    let config = AnthropicConfig::bearer("gw-token")
        .with_base_url(server.url())
        .with_retry(fast_retry(1));
    let provider = AnthropicProvider::new(config).expect("client");
    let (_, outcome) = collect(provider.stream(simple_request("hi"))).await;
    let text = zr_types::error_chain(&outcome.expect_err("401 fails"));
    assert!(text.contains("ANTHROPIC_AUTH_TOKEN"), "{text}");
    assert!(!text.contains("gw-token"), "{text}");
}

#[tokio::test]
async fn two_tool_calls_are_assembled_from_json_pieces() {
    let server = Replay::start(vec![Reply::fixture("anthropic/tools.sse")]).await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("read"))).await;
    assert_eq!(
        events,
        vec![
            text("Reading both."),
            ModelEvent::ToolUseStarted {
                id: "toolu_01".into(),
                name: "Read".into()
            },
            ModelEvent::ToolUseStarted {
                id: "toolu_02".into(),
                name: "Glob".into()
            },
        ]
    );
    let response = outcome.expect("completed");
    assert_eq!(
        response.content,
        vec![
            ContentBlock::Text {
                text: "Reading both.".into()
            },
            ContentBlock::ToolUse {
                id: "toolu_01".into(),
                name: "Read".into(),
                input: json!({"path": "src/main.rs", "limit": 20}),
            },
            // No input_json_delta at all: the input is an empty object.
            ContentBlock::ToolUse {
                id: "toolu_02".into(),
                name: "Glob".into(),
                input: json!({})
            },
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.usage.output_tokens, 42);
}

#[tokio::test]
async fn thinking_is_streamed_and_kept_with_its_signature() {
    let server = Replay::start(vec![Reply::fixture("anthropic/thinking.sse")]).await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("think"))).await;
    assert_eq!(
        events,
        vec![
            ModelEvent::ThinkingDelta {
                text: "Let me think".into()
            },
            ModelEvent::ThinkingDelta {
                text: " about it.".into()
            },
            text("The answer is"),
        ]
    );
    let response = outcome.expect("completed");
    assert_eq!(
        response.content,
        vec![
            ContentBlock::Thinking {
                thinking: "Let me think about it.".into(),
                signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3h".into()),
            },
            ContentBlock::Text {
                text: "The answer is".into()
            },
        ]
    );
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
}

fn tool(name: &str, description: &str) -> Arc<ToolDefinition> {
    let mut tool = ToolDefinition::new(
        ToolName::try_from(name).expect("valid name"),
        description,
        ToolOrigin::Builtin,
    );
    tool.input_schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    Arc::new(tool)
}

/// A conversation that uses every kind of block.
pub(crate) fn rich_request() -> zr_providers::ModelRequest {
    let mut request = simple_request("Read the file.");
    request.tools = vec![tool("Read", "Reads a file."), tool("Glob", "Finds files.")];
    request.tool_choice = ToolChoice::None;
    std::sync::Arc::make_mut(&mut request.messages).push(Message {
        role: MessageRole::Assistant,
        content: vec![
            ContentBlock::Thinking {
                thinking: "I should read it.".into(),
                signature: Some("sig-1".into()),
            },
            ContentBlock::Text {
                text: "Reading.".into(),
            },
            ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "Read".into(),
                input: json!({"path": "a.txt"}),
            },
        ],
    });
    std::sync::Arc::make_mut(&mut request.messages).push(Message {
        role: MessageRole::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: "call_1".into(),
            content: vec![
                ToolResultContent::Text {
                    text: "line one".into(),
                },
                ToolResultContent::Image {
                    source: ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: "iVBORw0K".into(),
                    },
                },
                ToolResultContent::Json {
                    value: json!({"lines": 1}),
                },
            ],
            is_error: true,
            display: Some("SECRET-DISPLAY".into()),
        }],
    });
    request
}

#[tokio::test]
async fn the_request_body_is_exact_and_never_holds_display() {
    let server = Replay::start(vec![Reply::fixture("anthropic/text.sse")]).await;
    let (_, outcome) = collect(provider(&server, 3).stream(rich_request())).await;
    outcome.expect("completed");
    let requests = server.requests();
    let body = &requests[0];
    assert!(
        !String::from_utf8_lossy(&body.body).contains("SECRET-DISPLAY"),
        "display reached the model"
    );
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    assert_eq!(
        body.json(),
        json!({
            "model": "test-model",
            "max_tokens": 1024,
            "stream": true,
            "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
            "tools": [
                {"name": "Read", "description": "Reads a file.", "input_schema": schema},
                {"name": "Glob", "description": "Finds files.", "input_schema": schema,
                 "cache_control": {"type": "ephemeral"}},
            ],
            "tool_choice": {"type": "none"},
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Read the file."}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "I should read it.", "signature": "sig-1"},
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "call_1", "name": "Read", "input": {"path": "a.txt"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "is_error": true,
                     "cache_control": {"type": "ephemeral"},
                     "content": [
                        {"type": "text", "text": "line one"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
                        {"type": "text", "text": "{\"lines\":1}"},
                     ]},
                ]},
            ],
        })
    );
}

#[tokio::test]
async fn blank_text_unsigned_thinking_and_emptied_messages_are_not_sent() {
    // The API answers 400 to blank text blocks ("text content blocks must
    // contain non-whitespace text"), to thinking without a signature and to
    // a message without content. Claude itself streams "\n\n" text before
    // a tool call, tools return nothing, and a turn may have no content.
    let mut request = simple_request("Do it.");
    request.system = " \n".into();
    std::sync::Arc::make_mut(&mut request.messages).extend([
        Message {
            role: MessageRole::Assistant,
            content: vec![
                ContentBlock::Thinking {
                    thinking: "from another provider".into(),
                    signature: None,
                },
                ContentBlock::Text {
                    text: "\n\n".into(),
                },
                ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "Bash".into(),
                    input: json!({"command": "true"}),
                },
            ],
        },
        Message {
            role: MessageRole::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "call_1".into(),
                content: vec![ToolResultContent::Text { text: "".into() }],
                is_error: false,
                display: None,
            }],
        },
        Message {
            role: MessageRole::Assistant,
            content: vec![ContentBlock::Text { text: "".into() }],
        },
        Message::user_text("Again."),
    ]);
    let server = Replay::start(vec![Reply::fixture("anthropic/text.sse")]).await;
    let (_, outcome) = collect(provider(&server, 3).stream(request)).await;
    outcome.expect("completed");
    assert_eq!(
        server.requests()[0].json(),
        json!({
            "model": "test-model",
            "max_tokens": 1024,
            "stream": true,
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Do it."}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "call_1", "name": "Bash", "input": {"command": "true"}},
                ]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1"}]},
                {"role": "user", "content": [
                    {"type": "text", "text": "Again.", "cache_control": {"type": "ephemeral"}},
                ]},
            ],
        })
    );
}

#[tokio::test]
async fn overloaded_529_is_retried_after_the_capped_retry_after() {
    let server = Replay::start(vec![
        overloaded().header("retry-after", "1"),
        Reply::fixture("anthropic/text.sse"),
    ])
    .await;
    // retry-after: 1 s is capped at max_delay (20 ms here).
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    let rest = assert_first_retry(
        &events,
        Duration::from_millis(20),
        &["HTTP 529", "Overloaded"],
    );
    assert_eq!(assert_hello_world(rest, outcome).usage, FIXTURE_USAGE);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].at.duration_since(requests[0].at) >= Duration::from_millis(20));
    assert_eq!(
        requests[0].body, requests[1].body,
        "a retry sends the same body"
    );
}

#[tokio::test]
async fn a_retryable_error_event_mid_stream_starts_over() {
    let (_, events, outcome) = stream_from(
        provider,
        3,
        vec![
            Reply::fixture("anthropic/overloaded.sse"),
            Reply::fixture("anthropic/text.sse"),
        ],
    )
    .await;
    assert_partial_then_retried(&events, outcome, "overloaded_error");
}

#[tokio::test]
async fn a_non_retryable_error_event_ends_the_stream() {
    let (server, events, outcome) = stream_from(
        provider,
        3,
        vec![
            Reply::fixture("anthropic/invalid_request.sse"),
            Reply::fixture("anthropic/text.sse"),
        ],
    )
    .await;
    assert_eq!(events, vec![text("partial")]);
    assert_api_error(
        outcome,
        "anthropic",
        "invalid_request_error",
        "prompt is too long",
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_cut_connection_is_retried_until_attempts_run_out() {
    check_cut_connections_are_retried(
        provider,
        "anthropic",
        "anthropic/text.sse",
        &[400, 10],
        FIXTURE_USAGE,
    )
    .await;
}

#[tokio::test]
async fn a_stalled_stream_times_out_and_is_retried() {
    let body = fixture::bytes("anthropic/text.sse");
    let server = Replay::start(vec![
        Reply::sse(body).stall_after(400),
        Reply::fixture("anthropic/text.sse"),
    ])
    .await;
    let mut config = config(&server, 3);
    config.http.idle_timeout = Duration::from_millis(300);
    let provider = AnthropicProvider::new(config).expect("client");
    let (events, outcome) = collect(provider.stream(simple_request("hi"))).await;
    let retry = events.iter().find_map(|event| match event {
        ModelEvent::Retrying { reason, .. } => Some(reason.clone()),
        _ => None,
    });
    assert!(
        retry
            .as_deref()
            .is_some_and(|reason| reason.contains("no stream data")),
        "{events:?}"
    );
    outcome.expect("completed");
    // The stalled connection was closed by the client.
    assert_eq!(server.wait_closed(1).await, 1);
}

#[tokio::test]
async fn unauthorized_is_an_auth_error_without_retry() {
    let (server, _, outcome) = stream_from(provider, 5, vec![Reply::json(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )]).await;
    let error = outcome.expect_err("401 fails");
    assert!(
        matches!(error, ProviderError::Auth { status: 401, .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("invalid x-api-key") && text.contains("ANTHROPIC_API_KEY"),
        "{text}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_body_that_echoes_the_key_is_redacted_everywhere_it_goes() {
    // A retry's reason, the final error and its chain never hold the key.
    let (_, events, outcome) = stream_from(provider, 5, vec![
        Reply::json(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"busy for key test-key"}}"#,
        ),
        Reply::json(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: test-key"}}"#,
        ),
    ])
    .await;
    let reasons: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::Retrying { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 1, "{events:?}");
    assert!(
        reasons[0].contains("busy for key [redacted]"),
        "{reasons:?}"
    );
    let error = outcome.expect_err("401 fails");
    let text = zr_types::error_chain(&error);
    assert!(text.contains("invalid x-api-key: [redacted]"), "{text}");
    assert!(
        !text.contains("test-key") && !format!("{error:?}").contains("test-key"),
        "{text}"
    );
}

#[tokio::test]
async fn bad_request_is_rejected_with_the_api_message() {
    let (server, _, outcome) = stream_from(provider, 5, vec![Reply::json(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be at most 8192"}}"#,
    )]).await;
    assert_rejected(
        outcome,
        "anthropic",
        400,
        "invalid_request_error",
        "max_tokens: must be at most 8192",
    );
    assert_eq!(server.requests().len(), 1);

    // A body that is not the API's JSON is reported raw.
    let (_, _, outcome) =
        stream_from(provider, 5, vec![Reply::json(404, "<html>not here</html>")]).await;
    assert_rejected(
        outcome,
        "anthropic",
        404,
        "unknown",
        "<html>not here</html>",
    );
}

#[tokio::test]
async fn malformed_json_in_a_data_line_is_a_protocol_error() {
    let (server, events, outcome) =
        stream_from(provider, 3, vec![Reply::fixture("anthropic/malformed.sse")]).await;
    assert_eq!(events, vec![text("partial")]);
    assert_protocol_error(outcome, "anthropic", &["content_block_delta"]);
    assert_eq!(
        server.requests().len(),
        1,
        "a protocol error is not retried"
    );
}

#[tokio::test]
async fn malformed_tool_input_names_the_call() {
    let body = fixture::replaced(
        "anthropic/tools.sse",
        r#""partial_json": ": 20}""#,
        r#""partial_json": ": 20""#,
    );
    let (_, _, outcome) = stream_from(provider, 3, vec![Reply::sse(body)]).await;
    let error = outcome.expect_err("bad input");
    let text = error.to_string();
    assert!(text.contains("toolu_01") && text.contains("Read"), "{text}");
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    // Stall right after the first text delta.
    let body = fixture::text("anthropic/text.sse");
    let second_delta = body
        .rfind("event: content_block_delta")
        .expect("two deltas");
    let server = Replay::start(vec![Reply::sse(body).stall_after(second_delta)]).await;
    let mut stream = provider(&server, 3).stream(simple_request("hi"));
    let first = first_item(&mut stream).await;
    assert!(
        matches!(first, Some(Ok(ModelEvent::TextDelta { .. }))),
        "{first:?}"
    );
    assert_drop_closes(stream, &server).await;
}

#[tokio::test]
async fn dropping_the_stream_during_back_off_sends_nothing_more() {
    let server = Replay::start(vec![
        overloaded().header("retry-after-ms", "200"),
        Reply::fixture("anthropic/text.sse"),
    ])
    .await;
    let mut config = config(&server, 3);
    config.http.retry.max_delay = Duration::from_secs(1);
    let mut stream = AnthropicProvider::new(config)
        .expect("client")
        .stream(simple_request("hi"));
    let first = first_item(&mut stream).await;
    assert!(
        matches!(
            first,
            Some(Ok(ModelEvent::Retrying { attempt: 1, delay, .. })) if delay == Duration::from_millis(200)
        ),
        "{first:?}"
    );
    drop(stream);
    // Well past the back-off: a retry still running somewhere would have
    // reached the server by now.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn arbitrary_bytes_never_panic() {
    let garbage: Vec<u8> = (0..2048_u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let bodies = vec![
        garbage,
        b"\xEF\xBB\xBF\xEF\xBB\xBFevent: x\ndata: {}\n\n".to_vec(),
        b"data: \xFF\xFE\n\n".to_vec(),
        b"event: message_start\ndata: {\"type\":\"content_block_delta\",\"index\":99999999999,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n".to_vec(),
    ];
    for body in bodies {
        let server = Replay::start(vec![Reply::sse(body.clone())]).await;
        let (_, outcome) = collect(provider(&server, 1).stream(simple_request("hi"))).await;
        assert!(outcome.is_err(), "{body:?} gave {outcome:?}");
    }
}

#[tokio::test]
async fn the_answering_model_and_message_id_come_as_metadata() {
    let server = Replay::start(vec![Reply::fixture("anthropic/text.sse")]).await;
    let stream = provider(&server, 1).stream(simple_request("hi"));
    assert_eq!(
        metadata_of(stream).await,
        Some(("claude-test".to_owned(), Some("msg_01".to_owned())))
    );
    assert_eq!(provider(&server, 1).name(), "anthropic");
}

#[tokio::test]
async fn an_answer_request_forces_the_answer_tool_and_returns_its_input_as_text() {
    let server = Replay::start(vec![Reply::fixture("anthropic/answer.sse")]).await;
    let schema = json!({"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string"}}},
                        "required": ["files"], "additionalProperties": false});
    let mut request = rich_request();
    request.tool_choice = ToolChoice::Answer;
    request.effort = Some(zr_providers::Effort::High);
    request.output = Some(Arc::new(zr_providers::OutputFormat::new(schema.clone())));
    let (events, outcome) = collect(provider(&server, 3).stream(request)).await;
    assert_eq!(events, vec![], "the answer tool is not announced as a call");
    let response = outcome.expect("completed");
    assert_eq!(
        response.content,
        vec![ContentBlock::Text {
            text: r#"{"files":["a.rs","b.rs"]}"#.into()
        }]
    );
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let body = server.requests()[0].json();
    let tools = body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["Read", "Glob", "StructuredOutput"],
        "the pool, then the answer tool"
    );
    assert_eq!(tools[2]["input_schema"], schema);
    assert_eq!(
        tools[1]["cache_control"],
        json!({"type": "ephemeral"}),
        "the breakpoint stays on the pool's last tool"
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "StructuredOutput"})
    );
    assert_eq!(
        body.get("thinking"),
        None,
        "the API refuses thinking with a forced tool"
    );
}

#[tokio::test]
async fn an_answer_that_is_not_an_object_is_wrapped_and_unwrapped() {
    let body = fixture::replaced(
        "anthropic/answer.sse",
        r#""partial_json": "{\"files\": [\"a.rs\"""#,
        r#""partial_json": "{\"value\": [\"a.rs\"""#,
    );
    let server = Replay::start(vec![Reply::sse(body)]).await;
    let schema = json!({"type": "array", "items": {"type": "string"}});
    let mut request = simple_request("list them");
    request.tool_choice = ToolChoice::Answer;
    request.output = Some(Arc::new(zr_providers::OutputFormat::new(schema.clone())));
    let (_, outcome) = collect(provider(&server, 3).stream(request)).await;
    assert_eq!(
        outcome.expect("completed").content,
        vec![ContentBlock::Text {
            text: r#"["a.rs","b.rs"]"#.into()
        }]
    );
    let body = server.requests()[0].json();
    assert_eq!(
        body["tools"][0]["input_schema"],
        json!({"type": "object", "properties": {"value": schema}, "required": ["value"], "additionalProperties": false})
    );
}

#[tokio::test]
async fn effort_is_a_thinking_budget_and_the_format_is_not_sent_before_the_answer() {
    let server = Replay::start(vec![Reply::fixture("anthropic/text.sse")]).await;
    let mut request = simple_request("hi");
    request.max_tokens = 12_000;
    request.effort = Some(zr_providers::Effort::High);
    request.output = Some(Arc::new(zr_providers::OutputFormat::new(
        json!({"type": "object"}),
    )));
    let (_, outcome) = collect(provider(&server, 3).stream(request)).await;
    outcome.expect("completed");
    let body = server.requests()[0].json();
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 10_976}),
        "16,384 lowered to leave 1,024 of max_tokens 12,000"
    );
    assert_eq!(body.get("tools"), None, "no answer tool on a working turn");
    assert_eq!(body.get("tool_choice"), None);
}
