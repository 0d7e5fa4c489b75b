//! A 10-way MultiTask on the OpenAI wires keeps one stable prefix for the
//! API's automatic prompt caching (issue 39): on Chat Completions and on
//! Responses, the ten siblings of one type send bodies that are byte for
//! byte the same but for their task's text, and part at that text. OpenAI
//! caches the prompt it renders, tools and system message or
//! instructions first, whatever the order of the body's keys; so what is
//! checked is that everything but the task is identical bytes (the tools
//! in the same order, the same system message or instructions, the same
//! settings), and that nothing per agent (an id, a `prompt_cache_key`, a
//! `user`) is sent: docs/decisions.md says why no `prompt_cache_key`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Agent, AgentConfig, ModelProvider, OpenAiProvider, ResponsesProvider};

use crate::structured::openai_config;
use crate::support::{runtime_in, sub_agent};
use zr_test_support::replay::{Recorded, Replay, Reply};
use zr_test_support::sse::ResponsesAnswer;

const N: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Chat,
    Responses,
}

fn task(i: usize) -> String {
    format!("Check part {i} of the code.")
}

/// Runs a root whose first answer is a MultiTask of ten `checker` tasks
/// on `wire`, each subagent answering at once; returns the siblings'
/// requests, in task order.
async fn siblings(wire: Wire) -> Vec<Recorded> {
    let tasks: Vec<Value> = (0..N)
        .map(|i| json!({"description": format!("part {i}"), "prompt": task(i), "subagent_type": "checker"}))
        .collect();
    let call = json!({"tasks": tasks}).to_string();
    let answer = |text: Option<&str>, call: Option<(&str, &str, &str)>| -> Reply {
        match wire {
            Wire::Chat => Reply::chat(text, call),
            Wire::Responses => Reply::responses(ResponsesAnswer::of(text, call)),
        }
    };
    let mut replies = vec![answer(None, Some(("call_multi", "MultiTask", &call)))];
    replies.extend((0..N).map(|_| answer(Some("Done."), None)));
    replies.push(answer(Some("All done."), None));
    let server = Replay::start(replies).await;
    let provider: Arc<dyn ModelProvider> = match wire {
        Wire::Chat => Arc::new(OpenAiProvider::new(openai_config(&server)).unwrap()),
        Wire::Responses => Arc::new(ResponsesProvider::new(openai_config(&server)).unwrap()),
    };
    let dir = tempfile::tempdir().unwrap();
    let mut config = AgentConfig::new("You are the root.")
        .with_sub_agent(sub_agent("checker", zr_caps::AgentType::GeneralPurpose));
    config.subagent.max_concurrent = N;
    let agent = Agent::new(runtime_in(dir.path(), "gpt-test", provider), config);
    let result = tokio::time::timeout(Duration::from_secs(120), agent.prompt("Fan out."))
        .await
        .expect("the query ends within two minutes")
        .unwrap();
    assert_eq!(result.output, "All done.");
    let requests = server.requests();
    assert_eq!(requests.len(), N + 2, "root, {N} subagents, root");
    (0..N)
        .map(|i| {
            let needle = task(i);
            let mine: Vec<&Recorded> = requests[1..=N]
                .iter()
                .filter(|r| String::from_utf8_lossy(&r.body).contains(&needle))
                .collect();
            assert_eq!(mine.len(), 1, "one request carries task {i}");
            mine[0].clone()
        })
        .collect()
}

/// The bytes every body of `bodies` starts with.
fn common_prefix(bodies: &[&[u8]]) -> usize {
    bodies
        .iter()
        .map(|b| b.iter().zip(bodies[0]).take_while(|(x, y)| x == y).count())
        .min()
        .unwrap_or(0)
}

fn check(wire: Wire, siblings: &[Recorded]) {
    // Everything but the task's text is the same bytes.
    let normalised: Vec<String> = siblings
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let text = String::from_utf8(r.body.clone()).unwrap();
            assert_eq!(text.matches(&task(i)).count(), 1, "{text}");
            text.replace(&task(i), "Check part # of the code.")
        })
        .collect();
    for (i, body) in normalised.iter().enumerate() {
        assert_eq!(body, &normalised[0], "sibling {i} differs beyond its task");
    }
    // And the bodies part at the task: all that comes before it is shared.
    let bodies: Vec<&[u8]> = siblings.iter().map(|r| r.body.as_slice()).collect();
    let shared = &bodies[0][..common_prefix(&bodies)];
    assert!(
        shared.ends_with(b"Check part "),
        "the siblings part at the task's text: {}",
        String::from_utf8_lossy(&shared[shared.len().saturating_sub(120)..])
    );
    let first = siblings[0].json();
    let tools = first["tools"].as_array().unwrap();
    assert!(tools.len() > 5, "the checker's pool: {tools:?}");
    let instructions = match wire {
        Wire::Chat => {
            assert_eq!(
                first["messages"][0],
                json!({"role": "system", "content": "You are the checker agent."})
            );
            &first["messages"][0]["content"]
        }
        Wire::Responses => &first["instructions"],
    };
    assert_eq!(instructions, "You are the checker agent.");
    for sibling in siblings {
        let body = sibling.json();
        assert_eq!(&body["tools"], &first["tools"], "the same tools, in order");
        for key in ["prompt_cache_key", "user", "safety_identifier", "metadata"] {
            assert!(body.get(key).is_none(), "{key} is not sent: {body}");
        }
    }
}

#[tokio::test]
async fn ten_siblings_of_one_type_send_one_prefix_on_chat_completions() {
    let siblings = siblings(Wire::Chat).await;
    assert!(siblings.iter().all(|r| r.path == "/v1/chat/completions"));
    check(Wire::Chat, &siblings);
}

#[tokio::test]
async fn ten_siblings_of_one_type_send_one_prefix_on_responses() {
    let siblings = siblings(Wire::Responses).await;
    assert!(siblings.iter().all(|r| r.path == "/v1/responses"));
    check(Wire::Responses, &siblings);
}
