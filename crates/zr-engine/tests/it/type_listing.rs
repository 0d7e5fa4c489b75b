//! The subagent types reach the model once and bounded: `Task`'s
//! description lists them, `MultiTask`'s refers to it, and a type the
//! listing had no room for still runs when named, and is found through
//! the closest names an unknown type's error gives.

use serde_json::json;
use zr_caps::{AgentDefinition, AgentType};
use zr_engine::{AgentConfig, DEFAULT_TYPE_LISTING_CHARS, QueryOverrides};
use zr_providers::ModelRequest;

use crate::support::{Harness, finished, run, sub_agent, tool_results};

/// `n` types `gen-0000`... with descriptions of 300 characters: far more
/// than the listing holds.
fn generated(n: usize) -> Vec<AgentDefinition> {
    (0..n)
        .map(|i| {
            AgentDefinition::new(
                format!("gen-{i:04}").parse().unwrap(),
                format!(
                    "Generated type {i}: {}",
                    "handles one narrow kind of work. ".repeat(9)
                ),
                format!("You are generated type {i}."),
            )
        })
        .collect()
}

fn description<'a>(request: &'a ModelRequest, tool: &str) -> &'a str {
    &request
        .tools
        .iter()
        .find(|t| t.name.as_str() == tool)
        .unwrap_or_else(|| panic!("{tool} is advertised"))
        .description
}

#[tokio::test]
async fn a_type_cut_from_the_listing_runs_by_name_and_an_unknown_name_finds_it() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [
                {"name": "Task", "input": {"description": "d", "prompt": "p", "subagent_type": "gen-0399"}},
                {"name": "Task", "input": {"description": "d", "prompt": "p", "subagent_type": "gen-399"}}
            ]},
            {"text": "ok"}
        ]}],
        "gen-0399": [{"turns": [{"text": "the last type ran"}]}]
    }}));
    let mut config =
        AgentConfig::new("root").with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    for definition in generated(400) {
        config = config.with_sub_agent(definition);
    }
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    result.unwrap();

    let first = &h.provider.of_type("root")[0];
    let task = description(first, "Task");
    assert!(
        task.contains("\n- gen-0000: "),
        "the first types are listed"
    );
    assert!(!task.contains("gen-0399"), "the last is not");
    assert!(
        task.contains("more types are not listed: the listing is limited to 6000 characters. Any type can be named in subagent_type; naming one that does not exist returns the closest names."),
        "{task}"
    );
    assert!(
        task.chars().count() < DEFAULT_TYPE_LISTING_CHARS + 600,
        "bounded: {}",
        task.len()
    );
    let multi = description(first, "MultiTask");
    assert!(
        multi.ends_with("The subagent types are those listed in the Task tool's description."),
        "{multi}"
    );
    assert!(!multi.contains("gen-0000"), "listed once, in Task");
    // The names are no `enum`: it would repeat them without bound.
    let schema = &first
        .tools
        .iter()
        .find(|t| t.name.as_str() == "Task")
        .unwrap()
        .input_schema;
    assert!(
        schema["properties"]["subagent_type"].get("enum").is_none(),
        "{schema}"
    );

    // The unlisted type ran; the near miss was refused with it among the
    // closest names.
    let results = finished(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].agent_type, "gen-0399");
    assert_eq!(results[0].output, "the last type ran");
    let told = tool_results(&h.provider.of_type("root")[1]);
    assert!(!told[0].0, "{told:?}");
    assert!(told[1].0, "{told:?}");
    assert!(
        told[1].1.starts_with(
            "Task.subagent_type: no subagent type 'gen-399'; the closest of the 401 types: gen-0399, "
        ) && told[1].1.ends_with(". Nothing was started."),
        "{told:?}"
    );
}

#[tokio::test]
async fn types_that_fit_are_listed_once_and_their_names_are_no_enum() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [{"text": "ok"}]}]}}));
    let agent = h.agent(
        AgentConfig::new("root").with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose)),
    );
    agent.prompt("go").await.unwrap();
    let first = &h.provider.of_type("root")[0];
    assert!(
        description(first, "Task")
            .ends_with("\n\nSubagent types (name: when to use it):\n- worker: the worker agent")
    );
    assert!(!description(first, "MultiTask").contains("worker"));
    for tool in ["Task", "MultiTask"] {
        let schema = &first
            .tools
            .iter()
            .find(|t| t.name.as_str() == tool)
            .unwrap()
            .input_schema;
        assert!(!schema.to_string().contains("enum"), "{tool}: {schema}");
    }
}

#[tokio::test]
async fn the_types_listed_first_come_first_and_are_kept_when_the_listing_is_cut() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [{"text": "ok"}]}]}}));
    let mut config = AgentConfig::new("root");
    for definition in generated(400) {
        config = config.with_sub_agent(definition);
    }
    // The project's own types, as the `zr` command passes them; a name
    // that is no type is skipped, a repeated one listed once.
    config.listed_first = ["gen-0399", "nope", "gen-0200", "gen-0399"]
        .iter()
        .map(|n| n.parse().unwrap())
        .collect();
    let agent = h.agent(config);
    agent.prompt("go").await.unwrap();
    let task = description(&h.provider.of_type("root")[0], "Task").to_owned();
    let at = |name: &str| task.find(&format!("\n- {name}: "));
    assert_eq!(task.matches("\n- gen-0399: ").count(), 1);
    assert!(
        at("gen-0399") < at("gen-0200") && at("gen-0200") < at("gen-0000"),
        "{task}"
    );
    assert!(
        at("gen-0000").is_some() && at("gen-0398").is_none(),
        "then by name, cut"
    );
    assert!(!task.contains("nope"));
}

#[tokio::test]
async fn without_task_multitask_carries_the_listing() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [{"text": "ok"}]}]}}));
    let mut config =
        AgentConfig::new("root").with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose));
    config.capabilities.disallowed_tools = Some(vec!["Task".parse().unwrap()]);
    let agent = h.agent(config);
    agent.prompt("go").await.unwrap();
    let first = &h.provider.of_type("root")[0];
    assert!(first.tools.iter().all(|t| t.name.as_str() != "Task"));
    let multi = description(first, "MultiTask");
    assert!(
        multi.ends_with("\n\nSubagent types (name: when to use it):\n- worker: the worker agent"),
        "{multi}"
    );
}
