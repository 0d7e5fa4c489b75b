//! A root on the Anthropic provider against a loopback server speaking the
//! Messages API (a 429 first, then the answer), exported with
//! `capture_content` on: the `chat` span Phoenix stored has the model the
//! API named, its response id, usage, the finish reason, the retry as an
//! event, and the content that the scripted session's export left out.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zr_caps::RuntimeSettings;
use zr_engine::{Agent, AgentConfig, AnthropicConfig, AnthropicProvider, RuntimeEnvironment};
use zr_telemetry::{Telemetry, TelemetryConfig};
use zr_tools::BuiltinTools;

use crate::session::{attr, int, span_id, text};
use zr_test_support::phoenix::Phoenix;
use zr_test_support::replay::{Replay, Reply, fast_retry};

const RATE_LIMITED: &str =
    r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;

/// Runs one query, "say hello", exporting to `phoenix` with content.
async fn run(phoenix: &Phoenix) {
    let server = Replay::start(vec![
        Reply::json(429, RATE_LIMITED).header("retry-after", "0"),
        Reply::fixture("anthropic/text.sse"),
    ])
    .await;
    let mut config = TelemetryConfig::new(phoenix.traces_endpoint());
    config.capture_content = true;
    let telemetry = Telemetry::start(config).unwrap();
    {
        let dir = tempfile::tempdir().unwrap();
        let provider = AnthropicProvider::new(
            AnthropicConfig::new("test-key")
                .with_base_url(server.url())
                .with_retry(fast_retry(3)),
        )
        .unwrap();
        let settings = RuntimeSettings {
            model: "claude-requested".to_owned(),
            cwd: dir.path().to_path_buf(),
            env: Default::default(),
        };
        let runtime = RuntimeEnvironment::new(
            Arc::new(provider),
            settings,
            BuiltinTools::new(dir.path().join("cron.json")),
        )
        .with_tracer(telemetry.tracer());
        let agent = Agent::new(Arc::new(runtime), AgentConfig::new("You are terse."));
        let result = tokio::time::timeout(Duration::from_secs(60), agent.prompt("say hello"))
            .await
            .expect("the query ends")
            .unwrap();
        assert_eq!(result.output, "Hello, world");
    }
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 2, "the 429, then the answer");
}

/// The wire session's spans (those outside `other_trace`): session, root,
/// one chat.
pub(crate) async fn check(phoenix: &Phoenix, before: usize, other_trace: &str) {
    run(phoenix).await;
    let spans: Vec<Value> = phoenix
        .spans(before + 3)
        .await
        .into_iter()
        .filter(|s| s["context"]["trace_id"] != other_trace)
        .collect();
    let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(spans.len(), 3, "{names:?}");
    let by_name = |name: &str| -> &Value {
        spans
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no span {name} in {names:?}"))
    };
    let root = by_name("invoke_agent root");
    assert_eq!(
        root["parent_id"].as_str(),
        Some(span_id(by_name("session")))
    );
    assert_eq!(text(root, "gen_ai.provider.name"), "anthropic");
    assert_eq!(text(root, "zr.task.status"), "completed");

    let chat = by_name("chat claude-requested");
    assert_eq!(chat["parent_id"].as_str(), Some(span_id(root)));
    assert_eq!(text(chat, "gen_ai.request.model"), "claude-requested");
    // What the API answered with, from its message_start.
    assert_eq!(text(chat, "gen_ai.response.model"), "claude-test");
    assert_eq!(text(chat, "gen_ai.response.id"), "msg_01");
    assert_eq!(
        attr(chat, "gen_ai.response.finish_reasons"),
        Some(&json!(["end_turn"]))
    );
    assert_eq!(int(chat, "gen_ai.usage.input_tokens"), 25);
    assert_eq!(int(chat, "gen_ai.usage.output_tokens"), 15);
    assert_eq!(int(chat, "gen_ai.usage.cache_read.input_tokens"), 100);
    assert_eq!(int(chat, "gen_ai.usage.cache_creation.input_tokens"), 20);

    let events = chat["events"].as_array().expect("the chat span's events");
    let [retry] = &events[..] else {
        panic!("one retry event: {events:#?}");
    };
    assert_eq!(retry["name"], "retry");
    assert_eq!(int_of(&retry["attributes"], "zr.retry.attempt"), 1);
    assert!(
        text_of(&retry["attributes"], "zr.retry.reason").contains("429"),
        "{retry:#}"
    );

    // Asked for, the content is there (the scripted session, which did not
    // ask, has none).
    assert!(text(chat, "gen_ai.input.messages").contains("say hello"));
    assert!(text(chat, "gen_ai.output.messages").contains("Hello, world"));
    assert_eq!(text(chat, "gen_ai.system_instructions"), "You are terse.");
}

/// An attribute of an event's attributes, flat or nested.
fn event_attr<'a>(attributes: &'a Value, key: &str) -> Option<&'a Value> {
    attributes.get(key).or_else(|| {
        key.split('.')
            .try_fold(attributes, |node, part| node.get(part))
    })
}

fn int_of(attributes: &Value, key: &str) -> u64 {
    match event_attr(attributes, key) {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    }
    .unwrap_or_else(|| panic!("no integer {key} in {attributes:#}"))
}

fn text_of<'a>(attributes: &'a Value, key: &str) -> &'a str {
    event_attr(attributes, key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string {key} in {attributes:#}"))
}
