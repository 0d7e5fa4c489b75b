//! Compaction: above the threshold the older history is replaced by a
//! summary from one tools-disabled request; below it nothing changes; a
//! failed summary request keeps the history; oversized tool results are
//! cut with a marker naming a file that holds them whole.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream;
use serde_json::{Value, json};
use zr_caps::{AgentCapabilities, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, CompactionConfig, Event, EventKind, ModelEvent, ModelProvider,
    ModelRequest, ModelResponse, ModelStream, QueryOverrides, QueryResult, RuntimeEnvironment,
    TaskStatus, ToolChoice,
};
use zr_tools::BuiltinTools;
use zr_types::{
    BoxFuture, ContentBlock, Message, MessageRole, StopReason, ToolCall, ToolContext, ToolError,
    ToolHandler, ToolOutput, Usage,
};

use crate::support::{Echo, Harness, assert_all_requests_valid, assert_valid, custom, run, text};

const SUMMARY: &str = "SUMMARY: probe 1 ran.";

fn usage(input: u64, output: u64) -> Value {
    json!({"input_tokens": input, "output_tokens": output})
}

/// Four turns calling `probe` three times; the second reports 1,530 tokens
/// of context.
fn probe_script(summary: Option<&str>) -> Value {
    let mut root = json!({"turns": [
        {"text": "one", "tool_calls": [{"name": "probe", "input": {"n": 1}}], "usage": usage(300, 20)},
        {"text": "two", "tool_calls": [{"name": "probe", "input": {"n": 2}}], "usage": usage(1500, 30)},
        {"text": "three", "tool_calls": [{"name": "probe", "input": {"n": 3}}], "usage": usage(400, 10)},
        {"text": "done", "usage": usage(100, 5)}
    ]});
    if let Some(summary) = summary {
        root["summary"] = json!(summary);
    }
    json!({"agents": {"root": [root]}})
}

fn probe_harness(summary: Option<&str>, compaction: CompactionConfig) -> (Harness, AgentConfig) {
    let probe = custom("probe", true);
    let h = Harness::with_runtime(&probe_script(summary), |r| {
        r.with_tool(Arc::clone(&probe), Arc::new(Echo))
    });
    let mut config = AgentConfig::new("root");
    config.capabilities = AgentCapabilities {
        custom_tools: Some(vec![probe]),
        ..AgentCapabilities::default()
    };
    config.compaction = compaction;
    (h, config)
}

fn low_threshold() -> CompactionConfig {
    CompactionConfig {
        threshold: 1000,
        keep_recent: 2,
        ..CompactionConfig::default()
    }
}

fn choices(h: &Harness) -> Vec<ToolChoice> {
    h.provider
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.tool_choice)
        .collect()
}

fn requests(h: &Harness) -> Vec<ModelRequest> {
    h.provider.requests.lock().unwrap().clone()
}

fn tool_result_of(message: &Message) -> Vec<String> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
            _ => None,
        })
        .collect()
}

/// Runs the probes with a low threshold, the summary request answered
/// with `summary` (or failed if `None`): checks the query ends with `done`
/// after four turns, with exactly one tools-disabled request, right after
/// the turn that went over the threshold.
async fn run_probes_over_the_threshold(
    summary: Option<&str>,
) -> (Harness, Agent, Vec<Event>, QueryResult) {
    let (h, config) = probe_harness(summary, low_threshold());
    let agent = h.agent(config);
    let (events, result) = run(agent.query("run the probes", QueryOverrides::default())).await;
    let result = result.unwrap();
    assert_eq!((result.output.as_str(), result.turns), ("done", 4));
    assert_eq!(
        choices(&h),
        vec![
            ToolChoice::Auto,
            ToolChoice::Auto,
            ToolChoice::None,
            ToolChoice::Auto,
            ToolChoice::Auto
        ]
    );
    (h, agent, events, result)
}

#[tokio::test]
async fn above_the_threshold_the_older_history_becomes_one_summary() {
    let (h, agent, events, result) = run_probes_over_the_threshold(Some(SUMMARY)).await;
    let reqs = requests(&h);
    let (second, summary_request, third, fourth) = (&reqs[1], &reqs[2], &reqs[3], &reqs[4]);

    // The summary request carries the older history (the prompt, the first
    // call and its result: the kept part starts at the second call) and
    // the summary prompt after the result, in the same user message.
    assert_eq!(summary_request.messages.len(), 3);
    assert_eq!(summary_request.messages[..2], second.messages[..2]);
    let last = &summary_request.messages[2];
    assert_eq!(last.role, MessageRole::User);
    assert_eq!(last.content[0], second.messages[2].content[0]);
    match &last.content[1..] {
        [ContentBlock::Text { text }] => assert!(
            text.starts_with("Your context is nearly full: the conversation up to here will be replaced by the summary you write now"),
            "{text}"
        ),
        other => panic!("not one summary prompt: {other:?}"),
    }
    assert_eq!(summary_request.tools.len(), second.tools.len());

    // The next request: the summary, then the second call and its result
    // verbatim.
    assert_eq!(third.messages.len(), 3);
    assert_eq!(
        third.messages[0],
        Message {
            role: MessageRole::User,
            content: vec![ContentBlock::Text {
                text: format!(
                    "[Summary of the earlier conversation, written by you when the context was nearly full. The messages it replaces are gone; what follows it is verbatim.]\n\n{SUMMARY}"
                )
            }]
        }
    );
    assert_eq!(
        third.messages[1].content,
        vec![
            ContentBlock::Text { text: "two".into() },
            ContentBlock::ToolUse {
                id: "toolu_02_0".into(),
                name: "probe".into(),
                input: json!({"n": 2})
            }
        ]
    );
    assert_eq!(tool_result_of(&third.messages[2]), vec!["toolu_02_0"]);
    // Below the threshold again: the last request only grows.
    assert_eq!(fourth.messages[..3], third.messages[..]);
    assert_all_requests_valid(&h);

    // One event; the summary request's usage counts for the agent but is
    // no turn.
    let compactions: Vec<(u64, u64, usize, Usage)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Compacted {
                before_tokens,
                after_tokens,
                messages,
                usage,
            } => Some((*before_tokens, *after_tokens, *messages, *usage)),
            _ => None,
        })
        .collect();
    assert_eq!(compactions.len(), 1, "{compactions:?}");
    let (before, after, messages, summary_usage) = compactions[0];
    assert_eq!((before, messages), (1530, 3));
    assert!(after < before, "after {after}");
    // The scripted estimate: a quarter of the reply's characters.
    assert_eq!(
        summary_usage.output_tokens,
        SUMMARY.len().div_ceil(4) as u64
    );
    let turns = Usage {
        input_tokens: 300 + 1500 + 400 + 100,
        output_tokens: 20 + 30 + 10 + 5,
        ..Usage::default()
    };
    assert_eq!(result.usage, turns.plus(summary_usage));
    assert_eq!(result.total_usage, result.usage);

    // The root keeps the compacted conversation for its next query.
    let history = agent.history();
    assert_eq!(history.len(), 6);
    assert_eq!(history[0], third.messages[0]);
    assert_valid(&history, "the root's history");
}

#[tokio::test]
async fn below_the_threshold_nothing_changes() {
    let (h, config) = probe_harness(Some(SUMMARY), CompactionConfig::default());
    let agent = h.agent(config);
    let (events, result) = run(agent.query("run the probes", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    assert_eq!(choices(&h), vec![ToolChoice::Auto; 4]);
    let reqs = requests(&h);
    for pair in reqs.windows(2) {
        let (earlier, later) = (&pair[0].messages, &pair[1].messages);
        assert_eq!(later.len(), earlier.len() + 2);
        assert_eq!(later[..earlier.len()], earlier[..]);
    }
    assert!(
        !events.iter().any(|e| matches!(
            e.kind,
            EventKind::Compacted { .. } | EventKind::CompactionFailed { .. }
        )),
        "no compaction event"
    );
    assert_eq!(agent.history().len(), 8);
}

#[tokio::test]
async fn a_failed_summary_request_keeps_the_history_and_the_agent_goes_on() {
    // No `summary` in the script: the scripted provider fails the
    // tools-disabled request.
    let (h, agent, events, result) = run_probes_over_the_threshold(None).await;
    let reqs = requests(&h);
    // The third turn's request carries the whole history.
    assert_eq!(reqs[3].messages.len(), 5);
    assert_eq!(reqs[3].messages[..3], reqs[1].messages[..]);
    assert_all_requests_valid(&h);
    let failures: Vec<(u64, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::CompactionFailed {
                before_tokens,
                reason,
            } => Some((*before_tokens, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].0, 1530);
    assert!(
        failures[0]
            .1
            .contains("tools are disabled and the script has no 'summary'"),
        "{}",
        failures[0].1
    );
    // Only the turns' usage: the failed request reported none.
    assert_eq!(
        result.usage,
        Usage {
            input_tokens: 2300,
            output_tokens: 65,
            ..Usage::default()
        }
    );
    assert_eq!(agent.history().len(), 8);
}

#[tokio::test]
async fn a_summary_request_that_keeps_failing_is_tried_again_ever_more_rarely() {
    // Every turn leaves the context over the threshold; the script has no
    // `summary`, so every summary request fails.
    let probe = custom("probe", true);
    let mut turns: Vec<Value> = (1..=7)
        .map(|n| json!({"text": format!("step {n}"), "tool_calls": [{"name": "probe", "input": {"n": n}}], "usage": usage(1500, 10)}))
        .collect();
    turns.push(json!({"text": "done", "usage": usage(1500, 10)}));
    let h = Harness::with_runtime(&json!({"agents": {"root": [{"turns": turns}]}}), |r| {
        r.with_tool(Arc::clone(&probe), Arc::new(Echo))
    });
    let mut config = AgentConfig::new("root");
    config.capabilities = AgentCapabilities {
        custom_tools: Some(vec![probe]),
        ..AgentCapabilities::default()
    };
    config.compaction = low_threshold();
    let agent = h.agent(config);
    let (events, result) = run(agent.query("run the probes", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    use ToolChoice::{Auto as A, None as N};
    // Tried before the 2nd request, then after 1, 2 and 4 more requests.
    assert_eq!(choices(&h), vec![A, N, A, A, N, A, A, A, N, A, A]);
    let failed = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::CompactionFailed { .. }))
        .count();
    assert_eq!(failed, 3);
    assert_all_requests_valid(&h);
}

/// Returns a large text: numbered lines with multi-byte characters.
#[derive(Debug)]
struct Big(Arc<String>);

impl ToolHandler for Big {
    fn call<'a>(
        &'a self,
        _: &'a ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let text = self.0.as_str().to_owned();
        Box::pin(async move { Ok(ToolOutput::text(text).with_display("a big listing")) })
    }
}

fn big_text() -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 1_048_576 {
        text.push_str(&format!("{i:07} é日本 line\n"));
        i += 1;
    }
    text
}

/// A model that calls `big`, then reads the file its result's marker
/// names (lines 1-2), then answers.
#[derive(Debug, Default)]
struct Follower {
    requests: Mutex<Vec<ModelRequest>>,
}

fn marker_path(text: &str) -> Option<PathBuf> {
    let start = text.find("; the full output (")?;
    let rest = &text[start..];
    let from = rest.find(") is in ")? + ") is in ".len();
    let to = rest.find(": read it with Read")?;
    Some(PathBuf::from(&rest[from..to]))
}

impl ModelProvider for Follower {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.requests.lock().unwrap().push(request.clone());
        let last = request.messages.last().expect("a message");
        let result = last.content.iter().find_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => Some((tool_use_id.as_str(), text(content))),
            _ => None,
        });
        let content = match result {
            None => vec![ContentBlock::ToolUse {
                id: "big".into(),
                name: "big".into(),
                input: json!({}),
            }],
            Some(("big", text)) => {
                let path = marker_path(&text).expect("the marker names a file");
                vec![ContentBlock::ToolUse {
                    id: "read".into(),
                    name: "Read".into(),
                    input: json!({"file_path": path, "offset": 1, "limit": 2}),
                }]
            }
            Some(_) => vec![ContentBlock::Text {
                text: "done".into(),
            }],
        };
        let stop_reason = if matches!(content[0], ContentBlock::ToolUse { .. }) {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        };
        let response = ModelResponse {
            content,
            stop_reason,
            usage: Usage {
                input_tokens: 10,
                output_tokens: 1,
                ..Usage::default()
            },
        };
        Box::pin(stream::iter([Ok(ModelEvent::Completed(response))]))
    }
}

/// Runs the big call with results cut above 30,000 bytes; returns the
/// file the marker named, the cut result, the Read result, the
/// `ToolCallFinished` summary of the big call and the sessions folder.
async fn big_result(
    sessions: bool,
) -> (
    PathBuf,
    String,
    String,
    String,
    Option<PathBuf>,
    Arc<String>,
) {
    let full = Arc::new(big_text());
    let big = custom("big", true);
    let follower = Arc::new(Follower::default());
    let dir = tempfile::tempdir().unwrap();
    let settings = RuntimeSettings {
        model: "follower".to_owned(),
        cwd: dir.path().to_path_buf(),
        env: Default::default(),
    };
    let runtime = RuntimeEnvironment::new(
        Arc::clone(&follower) as Arc<dyn ModelProvider>,
        settings,
        BuiltinTools::new(dir.path().join(".zr/cron.json")),
    )
    .with_tool(Arc::clone(&big), Arc::new(Big(Arc::clone(&full))));
    let mut config = AgentConfig::new("root");
    config.capabilities = AgentCapabilities {
        custom_tools: Some(vec![big]),
        ..AgentCapabilities::default()
    };
    config.compaction.max_tool_result_bytes = Some(30_000);
    let sessions_dir = sessions.then(|| dir.path().join("sessions"));
    config.sessions_dir = sessions_dir.clone();
    let agent = Agent::new(Arc::new(runtime), config);
    let (events, result) = run(agent.query("list everything", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let reqs = follower.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 3);
    let result_text = |r: &ModelRequest| {
        crate::support::tool_results(r)
            .last()
            .expect("a tool result")
            .1
            .clone()
    };
    let cut = result_text(&reqs[1]);
    let read = result_text(&reqs[2]);
    let summary = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolCallFinished { tool, summary, .. } if tool == "big" => {
                Some(summary.clone())
            }
            _ => None,
        })
        .expect("the big call finished");
    let path = marker_path(&cut).expect("a marker");
    if let Some(dir) = &sessions_dir {
        let session = agent.session_id().as_str().to_owned();
        assert_eq!(
            path.parent(),
            Some(dir.join(session).join("tool-results").as_path())
        );
    }
    // The file is there while the session lives.
    assert_eq!(
        std::fs::read(&path).unwrap(),
        full.as_bytes(),
        "byte for byte"
    );
    drop(agent);
    drop(dir);
    (path, cut, read, summary, sessions_dir, full)
}

fn check_cut(cut: &str, read: &str, summary: &str, path: &Path, full: &str) {
    let total = full.len();
    let lines = full.lines().count();
    let marker_start = cut.find("\n[... cut ").expect("the marker");
    let marker_end = cut[marker_start + 1..]
        .find("]\n")
        .expect("the marker's end")
        + marker_start
        + 2;
    let (head, note, tail) = (
        &cut[..marker_start],
        &cut[marker_start + 1..marker_end],
        &cut[marker_end + 1..],
    );
    assert!(full.starts_with(head) && full.ends_with(tail));
    // Whole lines, within the limit.
    assert!(head.ends_with('\n') && tail.ends_with('\n') && tail.starts_with(char::is_numeric));
    assert!(
        head.len() + tail.len() <= 30_000,
        "{}",
        head.len() + tail.len()
    );
    assert!(
        head.len() + tail.len() > 29_000,
        "{}",
        head.len() + tail.len()
    );
    let cut_bytes = total - head.len() - tail.len();
    assert_eq!(
        note,
        format!(
            "[... cut {cut_bytes} of {total} bytes here; the full output ({lines} lines) is in {}: read it with Read (offset and limit, a few hundred lines at a time) or search it with Grep ...]",
            path.display()
        )
    );
    // The host hears of the cut.
    assert_eq!(summary, format!("a big listing\n{note}"));
    // The model's Read of the file works.
    assert!(
        read.contains("0000000 é日本 line") && read.contains("0000001 é日本 line"),
        "{read}"
    );
    assert!(!read.contains("0000002 é日本 line"), "{read}");
}

#[tokio::test]
async fn a_big_result_is_cut_with_a_marker_and_kept_whole_in_the_session_folder() {
    let (path, cut, read, summary, sessions, full) = big_result(true).await;
    check_cut(&cut, &read, &summary, &path, &full);
    assert!(path.starts_with(sessions.unwrap()));
}

#[tokio::test]
async fn without_a_sessions_folder_the_full_result_is_in_a_temporary_folder_removed_with_the_session()
 {
    let (path, cut, read, summary, _, full) = big_result(false).await;
    check_cut(&cut, &read, &summary, &path, &full);
    assert!(path.starts_with(std::env::temp_dir()));
    // The session ends when the agent and its cleanups are gone.
    let folder = path.parent().unwrap().to_path_buf();
    for _ in 0..200 {
        if !folder.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!folder.exists(), "{} is left", folder.display());
}

#[tokio::test]
async fn a_big_task_result_is_cut_as_text_and_its_json_kept_whole() {
    let report = "finding\n".repeat(1000);
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [{"tool_calls": [crate::support::task_call("worker")]}, {"text": "done"}]}],
        "worker": [{"turns": [{"text": report}]}]
    }}));
    let mut config = crate::support::root_with_worker();
    config.compaction.max_tool_result_bytes = Some(2_000);
    config.sessions_dir = Some(h.dir.path().join("sessions"));
    let agent = h.agent(config);
    let (_, result) = run(agent.query("delegate", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "done");
    let roots = h.provider.of_type("root");
    let (is_error, cut) = crate::support::tool_results(&roots[1])
        .pop()
        .expect("the Task result");
    assert!(!is_error);
    // The model reads the start of the result object (who and how) and
    // its end, around the marker.
    assert!(
        cut.starts_with(r#"{"agent_id":"root.0001-worker""#),
        "{cut}"
    );
    assert!(cut.contains("\n[... cut "), "{cut}");
    let path = marker_path(&cut).expect("a marker");
    let whole: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(whole["output"], json!(report));
    assert_eq!(whole["status"], json!("completed"));
}

#[tokio::test]
async fn a_compacted_root_resumes_with_the_compacted_history() {
    let (h, mut config) = probe_harness(Some(SUMMARY), low_threshold());
    config.sessions_dir = Some(h.dir.path().join("sessions"));
    let agent = h.agent(config.clone());
    let result = agent.prompt("run the probes").await.unwrap();
    assert_eq!(result.output, "done");
    let history = agent.history();
    assert_eq!(history.len(), 6);
    let session = agent.session_id().clone();
    let path = h.dir.path().join(format!("sessions/{session}/root.jsonl"));
    assert_eq!(
        crate::support::record_kinds(&path),
        [
            "header",
            "message",
            "message",
            "message",
            "message",
            // The second turn's result, written as its call ended.
            "message",
            // The compaction, before the third turn's request.
            "history_replaced",
            "message",
            "message",
            "message",
            "finished"
        ]
    );
    drop(agent);
    let resumed = Agent::resume(Arc::clone(&h.runtime), config, &session).unwrap();
    assert_eq!(resumed.history(), history);
    assert!(!resumed.interrupted(), "its query finished");
}

#[tokio::test]
async fn the_root_compacts_at_the_start_of_its_next_query_and_resumes_compacted() {
    // The first answer alone is over the threshold (a quarter of its bytes).
    let long = "x".repeat(6000);
    let h = Harness::new(&json!({"agents": {"root": [{
        "turns": [{"text": long}, {"text": "second answer"}],
        "summary": SUMMARY
    }]}}));
    let mut config = AgentConfig::new("root");
    config.compaction = low_threshold();
    config.sessions_dir = Some(h.dir.path().join("sessions"));
    let agent = h.agent(config.clone());
    let (events, result) = run(agent.query("first", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, long);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Compacted { .. })),
        "nothing to compact before the first request"
    );
    let (events, result) = run(agent.query("second", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "second answer");
    let compacted: Vec<usize> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Compacted { messages, .. } => Some(*messages),
            _ => None,
        })
        .collect();
    // The first prompt is summarised; the long answer is among the last two
    // messages, kept verbatim.
    assert_eq!(compacted, [1]);
    let summary = Message::user_text(format!(
        "[Summary of the earlier conversation, written by you when the context was nearly full. The messages it replaces are gone; what follows it is verbatim.]\n\n{SUMMARY}"
    ));
    let expected = vec![
        summary,
        Message::assistant_text(long.clone()),
        Message::user_text("second"),
        Message::assistant_text("second answer"),
    ];
    let reqs = requests(&h);
    assert_eq!(
        reqs.iter().map(|r| r.tool_choice).collect::<Vec<_>>(),
        [ToolChoice::Auto, ToolChoice::None, ToolChoice::Auto]
    );
    assert_eq!(reqs[1].messages.len(), 1);
    assert_eq!(
        reqs[1].messages[0].content[0],
        ContentBlock::Text {
            text: "first".into()
        }
    );
    assert_eq!(reqs[2].messages[..], expected[..3]);
    assert_eq!(agent.history(), expected);

    let session = agent.session_id().clone();
    drop(agent);
    let resumed = Agent::resume(Arc::clone(&h.runtime), config, &session).unwrap();
    assert_eq!(resumed.history(), expected);
}

#[tokio::test]
async fn a_summary_that_spends_the_token_budget_stops_the_subagent_before_its_next_request() {
    // The worker's turn used 1,530 tokens of its 1,531; the summary spends
    // the rest.
    let mut worker = crate::support::sub_agent("worker", zr_caps::AgentType::GeneralPurpose);
    worker.budget.tokens = Some(1531);
    let h = Harness::new(&json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [crate::support::task_call("worker")]},
            {"text": "ok"}
        ]}],
        "worker": [{
            "turns": [
                {"text": "looking", "tool_calls": [{"name": "Glob", "input": {"pattern": "*.none"}}], "usage": usage(1500, 30)},
                {"text": "over the budget"}
            ],
            "summary": SUMMARY
        }]
    }}));
    let mut config = AgentConfig::new("root").with_sub_agent(worker);
    config.compaction = CompactionConfig {
        threshold: 1000,
        keep_recent: 1,
        ..CompactionConfig::default()
    };
    let agent = h.agent(config);
    let (events, result) = run(agent.query("go", QueryOverrides::default())).await;
    assert_eq!(result.unwrap().output, "ok");
    let results = crate::support::finished(&events);
    assert_eq!(
        (
            results[0].status,
            results[0].output.as_str(),
            results[0].turns
        ),
        (TaskStatus::BudgetExhausted, "looking", 1)
    );
    assert!(results[0].usage.total() >= 1531, "{:?}", results[0].usage);
    let worker_choices: Vec<ToolChoice> = requests(&h)
        .iter()
        .filter(|r| &*r.origin.agent_type == "worker")
        .map(|r| r.tool_choice)
        .collect();
    assert_eq!(worker_choices, [ToolChoice::Auto, ToolChoice::None]);
}
