//! The OpenAI Responses API provider under the engine, against the
//! loopback server: a session's reasoning items go back to the API at
//! each later turn and query, in their place, and cached input tokens
//! reach the query's usage. The Responses answers the server streams are
//! built here (also for the structured-answer tests).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Agent, AgentConfig, QueryOverrides, ResponsesProvider};
use zr_types::Usage;

use crate::replay::{Replay, Reply};
use crate::structured::openai_config;
use crate::support::runtime_in;

/// One Responses API answer, in output order: a reasoning item (id,
/// summary, encrypted content), a message, a function call (call id,
/// name, arguments); `cached` of its 20 input tokens were read from the
/// cache.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Answer<'a> {
    pub(crate) reasoning: Option<(&'a str, &'a str, &'a str)>,
    pub(crate) text: Option<&'a str>,
    pub(crate) call: Option<(&'a str, &'a str, &'a str)>,
    pub(crate) cached: u64,
}

/// One Responses API answer: text or one function call.
pub(crate) fn responses(text: Option<&str>, call: Option<(&str, &str, &str)>) -> Reply {
    reply(Answer {
        text,
        call,
        ..Answer::default()
    })
}

/// `answer` as the API streams it: `response.created`, each output item
/// added, its deltas and done, then `response.completed` with the usage.
pub(crate) fn reply(answer: Answer<'_>) -> Reply {
    let mut events = vec![
        json!({"type": "response.created", "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
    ];
    let mut output: Vec<Value> = Vec::new();
    if let Some((id, summary, encrypted)) = answer.reasoning {
        let item = json!({"id": id, "type": "reasoning", "encrypted_content": encrypted,
                          "summary": [{"type": "summary_text", "text": summary}]});
        events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": id, "type": "reasoning", "summary": []}}));
        events.push(json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": 0, "summary_index": 0, "delta": summary}));
        events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
        output.push(item);
    }
    if let Some(text) = answer.text {
        let at = output.len();
        let item = json!({"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "annotations": [], "text": text}]});
        events.push(json!({"type": "response.output_item.added", "output_index": at, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}));
        events.push(json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": at, "content_index": 0, "delta": text}));
        events.push(json!({"type": "response.output_item.done", "output_index": at, "item": item}));
        output.push(item);
    }
    if let Some((id, name, arguments)) = answer.call {
        let at = output.len();
        let item = json!({"id": "fc_1", "type": "function_call", "status": "completed", "call_id": id, "name": name, "arguments": arguments});
        events.push(json!({"type": "response.output_item.added", "output_index": at, "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "call_id": id, "name": name, "arguments": ""}}));
        events.push(json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": at, "delta": arguments}));
        events.push(json!({"type": "response.output_item.done", "output_index": at, "item": item}));
        output.push(item);
    }
    events.push(json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response", "status": "completed", "output": output,
        "usage": {"input_tokens": 20, "input_tokens_details": {"cached_tokens": answer.cached}, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 3}, "total_tokens": 25}}}));
    let mut body = String::new();
    for (n, mut event) in events.into_iter().enumerate() {
        event["sequence_number"] = json!(n);
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    Reply::sse(body)
}

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
        reply(Answer {
            reasoning: Some(first),
            call: Some(("call_1", "Glob", r#"{"pattern":"*.md"}"#)),
            ..Answer::default()
        }),
        reply(Answer {
            text: Some("One note."),
            cached: 12,
            ..Answer::default()
        }),
        reply(Answer {
            reasoning: Some(second),
            text: Some("Still one."),
            cached: 16,
            ..Answer::default()
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
