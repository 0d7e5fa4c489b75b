//! What every way an agent ends leaves behind: cleanup of subagents and
//! their background commands (timed out, cancelled, queued), a valid
//! history after every path, usage totals, fork parity, panics in tools.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use zr_caps::AgentType;
use zr_engine::{AgentConfig, EventKind, ModelRequest, QueryOverrides, TaskStatus};
use zr_types::{BoxFuture, ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput, Usage};

use crate::check::check;
use crate::support::{
    Echo, Harness, assert_all_requests_valid, assert_valid, custom, finished, last_total,
    one_custom_call, root_with_worker, run, sub_agent, task_call, tool_names, tool_results,
    wait_gone, with_db_query,
};

/// A handler that panics while making its future.
#[derive(Debug)]
struct PanicsEarly;

impl ToolHandler for PanicsEarly {
    fn call<'a>(
        &'a self,
        _: &'a ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        panic!("broken before the future")
    }
}

#[tokio::test]
async fn a_tool_that_panics_before_its_future_exists_is_an_error_result() {
    let (h, config) = one_custom_call(&custom("early", false), Arc::new(PanicsEarly));
    // The snapshot: the panic is the call's error result, the root goes on.
    let run = check(&h, config, "go").await;
    insta::assert_snapshot!(run.text);
}

#[tokio::test]
async fn empty_answers_leave_no_empty_message_or_text_in_the_history() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {},
        {"text": ""},
        {"text": "finally"}
    ]}]}}));
    let agent = h.agent(AgentConfig::new("root"));
    for prompt in ["one", "two", "three"] {
        run(agent.query(prompt, QueryOverrides::default()))
            .await
            .1
            .unwrap();
    }
    assert_all_requests_valid(&h);
    assert_valid(&agent.history(), "the root's history");
}

/// Records agent starts and ends.
#[derive(Debug, Default)]
struct Journal(Mutex<Vec<String>>);

impl zr_engine::AgentObserver for Journal {
    fn agent_started(
        &self,
        _: &zr_types::SessionId,
        agent: &zr_types::AgentId,
        _: &zr_resolve::ResolvedPool,
    ) {
        self.0.lock().unwrap().push(format!("start {agent}"));
    }

    fn agent_finished(&self, _: &zr_types::SessionId, agent: &zr_types::AgentId) {
        self.0.lock().unwrap().push(format!("end {agent}"));
    }
}

#[tokio::test]
async fn cancelling_during_a_subagents_cleanup_still_ends_it_once() {
    // The background command ignores SIGTERM (once its shell has read the
    // trap: the model's delay), so the cleanup waits the grace period
    // before SIGKILL: the query is cancelled in that window.
    let marker = "sleep 47.1234";
    let journal = Arc::new(Journal::default());
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [task_call("worker")]},
                {"text": "never"}
            ]}],
            "worker": [{"turns": [
                {"tool_calls": [{"name": "Bash", "input": {"command": format!("trap '' TERM; {marker}"), "run_in_background": true}}]},
                {"delay_ms": 1000, "text": "done"}
            ]}]
        }}),
        |r| r.with_observer(journal.clone()),
    );
    let agent = h.agent(root_with_worker());
    let mut query = agent.query("go", QueryOverrides::default());
    let wait_done = async {
        while let Some(event) = query.next().await {
            if event.agent_type.as_ref() == "worker"
                && matches!(event.kind, EventKind::TurnFinished { turn: 2, .. })
            {
                return true;
            }
        }
        false
    };
    assert!(
        tokio::time::timeout(Duration::from_secs(30), wait_done)
            .await
            .unwrap(),
        "the worker finished its turns"
    );
    assert!(
        !crate::support::processes_with(marker).is_empty(),
        "its background command runs"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !journal
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.starts_with("end")),
        "the cleanup waits for the command"
    );
    query.cancel().await;
    let lines = journal.0.lock().unwrap().clone();
    let ends = lines
        .iter()
        .filter(|l| *l == "end root.0001-worker")
        .count();
    assert_eq!(ends, 1, "{lines:?}");
    assert_eq!(wait_gone(marker).await, Vec::<u32>::new());
}

#[tokio::test]
async fn a_timed_out_subagents_background_commands_die() {
    let marker = "sleep 48.4321";
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("worker")]},
            {"text": "reported"}
        ]}],
        "worker": [{"turns": [
            {"text": "serving", "tool_calls": [{"name": "Bash", "input": {"command": marker, "run_in_background": true}}]},
            {"delay_ms": 600_000, "text": "never"}
        ]}]
    }}));
    let mut config = root_with_worker();
    config.subagent.timeout = Duration::from_secs(2);
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    let results = finished(&events);
    assert_eq!(results[0].status, TaskStatus::TimedOut);
    assert_eq!(results[0].output, "serving");
    let started = tool_results(&h.provider.of_type("worker")[1]);
    assert!(!started[0].0, "the command started: {started:?}");
    assert_eq!(wait_gone(marker).await, Vec::<u32>::new());
}

fn usage(input: u64, output: u64, read: u64, created: u64) -> Value {
    json!({"input_tokens": input, "output_tokens": output, "cache_read_input_tokens": read, "cache_creation_input_tokens": created})
}

#[tokio::test]
async fn the_final_total_is_the_root_plus_every_subagent() {
    let tasks: Vec<Value> = (0..3)
        .map(|i| json!({"description": format!("t{i}"), "prompt": format!("task {i}"), "subagent_type": "worker"}))
        .collect();
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"usage": usage(100, 10, 1, 2), "tool_calls": [{"name": "MultiTask", "input": {"tasks": tasks}}]},
            {"usage": usage(200, 20, 3, 4), "text": "done"}
        ]}],
        "worker": [
            {"match": "task 1", "turns": [
                {"usage": usage(7, 1, 0, 0), "text": "hanging", "tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]},
                {"delay_ms": 600_000, "text": "never"}
            ]},
            {"match": "task 2", "turns": [
                {"usage": usage(5, 5, 5, 5), "tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}
            ]},
            {"turns": [
                {"usage": usage(11, 3, 0, 1), "tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]},
                {"usage": usage(13, 2, 0, 0), "text": "ok"}
            ]}
        ]
    }}));
    let mut config = root_with_worker();
    config.subagent.timeout = Duration::from_secs(2);
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    let result = result.unwrap();
    let subs = finished(&events);
    let statuses: Vec<TaskStatus> = subs.iter().map(|r| r.status).collect();
    assert!(statuses.contains(&TaskStatus::TimedOut), "{statuses:?}");
    assert!(statuses.contains(&TaskStatus::Failed), "{statuses:?}");
    let sum = subs.iter().fold(result.usage, |a, r| a.plus(r.usage));
    let expected = Usage {
        input_tokens: 300 + 7 + 5 + 24,
        output_tokens: 30 + 1 + 5 + 5,
        cache_read_input_tokens: 4 + 5,
        cache_creation_input_tokens: 6 + 5 + 1,
    };
    assert_eq!(sum, expected);
    assert_eq!(result.total_usage, expected);
    let last_total = last_total(&events);
    assert_eq!(last_total, expected);
}

/// Runs `script`, whose root may load the deferred `mcp__db__query`
/// (echoed) and fork, to the root's answer "done"; returns the harness and
/// the root's and the fork's requests.
async fn root_and_fork(script: &Value) -> (Harness, Vec<ModelRequest>, Vec<ModelRequest>) {
    let (h, config) = with_db_query(script, Arc::new(Echo));
    let agent = h.agent(config);
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let root = h.provider.of_type("root");
    let fork = h.provider.of_type("fork");
    (h, root, fork)
}

#[tokio::test]
async fn a_fork_advertises_what_its_parent_loaded() {
    let (h, root, fork) = root_and_fork(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "FindTool", "input": {"query": "select:mcp__db__query"}}]},
            {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 1}}, {"name": "Task", "input": {"description": "d", "prompt": "query again"}}]},
            {"text": "done"}
        ]}],
        "fork": [{"turns": [
            {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 2}}]},
            {"text": "forked"}
        ]}]
    }}))
    .await;
    assert!(tool_names(&root[1]).contains(&"mcp__db__query".to_owned()));
    assert_eq!(
        tool_names(&fork[0]),
        tool_names(&root[1]),
        "prompt-cache parity"
    );
    assert_eq!(
        tool_results(&fork[1]).last().unwrap(),
        &(false, "mcp__db__query {\"n\":2}".to_owned()),
        "the fork can call what its history shows"
    );
    assert_all_requests_valid(&h);
}

#[tokio::test]
async fn a_fork_started_in_the_turn_that_loads_a_tool_repeats_its_parents_last_request() {
    // FindTool's loads take effect after the turn's calls: the fork shows
    // what its parent's last request showed, and the parent shows the new
    // tool from its next request on.
    let (h, root, fork) = root_and_fork(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [
                {"name": "FindTool", "input": {"query": "select:mcp__db__query"}},
                {"name": "Task", "input": {"description": "d", "prompt": "look"}}
            ]},
            {"text": "done"}
        ]}],
        "fork": [{"turns": [{"text": "forked"}]}]
    }}))
    .await;
    assert!(!tool_names(&root[0]).contains(&"mcp__db__query".to_owned()));
    assert!(tool_names(&root[1]).contains(&"mcp__db__query".to_owned()));
    assert_eq!(
        tool_names(&fork[0]),
        tool_names(&root[0]),
        "prompt-cache parity"
    );
    assert_eq!(fork[0].system, root[0].system);
    let shared = root[0].messages.len();
    assert_eq!(fork[0].cache_prefix, Some(shared));
    assert_eq!(fork[0].messages[..shared], root[0].messages[..]);
    assert_all_requests_valid(&h);
}

/// Every path that ends an agent early or refuses calls leaves a valid
/// conversation in every request and in the root's history.
#[tokio::test]
async fn every_path_leaves_a_valid_history() {
    let glob = json!({"name": "Glob", "input": {"pattern": "*"}});
    let task = |ty: Option<&str>, prompt: &str| {
        let mut input = json!({"description": "d", "prompt": prompt});
        if let Some(ty) = ty {
            input["subagent_type"] = json!(ty);
        }
        json!({"name": "Task", "input": input})
    };
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"text": "a", "tool_calls": [glob, task(None, "fork one"), task(None, "fork two"), {"name": "Nope"}]},
            {"tool_calls": [task(Some("frugal"), "f"), task(Some("counted"), "c"), task(Some("looper"), "l")]},
            {"tool_calls": [glob]},
            {"tool_calls": [glob]}
        ], "summary": "root summary"}],
        "fork": [{"turns": [
            {"tool_calls": [glob, {"name": "Task", "input": {"description": "d", "prompt": "p"}}]},
            {"text": "forked"}
        ], "summary": "fork summary"}],
        "frugal": [{"turns": [
            {"usage": {"input_tokens": 5000, "output_tokens": 1}, "tool_calls": [glob, glob]}
        ]}],
        "counted": [{"turns": [
            {"tool_calls": [glob, glob, glob]},
            {"text": "never"}
        ]}],
        "looper": [{"turns": [{"tool_calls": [glob]}, {"tool_calls": [glob]}], "summary": "looped"}]
    }}));
    let mut frugal = sub_agent("frugal", AgentType::GeneralPurpose);
    frugal.budget.tokens = Some(100);
    let mut counted = sub_agent("counted", AgentType::GeneralPurpose);
    counted.budget.tool_calls = Some(1);
    let mut looper = sub_agent("looper", AgentType::Explore);
    looper.max_turns = Some(1);
    let mut config = AgentConfig::new("root")
        .with_sub_agent(frugal)
        .with_sub_agent(counted)
        .with_sub_agent(looper);
    config.max_turns = 3;
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    let result = result.unwrap();
    assert_eq!(result.status, TaskStatus::MaxTurns);
    assert_eq!(result.output, "root summary");
    let statuses: Vec<TaskStatus> = finished(&events).iter().map(|r| r.status).collect();
    assert_eq!(
        statuses.len(),
        5,
        "two forks and three typed tasks: {statuses:?}"
    );
    assert_all_requests_valid(&h);
    assert_valid(&agent.history(), "the root's history");
}

#[tokio::test]
async fn queued_tasks_that_never_start_time_out_saying_so_and_events_keep_their_order() {
    let journal = Arc::new(Journal::default());
    let tasks: Vec<Value> = (0..3)
        .map(|i| json!({"description": format!("t{i}"), "prompt": format!("task {i}"), "subagent_type": "worker"}))
        .collect();
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [{"name": "MultiTask", "input": {"tasks": tasks}}]},
                {"text": "reported"}
            ]}],
            "worker": [{"turns": [
                {"text": "stuck", "tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]},
                {"delay_ms": 600_000, "text": "never"}
            ]}]
        }}),
        |r| r.with_observer(journal.clone()),
    );
    let mut config = root_with_worker();
    config.subagent.timeout = Duration::from_secs(1);
    config.subagent.max_concurrent = 1;
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    let mut results = finished(&events);
    results.sort_by_key(|r| r.index);
    let statuses: Vec<TaskStatus> = results.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [TaskStatus::TimedOut; 3]);
    assert_eq!(results[0].output, "stuck");
    assert!(
        results[0]
            .error
            .as_deref()
            .unwrap()
            .starts_with("did not finish"),
        "{results:?}"
    );
    for r in &results[1..] {
        assert_eq!((r.turns, r.output.as_str()), (0, ""));
        assert_eq!(
            r.error.as_deref(),
            Some("did not start: it waited in the queue for the whole 1 s budget")
        );
    }
    // Per subagent: started, running (if it ran), its own events, finished;
    // all before the parent's call finishes.
    let call_done = events
        .iter()
        .position(
            |e| matches!(&e.kind, EventKind::ToolCallFinished { tool, .. } if tool == "MultiTask"),
        )
        .unwrap();
    for (n, r) in results.iter().enumerate() {
        let id = r.agent_id.clone().unwrap();
        let own: Vec<(usize, &EventKind)> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.agent == id)
            .map(|(i, e)| (i, &e.kind))
            .collect();
        assert!(matches!(own[0].1, EventKind::SubagentStarted { index, .. } if *index == n));
        let last = own.last().unwrap();
        assert!(matches!(last.1, EventKind::SubagentFinished { .. }));
        assert!(last.0 < call_done);
        let running = own
            .iter()
            .filter(|(_, k)| matches!(k, EventKind::SubagentRunning))
            .count();
        assert_eq!(running, usize::from(n == 0), "{own:?}");
        if n == 0 {
            assert!(matches!(own[1].1, EventKind::SubagentRunning));
        } else {
            assert_eq!(own.len(), 2, "{own:?}");
        }
        let lines = journal.0.lock().unwrap().clone();
        for what in ["start", "end"] {
            let line = format!("{what} {id}");
            assert_eq!(lines.iter().filter(|l| **l == line).count(), 1, "{lines:?}");
        }
    }
}

#[tokio::test]
async fn a_new_query_may_start_right_after_the_last_one_was_dropped() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [
        {"delay_ms": 60_000, "text": "slow"},
        {"text": "fast"}
    ]}]}}));
    let agent = h.agent(AgentConfig::new("root"));
    let first = agent.query("one", QueryOverrides::default());
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(first);
    let result = agent.prompt("two").await.unwrap();
    assert_eq!(result.output, "fast");
    let history = agent.history();
    assert_eq!(
        history.len(),
        2,
        "the dropped query left nothing: {history:?}"
    );
}

#[tokio::test]
async fn an_unlimited_time_budget_does_not_overflow() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("worker")]},
            {"text": "ok"}
        ]}],
        "worker": [{"turns": [{"text": "worked"}]}]
    }}));
    let mut config = root_with_worker();
    config.subagent.timeout = Duration::MAX;
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "ok");
    assert_eq!(finished(&events)[0].status, TaskStatus::Completed);
}

#[tokio::test]
async fn a_fork_advertises_a_loaded_tool_it_may_not_run_and_runs_nothing() {
    let (h, mut config) = with_db_query(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [{"name": "FindTool", "input": {"query": "select:mcp__db__query"}}]},
                {"tool_calls": [{"name": "Task", "input": {"description": "d", "prompt": "query"}}]},
                {"text": "done"}
            ]}],
            "fork": [{"turns": [
                {"tool_calls": [{"name": "mcp__db__query", "input": {"n": 2}}]},
                {"text": "forked"}
            ]}]
        }}),
        Arc::new(Echo),
    );
    config
        .policy
        .derived_blocklist
        .push("mcp__db__query".parse().unwrap());
    let agent = h.agent(config);
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let root = h.provider.of_type("root");
    let fork = h.provider.of_type("fork");
    assert_eq!(
        tool_names(&fork[0]),
        tool_names(&root[1]),
        "prompt-cache parity"
    );
    assert_eq!(
        tool_results(&fork[1]).last().unwrap(),
        &(
            true,
            "tool 'mcp__db__query' is not available to agent root.0001-fork".to_owned()
        )
    );
}
