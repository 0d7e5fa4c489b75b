//! Tests of Task and MultiTask input checking, statuses and the report.

use serde_json::json;
use zr_types::{AgentId, Usage};

use super::*;

fn types() -> Types {
    let worker = AgentDefinition::new("worker".parse().unwrap(), "works", "You work.");
    [(worker.name.clone(), worker)].into_iter().collect()
}

fn call(input: Value) -> ToolCall {
    ToolCall {
        id: "toolu_1".to_owned(),
        name: "MultiTask".to_owned(),
        input,
    }
}

fn parse_multi(input: Value) -> Result<Vec<TaskInput>, String> {
    parse(&types(), &call(input), true)
}

#[test]
fn tasks_parse_in_order_with_and_without_a_type() {
    let tasks = parse_multi(json!({"tasks": [
        {"description": "a", "prompt": "do a", "subagent_type": "worker"},
        {"description": "b", "prompt": "do b"}
    ]}))
    .unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(
        tasks[0].subagent_type.as_ref().map(AgentName::as_str),
        Some("worker")
    );
    assert_eq!(
        (tasks[1].description.as_str(), tasks[1].prompt.as_str()),
        ("b", "do b")
    );
    assert!(tasks[1].subagent_type.is_none(), "no type is a fork");
}

#[test]
fn errors_name_the_task_index_and_the_field() {
    let cases = [
        (json!({}), "MultiTask.tasks: required"),
        (
            json!({"tasks": []}),
            "MultiTask.tasks: expected 1 to 10 tasks, got 0",
        ),
        (
            json!({"tasks": "x"}),
            "MultiTask.tasks: expected an array, got \"x\"",
        ),
        (
            json!({"tasks": [{"description": "a", "prompt": "b"}], "extra": 1}),
            "MultiTask: unknown field 'extra'; fields: tasks",
        ),
        (
            json!({"tasks": [{"description": "a", "prompt": "b"}, 7]}),
            "MultiTask.tasks[1]: expected an object with description, prompt, subagent_type, output_schema, model",
        ),
        (
            json!({"tasks": [{"description": "", "prompt": "b"}]}),
            "MultiTask.tasks[0].description: must not be empty",
        ),
        (
            json!({"tasks": [{"description": "a", "prompt": 3}]}),
            "MultiTask.tasks[0].prompt: expected a string, got 3",
        ),
        (
            json!({"tasks": [{"description": "a", "prompt": "b", "mode": "x"}]}),
            "MultiTask.tasks[0]: unknown field 'mode'; fields: description, prompt, subagent_type, output_schema, model",
        ),
        (
            json!({"tasks": [{"description": "a", "prompt": "b", "model": "haiku"}]}),
            "MultiTask.tasks[0].model: a fork runs on its parent's model (it continues its parent's conversation); name a subagent_type to choose a model",
        ),
        (
            json!({"tasks": [{"description": "a", "prompt": "b", "subagent_type": "worker", "model": 3}]}),
            "MultiTask.tasks[0].model: expected a string, got 3",
        ),
        (
            json!({"tasks": [{"description": "a", "prompt": "b", "subagent_type": "Nope"}]}),
            "MultiTask.tasks[0].subagent_type: no subagent type 'Nope'; available: worker",
        ),
        (
            json!({"tasks": [{"description": "a", "prompt": "b", "output_schema": "object"}]}),
            "MultiTask.tasks[0].output_schema: expected a JSON Schema (an object), got \"object\"",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(
            parse_multi(input.clone()).err().as_deref(),
            Some(expected),
            "{input}"
        );
    }
    let eleven: Vec<Value> = (0..11)
        .map(|_| json!({"description": "a", "prompt": "b"}))
        .collect();
    assert_eq!(
        parse_multi(json!({"tasks": eleven})).err().as_deref(),
        Some("MultiTask.tasks: expected 1 to 10 tasks, got 11")
    );
}

#[test]
fn without_types_the_error_says_to_fork() {
    let input = json!({"description": "a", "prompt": "b", "subagent_type": "worker"});
    let err = parse(&Types::new(), &call(input), false).unwrap_err();
    assert_eq!(
        err,
        "Task.subagent_type: no subagent type 'worker'; none are defined; leave subagent_type out to fork"
    );
}

#[test]
fn statuses_serialise_as_the_model_reads_them() {
    for status in [
        TaskStatus::Completed,
        TaskStatus::TimedOut,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
        TaskStatus::MaxTurns,
        TaskStatus::Denied,
        TaskStatus::BudgetExhausted,
    ] {
        assert_eq!(
            serde_json::to_value(status).unwrap(),
            json!(status.as_str())
        );
    }
}

#[test]
fn the_report_gives_each_task_a_line_in_order() {
    let result = |index: usize, status: TaskStatus, output: &str| TaskResult {
        index,
        agent_id: Some(AgentId::root().child(u32::try_from(index).unwrap() + 1, "worker")),
        agent_type: "worker".to_owned(),
        description: format!("task {index}"),
        status,
        output: output.to_owned(),
        value: None,
        turns: 2,
        usage: Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_input_tokens: 100,
            cache_creation_input_tokens: 1,
        },
        cost_usd: None,
        duration: Duration::from_millis(1500),
        error: (status != TaskStatus::Completed).then(|| "it stopped".to_owned()),
        worktree: None,
    };
    let text = report(
        &[
            result(0, TaskStatus::Completed, "fine\nsecond line"),
            result(1, TaskStatus::TimedOut, ""),
        ],
        Duration::from_secs(300),
    );
    assert_eq!(
        text,
        "1 of 2 tasks completed (budget 300 s)\n\
         [0] task 0 (worker, root.0001-worker): completed after 1.5 s, 2 turns, 116 tokens\n    > fine\n    > second line\n\
         [1] task 1 (worker, root.0002-worker): timed_out after 1.5 s, 2 turns, 116 tokens\n    it stopped\n"
    );
}

#[test]
fn the_report_survives_huge_usage_figures() {
    let huge = TaskResult {
        index: 0,
        agent_id: None,
        agent_type: "worker".to_owned(),
        description: "d".to_owned(),
        status: TaskStatus::Completed,
        output: String::new(),
        value: None,
        turns: 1,
        usage: Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
            ..Usage::default()
        },
        cost_usd: None,
        duration: Duration::ZERO,
        error: None,
        worktree: None,
    };
    let text = report(&[huge], Duration::from_secs(1));
    assert!(text.contains(&format!("{} tokens", u64::MAX)), "{text}");
}
