//! A Task call's own `model` (Claude Code's Task input): it picks a typed
//! subagent's model over its type's `model`, an alias resolved; a fork
//! refuses one (it runs on its parent's model); the host's
//! [`ModelCheck`] refuses a model before anything starts.

use std::sync::Arc;

use serde_json::{Value, json};
use zr_caps::{AgentDefinition, AgentType, ModelChoice};
use zr_engine::{AgentConfig, ModelCheck, QueryOverrides};

use crate::support::{Harness, run, sub_agent, tool_results};

#[derive(Debug)]
struct NoWhere;

impl ModelCheck for NoWhere {
    fn check(&self, definition: &AgentDefinition, model: &str) -> Result<(), String> {
        match model.strip_prefix("nowhere:") {
            Some(_) => Err(format!(
                "{}: there is no provider 'nowhere'",
                definition.name
            )),
            None => Ok(()),
        }
    }
}

fn writer(input: Value) -> Value {
    let mut task = json!({"description": "write", "prompt": "Write.", "subagent_type": "writer"});
    if let (Some(task), Some(extra)) = (task.as_object_mut(), input.as_object()) {
        task.extend(extra.clone());
    }
    task
}

#[tokio::test]
async fn a_calls_model_replaces_its_types_and_a_fork_or_a_refused_model_starts_nothing() {
    let script = json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": {"tasks": [
                writer(json!({"model": "haiku"})),
                writer(json!({})),
                writer(json!({"model": "local:qwen3"}))
            ]}}]},
            {"tool_calls": [{"name": "Task", "input": {"description": "fork", "prompt": "Go.", "model": "haiku"}}]},
            {"tool_calls": [{"name": "Task", "input": writer(json!({"model": "nowhere:x"}))}]},
            {"text": "done"}
        ]}],
        "writer": [{"turns": [{"text": "written"}]}]
    }});
    let h = Harness::new(&script);
    let mut writer = sub_agent("writer", AgentType::GeneralPurpose);
    writer.model = ModelChoice::Id("sonnet".to_owned());
    let mut config = AgentConfig::new("root").with_sub_agent(writer);
    config.model_check = Some(Arc::new(NoWhere));
    let agent = h.agent(config);
    let (_, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let mut models: Vec<String> = h
        .provider
        .of_type("writer")
        .iter()
        .map(|r| r.model.to_string())
        .collect();
    models.sort();
    assert_eq!(
        models,
        ["claude-haiku-4-5", "claude-sonnet-4-5", "local:qwen3"],
        "the call's alias resolved, the type's without one, a profile's id as written"
    );
    let root = h.provider.of_type("root");
    let fork = tool_results(&root[2]).pop().unwrap();
    assert!(
        fork.0
            && fork
                .1
                .contains("Task.model: a fork runs on its parent's model"),
        "{fork:?}"
    );
    let refused = tool_results(&root[3]).pop().unwrap();
    assert!(
        refused.0
            && refused.1.contains(
                "Task.model: writer: there is no provider 'nowhere'. Nothing was started."
            ),
        "{refused:?}"
    );
    assert_eq!(h.provider.of_type("fork").len(), 0);
    assert_eq!(h.provider.of_type("writer").len(), 3);
}
