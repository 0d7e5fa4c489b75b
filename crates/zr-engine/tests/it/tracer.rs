//! The spans a [`Tracer`] gets: the tree of a session with MultiTask (one
//! task finishing, one timing out), a tool call that fails and a
//! background agent; the attributes of each kind of span; content only
//! when the tracer asks for it; every span ended once the agent is gone.

use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::json;
use zr_engine::{AgentConfig, Attribute, AttributeValue, SpanKind, SpanStart, TraceSpan, Tracer};

use crate::support::{Harness, sub_agent};

/// One span as the tracer saw it.
#[derive(Debug, Clone, Default)]
struct Seen {
    operation: &'static str,
    parent: Option<usize>,
    client: bool,
    attributes: Vec<(&'static str, String)>,
    events: Vec<String>,
    error: Option<Option<String>>,
    ended: bool,
}

impl Seen {
    fn attr(&self, key: &str) -> Option<&str> {
        // The last value set wins.
        self.attributes
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Default)]
struct Recorder {
    capture_content: bool,
    spans: Mutex<Vec<Seen>>,
}

#[derive(Debug)]
struct Live {
    index: usize,
    recorder: Arc<Recorder>,
}

fn text(value: AttributeValue<'_>) -> String {
    match value {
        AttributeValue::Str(s) => s.to_owned(),
        AttributeValue::I64(i) => i.to_string(),
        AttributeValue::F64(x) => x.to_string(),
        AttributeValue::Bool(b) => b.to_string(),
        AttributeValue::StrArray(items) => format!("{items:?}"),
    }
}

impl Recorder {
    fn with<T>(&self, f: impl FnOnce(&mut Vec<Seen>) -> T) -> T {
        f(&mut self.spans.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The tracer handed to the runtime: it shares the recorder.
#[derive(Debug)]
struct Shared(Arc<Recorder>);

impl Tracer for Shared {
    fn capture_content(&self) -> bool {
        self.0.capture_content
    }

    fn start(
        &self,
        parent: Option<&Arc<dyn TraceSpan>>,
        start: &SpanStart<'_>,
    ) -> Arc<dyn TraceSpan> {
        let parent = parent.map(|p| {
            p.as_any()
                .downcast_ref::<Live>()
                .expect("a parent this tracer made")
                .index
        });
        let seen = Seen {
            operation: start.operation,
            parent,
            client: start.kind == SpanKind::Client,
            attributes: start
                .attributes
                .iter()
                .map(|a| (a.key, text(a.value)))
                .collect(),
            ..Seen::default()
        };
        let index = self.0.with(|spans| {
            spans.push(seen);
            spans.len() - 1
        });
        Arc::new(Live {
            index,
            recorder: Arc::clone(&self.0),
        })
    }
}

impl TraceSpan for Live {
    fn set(&self, attributes: &[Attribute<'_>]) {
        self.recorder.with(|spans| {
            spans[self.index]
                .attributes
                .extend(attributes.iter().map(|a| (a.key, text(a.value))));
        });
    }

    fn add_event(&self, name: &'static str, attributes: &[Attribute<'_>]) {
        let line = attributes
            .iter()
            .map(|a| format!("{}={}", a.key, text(a.value)))
            .collect::<Vec<_>>()
            .join(" ");
        self.recorder
            .with(|spans| spans[self.index].events.push(format!("{name} {line}")));
    }

    fn set_error(&self, description: Option<&str>) {
        self.recorder.with(|spans| {
            spans[self.index].error = Some(description.map(str::to_owned));
        });
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.recorder.with(|spans| {
            assert!(!spans[self.index].ended, "a span ends once");
            spans[self.index].ended = true;
        });
    }
}

/// Runs the session and returns the spans its tracer saw.
async fn session(capture_content: bool) -> Vec<Seen> {
    let recorder = Arc::new(Recorder {
        capture_content,
        ..Recorder::default()
    });
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [
                {"tool_calls": [
                    {"name": "MultiTask", "input": {"tasks": [
                        {"description": "fast task", "prompt": "say hi", "subagent_type": "worker"},
                        {"description": "slow task", "prompt": "take long", "subagent_type": "slow"}
                    ]}},
                    {"name": "Task", "input": {"description": "background task", "prompt": "say hi",
                        "subagent_type": "worker", "run_in_background": true}},
                    {"name": "NoSuchTool", "input": {}}
                ]},
                {"text": "all done"}
            ]}],
            "worker": [{"turns": [
                {"tool_calls": [{"name": "Glob", "input": {"pattern": "*.none"}}]},
                {"text": "worker done"}
            ]}],
            "slow": [{"turns": [{"delay_ms": 10_000, "text": "too late"}]}]
        }}),
        |runtime| runtime.with_tracer(Arc::new(Shared(Arc::clone(&recorder)))),
    );
    let mut config = AgentConfig::new("root")
        .with_sub_agent(sub_agent("worker", zr_caps::AgentType::GeneralPurpose))
        .with_sub_agent(sub_agent("slow", zr_caps::AgentType::GeneralPurpose));
    config.subagent.timeout = Duration::from_millis(300);
    let agent = h.agent(config);
    let result = agent.prompt("fan out").await.unwrap();
    assert_eq!(result.output, "all done");
    agent.wait_background().await;
    drop(agent);
    drop(h);
    recorder.with(|spans| spans.clone())
}

/// Each span as `operation [target] <- parent's`, in start order.
fn tree(spans: &[Seen]) -> Vec<String> {
    let name = |s: &Seen| {
        let target = match s.operation {
            "invoke_agent" => s.attr("gen_ai.agent.name"),
            "execute_tool" => s.attr("gen_ai.tool.name"),
            "chat" => s.attr("gen_ai.request.model"),
            _ => None,
        };
        match target {
            Some(target) => format!("{} {target}", s.operation),
            None => s.operation.to_owned(),
        }
    };
    let mut lines: Vec<String> = spans
        .iter()
        .map(|s| match s.parent {
            Some(p) => format!("{} <- {}", name(s), name(&spans[p])),
            None => name(s),
        })
        .collect();
    // Siblings run concurrently: compare as a set of edges.
    lines.sort();
    lines
}

#[tokio::test]
async fn a_session_is_one_tree_of_agents_requests_and_calls() {
    let spans = session(false).await;
    assert!(
        spans.iter().all(|s| s.ended),
        "every span ended: {spans:#?}"
    );
    assert_eq!(
        tree(&spans),
        vec![
            "chat scripted-model <- invoke_agent root",
            "chat scripted-model <- invoke_agent root",
            "chat scripted-model <- invoke_agent slow",
            "chat scripted-model <- invoke_agent worker",
            "chat scripted-model <- invoke_agent worker",
            "chat scripted-model <- invoke_agent worker",
            "chat scripted-model <- invoke_agent worker",
            "execute_tool Glob <- invoke_agent worker",
            "execute_tool Glob <- invoke_agent worker",
            "execute_tool MultiTask <- invoke_agent root",
            "execute_tool NoSuchTool <- invoke_agent root",
            "execute_tool Task <- invoke_agent root",
            "invoke_agent root <- session",
            "invoke_agent slow <- execute_tool MultiTask",
            "invoke_agent worker <- execute_tool MultiTask",
            "invoke_agent worker <- execute_tool Task",
            "session",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>()
    );
    let agent = |name: &str, background: &str| {
        spans
            .iter()
            .find(|s| {
                s.operation == "invoke_agent"
                    && s.attr("gen_ai.agent.name") == Some(name)
                    && s.attr("zr.agent.background") == Some(background)
            })
            .unwrap_or_else(|| panic!("no {name} agent span (background {background})"))
    };
    let root = agent("root", "false");
    assert_eq!(root.attr("zr.task.status"), Some("completed"));
    assert_eq!(root.attr("gen_ai.agent.id"), Some("root"));
    assert_eq!(root.attr("zr.agent.parent"), None);
    assert_eq!(root.error, None);
    let slow = agent("slow", "false");
    assert_eq!(slow.attr("zr.task.status"), Some("timed_out"));
    assert_eq!(slow.attr("error.type"), Some("timed_out"));
    assert!(slow.error.is_some(), "a timed-out task is an error");
    assert_eq!(slow.attr("zr.agent.parent"), Some("root"));
    assert_eq!(slow.attr("gen_ai.agent.description"), Some("slow task"));
    let background = agent("worker", "true");
    assert_eq!(background.attr("zr.task.status"), Some("completed"));
    assert_eq!(background.attr("zr.task.turns"), Some("2"));
    let missing = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.name") == Some("NoSuchTool"))
        .unwrap();
    assert_eq!(missing.attr("zr.tool.status"), Some("error"));
    assert_eq!(missing.error, Some(None));
    let chat = spans.iter().find(|s| s.operation == "chat").unwrap();
    assert!(chat.client, "a model request is a client span");
    assert_eq!(chat.attr("gen_ai.operation.name"), Some("chat"));
    assert!(chat.attr("gen_ai.usage.input_tokens").is_some(), "{chat:?}");
    let mut reasons: Vec<&str> = spans
        .iter()
        .filter_map(|s| s.attr("gen_ai.response.finish_reasons"))
        .collect();
    reasons.sort_unstable();
    reasons.dedup();
    assert_eq!(reasons, [r#"["end_turn"]"#, r#"["tool_use"]"#]);
    // No content without the tracer asking.
    assert!(spans.iter().all(|s| {
        s.attributes.iter().all(|(k, _)| {
            !matches!(
                *k,
                "gen_ai.input.messages"
                    | "gen_ai.output.messages"
                    | "gen_ai.system_instructions"
                    | "gen_ai.tool.call.arguments"
                    | "gen_ai.tool.call.result"
            )
        })
    }));
}

#[tokio::test]
async fn content_goes_only_to_a_tracer_that_asks_for_it() {
    let spans = session(true).await;
    let glob = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.name") == Some("Glob"))
        .unwrap();
    assert_eq!(
        glob.attr("gen_ai.tool.call.arguments"),
        Some(r#"{"pattern":"*.none"}"#)
    );
    assert!(glob.attr("gen_ai.tool.call.result").is_some());
    let first = spans.iter().find(|s| s.operation == "chat").unwrap();
    assert_eq!(first.attr("gen_ai.system_instructions"), Some("root"));
    assert!(
        first
            .attr("gen_ai.input.messages")
            .is_some_and(|m| m.contains("fan out")),
        "{first:?}"
    );
    assert!(
        spans
            .iter()
            .filter_map(|s| s.attr("gen_ai.output.messages"))
            .any(|m| m.contains("all done"))
    );
}

#[tokio::test]
async fn a_nested_agent_is_a_child_of_its_parents_task_call() {
    let recorder = Arc::new(Recorder::default());
    let task = |t: &str, p: &str| json!({"name": "Task", "input": {"description": p, "prompt": p, "subagent_type": t}});
    let h = Harness::with_runtime(
        &json!({"agents": {
            "root": [{"turns": [{"tool_calls": [task("lead", "lead it")]}, {"text": "root done"}]}],
            "lead": [{"turns": [{"tool_calls": [task("worker", "work")]}, {"text": "lead done"}]}],
            "worker": [{"turns": [{"text": "worker done"}]}]
        }}),
        |runtime| runtime.with_tracer(Arc::new(Shared(Arc::clone(&recorder)))),
    );
    let mut config = AgentConfig::new("root")
        .with_sub_agent(sub_agent("lead", zr_caps::AgentType::GeneralPurpose))
        .with_sub_agent(sub_agent("worker", zr_caps::AgentType::GeneralPurpose));
    config.policy.max_depth = 2;
    let agent = h.agent(config);
    assert_eq!(agent.prompt("go").await.unwrap().output, "root done");
    drop(agent);
    drop(h);
    let spans = recorder.with(|spans| spans.clone());
    let agent_span = |name: &str| {
        spans
            .iter()
            .position(|s| {
                s.operation == "invoke_agent" && s.attr("gen_ai.agent.name") == Some(name)
            })
            .unwrap_or_else(|| panic!("no {name} span: {spans:#?}"))
    };
    // worker <- execute_tool Task <- invoke_agent lead <- execute_tool Task <- root
    let worker = &spans[agent_span("worker")];
    let call = &spans[worker.parent.unwrap()];
    assert_eq!(call.operation, "execute_tool");
    assert_eq!(call.attr("gen_ai.tool.name"), Some("Task"));
    assert_eq!(call.parent, Some(agent_span("lead")));
    let lead_call = &spans[spans[agent_span("lead")].parent.unwrap()];
    assert_eq!(lead_call.parent, Some(agent_span("root")));
    assert_eq!(
        worker.attr("zr.agent.parent"),
        Some("root.0001-lead"),
        "{worker:?}"
    );
    assert!(spans.iter().all(|s| s.ended));
}
