//! TodoWrite per agent, and the tools backed by host services.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use zr_test_support::services::PicksOption;
use zr_tools::{
    BuiltinTools, ConfigKind, ConfigService, ConfigSetting, SearchQuery, SearchResult,
    ServiceError, TodoStatus, WebSearchService,
};
use zr_types::{AgentId, BoxFuture};

use crate::support::{Kit, assert_error, ctx_for, session, text};

#[tokio::test]
async fn todo_lists_are_per_agent_and_returned_in_full() {
    let kit = Kit::new();
    let out = kit
        .call(
            "TodoWrite",
            json!({"todos": [
                {"content": "Write tests", "status": "completed"},
                {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
                {"content": "Release", "status": "pending"}
            ]}),
        )
        .await;
    assert_eq!(
        text(&out),
        "Todo list (3 items: 1 completed, 1 in progress, 1 pending):\n1. [x] Write tests\n2. [>] Fix the bug\n3. [ ] Release\n"
    );
    let child = AgentId::root().child(1, "general-purpose");
    let out = kit
        .call_as(
            "TodoWrite",
            json!({"todos": [{"content": "Sub task", "status": "pending"}]}),
            ctx_for(kit.dir.path(), child.clone()),
        )
        .await;
    assert!(text(&out).contains("1. [ ] Sub task"));
    let root = kit.tools.todos(&session(), &AgentId::root());
    assert_eq!(root.len(), 3);
    assert_eq!(root[1].status, TodoStatus::InProgress);
    assert_eq!(root[1].active_form.as_deref(), Some("Fixing the bug"));
    assert_eq!(kit.tools.todos(&session(), &child).len(), 1);
    let out = kit
        .call(
            "TodoWrite",
            json!({"todos": [{"content": "x", "status": "done"}]}),
        )
        .await;
    assert_error(&out, "todos[0].status");
    kit.tools.agent_finished(&session(), &child).await;
    assert!(kit.tools.todos(&session(), &child).is_empty());
    assert_eq!(kit.tools.todos(&session(), &AgentId::root()).len(), 3);
}

#[tokio::test]
async fn without_services_the_tools_say_so_and_invent_nothing() {
    let kit = Kit::new();
    let out = kit.call("WebSearch", json!({"query": "rust"})).await;
    assert_error(&out, "no web search service is configured");
    let out = kit
        .call(
            "AskUserQuestion",
            json!({"questions": [{"question": "Which?", "header": "Pick", "options": [{"label": "A"}, {"label": "B"}]}]}),
        )
        .await;
    assert_error(&out, "no way to ask the user");
    let out = kit.call("Config", json!({"setting": "model"})).await;
    assert_error(&out, "no configuration service");
}

#[derive(Debug)]
struct FakeSearch;

impl WebSearchService for FakeSearch {
    fn search<'a>(
        &'a self,
        query: SearchQuery,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, ServiceError>> {
        Box::pin(async move {
            if let Some(len) = match query.query.as_str() {
                "flood" => Some(5_000),
                "many" => Some(10),
                _ => None,
            } {
                return Ok((0..100)
                    .map(|i| SearchResult {
                        title: format!("Result {i}"),
                        url: format!("https://example.invalid/{i}"),
                        snippet: "é".repeat(len),
                    })
                    .collect());
            }
            Ok(vec![SearchResult {
                title: format!("About {}", query.query),
                url: "https://example.invalid/a".to_owned(),
                snippet: format!("domains {:?}", query.allowed_domains),
            }])
        })
    }
}

#[derive(Debug, Default)]
struct FakeConfig {
    values: Mutex<BTreeMap<String, Value>>,
}

impl ConfigService for FakeConfig {
    fn settings(&self) -> Vec<ConfigSetting> {
        vec![
            ConfigSetting {
                key: "model".to_owned(),
                kind: ConfigKind::String,
                description: "the model id".to_owned(),
            },
            ConfigSetting {
                key: "subagent.max_concurrent".to_owned(),
                kind: ConfigKind::Integer,
                description: "parallel subagents".to_owned(),
            },
            ConfigSetting {
                key: "theme".to_owned(),
                kind: ConfigKind::Choice(vec!["dark".to_owned(), "light".to_owned()]),
                description: "colours".to_owned(),
            },
        ]
    }
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Value, ServiceError>> {
        Box::pin(async move {
            Ok(self
                .values
                .lock()
                .unwrap()
                .get(key)
                .cloned()
                .unwrap_or(Value::Null))
        })
    }
    fn set<'a>(&'a self, key: &'a str, value: Value) -> BoxFuture<'a, Result<(), ServiceError>> {
        Box::pin(async move {
            self.values.lock().unwrap().insert(key.to_owned(), value);
            Ok(())
        })
    }
}

fn kit_with_services(config: Arc<FakeConfig>) -> Kit {
    let dir = tempfile::tempdir().unwrap();
    let tools = BuiltinTools::new(dir.path().join("cron.json"))
        .with_web_search(Arc::new(FakeSearch))
        .with_ask_user(Arc::new(PicksOption(1)))
        .with_config(config);
    Kit::with(tools, dir)
}

#[tokio::test]
async fn services_answer_through_the_tools() {
    let config = Arc::new(FakeConfig::default());
    let kit = kit_with_services(Arc::clone(&config));
    let t = text(
        &kit.call(
            "WebSearch",
            json!({"query": "tokio", "allowed_domains": ["docs.rs"]}),
        )
        .await,
    );
    assert_eq!(
        t,
        "Results for \"tokio\":\n1. About tokio\n   https://example.invalid/a\n   domains [\"docs.rs\"]\n"
    );
    // Many long results: count, excerpt and total size are bounded, and
    // the output says what was cut.
    let t = text(&kit.call("WebSearch", json!({"query": "flood"})).await);
    assert!(t.len() <= 32 * 1024, "{} bytes", t.len());
    let shown = t.matches("\n   https://").count();
    assert!((10..=20).contains(&shown), "{shown} results: {t}");
    assert!(t.contains("[line cut: 4000 more chars]"), "{t}");
    assert!(
        t.ends_with(&format!("[showing {shown} of 100 results (at most 20 and 32 KiB); refine the query or filter by domain]\n")),
        "{t}"
    );
    // Short results: the count limit alone applies.
    let t = text(&kit.call("WebSearch", json!({"query": "many"})).await);
    assert!(t.contains("20. Result 19\n"), "{t}");
    assert!(!t.contains("Result 20\n"), "{t}");
    assert!(t.ends_with("[showing 20 of 100 results (at most 20 and 32 KiB); refine the query or filter by domain]\n"), "{t}");
    let t = text(
        &kit.call(
            "AskUserQuestion",
            json!({"questions": [{"question": "Which db?", "header": "DB", "options": [{"label": "sqlite"}, {"label": "postgres"}]}]}),
        )
        .await,
    );
    assert_eq!(t, "The user answered:\n- Which db? -> postgres\n");
    let out = kit
        .call(
            "AskUserQuestion",
            json!({"questions": [{"question": "?", "options": [{"label": "only"}]}]}),
        )
        .await;
    assert!(
        text(&out).contains("has 1 options; give 2 to 4"),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn config_checks_keys_and_types() {
    let config = Arc::new(FakeConfig::default());
    let kit = kit_with_services(Arc::clone(&config));
    let out = kit
        .call(
            "Config",
            json!({"setting": "subagent.max_concurrent", "value": "five"}),
        )
        .await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "Config: 'subagent.max_concurrent' takes an integer; got \"five\"."
    );
    let out = kit
        .call("Config", json!({"setting": "colour", "value": 1}))
        .await;
    assert!(text(&out).contains("Settable keys: model, subagent.max_concurrent, theme."));
    let out = kit
        .call("Config", json!({"setting": "theme", "value": "pink"}))
        .await;
    assert!(
        text(&out).contains("takes one of: dark, light"),
        "{}",
        text(&out)
    );
    let out = kit
        .call(
            "Config",
            json!({"setting": "subagent.max_concurrent", "value": 5}),
        )
        .await;
    assert_eq!(text(&out), "Set subagent.max_concurrent = 5.");
    assert_eq!(
        config.values.lock().unwrap()["subagent.max_concurrent"],
        json!(5)
    );
    let t = text(
        &kit.call("Config", json!({"setting": "subagent.max_concurrent"}))
            .await,
    );
    assert_eq!(t, "subagent.max_concurrent = 5");
    // A present null is refused, never read as "leave out".
    let out = kit
        .call(
            "Config",
            json!({"setting": "subagent.max_concurrent", "value": null}),
        )
        .await;
    assert!(out.is_error, "{}", text(&out));
    assert_eq!(
        text(&out),
        "Config: `value` is null; a key cannot be unset. Send an integer to set 'subagent.max_concurrent', or leave `value` out to read it."
    );
    assert_eq!(
        config.values.lock().unwrap()["subagent.max_concurrent"],
        json!(5)
    );
    let t = text(&kit.call("Config", json!({})).await);
    assert!(
        t.contains("- theme (one of: dark, light) = null: colours"),
        "{t}"
    );
}

#[test]
fn the_builtins_without_a_service_are_named_and_background_agents_never_ask() {
    let names = |list: Vec<zr_types::ToolName>| -> Vec<String> {
        list.iter().map(ToString::to_string).collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let bare = BuiltinTools::new(dir.path().join("cron.json"));
    assert_eq!(
        names(bare.no_service()),
        ["WebSearch", "AskUserQuestion", "Config"]
    );
    assert_eq!(
        names(bare.no_service_in_background()),
        ["WebSearch", "AskUserQuestion", "Config"]
    );
    let asks = BuiltinTools::new(dir.path().join("cron.json"))
        .with_ask_user(Arc::new(PicksOption(1)))
        .with_config(Arc::new(FakeConfig::default()));
    assert_eq!(names(asks.no_service()), ["WebSearch"]);
    assert_eq!(
        names(asks.no_service_in_background()),
        ["WebSearch", "AskUserQuestion"]
    );
}
