//! The OpenAI provider against the loopback replay server.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use zr_engine::{
    MaxTokensField, ModelEvent, ModelProvider, OpenAiConfig, OpenAiProvider, ProviderError,
    RetryPolicy,
};
use zr_types::{ContentBlock, StopReason, Usage};

use crate::anthropic::rich_request;
use crate::replay::{
    Replay, Reply, collect, fast_retry, fixture, fixture_replaced, fixture_text, simple_request,
};

fn config(server: &Replay, attempts: u32) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(format!("{}/v1", server.url()))
        .with_api_key("sk-test")
        .with_retry(fast_retry(attempts));
    config.idle_timeout = Duration::from_secs(5);
    config
}

fn provider(server: &Replay, attempts: u32) -> OpenAiProvider {
    OpenAiProvider::new(config(server, attempts)).expect("client")
}

fn text(text: &str) -> ModelEvent {
    ModelEvent::TextDelta { text: text.into() }
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
    let server = Replay::start(vec![Reply::fixture("openai/text.sse")]).await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    assert_eq!(events, vec![text("Hello"), text(", world")]);
    let response = outcome.expect("completed");
    assert_eq!(
        response.content,
        vec![ContentBlock::Text {
            text: "Hello, world".into()
        }]
    );
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(response.usage, FIXTURE_USAGE);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
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
    config.retry = RetryPolicy {
        max_delay: Duration::from_secs(1),
        ..fast_retry(3)
    };
    let provider = OpenAiProvider::new(config).expect("client");
    let (events, outcome) = collect(provider.stream(simple_request("hi"))).await;
    let ModelEvent::Retrying {
        attempt,
        delay,
        reason,
    } = &events[0]
    else {
        panic!("expected Retrying first, got {events:?}");
    };
    assert_eq!((*attempt, *delay), (1, Duration::from_millis(80)));
    assert!(
        reason.contains("HTTP 429") && reason.contains("Rate limit reached"),
        "{reason}"
    );
    assert_eq!(events[1..], [text("Hello"), text(", world")]);
    outcome.expect("completed");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].at.duration_since(requests[0].at) >= Duration::from_millis(80));
}

#[tokio::test]
async fn a_server_error_object_mid_stream_starts_over() {
    let server = Replay::start(vec![
        Reply::fixture("openai/server_error.sse"),
        Reply::fixture("openai/text.sse"),
    ])
    .await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    assert_eq!(events[0], text("partial"));
    assert!(
        matches!(&events[1], ModelEvent::Retrying { attempt: 1, reason, .. } if reason.contains("server_error")),
        "{events:?}"
    );
    assert_eq!(events[2..], [text("Hello"), text(", world")]);
    assert_eq!(
        outcome.expect("completed").content,
        vec![ContentBlock::Text {
            text: "Hello, world".into()
        }]
    );
}

#[tokio::test]
async fn a_request_error_object_mid_stream_ends_the_stream() {
    let server = Replay::start(vec![
        Reply::fixture("openai/invalid_request.sse"),
        Reply::fixture("openai/text.sse"),
    ])
    .await;
    let (_, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    match outcome {
        Err(ProviderError::Api {
            provider,
            kind,
            message,
        }) => {
            assert_eq!(
                (provider, kind.as_str(), message.as_str()),
                (
                    "openai",
                    "invalid_request_error",
                    "Invalid 'messages': too long."
                )
            );
        }
        other => panic!("expected Api, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_cut_connection_is_retried_until_attempts_run_out() {
    let body = fixture("openai/text.sse");
    let server = Replay::start(vec![
        Reply::sse(body.clone()).cut_after(300),
        Reply::fixture("openai/text.sse"),
    ])
    .await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    assert!(
        events
            .iter()
            .any(|event| matches!(event, ModelEvent::Retrying { attempt: 1, .. })),
        "{events:?}"
    );
    assert_eq!(outcome.expect("completed").usage, FIXTURE_USAGE);

    let server = Replay::start(vec![
        Reply::sse(body.clone()).cut_after(300),
        Reply::sse(body.clone()).cut_after(300),
        Reply::sse(body).cut_after(0),
    ])
    .await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    assert_eq!(
        events
            .iter()
            .filter(|event| matches!(event, ModelEvent::Retrying { .. }))
            .count(),
        2
    );
    match outcome {
        Err(ProviderError::RetriesExhausted {
            provider: "openai",
            attempts: 3,
            last,
        }) => {
            assert!(matches!(*last, ProviderError::Transport { .. }), "{last:?}");
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 3);
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
    let server = Replay::start(vec![Reply::json(
        400,
        r#"{"error":{"message":"Unknown parameter: 'foo'.","type":"invalid_request_error","param":"foo","code":"unknown_parameter"}}"#,
    )])
    .await;
    let (_, outcome) = collect(provider(&server, 5).stream(simple_request("hi"))).await;
    match outcome {
        Err(ProviderError::Rejected {
            provider,
            status,
            kind,
            message,
        }) => {
            assert_eq!(
                (provider, status, kind.as_str(), message.as_str()),
                (
                    "openai",
                    400,
                    "invalid_request_error",
                    "Unknown parameter: 'foo'."
                )
            );
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn malformed_json_in_a_data_line_is_a_protocol_error() {
    let server = Replay::start(vec![Reply::fixture("openai/malformed.sse")]).await;
    let (events, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    assert_eq!(events, vec![text("partial")]);
    let error = outcome.expect_err("malformed");
    assert!(
        matches!(&error, ProviderError::Protocol { provider: "openai", message } if message.contains("not valid JSON")),
        "{error:?}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "a protocol error is not retried"
    );
}

#[tokio::test]
async fn malformed_tool_arguments_name_the_call() {
    let body = fixture_replaced(
        "openai/tools.sse",
        r#"{\"pattern\": \"*.rs\"}"#,
        r#"{\"pattern\": "#,
    );
    let server = Replay::start(vec![Reply::sse(body)]).await;
    let (_, outcome) = collect(provider(&server, 3).stream(simple_request("hi"))).await;
    let text = outcome.expect_err("bad arguments").to_string();
    assert!(text.contains("call_B") && text.contains("Glob"), "{text}");
}

#[tokio::test]
async fn malformed_tool_arguments_without_done_are_not_retried() {
    // Some local servers close the stream after the finish reason without
    // `data: [DONE]`; bad arguments (small models write them) are then the
    // same protocol error as with `[DONE]`, not a cut connection to retry.
    let body = fixture_replaced(
        "openai/tools.sse",
        r#"{\"pattern\": \"*.rs\"}"#,
        r#"{\"pattern\": "#,
    )
    .replace("data: [DONE]\n", "");
    assert!(!body.contains("[DONE]"));
    let server = Replay::start(vec![Reply::sse(body.clone()), Reply::sse(body)]).await;
    let (events, outcome) = collect(provider(&server, 2).stream(simple_request("hi"))).await;
    let error = outcome.expect_err("bad arguments");
    assert!(
        matches!(&error, ProviderError::Protocol { provider: "openai", message }
            if message.contains("call_B") && message.contains("Glob")),
        "{error:?}"
    );
    assert!(
        !events
            .iter()
            .any(|event| matches!(event, ModelEvent::Retrying { .. })),
        "{events:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let body = fixture_text("openai/text.sse");
    let after_hello = body.find("Hello").expect("Hello") + 200;
    let server = Replay::start(vec![Reply::sse(body).stall_after(after_hello)]).await;
    let mut stream = provider(&server, 3).stream(simple_request("hi"));
    let first = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("an event");
    assert_eq!(first.expect("an item").expect("an event"), text("Hello"));
    drop(stream);
    assert_eq!(
        server.wait_closed(1).await,
        1,
        "the server saw the client close"
    );
}
