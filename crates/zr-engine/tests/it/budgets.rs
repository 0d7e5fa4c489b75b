//! The session budget ([`TreeBudget`]): one counter for the root and
//! every subagent under it; when it is spent, every running agent is
//! asked once, with tools disabled, for a summary, nothing new starts,
//! and the root's result names the budget.

use serde_json::{Value, json};
use zr_caps::AgentType;
use zr_engine::{AgentConfig, BudgetEnded, QueryOverrides, TaskStatus, ToolChoice, TreeBudget};

use crate::support::{Harness, run, sub_agent, tool_results};

fn task(subagent_type: &str, prompt: &str) -> Value {
    json!({"name": "Task", "input": {"description": prompt, "prompt": prompt, "subagent_type": subagent_type}})
}

/// root -> lead -> worker -> deep (depth 3); the deepest agent's first
/// answer spends the budget and asks for a command.
fn tree() -> Value {
    tree_with(&Value::Null)
}

/// [`tree`] with `usage` reported by each delegating answer (`null`: the
/// estimate).
fn tree_with(usage: &Value) -> Value {
    let delegating = |child: &str, summary: &str| {
        json!([{"turns": [
            {"tool_calls": [task(child, "go on")], "usage": usage},
            {"text": "never", "tool_calls": [{"name": "Bash", "input": {"command": "touch after.txt"}}]},
            {"text": "done"}
        ], "summary": summary}])
    };
    json!({"agents": {
        "root": delegating("lead", "root summary"),
        "lead": delegating("worker", "lead summary"),
        "worker": delegating("deep", "worker summary"),
        "deep": [{"turns": [
            {"text": "digging", "usage": {"input_tokens": 10_000, "output_tokens": 4_000},
             "tool_calls": [{"name": "Bash", "input": {"command": "touch spent.txt"}}]},
            {"text": "never"}
        ], "summary": "deep summary"}]
    }})
}

fn config(budget: TreeBudget) -> AgentConfig {
    let mut config = AgentConfig::new("root")
        .with_sub_agent(sub_agent("lead", AgentType::GeneralPurpose))
        .with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose))
        .with_sub_agent(sub_agent("deep", AgentType::GeneralPurpose));
    config.policy.max_depth = 3;
    config.budget = budget;
    config
}

fn tokens(limit: u64) -> TreeBudget {
    TreeBudget {
        tokens: Some(limit),
        cost_usd: None,
    }
}

#[tokio::test]
async fn a_depth_3_tree_stops_with_summaries_when_the_session_budget_is_spent() {
    let h = Harness::new(&tree());
    let agent = h.agent(config(tokens(5_000)));
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    let result = result.unwrap();
    assert_eq!(result.status, TaskStatus::BudgetExhausted);
    assert_stopped_after_the_budget(&h);
    assert_eq!(result.output, "root summary");
    assert_eq!(
        result.budget_ended,
        Some(BudgetEnded::Tokens { limit: 5_000 })
    );
}

/// Every agent of [`tree`] made its one request and then only its summary,
/// each parent's summary request holding its child's summary; nothing
/// ran after the budget ended.
fn assert_stopped_after_the_budget(h: &Harness) {
    // Every agent made its one request and then only its summary: no
    // request after the budget ended but the summaries, each with tools
    // disabled.
    for (agent_type, below) in [
        ("root", Some("lead summary")),
        ("lead", Some("worker summary")),
        ("worker", Some("deep summary")),
        ("deep", None),
    ] {
        let requests = h.provider.of_type(agent_type);
        assert_eq!(requests.len(), 2, "{agent_type}: {requests:?}");
        assert_eq!(requests[0].tool_choice, ToolChoice::Auto, "{agent_type}");
        assert_eq!(requests[1].tool_choice, ToolChoice::None, "{agent_type}");
        // Each parent's summary request holds its child's summary, the
        // child's status budget_exhausted.
        if let Some(summary) = below {
            let results = tool_results(&requests[1]);
            assert_eq!(results.len(), 1, "{agent_type}: {results:?}");
            assert!(results[0].1.contains(summary), "{agent_type}: {results:?}");
            assert!(
                results[0].1.contains("budget_exhausted"),
                "{agent_type}: {results:?}"
            );
        }
    }
    // The deepest agent's call, asked for after the budget ended, did not run.
    let deep = h.provider.of_type("deep");
    assert_eq!(
        tool_results(&deep[1]),
        [(
            true,
            "not run: the session's budget is exhausted".to_owned()
        )]
    );
    assert!(!h.dir.path().join("spent.txt").exists());
    assert!(!h.dir.path().join("after.txt").exists());
}

#[tokio::test]
async fn a_depth_3_tree_stops_with_summaries_when_the_session_cost_budget_is_spent() {
    // Every answer on Sonnet ($3 in, $15 out per million): each delegating
    // answer costs $0.003, the deepest $0.09; the budget is $0.05.
    let h = Harness::new(&tree_with(
        &json!({"input_tokens": 1_000, "output_tokens": 0}),
    ));
    let agent = h.agent(config(TreeBudget {
        tokens: None,
        cost_usd: Some(0.05),
    }));
    let overrides = QueryOverrides {
        model: Some("claude-sonnet-4-5".to_owned()),
        ..QueryOverrides::default()
    };
    let (events, result) = run(agent.query("go", overrides)).await;
    let result = result.unwrap();
    assert_eq!(result.status, TaskStatus::BudgetExhausted);
    assert_eq!(result.output, "root summary");
    assert_eq!(
        result.budget_ended,
        Some(BudgetEnded::CostUsd { limit: 0.05 })
    );
    assert!(
        result
            .budget_ended
            .unwrap()
            .to_string()
            .contains("cost budget ($0.05)"),
        "{:?}",
        result.budget_ended
    );
    assert_stopped_after_the_budget(&h);
    // Each subagent ended budget_exhausted with its summary.
    let mut done: Vec<(String, TaskStatus, String)> = crate::support::finished(&events)
        .into_iter()
        .map(|r| (r.agent_type, r.status, r.output))
        .collect();
    done.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        done,
        [
            (
                "deep".to_owned(),
                TaskStatus::BudgetExhausted,
                "deep summary".to_owned()
            ),
            (
                "lead".to_owned(),
                TaskStatus::BudgetExhausted,
                "lead summary".to_owned()
            ),
            (
                "worker".to_owned(),
                TaskStatus::BudgetExhausted,
                "worker summary".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn a_query_override_replaces_the_configured_budget() {
    // The configured budget would end the tree; the query's is larger.
    let h = Harness::new(&tree());
    let agent = h.agent(config(tokens(5_000)));
    let overrides = QueryOverrides {
        budget: Some(tokens(1_000_000)),
        ..QueryOverrides::default()
    };
    let (_, result) = run(agent.query("go", overrides)).await;
    let result = result.unwrap();
    assert_eq!(result.budget_ended, None);
    assert!(h.dir.path().join("spent.txt").exists());
}

#[tokio::test]
async fn without_a_budget_nothing_is_stopped() {
    let h = Harness::new(&tree());
    let agent = h.agent(config(TreeBudget::default()));
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    let result = result.unwrap();
    assert_eq!(result.budget_ended, None);
    assert_eq!(result.status, TaskStatus::Completed);
    assert_eq!(result.output, "done");
    assert!(h.dir.path().join("spent.txt").exists());
}
