//! Budgets nest: a child's time and tokens never exceed what its parent
//! has left. A call's deadline is never later than its parent's, and a
//! type's `tokenBudget` counts what its whole subtree spends, so that its
//! children share what it has left.

use std::time::Duration;

use serde_json::{Value, json};
use zr_caps::AgentType;
use zr_engine::{AgentConfig, QueryOverrides, TaskStatus};

use crate::support::{Harness, finished, run, sub_agent};

fn task(subagent_type: &str, prompt: &str) -> Value {
    json!({"name": "Task", "input": {"description": prompt, "prompt": prompt, "subagent_type": subagent_type}})
}

fn usage(tokens: u64) -> Value {
    json!({"input_tokens": tokens, "output_tokens": 0})
}

fn config() -> AgentConfig {
    let mut config = AgentConfig::new("root")
        .with_sub_agent(sub_agent("lead", AgentType::GeneralPurpose))
        .with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    config.policy.max_depth = 2;
    config
}

#[tokio::test]
async fn a_grandchilds_deadline_is_what_its_parent_has_left() {
    // A 1 s budget per call. The lead's call starts at 0 and ends at 1 s;
    // the lead delegates at 0.5 s to a worker that hangs. The worker's
    // call would have had until 1.5 s: it now ends with the lead's, and
    // says so.
    let script = json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task("lead", "lead")]}, {"text": "root done"}]}],
        "lead": [{"turns": [
            {"delay_ms": 500, "tool_calls": [task("worker", "work")]},
            {"delay_ms": 60_000, "text": "lead done"}
        ]}],
        "worker": [{"turns": [{"delay_ms": 60_000, "text": "never"}]}]
    }});
    let h = Harness::new(&script);
    let mut config = config();
    config.subagent.timeout = Duration::from_secs(1);
    let agent = h.agent(config);
    let started = std::time::Instant::now();
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let done = finished(&events);
    let worker = done
        .iter()
        .find(|r| r.agent_type == "worker")
        .expect("the worker ends with a result of its own");
    assert_eq!(worker.status, TaskStatus::TimedOut);
    let error = worker.error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with("did not finish within its parent's remaining 0.5 s budget")
            || error.starts_with("did not finish within its parent's remaining 0.4 s budget"),
        "{error}"
    );
    let lead = done.iter().find(|r| r.agent_type == "lead").unwrap();
    assert_eq!(lead.status, TaskStatus::TimedOut);
}

#[tokio::test]
async fn a_types_token_budget_is_shared_by_its_children() {
    // The lead may spend 5,000 tokens, its subtree included. Its first
    // worker spends 4,000; the second, started with 800 left, is stopped
    // after its first answer (its command not run) instead of getting the
    // lead's whole remainder for itself.
    let script = json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task("lead", "lead")]}, {"text": "root done"}]}],
        "lead": [{"turns": [
            {"usage": usage(100), "tool_calls": [task("worker", "[a] work")]},
            {"usage": usage(100), "tool_calls": [task("worker", "[b] work")]},
            {"usage": usage(100), "text": "lead done"}
        ], "summary": "lead summary"}],
        "worker": [
            {"match": "[a]", "turns": [{"usage": usage(4_000), "text": "a done"}]},
            {"match": "[b]", "turns": [
                {"usage": usage(3_000), "text": "b", "tool_calls": [{"name": "Bash", "input": {"command": "touch b.txt"}}]},
                {"text": "b done"}
            ], "summary": "b summary"}
        ]
    }});
    let h = Harness::new(&script);
    let mut config = config();
    let mut lead = sub_agent("lead", AgentType::GeneralPurpose);
    lead.budget.tokens = Some(5_000);
    config.sub_agents.insert(lead.name.clone(), lead);
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    assert!(
        !h.dir.path().join("b.txt").exists(),
        "the second worker's command ran"
    );
    let mut done = finished(&events);
    done.sort_by_key(|r| r.agent_id.clone());
    let statuses: Vec<(&str, TaskStatus, &str)> = done
        .iter()
        .map(|r| (r.agent_type.as_str(), r.status, r.output.as_str()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("lead", TaskStatus::BudgetExhausted, "lead summary"),
            ("worker", TaskStatus::Completed, "a done"),
            ("worker", TaskStatus::BudgetExhausted, "b summary"),
        ]
    );
}
