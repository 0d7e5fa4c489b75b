//! Cost from the one price table: each subagent's finished event and the
//! query's result carry it, per model, and `None` where a model is unknown.

use serde_json::json;
use zr_caps::{AgentType, ModelChoice};
use zr_engine::{AgentConfig, QueryOverrides, cost_of};
use zr_types::Usage;

use crate::support::{Harness, finished, run, sub_agent};

/// One million input and one million output tokens per request.
fn million() -> serde_json::Value {
    json!({"input_tokens": 1_000_000, "output_tokens": 1_000_000,
           "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0})
}

fn script() -> serde_json::Value {
    let tasks = json!({"tasks": [
        {"description": "priced", "prompt": "p", "subagent_type": "sonnet-worker"},
        {"description": "unpriced", "prompt": "p", "subagent_type": "local-worker"},
    ]});
    json!({"agents": {
        "root": [{"turns": [
            {"usage": million(), "tool_calls": [{"name": "MultiTask", "input": tasks}]},
            {"usage": million(), "text": "done"}
        ]}],
        "sonnet-worker": [{"turns": [{"usage": million(), "text": "a"}]}],
        "local-worker": [{"turns": [{"usage": million(), "text": "b"}]}]
    }})
}

fn worker(name: &str, model: &str) -> zr_caps::AgentDefinition {
    let mut definition = sub_agent(name, AgentType::GeneralPurpose);
    definition.model = ModelChoice::Id(model.to_owned());
    definition
}

#[tokio::test]
async fn each_subagent_and_the_query_carry_their_cost_and_unknown_models_have_none() {
    let h = Harness::new(&script());
    let config = AgentConfig::new("root")
        .with_sub_agent(worker("sonnet-worker", "claude-sonnet-4-5"))
        .with_sub_agent(worker("local-worker", "llama3"));
    let agent = h.agent(config);
    let overrides = QueryOverrides {
        model: Some("claude-haiku-4-5".to_owned()),
        ..QueryOverrides::default()
    };
    let (events, result) = run(agent.query("go", overrides)).await;
    let result = result.unwrap();
    let mut done = finished(&events);
    done.sort_by_key(|r| r.index);
    // Sonnet: $3 in + $15 out per million.
    assert_eq!(done[0].cost_usd, Some(18.0));
    assert_eq!(done[1].cost_usd, None, "llama3 has no price");
    // The query's total is unknown once one of its models is.
    assert_eq!(result.cost_usd, None);
    assert_eq!(result.total_usage.input_tokens, 4_000_000);
}

#[tokio::test]
async fn a_query_of_known_models_costs_the_sum_at_each_model_s_price() {
    let script = json!({"agents": {
        "root": [{"turns": [
            {"usage": million(), "tool_calls": [{"name": "Task", "input":
                {"description": "d", "prompt": "p", "subagent_type": "sonnet-worker"}}]},
            {"usage": million(), "text": "done"}
        ]}],
        "sonnet-worker": [{"turns": [{"usage": million(), "text": "a"}]}]
    }});
    let h = Harness::new(&script);
    let config =
        AgentConfig::new("root").with_sub_agent(worker("sonnet-worker", "claude-sonnet-4-5"));
    let overrides = QueryOverrides {
        model: Some("claude-haiku-4-5".to_owned()),
        ..QueryOverrides::default()
    };
    let (events, result) = run(h.agent(config).query("go", overrides)).await;
    let result = result.unwrap();
    assert_eq!(finished(&events)[0].cost_usd, Some(18.0));
    // Haiku: two requests at $1 in + $5 out per million; plus the worker.
    let root = cost_of(
        "claude-haiku-4-5",
        &Usage {
            input_tokens: 2_000_000,
            output_tokens: 2_000_000,
            ..Usage::default()
        },
    );
    assert_eq!(root, Some(12.0));
    assert_eq!(result.cost_usd, Some(30.0));
}
