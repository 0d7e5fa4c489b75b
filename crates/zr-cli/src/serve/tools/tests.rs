//! The tools' names and the tasks their arguments make.

use std::collections::BTreeMap;

use serde_json::json;
use zr_caps::AgentDefinition;
use zr_types::AgentName;

use super::{AgentTools, DEFAULT_PROMPT, Served, task_of};

fn name(s: &str) -> AgentName {
    s.parse().expect("a valid agent name")
}

fn explore() -> Served {
    Served {
        agent_type: name("explore"),
        takes_schema: true,
    }
}

fn args(value: serde_json::Value) -> rmcp::model::JsonObject {
    match value {
        serde_json::Value::Object(map) => map,
        _ => panic!("arguments are an object"),
    }
}

#[test]
fn tools_are_the_types_in_snake_case_and_map_back() {
    let mut types = BTreeMap::new();
    for n in ["code-reviewer", "explore", "net-4.8"] {
        types.insert(
            name(n),
            AgentDefinition::new(name(n), format!("{n} does things"), "p"),
        );
    }
    let tools = AgentTools::new(&types);
    let names: Vec<&str> = tools.list().iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["code_reviewer", "explore", "net_4_8"]);
    assert_eq!(
        tools.served("code_reviewer").map(|s| &s.agent_type),
        Some(&name("code-reviewer"))
    );
    assert_eq!(tools.served("code-reviewer"), None);
    let first = &tools.list()[0];
    assert_eq!(first.title.as_deref(), Some("code-reviewer"));
    assert!(
        first.description.as_deref().is_some_and(
            |d| d.starts_with("code-reviewer does things (zr subagent 'code-reviewer'")
        )
    );
    assert_eq!(
        first.input_schema.get("additionalProperties"),
        Some(&json!(false))
    );
}

#[test]
fn a_call_without_arguments_runs_the_type_on_its_own_instructions() {
    let task = task_of(&explore(), None).expect("no arguments is a task");
    assert_eq!(task.prompt, DEFAULT_PROMPT);
    assert_eq!(task.description, "explore task");
}

#[test]
fn the_description_defaults_to_the_prompts_first_words() {
    let a = args(json!({"prompt": "Find every caller of resolve in the crate please"}));
    let task = task_of(&explore(), Some(&a)).expect("a task");
    assert_eq!(task.description, "Find every caller of resolve");
    assert_eq!(
        task.prompt,
        "Find every caller of resolve in the crate please"
    );
}

#[test]
fn bad_arguments_name_the_field() {
    let cases = [
        (json!({"prompt": 3}), "prompt: expected a string, got 3"),
        (json!({"prompt": "  "}), "prompt: must not be empty"),
        (
            json!({"subagent_type": "x"}),
            "unknown argument 'subagent_type'; arguments: prompt, description, output_schema",
        ),
    ];
    for (input, message) in cases {
        let a = args(input);
        assert_eq!(task_of(&explore(), Some(&a)), Err(message.to_owned()));
    }
}

#[test]
fn a_type_with_an_object_schema_advertises_it_and_takes_none_from_a_call() {
    let mut counter = AgentDefinition::new(name("counter"), "Counts", "p");
    counter.output_schema =
        Some(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
    let mut types = BTreeMap::new();
    types.insert(name("counter"), counter);
    types.insert(
        name("explore"),
        AgentDefinition::new(name("explore"), "Looks", "p"),
    );
    let tools = AgentTools::new(&types);
    let [counter, explore] = tools.list() else {
        panic!("two tools");
    };
    assert_eq!(
        counter.output_schema.as_deref().and_then(|s| s.get("type")),
        Some(&json!("object"))
    );
    assert!(
        counter.input_schema["properties"]
            .get("output_schema")
            .is_none()
    );
    assert!(explore.output_schema.is_none());
    assert!(
        explore.input_schema["properties"]
            .get("output_schema")
            .is_some()
    );
    let served = tools.served("counter").expect("the counter tool");
    let a = args(json!({"output_schema": {"type": "string"}}));
    assert_eq!(
        task_of(served, Some(&a)),
        Err("unknown argument 'output_schema'; arguments: prompt, description".to_owned())
    );
    let a = args(json!({"prompt": "count", "output_schema": {"type": "string"}}));
    let task = task_of(tools.served("explore").expect("explore"), Some(&a)).expect("a task");
    assert_eq!(task.output_schema, Some(json!({"type": "string"})));
}
