//! What real servers in front of the providers send besides the APIs'
//! happy path, on both wires: error objects whose `code` is a numeric
//! string, 2xx answers that are not event streams, and what every request
//! carries (`User-Agent`), with the number of requests each costs.

use serde_json::json;
use zr_providers::{ModelEvent, ModelProvider};
use zr_types::{ContentBlock, ImageSource, Message, StopReason, ToolResultContent, Usage};

use crate::{anthropic, openai};
use zr_test_support::fixture;
use zr_test_support::replay::{
    Replay, Reply, assert_api_error, assert_partial_then_retried, assert_protocol_error, collect,
    metadata_of, retries, simple_request, stream_from, text,
};

/// The user agent every request must carry.
const USER_AGENT: &str = concat!("zr/", env!("CARGO_PKG_VERSION"));

/// The OpenAI fixture whose stream breaks off with an error object, its
/// error replaced by one with `code` (a JSON value) and a null type.
fn openai_error_with_code(code: &str) -> Reply {
    Reply::sse(fixture::replaced(
        "openai/server_error.sse",
        r#""type": "server_error", "param": null, "code": null"#,
        &format!(r#""type": null, "param": null, "code": {code}"#),
    ))
}

/// The Anthropic fixture whose stream breaks off with an error event, its
/// error replaced by a proxy's with `code` (a JSON value).
fn anthropic_error_with_code(code: &str) -> Reply {
    Reply::sse(fixture::replaced(
        "anthropic/overloaded.sse",
        r#"{"type": "overloaded_error", "message": "Overloaded"}"#,
        &format!(
            r#"{{"type": "proxy_error", "code": {code}, "message": "upstream said {}"}}"#,
            code.trim_matches('"')
        ),
    ))
}

#[tokio::test]
async fn openai_error_codes_that_are_numeric_strings_are_classified_by_number() {
    for (code, retried) in [
        (r#""500""#, true),
        (r#""503""#, true),
        (r#""429""#, true),
        ("502", true),
        (r#""400""#, false),
        (r#""404""#, false),
        (r#""5000""#, false),
        (r#""abc""#, false),
    ] {
        let (server, events, outcome) = stream_from(
            openai::provider,
            3,
            vec![
                openai_error_with_code(code),
                Reply::fixture("openai/text.sse"),
            ],
        )
        .await;
        let said = code.trim_matches('"');
        if retried {
            assert_partial_then_retried(&events, outcome, &format!("({said})"));
            assert_eq!(server.requests().len(), 2, "code {code}: retried once");
        } else {
            assert_eq!(events, [text("partial")], "code {code}: not retried");
            assert_api_error(
                outcome,
                "openai",
                said,
                "The server had an error while processing your request.",
            );
            assert_eq!(server.requests().len(), 1, "code {code}: one request");
        }
    }
}

#[tokio::test]
async fn anthropic_error_events_with_a_numeric_string_code_are_classified_by_number() {
    for (code, retried) in [("503", true), ("400", false)] {
        let (server, events, outcome) = stream_from(
            anthropic::provider,
            3,
            vec![
                anthropic_error_with_code(&format!("\"{code}\"")),
                Reply::fixture("anthropic/text.sse"),
            ],
        )
        .await;
        let said = format!("upstream said {code}");
        if retried {
            assert_partial_then_retried(&events, outcome, &said);
            assert_eq!(server.requests().len(), 2, "code {code}: retried once");
        } else {
            assert_eq!(events, [text("partial")], "code {code}: not retried");
            assert_api_error(outcome, "anthropic", "proxy_error", &said);
            assert_eq!(server.requests().len(), 1, "code {code}: one request");
        }
    }
}

/// A whole Messages API answer, as the API sends it without `stream`.
const ANTHROPIC_MESSAGE: &str = r#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[{"type":"thinking","thinking":"Look first.","signature":"sig-9"},{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_01","name":"Read","input":{"path":"a.txt"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":3}}"#;

/// A whole chat completion, as the API sends it without `stream`.
const OPENAI_COMPLETION: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"Reading.","refusal":null,"tool_calls":[{"id":"call_A","type":"function","function":{"name":"Read","arguments":"{\"path\":\"a.txt\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":112,"completion_tokens":7,"total_tokens":119,"prompt_tokens_details":{"cached_tokens":100}}}"#;

/// Checks that `provider` (made for a server and a number of attempts)
/// reads `reply`, a whole message that thinks `thinking` (with signature
/// `sig-9`) if any, says "Reading." and calls `Read` on `a.txt` as `id`,
/// in one request of five allowed, streaming what it holds and ending with
/// `usage`.
async fn check_whole_message<P: ModelProvider>(
    provider: impl Fn(&Replay, u32) -> P,
    reply: Reply,
    thinking: Option<&str>,
    id: &str,
    usage: Usage,
) {
    let (server, events, outcome) = stream_from(provider, 5, vec![reply]).await;
    let mut streamed = Vec::new();
    let mut content = Vec::new();
    if let Some(thinking) = thinking {
        streamed.push(ModelEvent::ThinkingDelta {
            text: thinking.into(),
        });
        content.push(ContentBlock::Thinking {
            thinking: thinking.into(),
            signature: Some("sig-9".into()),
        });
    }
    streamed.extend([
        text("Reading."),
        ModelEvent::ToolUseStarted {
            id: id.into(),
            name: "Read".into(),
        },
    ]);
    content.extend([
        ContentBlock::Text {
            text: "Reading.".into(),
        },
        ContentBlock::ToolUse {
            id: id.into(),
            name: "Read".into(),
            input: json!({"path": "a.txt"}),
        },
    ]);
    assert_eq!(events, streamed);
    let response = outcome.expect("completed");
    assert_eq!(response.content, content);
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.usage, usage);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_whole_messages_answer_instead_of_a_stream_is_read_in_one_request() {
    check_whole_message(
        anthropic::provider,
        Reply::json(200, ANTHROPIC_MESSAGE),
        Some("Look first."),
        "toolu_01",
        Usage {
            input_tokens: 12,
            output_tokens: 7,
            cache_read_input_tokens: 100,
            cache_creation_input_tokens: 3,
        },
    )
    .await;
}

#[tokio::test]
async fn a_whole_chat_completion_instead_of_a_stream_is_read_in_one_request() {
    check_whole_message(
        openai::provider,
        // Parameters and case of the content type do not matter.
        Reply::typed(200, "Application/JSON; charset=utf-8", OPENAI_COMPLETION),
        None,
        "call_A",
        Usage {
            input_tokens: 12,
            output_tokens: 7,
            cache_read_input_tokens: 100,
            cache_creation_input_tokens: 0,
        },
    )
    .await;
}

/// Checks that `provider` (made for a server and a number of attempts)
/// fails at once, after one request of five allowed, on 200 answers that
/// are neither an event stream nor one of its API's messages, naming the
/// content type.
async fn check_fails_once_naming_the_content_type<P: ModelProvider>(
    provider: impl Fn(&Replay, u32) -> P + Copy,
    name: &str,
) {
    for (content_type, body) in [
        (
            "text/html",
            "<html><body>Welcome to the proxy</body></html>",
        ),
        ("application/json", r#"{"status": "ok"}"#),
        ("application/json", "[1, 2, 3]"),
        ("text/plain", ""),
    ] {
        let (server, events, outcome) =
            stream_from(provider, 5, vec![Reply::typed(200, content_type, body)]).await;
        assert_eq!(retries(&events), 0, "{content_type} {body}: {events:?}");
        assert_protocol_error(
            outcome,
            name,
            &[
                &format!("content type '{content_type}'"),
                "text/event-stream",
            ],
        );
        assert_eq!(
            server.requests().len(),
            1,
            "{content_type} {body}: one request"
        );
    }
}

#[tokio::test]
async fn a_200_that_is_neither_a_stream_nor_a_message_fails_once_naming_its_type() {
    check_fails_once_naming_the_content_type(anthropic::provider, "anthropic").await;
    check_fails_once_naming_the_content_type(openai::provider, "openai").await;
}

#[tokio::test]
async fn a_whole_error_object_with_status_200_is_classified_like_a_streamed_one() {
    let (server, events, outcome) = stream_from(
        openai::provider,
        3,
        vec![
            Reply::json(
                200,
                r#"{"error":{"message":"Bad gateway","type":null,"code":"502"}}"#,
            ),
            Reply::fixture("openai/text.sse"),
        ],
    )
    .await;
    assert_eq!(retries(&events), 1, "{events:?}");
    assert_eq!(outcome.expect("completed").stop_reason, StopReason::EndTurn);
    assert_eq!(server.requests().len(), 2);

    let (server, _, outcome) = stream_from(
        anthropic::provider,
        3,
        vec![Reply::json(
            200,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#,
        )],
    )
    .await;
    assert_api_error(
        outcome,
        "anthropic",
        "invalid_request_error",
        "max_tokens: too large",
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn every_request_of_both_wires_carries_the_user_agent() {
    let (anthropic_server, _, outcome) = stream_from(
        anthropic::provider,
        3,
        vec![
            Reply::json(
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
            Reply::fixture("anthropic/text.sse"),
        ],
    )
    .await;
    outcome.expect("completed");
    let (openai_server, _, outcome) =
        stream_from(openai::provider, 3, vec![Reply::fixture("openai/text.sse")]).await;
    outcome.expect("completed");
    let requests: Vec<_> = anthropic_server
        .requests()
        .into_iter()
        .chain(openai_server.requests())
        .collect();
    assert_eq!(requests.len(), 3, "a retry, then one request each");
    for request in requests {
        assert_eq!(
            request.header("user-agent"),
            Some(USER_AGENT),
            "{}",
            request.path
        );
    }
}

#[tokio::test]
async fn an_image_only_tool_result_gets_a_placeholder_in_its_openai_tool_message() {
    let mut request = simple_request("Show me.");
    std::sync::Arc::make_mut(&mut request.messages).extend([
        Message {
            role: zr_types::MessageRole::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "Screenshot".into(),
                input: json!({}),
            }],
        },
        Message {
            role: zr_types::MessageRole::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "call_1".into(),
                content: vec![ToolResultContent::Image {
                    source: ImageSource::Url {
                        url: "https://example.com/shot.png".into(),
                    },
                }],
                is_error: false,
                display: None,
            }],
        },
    ]);
    let server = Replay::start(vec![Reply::fixture("openai/text.sse")]).await;
    let (_, outcome) = collect(openai::provider(&server, 1).stream(request)).await;
    outcome.expect("completed");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].json();
    assert_eq!(
        body["messages"]
            .as_array()
            .map(|messages| messages[3..].to_vec()),
        Some(vec![
            json!({"role": "tool", "tool_call_id": "call_1",
                   "content": "(the result is an image, sent in the next user message)"}),
            json!({"role": "user", "content": [
                {"type": "text", "text": "Image returned by tool call call_1:"},
                {"type": "image_url", "image_url": {"url": "https://example.com/shot.png"}},
            ]}),
        ])
    );
}

#[tokio::test]
async fn a_whole_answer_names_its_model_and_id_as_a_stream_does() {
    let server = Replay::start(vec![Reply::json(200, ANTHROPIC_MESSAGE)]).await;
    let stream = anthropic::provider(&server, 1).stream(simple_request("hi"));
    assert_eq!(
        metadata_of(stream).await,
        Some(("claude-test".to_owned(), Some("msg_01".to_owned())))
    );
    let server = Replay::start(vec![Reply::json(200, OPENAI_COMPLETION)]).await;
    let stream = openai::provider(&server, 1).stream(simple_request("hi"));
    assert_eq!(
        metadata_of(stream).await,
        Some(("gpt-test".to_owned(), Some("chatcmpl-1".to_owned())))
    );
}
