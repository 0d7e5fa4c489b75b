//! Task and MultiTask end to end: queueing, time budget, turn limit,
//! isolation of pools, depth 1, Explore, forks and budgets.

use std::time::Duration;

use serde_json::{Value, json};
use zr_caps::{AgentCapabilities, AgentType, Budget};
use zr_engine::{AgentConfig, EventKind, QueryOverrides};
use zr_types::{ContentBlock, MessageRole};

use crate::check::check;
use crate::support::{
    Harness, finished, last_total, root_with_worker, run, sub_agent, task_call, tool_names,
    tool_results, wait_gone,
};

/// The structured results the root's model got back from its first
/// delegation call.
fn results_for_root(h: &Harness) -> Vec<Value> {
    let second = &h.provider.of_type("root")[1];
    let block = second
        .messages
        .iter()
        .filter(|m| m.role == MessageRole::User)
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .expect("the root got a tool result");
    match &block[..] {
        [zr_types::ToolResultContent::Json { value }] => match value.get("results") {
            Some(Value::Array(results)) => results.clone(),
            _ => vec![value.clone()],
        },
        other => panic!("expected one JSON block, got {other:?}"),
    }
}

fn tasks(n: usize, subagent_type: &str) -> Value {
    let tasks: Vec<Value> = (0..n)
        .map(|i| json!({"description": format!("task {i}"), "prompt": format!("do task number {i}"), "subagent_type": subagent_type}))
        .collect();
    json!({"tasks": tasks})
}

#[tokio::test]
async fn a_multitask_of_five_over_three_slots_queues_the_last_two() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": tasks(5, "worker")}]},
            {"text": "all done"}
        ]}],
        "worker": [{"turns": [
            {"delay_ms": 300, "tool_calls": [{"name": "Bash", "input": {"command": "echo hi"}}]},
            {"text": "worker done"}
        ]}]
    }}));
    let config = root_with_worker();
    let agent = h.agent(config);
    let (events, result) = run(agent.query("fan out", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "all done");

    let position = |pred: &dyn Fn(&EventKind) -> bool| -> Vec<usize> {
        events
            .iter()
            .enumerate()
            .filter(|(_, e)| pred(&e.kind))
            .map(|(i, _)| i)
            .collect()
    };
    let running = position(&|k| matches!(k, EventKind::SubagentRunning));
    let done = position(&|k| matches!(k, EventKind::SubagentFinished { .. }));
    assert_eq!((running.len(), done.len()), (5, 5));
    assert!(running[2] < done[0], "three start at once");
    assert!(
        running[3] > done[0] && running[4] > done[0],
        "the last two wait for a slot"
    );
    // The queue shows in the timing: the fourth starts a model delay later.
    let at = |i: usize| events[i].at;
    assert!(
        at(running[3]) >= at(running[0]) + Duration::from_millis(250),
        "{:?} vs {:?}",
        at(running[3]),
        at(running[0])
    );
    // Each subagent got its own id and started in input order.
    let started: Vec<String> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::SubagentStarted { .. }))
        .map(|e| e.agent.to_string())
        .collect();
    assert_eq!(
        started,
        (1..=5)
            .map(|i| format!("root.{i:04}-worker"))
            .collect::<Vec<_>>()
    );

    let results = results_for_root(&h);
    assert_eq!(results.len(), 5);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["index"], i);
        assert_eq!(r["status"], "completed");
        assert_eq!(r["output"], "worker done");
        assert_eq!(r["turns"], 2);
        assert_eq!(r["agent_id"], format!("root.{:04}-worker", i + 1));
    }
    // Usage of all agents adds up in the total.
    let total = last_total(&events);
    let sub: u64 = finished(&events)
        .iter()
        .map(|r| r.usage.output_tokens)
        .sum();
    assert!(
        total.output_tokens > sub,
        "the total includes the root and every subagent"
    );
}

#[tokio::test]
async fn a_hanging_task_times_out_while_the_others_complete_and_five_results_come_back_in_order() {
    let marker = "sleep 43.21";
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": tasks(5, "worker")}]},
            {"text": "reported"}
        ]}],
        "worker": [
            {"match": "number 2", "turns": [
                {"text": "starting the long job", "tool_calls": [{"name": "Bash", "input": {"command": marker}}]}
            ]},
            {"turns": [{"text": "quick result"}]}
        ]
    }}));
    let mut config = root_with_worker();
    config.subagent.timeout = Duration::from_secs(2);
    let agent = h.agent(config);
    let (_, result) = run(agent.query("fan out", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "reported");
    let results = results_for_root(&h);
    let statuses: Vec<&str> = results
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "completed",
            "completed",
            "timed_out",
            "completed",
            "completed"
        ]
    );
    let indices: Vec<u64> = results
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [0, 1, 2, 3, 4]);
    let hung = &results[2];
    assert_eq!(
        hung["output"], "starting the long job",
        "its partial output is kept"
    );
    assert!(
        hung["error"]
            .as_str()
            .unwrap()
            .starts_with("did not finish within the call's 2 s budget and was stopped"),
        "{hung}"
    );
    assert!(hung["duration_ms"].as_u64().unwrap() >= 2000);
    assert_eq!(
        wait_gone(marker).await,
        Vec::<u32>::new(),
        "its process was killed"
    );
}

#[tokio::test]
async fn a_subagent_at_its_turn_limit_returns_its_summary() {
    let glob = json!({"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]});
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": {"description": "look", "prompt": "look around", "subagent_type": "looper"}}]},
            {"text": "ok"}
        ]}],
        "looper": [{"turns": [glob, glob, glob], "summary": "I globbed twice and found nothing."}]
    }}));
    let mut looper = sub_agent("looper", AgentType::GeneralPurpose);
    looper.max_turns = Some(2);
    // The snapshot: the looper's third request (tool choice None) carries
    // its last tool results and the request for a summary in one user
    // message; the root gets status max_turns, the summary, three turns.
    let run = check(&h, AgentConfig::new("root").with_sub_agent(looper), "go").await;
    insta::assert_snapshot!(run.text);
    let requests = h.provider.of_type("looper");
    let roles: Vec<MessageRole> = requests[2].messages.iter().map(|m| m.role).collect();
    assert!(roles.windows(2).all(|w| w[0] != w[1]), "{roles:?}");
}

#[tokio::test]
async fn a_subagent_calling_a_tool_outside_its_pool_gets_an_error_and_nothing_runs() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": {"description": "read", "prompt": "read it", "subagent_type": "reader"}}]},
            {"text": "ok"}
        ]}],
        "reader": [{"turns": [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch escaped.txt"}}, {"name": "Read", "input": {"file_path": "."}}]},
            {"text": "read"}
        ]}]
    }}));
    let reader =
        sub_agent("reader", AgentType::GeneralPurpose).with_capabilities(AgentCapabilities {
            allowed_tools: Some(vec!["Read".parse().unwrap()]),
            ..AgentCapabilities::default()
        });
    // The snapshot: Bash refused naming the reader, Read runs.
    let run = check(&h, AgentConfig::new("root").with_sub_agent(reader), "go").await;
    insta::assert_snapshot!(run.text);
    assert!(!h.dir.path().join("escaped.txt").exists());
}

#[tokio::test]
async fn a_subagent_cannot_delegate() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("worker")]},
            {"text": "ok"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [
                {"name": "Task", "input": {"description": "deeper", "prompt": "p", "subagent_type": "worker"}},
                {"name": "MultiTask", "input": tasks(2, "worker")}
            ]},
            {"text": "could not"}
        ]}]
    }}));
    // The snapshot: the worker is not offered Task or MultiTask, both
    // calls are refused naming it, and no grandchild starts.
    let run = check(&h, root_with_worker(), "go").await;
    insta::assert_snapshot!(run.text);
}

#[tokio::test]
async fn explore_cannot_write_even_when_the_model_asks() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": {"description": "scout", "prompt": "look", "subagent_type": "scout"}}]},
            {"text": "ok"}
        ]}],
        "scout": [{"turns": [
            {"tool_calls": [
                {"name": "Write", "input": {"file_path": "written.txt", "content": "x"}},
                {"name": "Edit", "input": {"file_path": "keep.txt", "old_string": "keep", "new_string": "lose"}},
                {"name": "Grep", "input": {"pattern": "keep"}}
            ]},
            {"text": "looked"}
        ]}]
    }}));
    std::fs::write(h.dir.path().join("keep.txt"), "keep").unwrap();
    let config = AgentConfig::new("root").with_sub_agent(sub_agent("scout", AgentType::Explore));
    // The snapshot: the scout is offered neither Write nor Edit, both are
    // refused naming it, and Grep runs.
    let run = check(&h, config, "go").await;
    insta::assert_snapshot!(run.text);
    assert!(!h.dir.path().join("written.txt").exists());
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("keep.txt")).unwrap(),
        "keep"
    );
}

#[tokio::test]
async fn a_fork_inherits_the_history_and_cannot_delegate() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"text": "Forking.", "tool_calls": [{"name": "Task", "input": {"description": "recall", "prompt": "Say the codeword."}}]},
            {"text": "ok"}
        ]}],
        "fork": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": tasks(1, "worker")}, {"name": "Task", "input": {"description": "d", "prompt": "p"}}]},
            {"text": "PLUM"}
        ]}]
    }}));
    let agent = h.agent(
        AgentConfig::new("You are the root.")
            .with_sub_agent(sub_agent("worker", AgentType::GeneralPurpose)),
    );
    let (events, result) =
        run(agent.query("The codeword is PLUM.", QueryOverrides::default())).await;
    result.unwrap();
    let root = &h.provider.of_type("root")[0];
    let fork = h.provider.of_type("fork");
    assert_eq!(fork[0].system, root.system);
    assert_eq!(
        tool_names(&fork[0]),
        tool_names(root),
        "a fork sees its parent's advertised pool"
    );
    assert_eq!(
        fork[0].messages[0], root.messages[0],
        "it starts from the parent's history"
    );
    assert_eq!(fork[0].messages[1].role, MessageRole::Assistant);
    let last = fork[0].messages.last().unwrap();
    assert!(
        matches!(&last.content[0], ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == "toolu_01_0")
    );
    assert!(
        matches!(&last.content[1], ContentBlock::Text { text } if text.ends_with("Task: Say the codeword."))
    );
    let results = tool_results(&fork[1]);
    let refused: Vec<_> = results.iter().skip(1).cloned().collect();
    assert_eq!(
        refused,
        vec![
            (
                true,
                "tool 'MultiTask' is not available to agent root.0001-fork".to_owned()
            ),
            (
                true,
                "tool 'Task' is not available to agent root.0001-fork".to_owned()
            ),
        ]
    );
    let result = &results_for_root(&h)[0];
    assert_eq!(
        (result["status"].as_str(), result["output"].as_str()),
        (Some("completed"), Some("PLUM"))
    );
    let started = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::SubagentStarted { .. }))
        .count();
    assert_eq!(started, 1);
}

#[tokio::test]
async fn a_token_budget_ends_a_subagent_with_a_summary() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("frugal")]},
            {"text": "ok"}
        ]}],
        "frugal": [{"turns": [
            {"text": "partial findings", "usage": {"input_tokens": 900, "output_tokens": 200}, "tool_calls": [{"name": "Bash", "input": {"command": "touch spent.txt"}}]},
            {"text": "never"}
        ], "summary": "summary: partial findings"}]
    }}));
    let mut frugal = sub_agent("frugal", AgentType::GeneralPurpose);
    frugal.budget = Budget {
        tokens: Some(1_000),
        tool_calls: None,
    };
    // The snapshot: the second request asks for a summary with tools
    // off (as at max_turns); the call the budget does not run is still
    // reported, as an error; the root gets budget_exhausted and the
    // summary after two turns.
    let run = check(&h, AgentConfig::new("root").with_sub_agent(frugal), "go").await;
    insta::assert_snapshot!(run.text);
    assert!(
        !h.dir.path().join("spent.txt").exists(),
        "calls after the budget do not run"
    );
}

#[tokio::test]
async fn a_tool_call_budget_runs_the_calls_it_allows_and_stops() {
    let touch =
        |n: u32| json!({"name": "Bash", "input": {"command": format!("touch call{n}.txt")}});
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [task_call("counted")]},
            {"text": "ok"}
        ]}],
        "counted": [{"turns": [
            {"text": "working", "tool_calls": [touch(1), touch(2), touch(3)]},
            {"text": "never"}
        ]}]
    }}));
    let mut counted = sub_agent("counted", AgentType::GeneralPurpose);
    counted.budget = Budget {
        tokens: None,
        tool_calls: Some(2),
    };
    // The snapshot: two calls run, the third is refused as over the
    // budget, and the root gets budget_exhausted with what it wrote.
    let run = check(&h, AgentConfig::new("root").with_sub_agent(counted), "go").await;
    insta::assert_snapshot!(run.text);
    assert!(h.dir.path().join("call1.txt").exists() && h.dir.path().join("call2.txt").exists());
    assert!(!h.dir.path().join("call3.txt").exists());
}

#[tokio::test]
async fn input_errors_name_the_task_and_field_and_start_nothing() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [
                {"name": "MultiTask", "input": {"tasks": [{"description": "a", "prompt": "b"}, {"description": "c"}]}},
                {"name": "Task", "input": {"description": "a", "prompt": "b", "subagent_type": "wizard"}}
            ]},
            {"text": "ok"}
        ]}]
    }}));
    // The snapshot: each error names the task and field, and nothing
    // starts.
    let run = check(&h, root_with_worker(), "go").await;
    insta::assert_snapshot!(run.text);
}

#[tokio::test]
async fn with_delegation_off_the_root_has_no_task_tools() {
    let h = Harness::new(&json!({"agents": {"root": [{"turns": [{"text": "alone"}]}]}}));
    let mut config = AgentConfig::new("root");
    config.subagent.enabled = false;
    // The snapshot: the root's tools, without Task and MultiTask.
    let run = check(&h, config, "go").await;
    insta::assert_snapshot!(run.text);
}

#[tokio::test]
async fn cancelling_a_query_stops_its_subagents_and_their_processes() {
    let marker = "sleep 44.0404";
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "MultiTask", "input": tasks(2, "worker")}]},
            {"text": "never"}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": [{"name": "Bash", "input": {"command": format!("{marker} & {marker}; wait")}}]},
            {"text": "never"}
        ]}]
    }}));
    let agent = h.agent(root_with_worker());
    let query = agent.query("go", QueryOverrides::default());
    let mut seen = 0;
    for _ in 0..200 {
        // Two shells, each with two sleeps.
        seen = crate::support::processes_with(marker).len();
        if seen >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        seen >= 4,
        "both subagents' commands started ({seen} processes)"
    );
    query.cancel().await;
    assert_eq!(wait_gone(marker).await, Vec::<u32>::new());
}

/// Records agent starts and ends as the observer sees them.
#[derive(Debug, Default)]
struct Journal(std::sync::Mutex<Vec<String>>);

impl zr_engine::AgentObserver for Journal {
    fn agent_started(
        &self,
        _: &zr_types::SessionId,
        agent: &zr_types::AgentId,
        pool: &zr_resolve::ResolvedPool,
    ) {
        let tools = pool.executable().len();
        self.0
            .lock()
            .unwrap()
            .push(format!("start {agent} ({tools} tools)"));
    }

    fn agent_finished(&self, _: &zr_types::SessionId, agent: &zr_types::AgentId) {
        self.0.lock().unwrap().push(format!("end {agent}"));
    }
}

#[tokio::test]
async fn the_observer_sees_every_subagent_start_and_end_with_its_pool() {
    let journal = std::sync::Arc::new(Journal::default());
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [{"name": "MultiTask", "input": tasks(2, "scout")}]},
                {"text": "ok"}
            ]}],
            "scout": [{"turns": [{"text": "seen"}]}]
        }}),
        |r| r.with_observer(journal.clone()),
    );
    let agent =
        h.agent(AgentConfig::new("root").with_sub_agent(sub_agent("scout", AgentType::Explore)));
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    result.unwrap();
    let scout_tools = h.provider.of_type("scout")[0].tools.len();
    let mut lines = journal.0.lock().unwrap().clone();
    assert_eq!(
        lines.remove(0),
        format!(
            "start root ({} tools)",
            h.provider.of_type("root")[0].tools.len()
        )
    );
    lines.sort();
    assert_eq!(
        lines,
        vec![
            "end root.0001-scout".to_owned(),
            "end root.0002-scout".to_owned(),
            format!("start root.0001-scout ({scout_tools} tools)"),
            format!("start root.0002-scout ({scout_tools} tools)"),
        ]
    );
    let report = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolCallFinished { tool, summary, .. } if tool == "MultiTask" => {
                Some(summary.clone())
            }
            _ => None,
        })
        .unwrap();
    assert!(report.starts_with("2 of 2 tasks completed (budget 300 s)\n[0] task 0 (scout, root.0001-scout): completed after"), "{report}");
}

#[tokio::test]
async fn a_subagent_cut_off_without_an_answer_fails_and_says_why() {
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": {"description": "d", "prompt": "p", "subagent_type": "worker"}}]},
            {"text": "ok"}
        ]}],
        "worker": [{"turns": [{"stop_reason": "max_tokens"}]}]
    }}));
    // The snapshot: the task fails saying its model stopped without an
    // answer or a tool call.
    let run = check(&h, root_with_worker(), "go").await;
    insta::assert_snapshot!(run.text);
}
