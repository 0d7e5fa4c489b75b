//! Unit tests of the OpenAI decoder and settings.

use super::decode::ChunkDecoder;
use super::*;
use crate::http::{Decoder, SseEvent};
use crate::provider::ModelEvent;

fn feed(decoder: &mut ChunkDecoder, data: &str) -> Result<Vec<ModelEvent>, crate::http::Failure> {
    let mut out = Vec::new();
    let event = SseEvent {
        event: "message".into(),
        data: data.into(),
    };
    decoder.decode(&event, &mut out)?;
    Ok(out)
}

#[test]
fn calls_without_ids_get_stable_stand_ins() {
    let mut decoder = ChunkDecoder::default();
    let out = feed(
        &mut decoder,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"Read","arguments":"{\"path\":"}}]}}]}"#,
    )
    .unwrap();
    assert_eq!(
        out,
        vec![ModelEvent::ToolUseStarted {
            id: "call_0".into(),
            name: "Read".into()
        }]
    );
    feed(
        &mut decoder,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]},"finish_reason":"tool_calls"}]}"#,
    )
    .unwrap();
    // The server closed without [DONE]: the finish reason completes it.
    let Some(Ok(ModelEvent::Completed(response))) = decoder.end() else {
        panic!("expected Completed");
    };
    assert_eq!(
        response.content,
        vec![zr_types::ContentBlock::ToolUse {
            id: "call_0".into(),
            name: "Read".into(),
            input: serde_json::json!({"path": "a"}),
        }]
    );
}

/// The tool calls of a stream of `chunks` (then `[DONE]`).
fn tool_calls_of(chunks: &[&str]) -> Vec<zr_types::ContentBlock> {
    let mut decoder = ChunkDecoder::default();
    for chunk in chunks {
        feed(&mut decoder, chunk).unwrap();
    }
    let out = feed(&mut decoder, "[DONE]").unwrap();
    let [ModelEvent::Completed(response)] = out.as_slice() else {
        panic!("expected Completed, got {out:?}");
    };
    response.content.clone()
}

#[test]
fn calls_with_a_reused_or_missing_index_are_told_apart_by_id() {
    let expected = vec![
        zr_types::ContentBlock::ToolUse {
            id: "call_a".into(),
            name: "Read".into(),
            input: serde_json::json!({"path": "a"}),
        },
        zr_types::ContentBlock::ToolUse {
            id: "call_b".into(),
            name: "Glob".into(),
            input: serde_json::json!({"pattern": "*"}),
        },
    ];
    // Ollama numbers every call of a turn 0.
    assert_eq!(
        tool_calls_of(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Read","arguments":"{\"path\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"Glob","arguments":"{\"pattern\":\"*\"}"}}]},"finish_reason":"tool_calls"}]}"#,
        ]),
        expected
    );
    // Gemini's compatible API sends no index; pieces without an id continue
    // the last call.
    assert_eq!(
        tool_calls_of(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_a","type":"function","function":{"name":"Read","arguments":"{\"path\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_b","type":"function","function":{"name":"Glob","arguments":"{\"pattern\":\"*\"}"}}]},"finish_reason":"tool_calls"}]}"#,
        ]),
        expected
    );
    // Both calls in one chunk under the same index.
    assert_eq!(
        tool_calls_of(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"Read","arguments":"{\"path\":\"a\"}"}},{"index":0,"id":"call_b","function":{"name":"Glob","arguments":"{\"pattern\":\"*\"}"}}]},"finish_reason":"tool_calls"}]}"#,
        ]),
        expected
    );
    // A server that repeats the id in every piece of a call.
    assert_eq!(
        tool_calls_of(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"Read","arguments":"{\"path\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"arguments":"\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"Glob","arguments":"{\"pattern\":\"*\"}"}}]},"finish_reason":"tool_calls"}]}"#,
        ]),
        expected
    );
}

#[test]
fn a_call_after_done_starts_afresh() {
    let mut decoder = ChunkDecoder::default();
    let call = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"Read","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;
    feed(&mut decoder, call).unwrap();
    feed(&mut decoder, "[DONE]").unwrap();
    // Not something a server sends; the decoder must still not panic.
    assert_eq!(
        feed(&mut decoder, call).unwrap(),
        vec![ModelEvent::ToolUseStarted {
            id: "call_a".into(),
            name: "Read".into()
        }]
    );
}

#[test]
fn numeric_5xx_error_codes_are_retried_and_others_are_not() {
    let mut decoder = ChunkDecoder::default();
    let failure = feed(&mut decoder, r#"{"error":{"message":"busy","code":503}}"#).unwrap_err();
    assert!(failure.retry.is_some(), "{failure:?}");
    let failure = feed(
        &mut decoder,
        r#"{"error":{"message":"bad","type":"invalid_request_error"}}"#,
    )
    .unwrap_err();
    assert!(failure.retry.is_none(), "{failure:?}");
    assert_eq!(
        failure.error.to_string(),
        "openai: error in the stream (invalid_request_error): bad"
    );
}

#[test]
fn a_rate_limit_error_object_is_retried_by_its_code() {
    // OpenAI's rate-limit object: the type names the limit, the code says
    // what it is.
    let mut decoder = ChunkDecoder::default();
    let failure = feed(
        &mut decoder,
        r#"{"error":{"message":"Rate limit reached on tokens per min","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
    )
    .unwrap_err();
    assert!(failure.retry.is_some(), "{failure:?}");
    assert_eq!(
        failure.error.to_string(),
        "openai: error in the stream (tokens): Rate limit reached on tokens per min"
    );
}

#[test]
fn an_end_without_finish_reason_is_not_complete() {
    let mut decoder = ChunkDecoder::default();
    feed(
        &mut decoder,
        r#"{"choices":[{"index":0,"delta":{"content":"hi"}}]}"#,
    )
    .unwrap();
    assert!(decoder.end().is_none());
}

#[test]
fn every_documented_finish_reason_maps_to_a_stop_reason() {
    use zr_types::StopReason;
    for (reason, expected) in [
        ("stop", StopReason::EndTurn),
        ("tool_calls", StopReason::ToolUse),
        // The deprecated single-function form.
        ("function_call", StopReason::ToolUse),
        ("length", StopReason::MaxTokens),
        ("content_filter", StopReason::Refusal),
        // A local server's own reason is kept verbatim.
        ("eos", StopReason::Other("eos".into())),
    ] {
        let mut decoder = ChunkDecoder::default();
        let chunk =
            format!(r#"{{"choices":[{{"index":0,"delta":{{}},"finish_reason":"{reason}"}}]}}"#);
        assert_eq!(feed(&mut decoder, &chunk).unwrap(), vec![], "{reason}");
        let out = feed(&mut decoder, "[DONE]").unwrap();
        let [ModelEvent::Completed(response)] = out.as_slice() else {
            panic!("expected Completed, got {out:?}");
        };
        assert_eq!(response.stop_reason, expected, "{reason}");
    }
}

#[test]
fn debug_never_prints_the_key() {
    let config = OpenAiConfig::new("http://127.0.0.1:1/v1").with_api_key("sk-SECRET");
    let text = format!("{config:?}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(text.contains("<redacted>"));
}

const TOOLS: &str = include_str!("../../../zr-test-support/fixtures/openai/tools.sse");

proptest::proptest! {
    /// Law: no bytes make the decoder panic.
    #[test]
    fn prop_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
        let _ = crate::http::decode_chunks(&mut ChunkDecoder::default(), vec![bytes]);
    }

    /// Law: a corrupted fixture (one byte changed) fails or decodes, never
    /// panics.
    #[test]
    fn prop_corrupted_fixtures_never_panic(at in 0_usize..TOOLS.len(), byte in proptest::num::u8::ANY) {
        let mut bytes = TOOLS.as_bytes().to_vec();
        bytes[at] = byte;
        let _ = crate::http::decode_chunks(&mut ChunkDecoder::default(), vec![bytes]);
    }
}
