//! Background subagents: the call returns at once, the parent is told at
//! its next turn, progress summaries come every interval, and the host
//! lists, stops and outlives none of them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use zr_caps::{AgentCapabilities, AgentType};
use zr_engine::{
    AgentObserver, Event, EventKind, QueryOverrides, SubagentConfig, TaskStatus, ToolChoice,
};
use zr_resolve::ResolvedPool;
use zr_types::{
    AgentId, BoxFuture, ContentBlock, MessageRole, SessionId, ToolCall, ToolContext,
    ToolDefinition, ToolError, ToolHandler, ToolOutput,
};

use crate::support::{Harness, custom, run, sub_agent, text, wait_gone};

/// A tool that answers only once the test (or an agent's end) lets it.
#[derive(Debug)]
struct Gate {
    open: Arc<Semaphore>,
}

impl ToolHandler for Gate {
    fn call<'a>(
        &'a self,
        _call: &'a ToolCall,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let permit = tokio::time::timeout(Duration::from_secs(30), self.open.acquire())
                .await
                .expect("the gate opens within 30 s")
                .expect("the gate is never closed");
            permit.forget();
            Ok(ToolOutput::text("gate passed"))
        })
    }
}

/// A harness over `script` with the custom tool `gate`, which answers a
/// call only when the returned semaphore gets a permit.
fn gated(script: &Value) -> (Harness, Arc<ToolDefinition>, Arc<Semaphore>) {
    let tool = custom("gate", false);
    let gate = Arc::new(Semaphore::new(0));
    let h = Harness::with_runtime(script, |r| {
        r.with_tool(
            Arc::clone(&tool),
            Arc::new(Gate {
                open: Arc::clone(&gate),
            }),
        )
    });
    (h, tool, gate)
}

/// Each agent whose end is among `events`, with its status.
fn ends(events: &[Event]) -> Vec<(String, TaskStatus)> {
    crate::support::finished(events)
        .into_iter()
        .map(|r| {
            (
                r.agent_id.map(|id| id.to_string()).unwrap_or_default(),
                r.status,
            )
        })
        .collect()
}

/// A tool that takes `ms` milliseconds.
#[derive(Debug)]
struct Slow {
    ms: u64,
}

impl ToolHandler for Slow {
    fn call<'a>(
        &'a self,
        _call: &'a ToolCall,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(self.ms)).await;
            Ok(ToolOutput::text("slept"))
        })
    }
}

/// Opens a gate each time an agent ends.
#[derive(Debug)]
struct OnFinish {
    gate: Arc<Semaphore>,
    finished: Mutex<Vec<AgentId>>,
}

impl AgentObserver for OnFinish {
    fn agent_started(&self, _: &SessionId, _: &AgentId, _: &ResolvedPool) {}
    fn agent_finished(&self, _: &SessionId, agent: &AgentId) {
        self.finished.lock().unwrap().push(agent.clone());
        if !agent.is_root() {
            self.gate.add_permits(1);
        }
    }
}

/// Waits (at most 30 s) until the session's background agents have ended.
async fn wait_all(agent: &zr_engine::Agent) {
    tokio::time::timeout(Duration::from_secs(30), agent.wait_background())
        .await
        .expect("the background agents end within 30 s");
}

fn bg_task(description: &str) -> Value {
    json!({"name": "Task", "input": {"description": description, "prompt": "work", "subagent_type": "worker", "run_in_background": true}})
}

/// The first tool result the root's `n`-th request (0-based) carries, as
/// JSON.
fn first_result(h: &Harness, n: usize) -> Value {
    let requests = h.provider.of_type("root");
    let last = requests[n].messages.last().unwrap().clone();
    let content = last
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(text(content)),
            _ => None,
        })
        .unwrap();
    serde_json::from_str(&content).unwrap()
}

/// The text blocks of the last message of the root's `n`-th request.
fn last_texts(h: &Harness, n: usize) -> String {
    let requests = h.provider.of_type("root");
    let last = requests[n].messages.last().unwrap();
    assert_eq!(last.role, MessageRole::User);
    last.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn with_custom(
    mut config: zr_engine::AgentConfig,
    tool: &Arc<ToolDefinition>,
) -> zr_engine::AgentConfig {
    config.capabilities = AgentCapabilities {
        custom_tools: Some(vec![Arc::clone(tool)]),
        ..AgentCapabilities::default()
    };
    config
}

fn worker_with(tool: Option<&Arc<ToolDefinition>>) -> zr_caps::AgentDefinition {
    let mut worker = sub_agent("worker", AgentType::GeneralPurpose);
    if let Some(tool) = tool {
        worker.capabilities.custom_tools = Some(vec![Arc::clone(tool)]);
    }
    worker
}

#[tokio::test]
async fn a_background_agent_returns_at_once_and_notifies_its_parent_at_its_next_turn() {
    // The root waits (in a tool) until the worker has ended, so the
    // notification must be in the root's very next request.
    let wait = custom("wait_for_worker", false);
    let gate = Arc::new(Semaphore::new(0));
    let observer = Arc::new(OnFinish {
        gate: Arc::clone(&gate),
        finished: Mutex::new(Vec::new()),
    });
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [bg_task("long job")]},
                {"tool_calls": [{"name": "wait_for_worker"}]},
                {"text": "all done"}
            ]}],
            "worker": [{"turns": [{"text": "the worker's findings"}]}]
        }}),
        |r| {
            r.with_tool(Arc::clone(&wait), Arc::new(Gate { open: gate }))
                .with_observer(observer)
        },
    );
    let config = with_custom(AgentConfig::new("root"), &wait).with_sub_agent(worker_with(None));
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "all done");

    let launched = first_result(&h, 1);
    assert_eq!(launched["status"], "background");
    assert_eq!(launched["agent_id"], "root.0001-worker");
    assert!(
        launched["output"]
            .as_str()
            .unwrap()
            .starts_with("Started in the background as root.0001-worker."),
        "{launched}"
    );
    let note = last_texts(&h, 2);
    assert!(note.contains("<background-task-finished>"), "{note}");
    assert!(
        note.contains(
            "The background agent root.0001-worker (long job) finished with status completed."
        ),
        "{note}"
    );
    assert!(
        note.contains("\"output\":\"the worker's findings\""),
        "{note}"
    );
    // The notification came once: not again in a later request.
    assert!(!last_texts(&h, 1).contains("background-task-finished"));

    // The running query's stream carried the background agent's events.
    let started = events.iter().find_map(|e| match &e.kind {
        EventKind::SubagentStarted { background, .. } => Some(*background),
        _ => None,
    });
    assert_eq!(started, Some(true));
    let finished = crate::support::finished(&events);
    let bg = finished
        .iter()
        .find(|r| {
            r.agent_id
                .as_ref()
                .is_some_and(|id| id.as_str() == "root.0001-worker")
        })
        .unwrap_or_else(|| panic!("no end event: {events:#?}"));
    assert_eq!(bg.status, TaskStatus::Completed);

    let id: AgentId = "root.0001-worker".parse().unwrap();
    let view = agent.background_agent(&id).unwrap();
    assert!(!view.is_running());
    assert_eq!(view.result.unwrap().output, "the worker's findings");
    assert_eq!(view.description, "long job");
}

use zr_engine::AgentConfig;

#[tokio::test]
async fn a_background_agent_outlives_the_query_and_its_result_comes_with_the_next_one() {
    let (h, gate_tool, gate) = gated(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [bg_task("slow job")]},
            {"text": "started it"},
            {"text": "thanks"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "gate"}]},
            {"text": "late findings"}
        ]}]
    }}));
    let agent = h.agent(AgentConfig::new("root").with_sub_agent(worker_with(Some(&gate_tool))));
    let mut between = agent.background_events();
    let first = agent.prompt("start").await.unwrap();
    assert_eq!(first.output, "started it");

    // The query is over; the worker still runs, held by the gate.
    let list = agent.background_agents();
    assert_eq!(list.len(), 1);
    assert!(list[0].is_running());
    assert_eq!(list[0].agent_type, "worker");
    assert_eq!(list[0].parent, AgentId::root());

    gate.add_permits(1);
    wait_all(&agent).await;
    let done = agent.background_agents();
    assert_eq!(
        done[0].result.as_ref().unwrap().status,
        TaskStatus::Completed
    );
    assert_eq!(done[0].result.as_ref().unwrap().output, "late findings");
    assert_eq!(done[0].turns, 2);

    // Its events came to the subscriber although no query ran.
    let mut kinds = Vec::new();
    while let Ok(Some(event)) =
        tokio::time::timeout(Duration::from_millis(200), between.next()).await
    {
        kinds.push(event);
    }
    assert!(
        kinds.iter().any(|e: &Event| matches!(&e.kind, EventKind::SubagentFinished { result } if result.output == "late findings")),
        "{kinds:?}"
    );

    // The next query's first request carries the notification, after the
    // prompt.
    let second = agent.prompt("anything new?").await.unwrap();
    assert_eq!(second.output, "thanks");
    let note = last_texts(&h, 2);
    assert!(
        note.starts_with("anything new?\n<background-task-finished>"),
        "{note}"
    );
    assert!(note.contains("late findings"), "{note}");
}

#[tokio::test]
async fn progress_summaries_come_at_the_configured_interval_once_the_conversation_grows() {
    let slow = custom("slow", true);
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [bg_task("crawl")]}, {"text": "ok"}]}],
            "worker": [{
                "turns": [
                    {"tool_calls": [{"name": "slow"}]},
                    {"tool_calls": [{"name": "slow"}]},
                    {"tool_calls": [{"name": "slow"}]},
                    {"text": "crawled"}
                ],
                "summary": "Crawling the docs"
            }]
        }}),
        |r| r.with_tool(Arc::clone(&slow), Arc::new(Slow { ms: 250 })),
    );
    let interval = Duration::from_millis(60);
    let mut config = AgentConfig::new("root").with_sub_agent(worker_with(Some(&slow)));
    config.subagent = SubagentConfig {
        progress_interval: Some(interval),
        ..SubagentConfig::default()
    };
    let agent = h.agent(config);
    let mut events = agent.background_events();
    agent.prompt("go").await.unwrap();
    wait_all(&agent).await;
    let mut progress = Vec::new();
    while let Ok(Some(event)) =
        tokio::time::timeout(Duration::from_millis(200), events.next()).await
    {
        if let EventKind::SubagentProgress { summary } = &event.kind {
            assert_eq!(summary, "Crawling the docs");
            progress.push(event.at);
        }
    }
    assert!(progress.len() >= 2, "progress events at {progress:?}");
    for pair in progress.windows(2) {
        assert!(
            pair[1] - pair[0] >= interval,
            "progress events at {progress:?}"
        );
    }
    // Side requests: tools disabled, never over a short conversation, and
    // they took none of the worker's turns.
    let worker = h.provider.of_type("worker");
    let side: Vec<_> = worker
        .iter()
        .filter(|r| r.tool_choice == ToolChoice::None)
        .collect();
    assert_eq!(side.len(), progress.len());
    assert!(side.iter().all(|r| r.messages.len() >= 3));
    let view = &agent.background_agents()[0];
    assert_eq!(view.result.as_ref().unwrap().output, "crawled");
    assert_eq!(view.result.as_ref().unwrap().turns, 4);
    assert_eq!(view.progress.as_deref(), Some("Crawling the docs"));
}

/// A command that runs until killed; `marker` (a duration such as
/// `600.4242`) makes its process findable in /proc.
fn bash_forever(marker: &str) -> Value {
    json!({"name": "Bash", "input": {"command": marker}})
}

/// Waits (five seconds at most) until the root sent `n` model requests;
/// the caller checks what came.
async fn wait_root_requests(h: &Harness, n: usize) {
    for _ in 0..500 {
        if h.provider.of_type("root").len() == n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Checks a process with `marker` in its command line is seen within six
/// seconds. Seen once is enough: a second look may fall in the moment
/// when bash execs the command and its command line reads empty.
async fn assert_started(marker: &str) {
    let mut seen = false;
    for _ in 0..300 {
        if !crate::support::processes_with(marker).is_empty() {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(seen, "the worker's command started");
}

#[tokio::test]
async fn the_host_stops_a_background_agent_and_its_processes_and_the_parent_is_told() {
    let marker = "sleep 600.4242";
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [bg_task("endless")]},
            {"text": "started"},
            {"text": "noted"}
        ]}],
        "worker": [{"turns": [{"tool_calls": [bash_forever(marker)]}, {"text": "never"}]}]
    }}));
    let agent = h.agent(AgentConfig::new("root").with_sub_agent(worker_with(None)));
    agent.prompt("go").await.unwrap();
    let id: AgentId = "root.0001-worker".parse().unwrap();
    assert_started(marker).await;
    assert!(agent.stop_background(&id).await);
    assert_eq!(wait_gone(marker).await, Vec::<u32>::new());
    let result = agent.background_agent(&id).unwrap().result.unwrap();
    assert_eq!(result.status, TaskStatus::Cancelled);
    assert!(
        !agent.stop_background(&id).await,
        "stopping twice finds nothing"
    );

    agent.prompt("and?").await.unwrap();
    assert!(last_texts(&h, 2).contains("finished with status cancelled"));
    let note = crate::support::notification(&h.provider.of_type("root")[2]);
    assert_eq!(note["agent_id"], "root.0001-worker");
    assert_eq!(note["status"], "cancelled");
    assert_eq!(
        note["error"],
        "stopped before it finished (by the host, or the session ended); the output is what it wrote so far"
    );
}

#[tokio::test]
async fn the_end_of_the_session_stops_its_background_agents() {
    let marker = "sleep 600.2424";
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [bg_task("endless")]}, {"text": "started"}]}],
        "worker": [{"turns": [{"tool_calls": [bash_forever(marker)]}, {"text": "never"}]}]
    }}));
    let agent = h.agent(AgentConfig::new("root").with_sub_agent(worker_with(None)));
    agent.prompt("go").await.unwrap();
    assert_started(marker).await;
    drop(agent);
    assert_eq!(wait_gone(marker).await, Vec::<u32>::new());
}

#[tokio::test]
async fn a_type_defined_as_background_runs_in_the_background_from_multitask() {
    let (h, gate_tool, gate) = gated(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": {"tasks": [
                {"description": "watch", "prompt": "w", "subagent_type": "watcher"},
                {"description": "now", "prompt": "n", "subagent_type": "worker"}
            ]}}]},
            {"text": "ok"}
        ]}],
        "watcher": [{"turns": [{"tool_calls": [{"name": "gate"}]}, {"text": "watched"}]}],
        "worker": [{"turns": [{"text": "worked"}]}]
    }}));
    let mut watcher = sub_agent("watcher", AgentType::GeneralPurpose);
    watcher.background = true;
    watcher.capabilities.custom_tools = Some(vec![Arc::clone(&gate_tool)]);
    let agent = h.agent(
        AgentConfig::new("root")
            .with_sub_agent(watcher)
            .with_sub_agent(worker_with(None)),
    );
    agent.prompt("go").await.unwrap();
    let results = first_result(&h, 1);
    assert_eq!(results["results"][0]["status"], "background");
    assert_eq!(results["results"][1]["status"], "completed");
    assert_eq!(results["results"][1]["output"], "worked");
    gate.add_permits(1);
    wait_all(&agent).await;
    assert_eq!(
        agent.background_agents()[0].result.as_ref().unwrap().output,
        "watched"
    );
}

#[tokio::test]
async fn run_in_background_must_be_a_boolean_and_is_for_task_only() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"tool_calls": [
            {"name": "Task", "input": {"description": "d", "prompt": "p", "run_in_background": "yes"}},
            {"name": "MultiTask", "input": {"tasks": [{"description": "d", "prompt": "p", "run_in_background": true}]}}
        ]},
        {"text": "ok"}
    ]}]}}));
    let agent = h.agent(AgentConfig::new("root"));
    agent.prompt("go").await.unwrap();
    let requests = h.provider.of_type("root");
    let results = crate::support::tool_results(&requests[1]);
    assert_eq!(
        results,
        vec![
            (true, "Task.run_in_background: expected true or false, got \"yes\". Nothing was started.".to_owned()),
            (true, "MultiTask.tasks[0]: unknown field 'run_in_background'; fields: description, prompt, subagent_type, output_schema, model. Nothing was started.".to_owned()),
        ]
    );
    assert!(agent.background_agents().is_empty());
}

#[tokio::test]
async fn a_notification_taken_by_a_cancelled_query_comes_again_with_the_next() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [bg_task("quick")]},
            {"text": "started"},
            {"delay_ms": 60000, "text": "never"},
            {"text": "got it"}
        ]}],
        "worker": [{"turns": [{"text": "quick findings"}]}]
    }}));
    let agent = h.agent(AgentConfig::new("root").with_sub_agent(worker_with(None)));
    agent.prompt("go").await.unwrap();
    wait_all(&agent).await;
    let query = agent.query("second", QueryOverrides::default());
    wait_root_requests(&h, 3).await;
    assert!(
        last_texts(&h, 2).contains("quick findings"),
        "the cancelled query took it"
    );
    query.cancel().await;
    assert_eq!(agent.prompt("third").await.unwrap().output, "got it");
    let note = last_texts(&h, 3);
    assert!(
        note.starts_with("third\n<background-task-finished>"),
        "{note}"
    );
    assert!(note.contains("quick findings"), "{note}");
    assert!(!agent.history().iter().any(|m| {
        m.content
            .iter()
            .any(|b| matches!(b, ContentBlock::Text { text } if text == "second"))
    }));
}

#[tokio::test]
async fn cancelling_the_query_that_started_a_background_agent_does_not_stop_it() {
    let (h, gate_tool, gate) = gated(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [bg_task("survivor")]},
            {"delay_ms": 60000, "text": "never"}
        ]}],
        "worker": [{"turns": [{"tool_calls": [{"name": "gate"}]}, {"text": "survived"}]}]
    }}));
    let agent = h.agent(AgentConfig::new("root").with_sub_agent(worker_with(Some(&gate_tool))));
    let query = agent.query("go", QueryOverrides::default());
    wait_root_requests(&h, 2).await;
    assert_eq!(
        h.provider.of_type("root").len(),
        2,
        "the root's slow turn began"
    );
    query.cancel().await;
    assert!(agent.background_agents()[0].is_running());
    gate.add_permits(1);
    wait_all(&agent).await;
    let result = agent.background_agents()[0].result.clone().unwrap();
    assert_eq!(
        (result.status, result.output.as_str()),
        (TaskStatus::Completed, "survived")
    );
}

/// A SubagentStop hook that takes a while, then notes the agent.
#[derive(Debug, Default)]
struct SlowStop {
    stopped: Mutex<Vec<AgentId>>,
}

impl zr_engine::Hook for SlowStop {
    fn subagent_stop<'a>(
        &'a self,
        agent: &'a zr_engine::HookAgent,
        _result: &'a zr_engine::TaskResult,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            self.stopped.lock().unwrap().push(agent.agent.clone());
        })
    }
}

#[tokio::test]
async fn wait_background_returns_only_once_the_agents_stop_hooks_are_done() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [bg_task("quick")]}, {"text": "started"}]}],
        "worker": [{"turns": [{"text": "done"}]}]
    }}));
    let hook = Arc::new(SlowStop::default());
    let mut config = AgentConfig::new("root").with_sub_agent(worker_with(None));
    config.hooks = zr_engine::Hooks::new().with(Arc::clone(&hook) as Arc<dyn zr_engine::Hook>);
    let agent = h.agent(config);
    assert_eq!(agent.prompt("go").await.unwrap().output, "started");
    wait_all(&agent).await;
    let id: AgentId = "root.0001-worker".parse().unwrap();
    assert_eq!(*hook.stopped.lock().unwrap(), vec![id.clone()]);
    assert_eq!(
        agent.background_agent(&id).unwrap().result.unwrap().output,
        "done"
    );
}

#[tokio::test]
async fn a_background_agent_launched_after_the_session_ended_is_stopped_at_once() {
    let marker = "sleep 600.3131";
    let (h, gate_tool, gate) = gated(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "gate"}]},
            {"tool_calls": [bg_task("late")]},
            {"text": "started"}
        ]}],
        "worker": [{"turns": [{"tool_calls": [bash_forever(marker)]}, {"text": "never"}]}]
    }}));
    let agent = h
        .agent(with_custom(AgentConfig::new("root"), &gate_tool).with_sub_agent(worker_with(None)));
    let query = agent.query("go", QueryOverrides::default());
    // The session ends while its query still runs; the query then starts
    // a background agent, which nothing could ever stop.
    drop(agent);
    gate.add_permits(1);
    let (events, result) = run(query).await;
    assert_eq!(result.unwrap().output, "started");
    assert_eq!(
        ends(&events),
        vec![("root.0001-worker".to_owned(), TaskStatus::Cancelled)]
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(crate::support::processes_with(marker), Vec::<u32>::new());
}

#[tokio::test]
async fn a_progress_request_repeats_the_agents_last_request_with_the_tools_it_loaded() {
    // The side request is the agent's last request plus one question, so
    // the provider's cache serves its prefix: also after FindTool loaded a
    // tool.
    let slow = custom("slow", true);
    let db = Arc::new(
        ToolDefinition::new(
            "mcp__db__query".parse().unwrap(),
            "Run a SQL query on the database",
            zr_types::ToolOrigin::Connection {
                server: "db".parse().unwrap(),
            },
        )
        .with_annotations(zr_types::Annotations::read_only()),
    );
    // A background fork: it has its parent's pool, FindTool included.
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [{"name": "Task", "input": {"description": "crawl", "prompt": "crawl", "run_in_background": true}}]},
                {"text": "ok"}
            ]}],
            "fork": [{
                "turns": [
                    {"tool_calls": [{"name": "FindTool", "input": {"query": "select:mcp__db__query"}}]},
                    {"tool_calls": [{"name": "slow"}]},
                    {"tool_calls": [{"name": "slow"}]},
                    {"text": "crawled"}
                ],
                "summary": "Crawling"
            }]
        }}),
        |r| {
            r.with_tool(Arc::clone(&slow), Arc::new(Slow { ms: 250 }))
                .with_tool(Arc::clone(&db), Arc::new(crate::support::Echo))
        },
    );
    let mut config = with_custom(AgentConfig::new("root"), &slow);
    config.options.mcp_tools = vec![Arc::clone(&db)];
    config.subagent = SubagentConfig {
        progress_interval: Some(Duration::from_millis(60)),
        ..SubagentConfig::default()
    };
    let agent = h.agent(config);
    agent.prompt("go").await.unwrap();
    wait_all(&agent).await;
    let worker = h.provider.of_type("fork");
    let names = |r: &zr_engine::ModelRequest| crate::support::tool_names(r);
    assert!(names(&worker[0]).iter().all(|n| n != "mcp__db__query"));
    let mut last = None;
    let mut sides = 0;
    for request in &worker {
        if request.tool_choice != ToolChoice::None {
            last = Some(request);
            continue;
        }
        sides += 1;
        let last = last.expect("a side request follows one of the agent's");
        assert_eq!(names(request), names(last));
        assert_eq!(request.system, last.system);
        // The conversation so far (the question joins its last message).
        let n = last.messages.len();
        assert_eq!(request.messages[..n - 1], last.messages[..n - 1]);
        let blocks = &last.messages[n - 1].content;
        assert_eq!(request.messages[n - 1].content[..blocks.len()], blocks[..]);
    }
    assert!(sides >= 1, "no progress request was made");
    assert!(
        worker
            .iter()
            .any(|r| r.tool_choice == ToolChoice::None
                && names(r).iter().any(|n| n == "mcp__db__query")),
        "a progress request after the load shows the loaded tool"
    );
}

#[tokio::test]
async fn the_background_events_end_with_the_session_after_its_agents_stop() {
    let (h, gate_tool, _gate) = gated(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [bg_task("held")]}, {"text": "started"}]}],
        "worker": [{"turns": [{"tool_calls": [{"name": "gate"}]}, {"text": "never"}]}]
    }}));
    let agent = h.agent(AgentConfig::new("root").with_sub_agent(worker_with(Some(&gate_tool))));
    let mut events = agent.background_events();
    agent.prompt("go").await.unwrap();
    // The worker is inside its tool.
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.next())
            .await
            .expect("the worker calls its tool")
            .expect("the session is alive");
        if matches!(event.kind, EventKind::ToolCallStarted { .. }) {
            break;
        }
    }
    drop(agent);
    let rest: Vec<Event> = tokio::time::timeout(Duration::from_secs(30), events.collect())
        .await
        .expect("the stream ends with the session");
    assert_eq!(
        ends(&rest),
        vec![("root.0001-worker".to_owned(), TaskStatus::Cancelled)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_many_threads_a_quick_agent_ends_once_and_its_end_is_seen_before_wait_background_returns()
 {
    // A worker that answers at once may end on another thread before the
    // call that launched it has returned.
    for round in 0..30 {
        let h = Harness::new(&json!({"agents": {
            "root": [{"turns": [{"tool_calls": [bg_task("quick")]}, {"text": "started"}]}],
            "worker": [{"turns": [{"text": "quick findings"}]}]
        }}));
        let agent = h.agent(AgentConfig::new("root").with_sub_agent(worker_with(None)));
        let (events, result, later) = crate::support::run_and_wait(&agent, "go").await;
        assert_eq!(result.unwrap().output, "started", "round {round}");
        let ends: Vec<(String, String)> = events
            .iter()
            .chain(&later)
            .filter_map(|e| match &e.kind {
                EventKind::SubagentFinished { result } => {
                    Some((e.agent.to_string(), result.output.clone()))
                }
                _ => None,
            })
            .collect();
        // Seen by the subscriber (and, if the query still ran, in its
        // stream too), always with the one result.
        assert!(
            !ends.is_empty()
                && ends
                    .iter()
                    .all(|(id, output)| id == "root.0001-worker" && output == "quick findings"),
            "round {round}: {ends:?}"
        );
        let later_ends = later
            .iter()
            .filter(|e| matches!(e.kind, EventKind::SubagentFinished { .. }))
            .count();
        assert_eq!(later_ends, 1, "round {round}: the subscriber saw one end");
        let id: AgentId = "root.0001-worker".parse().unwrap();
        let view = agent.background_agent(&id).unwrap();
        assert_eq!(view.result.unwrap().status, TaskStatus::Completed);
        assert!(!agent.stop_background(&id).await, "round {round}");
    }
}
