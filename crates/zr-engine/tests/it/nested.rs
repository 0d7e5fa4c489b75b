//! Nested delegation: `max_depth` above 1 lets subagents delegate, down
//! to the limit; a type's `maxDepth` lowers it; `Agent(type)` in a type's
//! `tools` restricts what it may start.

use serde_json::{Value, json};
use zr_caps::{AgentCapabilities, AgentType};
use zr_engine::{AgentConfig, EventKind, QueryOverrides};

use crate::support::{Harness, run, sub_agent, tool_names, tool_results};

/// A Task call to `subagent_type` with prompt `prompt`.
fn task(subagent_type: &str, prompt: &str) -> Value {
    json!({"name": "Task", "input": {"description": prompt, "prompt": prompt, "subagent_type": subagent_type}})
}

/// A session of a `lead` and a `worker` type (both general-purpose) at
/// `max_depth`.
fn config(max_depth: u32) -> AgentConfig {
    let mut config = AgentConfig::new("root")
        .with_sub_agent(sub_agent("lead", AgentType::GeneralPurpose))
        .with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    config.policy.max_depth = max_depth;
    config
}

/// The ids of the subagents started, in order, with their parents.
fn started(events: &[zr_engine::Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubagentStarted { parent, .. } => {
                Some((e.agent.to_string(), parent.to_string()))
            }
            _ => None,
        })
        .collect()
}

/// A script: root -> lead -> worker -> (the worker tries to go deeper).
fn chain() -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [task("lead", "lead the job")]},
            {"text": "root done"}
        ]}],
        "lead": [{"turns": [
            {"tool_calls": [task("worker", "work on it")]},
            {"text": "lead done"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [task("worker", "deeper")]},
            {"text": "worker done"}
        ]}]
    }})
}

#[tokio::test]
async fn at_max_depth_2_a_subagent_delegates_and_its_child_cannot() {
    let h = Harness::new(&chain());
    let (events, result) = run(h.agent(config(2)).query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "root done");
    assert_eq!(
        started(&events),
        [
            ("root.0001-lead".to_owned(), "root".to_owned()),
            (
                "root.0001-lead.0002-worker".to_owned(),
                "root.0001-lead".to_owned()
            ),
        ]
    );
    // The lead's model saw Task and MultiTask; the worker's (at the
    // limit) did not, and its call was refused.
    let lead = &h.provider.of_type("lead")[0];
    assert!(tool_names(lead).contains(&"Task".to_owned()));
    assert!(tool_names(lead).contains(&"MultiTask".to_owned()));
    let worker = h.provider.of_type("worker");
    assert!(
        !tool_names(&worker[0])
            .iter()
            .any(|t| t == "Task" || t == "MultiTask")
    );
    assert_eq!(
        tool_results(&worker[1]),
        [(
            true,
            "tool 'Task' is not available to agent root.0001-lead.0002-worker".to_owned()
        )]
    );
    // The lead got its worker's conclusion as a tool result.
    let lead_results = tool_results(&h.provider.of_type("lead")[1]);
    assert_eq!(lead_results.len(), 1);
    assert!(
        lead_results[0].1.contains("worker done"),
        "{lead_results:?}"
    );
}

#[tokio::test]
async fn at_the_default_depth_the_lead_cannot_delegate() {
    let h = Harness::new(&chain());
    let (events, result) = run(h.agent(config(1)).query("go", QueryOverrides::default())).await;
    result.unwrap();
    assert_eq!(started(&events).len(), 1, "no grandchild");
    assert!(!tool_names(&h.provider.of_type("lead")[0]).contains(&"Task".to_owned()));
}

#[tokio::test]
async fn a_types_max_depth_lowers_the_limit_for_its_subtree() {
    let h = Harness::new(&chain());
    let mut config = config(3);
    let mut lead = sub_agent("lead", AgentType::GeneralPurpose);
    // Its subagents may not delegate: one level below it.
    lead.max_depth = Some(1);
    config = config.with_sub_agent(lead);
    let (events, result) = run(h.agent(config).query("go", QueryOverrides::default())).await;
    result.unwrap();
    assert_eq!(
        started(&events).len(),
        2,
        "root -> lead -> worker, no deeper"
    );
    let worker = &h.provider.of_type("worker")[0];
    assert!(!tool_names(worker).contains(&"Task".to_owned()));
}

#[tokio::test]
async fn agent_types_in_tools_restrict_what_an_agent_may_start() {
    let h = Harness::new(&json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [task("lead", "lead the job")]},
            {"text": "root done"}
        ]}],
        "lead": [{"turns": [
            {"tool_calls": [
                task("lead", "another lead"),
                {"name": "Task", "input": {"description": "f", "prompt": "a fork"}},
                task("worker", "work on it")
            ]},
            {"text": "lead done"}
        ]}],
        "worker": [{"turns": [{"text": "worker done"}]}]
    }}));
    let mut config = config(2);
    let mut lead = sub_agent("lead", AgentType::GeneralPurpose);
    // `tools: Read, Agent(worker)` in its file.
    lead.capabilities = AgentCapabilities {
        allowed_tools: Some(vec!["Read".parse().unwrap(), "Task".parse().unwrap()]),
        ..AgentCapabilities::default()
    };
    lead.tool_rules = vec!["Task(worker)".parse().unwrap()];
    config = config.with_sub_agent(lead);
    let (events, result) = run(h.agent(config).query("go", QueryOverrides::default())).await;
    result.unwrap();
    let results = tool_results(&h.provider.of_type("lead")[1]);
    assert!(
        results[0].0
            && results[0]
                .1
                .contains("no subagent type 'lead'; available: worker"),
        "{results:?}"
    );
    assert!(
        results[1].0
            && results[1]
                .1
                .contains("may start only the types worker, not a fork"),
        "{results:?}"
    );
    assert!(
        !results[2].0 && results[2].1.contains("worker done"),
        "{results:?}"
    );
    assert_eq!(started(&events).len(), 2, "the lead and its one worker");
}
