//! The Task and MultiTask calls of one model turn start together: they
//! share the agent's `max_concurrent` slots, each keeps its own time
//! budget, and their results come back in call order.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zr_engine::{EventKind, QueryOverrides};
use zr_types::{ContentBlock, MessageRole};

use crate::support::{Harness, root_with_worker, run};

/// A Task call to a `worker` whose prompt is `prompt`.
fn task(prompt: &str) -> Value {
    json!({"name": "Task", "input": {"description": prompt, "prompt": prompt, "subagent_type": "worker"}})
}

/// The root's second request's tool results, in the order it got them:
/// (tool_use_id, the result's JSON).
fn root_results(h: &Harness) -> Vec<(String, Value)> {
    let second = &h.provider.of_type("root")[1];
    second
        .messages
        .iter()
        .filter(|m| m.role == MessageRole::User)
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => match &content[..] {
                [zr_types::ToolResultContent::Json { value }] => {
                    Some((tool_use_id.clone(), value.clone()))
                }
                other => panic!("expected one JSON block, got {other:?}"),
            },
            _ => None,
        })
        .collect()
}

/// The ids of the calls the root's first answer made, in order.
fn call_ids(h: &Harness) -> Vec<String> {
    let second = &h.provider.of_type("root")[1];
    second
        .messages
        .iter()
        .filter(|m| m.role == MessageRole::Assistant)
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn three_task_calls_of_one_second_in_one_turn_finish_in_well_under_two_seconds() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task("job one"), task("job two"), task("job three")]},
            {"text": "all done"}
        ]}],
        "worker": [
            {"match": "job one", "turns": [{"delay_ms": 1000, "text": "one done"}]},
            {"match": "job two", "turns": [{"delay_ms": 1000, "text": "two done"}]},
            {"match": "job three", "turns": [{"delay_ms": 1000, "text": "three done"}]}
        ]
    }}));
    let agent = h.agent(root_with_worker());
    let start = Instant::now();
    let (events, result) = run(agent.query("three jobs", QueryOverrides::default())).await;
    let took = start.elapsed();
    assert_eq!(result.unwrap().output, "all done");
    // One after another they take 3 s; together, a little over 1 s.
    assert!(took >= Duration::from_millis(1000), "{took:?}");
    assert!(took < Duration::from_millis(1800), "{took:?}");
    // All three were running before the first one finished.
    let running = events
        .iter()
        .position(|e| matches!(e.kind, EventKind::SubagentFinished { .. }))
        .map(|first_done| {
            events[..first_done]
                .iter()
                .filter(|e| matches!(e.kind, EventKind::SubagentRunning))
                .count()
        });
    assert_eq!(running, Some(3));
    // Results in call order, each its own call's.
    let results = root_results(&h);
    let outputs: Vec<&str> = results
        .iter()
        .map(|(_, v)| v["output"].as_str().unwrap())
        .collect();
    assert_eq!(outputs, ["one done", "two done", "three done"]);
    let ids: Vec<String> = results.into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, call_ids(&h), "one result per call, in call order");
}

#[tokio::test]
async fn a_multitask_beside_a_task_shares_the_slot_limit() {
    // Two slots: the MultiTask's two tasks and the Task's one cannot all
    // run at once; the last to ask waits for the first to end.
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [
                {"name": "MultiTask", "input": {"tasks": [
                    {"description": "a", "prompt": "job a", "subagent_type": "worker"},
                    {"description": "b", "prompt": "job b", "subagent_type": "worker"}
                ]}},
                task("job c")
            ]},
            {"text": "all done"}
        ]}],
        "worker": [
            {"match": "job a", "turns": [{"delay_ms": 400, "text": "a done"}]},
            {"match": "job b", "turns": [{"delay_ms": 400, "text": "b done"}]},
            {"match": "job c", "turns": [{"delay_ms": 400, "text": "c done"}]}
        ]
    }}));
    let mut config = root_with_worker();
    config.subagent.max_concurrent = 2;
    let agent = h.agent(config);
    let start = Instant::now();
    let (events, result) = run(agent.query("three jobs", QueryOverrides::default())).await;
    let took = start.elapsed();
    assert_eq!(result.unwrap().output, "all done");
    // At most two run at any moment, and the third starts only after one
    // of the first two finished.
    let mut now = 0_i32;
    let mut most = 0;
    for e in &events {
        match e.kind {
            EventKind::SubagentRunning => now += 1,
            EventKind::SubagentFinished { .. } => now -= 1,
            _ => {}
        }
        most = most.max(now);
    }
    assert_eq!(most, 2, "the slot limit holds across the two calls");
    assert!(took >= Duration::from_millis(800), "two rounds: {took:?}");
    // With a third slot, the three run in one round.
    let h3 = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [
                {"name": "MultiTask", "input": {"tasks": [
                    {"description": "a", "prompt": "job a", "subagent_type": "worker"},
                    {"description": "b", "prompt": "job b", "subagent_type": "worker"}
                ]}},
                task("job c")
            ]},
            {"text": "all done"}
        ]}],
        "worker": [{"turns": [{"delay_ms": 400, "text": "done"}]}]
    }}));
    let start = Instant::now();
    let (_, result) = run(h3
        .agent(root_with_worker())
        .query("three jobs", QueryOverrides::default()))
    .await;
    assert_eq!(result.unwrap().output, "all done");
    assert!(
        start.elapsed() < Duration::from_millis(750),
        "{:?}",
        start.elapsed()
    );
    // Results in call order: the MultiTask's, then the Task's.
    let results = root_results(&h);
    assert_eq!(results.len(), 2);
    let multi: Vec<&str> = results[0].1["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["output"].as_str().unwrap())
        .collect();
    assert_eq!(multi, ["a done", "b done"]);
    assert_eq!(results[1].1["output"], "c done");
}

#[tokio::test]
async fn each_call_of_a_turn_keeps_its_own_time_budget() {
    // A 1 s budget per call: the hanging Task times out, the Task beside
    // it that finishes in 0.3 s completes; neither's budget is the other's.
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task("job slow"), task("job quick")]},
            {"text": "reported"}
        ]}],
        "worker": [
            {"match": "job slow", "turns": [{"delay_ms": 60_000, "text": "never"}]},
            {"match": "job quick", "turns": [{"delay_ms": 300, "text": "quick done"}]}
        ]
    }}));
    let mut config = root_with_worker();
    config.subagent.timeout = Duration::from_secs(1);
    let start = Instant::now();
    let (_, result) = run(h.agent(config).query("two jobs", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    assert!(
        start.elapsed() < Duration::from_millis(1900),
        "{:?}",
        start.elapsed()
    );
    let results = root_results(&h);
    let statuses: Vec<&str> = results
        .iter()
        .map(|(_, v)| v["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["timed_out", "completed"]);
    assert_eq!(results[1].1["output"], "quick done");
}
