//! The OpenAI provider against the loopback replay server.

use std::time::Duration;

use serde_json::json;
use zr_providers::{
    MaxTokensField, ModelEvent, ModelProvider, OpenAiConfig, OpenAiProvider, ProviderError,
    RetryPolicy,
};
use zr_types::{ContentBlock, StopReason, Usage};

use crate::anthropic::rich_request;
use zr_test_support::fixture;
use zr_test_support::replay::{
    Replay, Reply, assert_api_error, assert_drop_closes, assert_first_retry, assert_hello_world,
    assert_partial_then_retried, assert_protocol_error, assert_rejected,
    check_cut_connections_are_retried, check_text_fixture, collect, fast_retry, first_item,
    metadata_of, retries, simple_request, stream_from, text,
};

fn config(server: &Replay, attempts: u32) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(format!("{}/v1", server.url()))
        .with_api_key("sk-test")
        .with_retry(fast_retry(attempts));
    config.http.idle_timeout = Duration::from_secs(5);
    config
}

pub(crate) fn provider(server: &Replay, attempts: u32) -> OpenAiProvider {
    OpenAiProvider::new(config(server, attempts)).expect("client")
}

/// prompt_tokens 120 of which 100 cached, completion_tokens 9.
const FIXTURE_USAGE: Usage = Usage {
    input_tokens: 20,
    output_tokens: 9,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 0,
};

#[tokio::test]
async fn text_streams_as_deltas_then_completes_with_usage() {
    let request = check_text_fixture(
        provider,
        "openai/text.sse",
        FIXTURE_USAGE,
        "/v1/chat/completions",
    )
    .await;
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
}

#[tokio::test]
async fn parallel_tool_calls_are_assembled_by_index() {
    let server = Replay::start(vec![Reply::fixture("openai/tools.sse")]).await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("read"))).await;
    assert_eq!(
        events,
        vec![
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
}

#[tokio::test]
async fn finish_reasons_map_to_stop_reasons() {
    for (name, expected) in [
        ("openai/length.sse", StopReason::MaxTokens),
        ("openai/content_filter.sse", StopReason::Refusal),
    ] {
        let server = Replay::start(vec![Reply::fixture(name)]).await;
        let (_, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
        assert_eq!(outcome.expect("completed").stop_reason, expected, "{name}");
    }
}

#[tokio::test]
async fn the_request_body_is_exact_and_never_holds_display() {
    let server = Replay::start(vec![Reply::fixture("openai/text.sse")]).await;
    let (_, outcome) = collect(provider(&server, 3).stream(rich_request())).await;
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
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Read the file."},
                {"role": "assistant", "content": "Reading.", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "Read", "arguments": "{\"path\":\"a.txt\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "Error: line one\n\n{\"lines\":1}"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Image returned by tool call call_1:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                ]},
            ],
            "max_completion_tokens": 1024,
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [
                {"type": "function", "function": {"name": "Read", "description": "Reads a file.", "parameters": schema}},
                {"type": "function", "function": {"name": "Glob", "description": "Finds files.", "parameters": schema}},
            ],
            "tool_choice": "none",
        })
    );
}

#[tokio::test]
async fn a_local_server_gets_no_key_and_max_tokens_when_asked() {
    let server = Replay::start(vec![Reply::fixture("openai/text.sse")]).await;
    let mut config = OpenAiConfig::new(format!("{}/v1/", server.url())).with_retry(fast_retry(1));
    config.max_tokens_field = MaxTokensField::MaxTokens;
    let provider = OpenAiProvider::new(config).expect("client");
    let (_, outcome) = collect(provider.stream(simple_request("hi"))).await;
    outcome.expect("completed");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), None);
    let body = request.json();
    assert_eq!(
        (
            body["max_tokens"].clone(),
            body.get("max_completion_tokens")
        ),
        (json!(1024), None)
    );
    assert_eq!(body.get("tools"), None, "no tools, no tools field");
    assert_eq!(body.get("tool_choice"), None);
}

#[tokio::test]
async fn rate_limit_429_waits_as_retry_after_ms_says() {
    let server = Replay::start(vec![
        Reply::json(429, r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#)
            .header("retry-after-ms", "80")
            .header("retry-after", "1"),
        Reply::fixture("openai/text.sse"),
    ])
    .await;
    let mut config = config(&server, 3);
    config.http.retry = RetryPolicy {
        max_delay: Duration::from_secs(1),
        ..fast_retry(3)
    };
    let provider = OpenAiProvider::new(config).expect("client");
    let (events, outcome) = collect(provider.stream(simple_request("hi"))).await;
    let rest = assert_first_retry(
        &events,
        Duration::from_millis(80),
        &["HTTP 429", "Rate limit reached"],
    );
    assert_hello_world(rest, outcome);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].at.duration_since(requests[0].at) >= Duration::from_millis(80));
}

#[tokio::test]
async fn a_server_error_object_mid_stream_starts_over() {
    let (_, events, outcome) = stream_from(
        provider,
        3,
        vec![
            Reply::fixture("openai/server_error.sse"),
            Reply::fixture("openai/text.sse"),
        ],
    )
    .await;
    assert_partial_then_retried(&events, outcome, "server_error");
}

#[tokio::test]
async fn a_request_error_object_mid_stream_ends_the_stream() {
    let (server, _, outcome) = stream_from(
        provider,
        3,
        vec![
            Reply::fixture("openai/invalid_request.sse"),
            Reply::fixture("openai/text.sse"),
        ],
    )
    .await;
    assert_api_error(
        outcome,
        "openai",
        "invalid_request_error",
        "Invalid 'messages': too long.",
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_cut_connection_is_retried_until_attempts_run_out() {
    check_cut_connections_are_retried(
        provider,
        "openai",
        "openai/text.sse",
        &[300, 300, 0],
        FIXTURE_USAGE,
    )
    .await;
}

#[tokio::test]
async fn unauthorized_and_forbidden_are_auth_errors_without_retry() {
    for status in [401_u16, 403] {
        let server = Replay::start(vec![Reply::json(
            status,
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        )])
        .await;
        let (_, outcome) = collect(provider(&server, 5).stream(simple_request("hi"))).await;
        let error = outcome.expect_err("auth fails");
        assert!(
            matches!(error, ProviderError::Auth { status: s, .. } if s == status),
            "{error:?}"
        );
        let text = error.to_string();
        assert!(
            text.contains("Incorrect API key provided") && text.contains("OPENAI_API_KEY"),
            "{text}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn bad_request_is_rejected_with_the_api_message() {
    let (server, _, outcome) = stream_from(provider, 5, vec![Reply::json(
        400,
        r#"{"error":{"message":"Unknown parameter: 'foo'.","type":"invalid_request_error","param":"foo","code":"unknown_parameter"}}"#,
    )]).await;
    assert_rejected(
        outcome,
        "openai",
        400,
        "invalid_request_error",
        "Unknown parameter: 'foo'.",
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn malformed_json_in_a_data_line_is_a_protocol_error() {
    let (server, events, outcome) =
        stream_from(provider, 3, vec![Reply::fixture("openai/malformed.sse")]).await;
    assert_eq!(events, vec![text("partial")]);
    assert_protocol_error(outcome, "openai", &["not valid JSON"]);
    assert_eq!(
        server.requests().len(),
        1,
        "a protocol error is not retried"
    );
}

#[tokio::test]
async fn malformed_tool_arguments_name_the_call() {
    let body = fixture::replaced(
        "openai/tools.sse",
        r#"{\"pattern\": \"*.rs\"}"#,
        r#"{\"pattern\": "#,
    );
    let (_, _, outcome) = stream_from(provider, 3, vec![Reply::sse(body)]).await;
    let text = outcome.expect_err("bad arguments").to_string();
    assert!(text.contains("call_B") && text.contains("Glob"), "{text}");
}

#[tokio::test]
async fn malformed_tool_arguments_without_done_are_not_retried() {
    // Some local servers close the stream after the finish reason without
    // `data: [DONE]`; bad arguments (small models write them) are then the
    // same protocol error as with `[DONE]`, not a cut connection to retry.
    let body = fixture::replaced(
        "openai/tools.sse",
        r#"{\"pattern\": \"*.rs\"}"#,
        r#"{\"pattern\": "#,
    )
    .replace("data: [DONE]\n", "");
    assert!(!body.contains("[DONE]"));
    let (server, events, outcome) = stream_from(
        provider,
        2,
        vec![Reply::sse(body.clone()), Reply::sse(body)],
    )
    .await;
    assert_protocol_error(outcome, "openai", &["call_B", "Glob"]);
    assert_eq!(retries(&events), 0, "{events:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let body = fixture::text("openai/text.sse");
    let after_hello = body.find("Hello").expect("Hello") + 200;
    let server = Replay::start(vec![Reply::sse(body).stall_after(after_hello)]).await;
    let mut stream = provider(&server, 3).stream(simple_request("hi"));
    let first = first_item(&mut stream).await;
    assert_eq!(first.expect("an item").expect("an event"), text("Hello"));
    assert_drop_closes(stream, &server).await;
}

#[tokio::test]
async fn the_answering_model_and_response_id_come_as_metadata_once() {
    let server = Replay::start(vec![Reply::fixture("openai/text.sse")]).await;
    let stream = provider(&server, 1).stream(simple_request("hi"));
    assert_eq!(
        metadata_of(stream).await,
        Some(("gpt-test".to_owned(), Some("chatcmpl-1".to_owned())))
    );
    assert_eq!(provider(&server, 1).name(), "openai");
}

#[tokio::test]
async fn the_output_format_is_a_json_schema_response_format_and_effort_is_reasoning_effort() {
    let server = Replay::start(vec![
        Reply::fixture("openai/text.sse"),
        Reply::fixture("openai/text.sse"),
    ])
    .await;
    let provider = provider(&server, 3);
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let mut request = rich_request();
    request.tool_choice = zr_providers::ToolChoice::Auto;
    request.effort = Some(zr_providers::Effort::Low);
    request.output = Some(std::sync::Arc::new(zr_providers::OutputFormat::new(
        schema.clone(),
    )));
    let (_, outcome) = collect(provider.stream(request.clone())).await;
    outcome.expect("completed");
    request.tool_choice = zr_providers::ToolChoice::Answer;
    let (_, outcome) = collect(provider.stream(request)).await;
    outcome.expect("completed");
    let requests = server.requests();
    let (working, answer) = (requests[0].json(), requests[1].json());
    let format = json!({"type": "json_schema", "json_schema": {"name": "StructuredOutput", "schema": schema, "strict": false}});
    assert_eq!(
        working["response_format"], format,
        "not strict: `n` is optional"
    );
    assert_eq!(working["reasoning_effort"], json!("low"));
    assert_eq!(working.get("tool_choice"), None);
    assert_eq!(answer["response_format"], format);
    assert_eq!(
        answer["tool_choice"],
        json!("none"),
        "an answer calls no tool"
    );
}
