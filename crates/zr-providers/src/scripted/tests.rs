//! Tests of the scripted provider: script choice, turns, summaries, errors, delays.

use futures_util::StreamExt as _;
use serde_json::json;
use zr_types::Message;

use super::*;
use crate::provider::RequestOrigin;

fn request(
    agent: &AgentId,
    agent_type: &str,
    prompt: &str,
    tool_choice: ToolChoice,
) -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        system: "s".into(),
        tools: Vec::new(),
        messages: std::sync::Arc::new(vec![Message::user_text(prompt)]),
        max_tokens: 100,
        tool_choice,
        origin: RequestOrigin {
            agent: agent.clone(),
            agent_type: agent_type.into(),
            turn: 1,
        },
        cache_prefix: None,
        output: None,
        effort: None,
    }
}

fn provider(script: serde_json::Value) -> ScriptedProvider {
    ScriptedProvider::from_json(&script.to_string()).unwrap()
}

async fn answer(
    p: &ScriptedProvider,
    r: ModelRequest,
) -> Result<(Vec<ModelEvent>, ModelResponse), ProviderError> {
    let mut stream = p.stream(r);
    let mut deltas = Vec::new();
    while let Some(item) = stream.next().await {
        match item? {
            ModelEvent::Completed(response) => return Ok((deltas, response)),
            other => deltas.push(other),
        }
    }
    panic!("the stream ended without Completed");
}

#[tokio::test]
async fn the_first_matching_entry_is_chosen_at_the_first_request_and_kept() {
    let p = provider(json!({"agents": {"worker": [
        {"match": "slow", "turns": [{"text": "slow one"}, {"text": "slow two"}]},
        {"turns": [{"text": "plain one"}, {"text": "plain two"}]}
    ]}}));
    let a = AgentId::root().child(1, "worker");
    let b = AgentId::root().child(2, "worker");
    let text = |r: &ModelResponse| match &r.content[..] {
        [ContentBlock::Text { text }] => text.clone(),
        other => panic!("{other:?}"),
    };
    let (_, r) = answer(&p, request(&a, "worker", "be slow", ToolChoice::Auto))
        .await
        .unwrap();
    assert_eq!(text(&r), "slow one");
    let (_, r) = answer(&p, request(&b, "worker", "be quick", ToolChoice::Auto))
        .await
        .unwrap();
    assert_eq!(text(&r), "plain one");
    // The second request of `a` no longer mentions "slow" and still gets
    // its script's second turn.
    let (_, r) = answer(&p, request(&a, "worker", "tool results", ToolChoice::Auto))
        .await
        .unwrap();
    assert_eq!(text(&r), "slow two");
}

#[tokio::test]
async fn tool_calls_get_ids_and_the_tool_use_stop_reason() {
    let p = provider(json!({"agents": {"*": [{"turns": [
        {"thinking": "hmm", "text": "calling", "tool_calls": [{"name": "Read", "input": {"file_path": "a"}}, {"name": "Glob"}]}
    ]}]}}));
    let (deltas, r) = answer(
        &p,
        request(&AgentId::root(), "root", "go", ToolChoice::Auto),
    )
    .await
    .unwrap();
    assert_eq!(r.stop_reason, StopReason::ToolUse);
    assert_eq!(
        r.content,
        vec![
            ContentBlock::Thinking {
                thinking: "hmm".into(),
                signature: None
            },
            ContentBlock::Text {
                text: "calling".into()
            },
            ContentBlock::ToolUse {
                id: "toolu_01_0".into(),
                name: "Read".into(),
                input: json!({"file_path": "a"})
            },
            ContentBlock::ToolUse {
                id: "toolu_01_1".into(),
                name: "Glob".into(),
                input: json!({})
            },
        ]
    );
    assert_eq!(deltas[0], ModelEvent::ThinkingDelta { text: "hmm".into() });
    assert!(
        r.usage.input_tokens > 0 && r.usage.output_tokens > 0,
        "{:?}",
        r.usage
    );
}

#[tokio::test]
async fn tools_disabled_gets_the_summary_and_does_not_use_up_a_turn() {
    let p = provider(
        json!({"agents": {"root": [{"turns": [{"text": "one"}, {"text": "two"}], "summary": "in short"}]}}),
    );
    let root = AgentId::root();
    let (_, r) = answer(&p, request(&root, "root", "go", ToolChoice::None))
        .await
        .unwrap();
    assert_eq!(
        r.content,
        vec![ContentBlock::Text {
            text: "in short".into()
        }]
    );
    let (_, r) = answer(&p, request(&root, "root", "go", ToolChoice::Auto))
        .await
        .unwrap();
    assert_eq!(r.content, vec![ContentBlock::Text { text: "one".into() }]);
}

#[tokio::test]
async fn what_the_script_lacks_is_a_clear_error() {
    let p = provider(json!({"agents": {"root": [{"turns": [{"text": "one"}]}]}}));
    let root = AgentId::root();
    let ask = |ty: &str, choice| request(&root.child(1, ty), ty, "go", choice);
    let err = answer(&p, ask("explore", ToolChoice::Auto))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "scripted provider: no reply for agent root.0001-explore (type 'explore') at turn 1: the script has no entry for 'explore' or '*'"
    );
    answer(&p, request(&root, "root", "go", ToolChoice::Auto))
        .await
        .unwrap();
    let err = answer(&p, request(&root, "root", "go", ToolChoice::Auto))
        .await
        .unwrap_err();
    assert!(err.to_string().ends_with("the script has 1 turns"), "{err}");
    let err = answer(&p, request(&root, "root", "go", ToolChoice::None))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("tools are disabled and the script has no 'summary'"),
        "{err}"
    );
}

#[test]
fn a_malformed_script_names_the_json_path() {
    let err = ScriptedProvider::from_json(r#"{"agents": {"root": [{"turns": [{"txt": "x"}]}]}}"#)
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("scripted provider: invalid script at agents.root[0].turns[0]"),
        "{text}"
    );
    assert!(text.contains("unknown field `txt`"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn a_delay_holds_the_reply_back() {
    let p =
        provider(json!({"agents": {"root": [{"turns": [{"delay_ms": 5000, "text": "late"}]}]}}));
    let start = tokio::time::Instant::now();
    let (_, r) = answer(
        &p,
        request(&AgentId::root(), "root", "go", ToolChoice::Auto),
    )
    .await
    .unwrap();
    assert_eq!(
        r.content,
        vec![ContentBlock::Text {
            text: "late".into()
        }]
    );
    assert!(start.elapsed() >= Duration::from_secs(5));
}

#[tokio::test]
async fn turns_from_history_continue_an_agents_script_in_a_new_process() {
    let script = json!({"turns_from": "history", "agents": {
        "root": [{"turns": [{"text": "one"}, {"text": "two"}, {"text": "three"}]}],
        "fork": [{"turns": [{"text": "f1"}, {"text": "f2"}]}]
    }});
    let root = AgentId::root();
    let text = |r: &ModelResponse| texts(&r.content).collect::<String>();
    // A new process: the conversation already holds one answer of the root.
    let mut resumed = request(&root, "root", "p", ToolChoice::Auto);
    resumed.messages = std::sync::Arc::new(vec![
        Message::user_text("p"),
        Message::assistant_text("one"),
        Message::user_text("go on"),
    ]);
    let p = provider(script.clone());
    let (_, first) = answer(&p, resumed.clone()).await.unwrap();
    assert_eq!(text(&first), "two");
    let (_, second) = answer(&p, resumed).await.unwrap();
    assert_eq!(text(&second), "three", "then it counts requests as before");

    // A fork: the parent's answers before its prefix are not its own.
    let fork = root.child(1, "fork");
    let mut forked = request(&fork, "fork", "task", ToolChoice::Auto);
    forked.messages = std::sync::Arc::new(vec![
        Message::user_text("p"),
        Message::assistant_text("one"),
        Message::user_text("task"),
        Message::assistant_text("f1"),
        Message::user_text("go on"),
    ]);
    forked.cache_prefix = Some(1);
    let (_, f) = answer(&provider(script.clone()), forked).await.unwrap();
    assert_eq!(text(&f), "f2");

    // `match` looks at the agent's own first message, not the last.
    let matching = provider(json!({"turns_from": "history", "agents": {"worker": [
        {"match": "task B", "turns": [{"text": "B1"}, {"text": "B2"}]},
        {"turns": [{"text": "other"}]}
    ]}}));
    let worker = root.child(2, "worker");
    let mut b = request(&worker, "worker", "task B", ToolChoice::Auto);
    b.messages = std::sync::Arc::new(vec![
        Message::user_text("task B"),
        Message::assistant_text("B1"),
        Message::user_text("go on"),
    ]);
    let (_, r) = answer(&matching, b).await.unwrap();
    assert_eq!(text(&r), "B2");

    // The default counts this process's requests only.
    let mut plain = script;
    plain.as_object_mut().unwrap().remove("turns_from");
    let mut again = request(&root, "root", "p", ToolChoice::Auto);
    again.messages = std::sync::Arc::new(vec![
        Message::user_text("p"),
        Message::assistant_text("one"),
        Message::user_text("go on"),
    ]);
    let (_, r) = answer(&provider(plain), again).await.unwrap();
    assert_eq!(text(&r), "one");
}
