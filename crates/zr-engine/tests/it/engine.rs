//! The root agent's loop with the scripted provider and real builtin
//! tools: streaming, tool calls, refusals, concurrency, FindTool,
//! cancellation, failures.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use zr_caps::AgentCapabilities;
use zr_engine::{AgentConfig, EngineError, QueryOverrides, TaskStatus};
use zr_types::{
    Annotations, BoxFuture, ToolCall, ToolContext, ToolDefinition, ToolError, ToolHandler,
    ToolOrigin, ToolOutput,
};

use crate::check::check;
use crate::support::{
    Harness, custom, one_custom_call, processes_with, run, task_call, tool_results, wait_gone,
    with_db_query,
};

#[tokio::test]
async fn a_text_answer_streams_deltas_and_reports_usage() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"text": "The answer is forty two, as everyone knows."}
    ]}]}}));
    // The snapshot: one request with the root's pool, the text in
    // several pieces, output tokens, the answer, the header's system
    // prompt and model.
    let run = check(&h, AgentConfig::new("You answer."), "What is the answer?").await;
    insta::assert_snapshot!(run.text);
    let result = run.result.unwrap();
    assert!(
        result.usage.input_tokens > 0,
        "the text leaves input tokens out"
    );
    assert_eq!(result.total_usage, result.usage);
    // The conversation continues in the next query.
    assert_eq!(run.agent.history().len(), 2);
}

#[tokio::test]
async fn builtin_tools_run_for_real_and_results_come_back_in_call_order() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [
            {"name": "Write", "input": {"file_path": "notes.txt", "content": "alpha\nbeta\n"}},
            {"name": "Bash", "input": {"command": "cat notes.txt | wc -l"}},
            {"name": "Read", "input": {"file_path": "notes.txt"}},
            {"name": "Glob", "input": {"pattern": "*.txt"}}
        ]},
        {"text": "done"}
    ]}]}}));
    let agent = h.agent(AgentConfig::new("root"));
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("notes.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    let second = &h.provider.of_type("root")[1];
    let results = tool_results(second);
    assert_eq!(results.len(), 4);
    assert!(results.iter().all(|(is_error, _)| !is_error), "{results:?}");
    assert!(results[1].1.starts_with('2'), "wc -l: {}", results[1].1);
    assert!(results[2].1.contains("alpha") && results[2].1.contains("beta"));
    assert!(results[3].1.contains("notes.txt"));
}

#[tokio::test]
async fn a_tool_outside_the_pool_is_answered_with_an_error_naming_the_agent() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [
            {"name": "Bash", "input": {"command": "touch made.txt"}},
            {"name": "read file", "input": {}}
        ]},
        {"text": "ok"}
    ]}]}}));
    let mut config = AgentConfig::new("root");
    config.capabilities.disallowed_tools = Some(vec!["Bash".parse().unwrap()]);
    // The snapshot: Bash is not advertised, both calls are refused with
    // errors naming the agent.
    let run = check(&h, config, "go").await;
    insta::assert_snapshot!(run.text);
    assert!(!h.dir.path().join("made.txt").exists(), "Bash must not run");
}

/// A read-only (or not) custom tool that records how many of its calls
/// overlap.
#[derive(Debug, Default)]
struct Probe {
    active: AtomicUsize,
    peak: AtomicUsize,
}

impl ToolHandler for Probe {
    fn call<'a>(
        &'a self,
        call: &'a ToolCall,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(150)).await;
            self.active.fetch_sub(1, Ordering::SeqCst);
            Ok(ToolOutput::text(format!(
                "{} {}",
                call.name, call.input["n"]
            )))
        })
    }
}

#[tokio::test]
async fn read_only_calls_run_side_by_side_and_others_one_at_a_time() {
    let calls: Vec<_> = (0..12)
        .map(|n| json!({"name": "look", "input": {"n": n}}))
        .chain((0..3).map(|n| json!({"name": "poke", "input": {"n": n}})))
        .collect();
    let look_probe = Arc::new(Probe::default());
    let poke_probe = Arc::new(Probe::default());
    let (look, poke) = (custom("look", true), custom("poke", false));
    let h = Harness::with_runtime(
        &json!({"agents": {"root": [{"turns": [{"tool_calls": calls}, {"text": "ok"}]}]}}),
        |r| {
            r.with_tool(Arc::clone(&look), look_probe.clone())
                .with_tool(Arc::clone(&poke), poke_probe.clone())
        },
    );
    let mut config = AgentConfig::new("root");
    config.options.custom_tools = vec![look, poke];
    let agent = h.agent(config);
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    result.unwrap();
    assert_eq!(
        look_probe.peak.load(Ordering::SeqCst),
        10,
        "at most 10 reads at once"
    );
    assert_eq!(
        poke_probe.peak.load(Ordering::SeqCst),
        1,
        "writes one at a time"
    );
    let results = tool_results(&h.provider.of_type("root")[1]);
    let expected: Vec<_> = (0..12)
        .map(|n| (false, format!("look {n}")))
        .chain((0..3).map(|n| (false, format!("poke {n}"))))
        .collect();
    assert_eq!(results, expected, "results in call order");
}

#[tokio::test]
async fn find_tool_loads_deferred_tools_from_the_next_request_and_the_root_keeps_them() {
    let probe = Arc::new(Probe::default());
    let (h, config) = with_db_query(
        &json!({"agents": {"root": [{"turns": [
            {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 0}}]},
            {"tool_calls": [{"name": "FindTool", "input": {"query": "sql database"}}]},
            {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 1}}]},
            {"text": "found"},
            {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 2}}]},
            {"text": "again"}
        ]}]}}),
        probe.clone(),
    );
    let agent = h.agent(config);
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "found");
    let requests = h.provider.of_type("root");
    let advertises = |i: usize| {
        requests[i]
            .tools
            .iter()
            .any(|t| t.name.as_str() == "mcp__db__query")
    };
    assert!(!advertises(0) && !advertises(1), "deferred until loaded");
    assert!(advertises(2), "advertised from the request after FindTool");
    let results = tool_results(&requests[3]);
    assert_eq!(
        results[0],
        (
            true,
            "tool 'mcp__db__query' is not available to agent root yet: load it first with FindTool (query \"select:mcp__db__query\")".to_owned()
        )
    );
    assert!(
        results[1]
            .1
            .starts_with("loaded mcp__db__query: Run a SQL query"),
        "{results:?}"
    );
    assert_eq!(results[2], (false, "mcp__db__query 1".to_owned()));
    // A second query of the same root keeps the loaded tool.
    let (_, result) = run(agent.query("again", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "again");
    let requests = h.provider.of_type("root");
    assert!(
        requests[4]
            .tools
            .iter()
            .any(|t| t.name.as_str() == "mcp__db__query")
    );
    assert_eq!(
        tool_results(&requests[5]).last().unwrap(),
        &(false, "mcp__db__query 2".to_owned())
    );
}

#[tokio::test]
async fn dropping_a_query_kills_its_processes() {
    let marker = "sleep 41.4142";
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [{"name": "Bash", "input": {"command": marker}}]},
        {"text": "never"}
    ]}]}}));
    let agent = h.agent(AgentConfig::new("root"));
    let query = agent.query("go", QueryOverrides::default());
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = processes_with(marker);
        if !seen.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!seen.is_empty(), "the command started");
    query.cancel().await;
    assert_eq!(wait_gone(marker).await, Vec::<u32>::new());
    // The root is free again and its conversation is as before the query.
    assert!(agent.history().is_empty());
}

#[tokio::test]
async fn a_second_query_while_one_runs_is_refused() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"delay_ms": 500, "text": "slow"}
    ]}]}}));
    let agent = h.agent(AgentConfig::new("root"));
    let first = agent.query("one", QueryOverrides::default());
    let second = agent.query("two", QueryOverrides::default()).finish().await;
    assert!(
        matches!(second, Err(EngineError::Busy { .. })),
        "{second:?}"
    );
    assert_eq!(first.finish().await.unwrap().output, "slow");
}

#[tokio::test]
async fn a_provider_failure_ends_the_query_with_a_typed_error() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}
    ]}]}}));
    // The snapshot: the error's text, after the one turn the script has.
    let run = check(&h, AgentConfig::new("root"), "go").await;
    insta::assert_snapshot!(run.text);
    let Err(EngineError::Provider { agent: who, .. }) = run.result else {
        panic!("expected a provider error, got {:?}", run.result);
    };
    assert!(who.is_root());
}

#[derive(Debug)]
struct Panics;

impl ToolHandler for Panics {
    fn call<'a>(
        &'a self,
        _: &'a ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { panic!("the probe broke") })
    }
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result_and_an_event() {
    let (h, config) = one_custom_call(&custom("broken", false), Arc::new(Panics));
    // The snapshot: the panic is the call's error result and a
    // ToolFailed event, and the root goes on.
    let run = check(&h, config, "go").await;
    insta::assert_snapshot!(run.text);
}

#[tokio::test]
async fn a_tool_without_a_handler_is_an_error_before_anything_runs() {
    let orphan = custom("orphan", true);
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [{"text": "x"}]}]}}));
    let mut config = AgentConfig::new("root");
    config.options.custom_tools = vec![orphan];
    let agent = h.agent(config);
    let result = agent.prompt("go").await;
    assert!(
        matches!(&result, Err(EngineError::MissingHandler { tool, .. }) if tool.as_str() == "orphan"),
        "{result:?}"
    );
    assert!(h.provider.of_type("root").is_empty(), "no request was made");
}

fn connection(server: &str, tool: &str, description: &str) -> Arc<ToolDefinition> {
    Arc::new(
        ToolDefinition::new(
            format!("mcp__{server}__{tool}").parse().unwrap(),
            description,
            ToolOrigin::Connection {
                server: server.parse().unwrap(),
            },
        )
        .with_annotations(Annotations::read_only()),
    )
}

#[tokio::test]
async fn find_tool_ranks_by_keywords_then_pool_order_and_subagents_start_with_nothing_loaded() {
    let tools = vec![
        connection("gh", "create_issue", "Create an issue"),
        connection("gh", "list_issues", "List issues of a repository"),
        connection("gh", "close_issue", "Close an issue"),
        connection("db", "query", "Run a SQL query"),
    ];
    let probe = Arc::new(Probe::default());
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [
                    {"name": "FindTool", "input": {"query": "CLOSE issue", "max_results": 2}},
                    {"name": "FindTool", "input": {"query": "select:mcp__db__query,mcp__nope__x,Bash"}},
                    {"name": "FindTool", "input": {"query": "kitchen sink"}},
                    {"name": "FindTool", "input": {"max_results": 0}}
                ]},
                {"tool_calls": [task_call("worker")]},
                {"text": "ok"}
            ]}],
            "worker": [{"turns": [{"text": "done"}]}]
        }}),
        |mut r| {
            for t in &tools {
                r = r.with_tool(Arc::clone(t), probe.clone());
            }
            r
        },
    );
    let mut config = AgentConfig::new("root");
    config.options.mcp_tools = tools.clone();
    let worker = crate::support::sub_agent("worker", zr_caps::AgentType::GeneralPurpose)
        .with_capabilities(AgentCapabilities {
            connection_tools: Some(tools.clone()),
            ..AgentCapabilities::default()
        });
    let agent = h.agent(config.with_sub_agent(worker));
    run(agent.query("go", QueryOverrides::default()))
        .await
        .1
        .unwrap();
    let requests = h.provider.of_type("root");
    let results = tool_results(&requests[1]);
    assert_eq!(
        results,
        vec![
            (false, "loaded mcp__gh__close_issue: Close an issue\nloaded mcp__gh__create_issue: Create an issue\nLoaded tools can be called from your next turn on.".to_owned()),
            (false, "loaded mcp__db__query: Run a SQL query\nno deferred tool named 'mcp__nope__x'\nBash is already available\nLoaded tools can be called from your next turn on.".to_owned()),
            // 7: the three Cron tools and the four MCP tools (loads take
            // effect next turn); the harness configures no ask-user or
            // config service, so AskUserQuestion and Config are in no pool.
            (false, "no deferred tool matches 'kitchen sink' (7 not loaded yet); try other keywords".to_owned()),
            (true, "FindTool: 'query' (a string) is required: `select:Name1,Name2` or keywords".to_owned()),
        ]
    );
    let loaded: Vec<&str> = requests[1]
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| n.starts_with("mcp__"))
        .collect();
    assert_eq!(
        loaded,
        [
            "mcp__gh__close_issue",
            "mcp__gh__create_issue",
            "mcp__db__query"
        ]
    );
    let worker = &h.provider.of_type("worker")[0];
    assert!(
        worker
            .tools
            .iter()
            .all(|t| !t.name.as_str().starts_with("mcp__")),
        "a subagent starts with no tools loaded"
    );
    assert!(worker.tools.iter().any(|t| t.name.as_str() == "FindTool"));
}

/// Records the spans opened, with their agent and tool fields.
#[derive(Debug, Default, Clone)]
struct Spans(Arc<std::sync::Mutex<Vec<String>>>);

#[derive(Default)]
struct Fields(Vec<String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if ["id", "type", "name"].contains(&field.name()) {
            self.0.push(format!("{}={value:?}", field.name()));
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let line = format!("{} {}", attrs.metadata().name(), fields.0.join(" "));
        self.0.lock().unwrap().push(line);
    }
}

#[tokio::test]
async fn every_agent_and_every_tool_call_has_a_tracing_span() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let spans = Spans::default();
    // tracing-core caches whether a callsite is enabled when the callsite is
    // first hit. While exactly one dispatcher is registered it asks only the
    // hitting thread's default, so a span first hit on another test's thread
    // while this (thread-local) subscriber was the only one would stay
    // disabled for good and this test would see no spans. A second live
    // dispatcher makes every first hit ask all registered ones (the
    // workaround of tokio-rs/tracing#3611, open for tracing-core 0.1.36).
    let _second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("worker")]},
            {"text": "ok"}
        ]}],
        "worker": [{"turns": [{"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}, {"text": "done"}]}]
    }}));
    let agent = h.agent(
        AgentConfig::new("root").with_sub_agent(crate::support::sub_agent(
            "worker",
            zr_caps::AgentType::GeneralPurpose,
        )),
    );
    agent.prompt("go").await.unwrap();
    let mut lines = spans.0.lock().unwrap().clone();
    lines.retain(|l| l.starts_with("agent ") || l.starts_with("tool "));
    // Log lines under the spans carry the agent's id and type and the
    // tool's name and call id (the exported spans are the tracer's:
    // tracer.rs).
    for line in &mut lines {
        if let Some(at) = line.find(" id=\"") {
            line.truncate(at);
        }
    }
    assert_eq!(
        lines,
        vec![
            "agent id=root type=\"root\"",
            "tool name=\"Task\"",
            "agent id=root.0001-worker type=\"worker\"",
            "tool name=\"Glob\"",
        ]
    );
}

#[tokio::test]
async fn a_model_that_stops_without_an_answer_is_a_failure_but_an_empty_end_of_turn_is_an_answer() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"stop_reason": "model_context_window_exceeded"},
        {"text": ""}
    ]}]}}));
    let agent = h.agent(AgentConfig::new("root"));
    let result = agent.prompt("go").await;
    let Err(EngineError::NoAnswer {
        agent: who,
        stop_reason,
    }) = &result
    else {
        panic!("expected NoAnswer, got {result:?}");
    };
    assert!(who.is_root());
    assert_eq!(stop_reason.as_str(), "model_context_window_exceeded");
    assert_eq!(
        result.unwrap_err().to_string(),
        "the model of agent root stopped (model_context_window_exceeded) without an answer or a tool call"
    );
    // An empty answer that ends the turn is an answer.
    let result = agent.prompt("again").await.unwrap();
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "")
    );
}
