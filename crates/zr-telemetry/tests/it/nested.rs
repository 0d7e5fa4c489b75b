//! A scripted session three levels deep (root -> lead -> reviewer ->
//! worker), exported over OTLP/HTTP to a loopback receiver and decoded
//! with the OpenTelemetry project's own protobuf types: each agent's
//! `invoke_agent` span is a child of the `execute_tool Task` span of the
//! call that started it, inside its parent's `invoke_agent`, never the
//! root's; the tree is a reviewed snapshot.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::json;
use zr_caps::{AgentDefinition, RuntimeSettings};
use zr_engine::{Agent, AgentConfig, RuntimeEnvironment, ScriptedProvider};
use zr_telemetry::{Telemetry, TelemetryConfig};
use zr_tools::BuiltinTools;

use zr_test_support::receive::serve_requests;

/// A loopback OTLP/HTTP receiver keeping every span it is sent.
fn receiver() -> (String, Arc<Mutex<Vec<Span>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let spans = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&spans);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let kept = Arc::clone(&kept);
            std::thread::spawn(move || {
                serve_requests(stream, |body| {
                    let request = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                    let mut kept = kept.lock().unwrap();
                    for resource in request.resource_spans {
                        for scope in resource.scope_spans {
                            kept.extend(scope.spans);
                        }
                    }
                });
            });
        }
    });
    (format!("http://127.0.0.1:{port}/v1/traces"), spans)
}

fn task(agent_type: &str, prompt: &str) -> serde_json::Value {
    json!({"name": "Task", "input": {"description": prompt, "prompt": prompt, "subagent_type": agent_type}})
}

fn definition(name: &str) -> AgentDefinition {
    AgentDefinition::new(
        name.parse().unwrap(),
        format!("the {name} agent"),
        format!("You are the {name} agent."),
    )
}

/// A span's string attribute.
fn attr<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            Any::StringValue(s) => Some(s.as_str()),
            _ => None,
        })
}

/// The spans as an indented tree, children in start order; each
/// `invoke_agent` with its agent id.
fn tree(spans: &[Span]) -> String {
    let mut children: Children<'_> = BTreeMap::new();
    for span in spans {
        children.entry(&span.parent_span_id).or_default().push(span);
    }
    for list in children.values_mut() {
        list.sort_by_key(|s| s.start_time_unix_nano);
    }
    let mut out = String::new();
    for root in children.get([].as_slice()).into_iter().flatten() {
        draw(&mut out, root, 0, &children);
    }
    out
}

/// Spans by their parent's id.
type Children<'a> = BTreeMap<&'a [u8], Vec<&'a Span>>;

/// `span` at `depth`, then its children one level in.
fn draw(out: &mut String, span: &Span, depth: usize, children: &Children<'_>) {
    out.push_str(&"  ".repeat(depth));
    out.push_str(&span.name);
    if let Some(id) = attr(span, "gen_ai.agent.id") {
        let _ = write!(out, " [{id}]");
    }
    out.push('\n');
    for child in children.get(span.span_id.as_slice()).into_iter().flatten() {
        draw(out, child, depth + 1, children);
    }
}

#[tokio::test]
async fn a_depth_3_agents_span_is_a_child_of_its_parents_task_call() {
    let (endpoint, spans) = receiver();
    let telemetry = Telemetry::start(TelemetryConfig::new(endpoint)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = json!({"agents": {
        "root": [{"turns": [{"tool_calls": [task("lead", "lead it")]}, {"text": "root done"}]}],
        "lead": [{"turns": [{"tool_calls": [task("reviewer", "review it")]}, {"text": "lead done"}]}],
        "reviewer": [{"turns": [{"tool_calls": [task("worker", "check it")]}, {"text": "reviewed"}]}],
        "worker": [{"turns": [{"text": "checked"}]}]
    }});
    let provider = Arc::new(ScriptedProvider::from_json(&script.to_string()).unwrap());
    let settings = RuntimeSettings {
        model: "scripted-model".to_owned(),
        cwd: dir.path().to_path_buf(),
        env: Default::default(),
    };
    let runtime = RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(dir.path().join(".zr/cron.json")),
    )
    .with_tracer(telemetry.tracer());
    let mut config = AgentConfig::new("root")
        .with_sub_agent(definition("lead"))
        .with_sub_agent(definition("reviewer"))
        .with_sub_agent(definition("worker"));
    config.policy.max_depth = 3;
    let agent = Agent::new(Arc::new(runtime), config);
    assert_eq!(agent.prompt("go").await.unwrap().output, "root done");
    drop(agent);
    tokio::task::spawn_blocking(move || telemetry.shutdown())
        .await
        .unwrap();

    let spans = spans.lock().unwrap().clone();
    let by_id: BTreeMap<&[u8], &Span> = spans.iter().map(|s| (s.span_id.as_slice(), s)).collect();
    let agent_span = |id: &str| {
        spans
            .iter()
            .find(|s| s.name.starts_with("invoke_agent") && attr(s, "gen_ai.agent.id") == Some(id))
            .unwrap_or_else(|| panic!("no invoke_agent span of {id}:\n{}", tree(&spans)))
    };
    // Each agent's span: its Task call's child, the call inside its
    // parent's invoke_agent.
    for (child, parent) in [
        ("root.0001-lead", "root"),
        ("root.0001-lead.0002-reviewer", "root.0001-lead"),
        (
            "root.0001-lead.0002-reviewer.0003-worker",
            "root.0001-lead.0002-reviewer",
        ),
    ] {
        let call = by_id[agent_span(child).parent_span_id.as_slice()];
        assert_eq!(call.name, "execute_tool Task", "{child}");
        assert_eq!(
            call.parent_span_id,
            agent_span(parent).span_id,
            "{child}'s Task call is {parent}'s"
        );
        assert_eq!(attr(agent_span(child), "zr.agent.parent"), Some(parent));
    }
    let traces: std::collections::BTreeSet<&[u8]> =
        spans.iter().map(|s| s.trace_id.as_slice()).collect();
    assert_eq!(traces.len(), 1, "one trace for the session");
    insta::assert_snapshot!("depth_3_span_tree", tree(&spans));
}
