//! The OpenAI Responses API provider under the engine, against the
//! loopback server: a session's reasoning items go back to the API at
//! each later turn and query, in their place, and cached input tokens
//! reach the query's usage.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Agent, AgentConfig, QueryOverrides, ResponsesProvider};
use zr_types::Usage;

use crate::structured::openai_config;
use crate::support::runtime_in;
use zr_test_support::replay::{Replay, Reply};
use zr_test_support::sse::ResponsesAnswer;

/// The `type` of each input item of a request body.
fn kinds(body: &Value) -> Vec<&str> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect()
}

/// The reasoning item a request sends back for an answer's.
fn sent_back(id: &str, summary: &str, encrypted: &str) -> Value {
    json!({"type": "reasoning", "id": id, "encrypted_content": encrypted,
           "summary": [{"type": "summary_text", "text": summary}]})
}

#[tokio::test]
async fn a_sessions_reasoning_items_go_back_at_every_later_turn_and_query() {
    let first = ("rs_1", "Glob the notes.", "gAAAA-ENC-1==");
    let second = ("rs_2", "Nothing changed.", "gAAAA-ENC-2==");
    let server = Replay::start(vec![
        Reply::responses(ResponsesAnswer {
            reasoning: Some(first),
            call: Some(("call_1", "Glob", r#"{"pattern":"*.md"}"#)),
            ..ResponsesAnswer::default()
        }),
        Reply::responses(ResponsesAnswer {
            text: Some("One note."),
            cached: 12,
            ..ResponsesAnswer::default()
        }),
        Reply::responses(ResponsesAnswer {
            reasoning: Some(second),
            text: Some("Still one."),
            cached: 16,
            ..ResponsesAnswer::default()
        }),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), "a note").unwrap();
    let provider = Arc::new(ResponsesProvider::new(openai_config(&server)).unwrap());
    let runtime = runtime_in(dir.path(), "gpt-test", provider);
    let agent = Agent::new(runtime, AgentConfig::new("You count notes."));
    let result = tokio::time::timeout(Duration::from_secs(60), agent.prompt("How many notes?"))
        .await
        .expect("the first query ends within a minute")
        .unwrap();
    assert_eq!(result.output, "One note.");
    // Two requests: 20 input tokens each, 12 of the second's from the cache.
    assert_eq!(
        result.usage,
        Usage {
            input_tokens: 28,
            output_tokens: 10,
            cache_read_input_tokens: 12,
            cache_creation_input_tokens: 0,
        }
    );
    let again = agent.query("And now?", QueryOverrides::default()).finish();
    let result = tokio::time::timeout(Duration::from_secs(60), again)
        .await
        .expect("the second query ends within a minute")
        .unwrap();
    assert_eq!(result.output, "Still one.");
    assert_eq!(result.usage.cache_read_input_tokens, 16);

    let bodies: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(bodies.len(), 3);
    assert_eq!(kinds(&bodies[0]), ["message"]);
    // The reasoning item goes back before the call it led to.
    assert_eq!(
        kinds(&bodies[1]),
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    let reasoning = sent_back(first.0, first.1, first.2);
    assert_eq!(bodies[1]["input"][1], reasoning);
    assert_eq!(
        (
            &bodies[1]["input"][2]["call_id"],
            &bodies[1]["input"][3]["call_id"]
        ),
        (&json!("call_1"), &json!("call_1"))
    );
    assert!(
        bodies[1]["input"][3]["output"]
            .as_str()
            .unwrap()
            .contains("a.md"),
        "{}",
        bodies[1]["input"][3]
    );
    // The next query of the session still carries it, in its place.
    assert_eq!(
        kinds(&bodies[2]),
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "message",
            "message"
        ]
    );
    assert_eq!(bodies[2]["input"][1], reasoning);
    assert_eq!(
        bodies[2]["input"][5],
        json!({"type": "message", "role": "user", "content": "And now?"})
    );
    for body in &bodies {
        assert_eq!(
            (&body["store"], &body["include"]),
            (&json!(false), &json!(["reasoning.encrypted_content"]))
        );
    }
}
