//! What telemetry costs: the engine's 1,000-subagent fan-out (100
//! MultiTask calls of 10 tasks, each subagent making three tool calls,
//! as in zr-engine's `engine` bench) with no telemetry, and with every
//! span exported to a real receiver on loopback (Arize Phoenix from
//! `.deps/phoenix`, started by the bench). Both run on one current-thread
//! runtime, the exporter on its own thread; the target is at most 1.3x.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/it/phoenix.rs"]
#[allow(
    dead_code,
    reason = "the tests' Phoenix, shared; the bench reads no spans back"
)]
mod phoenix;

use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group};
use serde_json::{Value, json};
use tempfile::TempDir;
use tracing_subscriber::layer::SubscriberExt as _;
use zr_caps::{AgentDefinition, RuntimeSettings};
use zr_engine::{Agent, AgentConfig, RuntimeEnvironment, ScriptedProvider, TaskStatus};
use zr_telemetry::{Telemetry, TelemetryConfig};
use zr_tools::BuiltinTools;
use zr_types::{
    Annotations, BoxFuture, ToolCall, ToolContext, ToolDefinition, ToolError, ToolHandler,
    ToolOrigin, ToolOutput,
};

/// A read-only tool that does nothing: what is measured is the engine.
#[derive(Debug)]
struct Noop;

impl ToolHandler for Noop {
    fn call<'a>(
        &'a self,
        _: ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

fn usage() -> Value {
    json!({"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0})
}

fn fanout_script(subagents: usize) -> Value {
    let noop: Vec<Value> = (0..3)
        .map(|i| json!({"name": "noop", "input": {"i": i}}))
        .collect();
    let calls: Vec<Value> = (0..subagents / 10)
        .map(|c| {
            let tasks: Vec<Value> = (0..10)
                .map(|t| json!({"description": format!("task {c}.{t}"), "prompt": "work", "subagent_type": "worker"}))
                .collect();
            json!({"name": "MultiTask", "input": {"tasks": tasks}})
        })
        .collect();
    json!({"agents": {
        "root": [{"turns": [{"tool_calls": calls, "usage": usage()}, {"text": "all done", "usage": usage()}]}],
        "worker": [{"turns": [
            {"tool_calls": noop, "usage": usage()},
            {"text": "worked", "usage": usage()}
        ]}]
    }})
}

fn agent(script: &Value) -> (TempDir, Agent) {
    let dir = tempfile::tempdir().unwrap();
    let provider = Arc::new(ScriptedProvider::from_json(&script.to_string()).unwrap());
    let settings = RuntimeSettings {
        model: "scripted".to_owned(),
        cwd: dir.path().to_path_buf(),
        env: Default::default(),
    };
    let noop = Arc::new(
        ToolDefinition::new("noop".parse().unwrap(), "does nothing", ToolOrigin::Custom)
            .with_annotations(Annotations {
                read_only: true,
                ..Annotations::default()
            }),
    );
    let runtime = RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(dir.path().join("cron.json")),
    )
    .with_tool(Arc::clone(&noop), Arc::new(Noop));
    let mut worker = AgentDefinition::new("worker".parse().unwrap(), "works", "You work.");
    worker.capabilities.custom_tools = Some(vec![Arc::clone(&noop)]);
    let mut config = AgentConfig::new("You delegate.").with_sub_agent(worker);
    config.options.custom_tools = vec![noop];
    config.subagent.max_concurrent = 10;
    config.subagent.timeout = Duration::from_secs(3_600);
    (dir, Agent::new(Arc::new(runtime), config))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let phoenix = rt.block_on(phoenix::Phoenix::start());
    let mut config = TelemetryConfig::new(phoenix.traces_endpoint());
    config.queue_size = 65_536;
    let telemetry = Telemetry::start(config).unwrap();
    let exporting = tracing::Dispatch::new(tracing_subscriber::registry().with(telemetry.layer()));
    let fanout = fanout_script(1_000);
    let mut group = c.benchmark_group("telemetry");
    group.sample_size(10);
    let mut run = |name: &str, dispatch: Option<&tracing::Dispatch>| {
        group.bench_function(name, |b| {
            b.iter_batched(
                || agent(&fanout),
                |(dir, agent)| {
                    let go = || rt.block_on(agent.prompt("go")).unwrap();
                    let result = match dispatch {
                        Some(d) => tracing::dispatcher::with_default(d, go),
                        None => go(),
                    };
                    assert_eq!(result.status, TaskStatus::Completed);
                    (dir, agent)
                },
                BatchSize::PerIteration,
            );
        });
    };
    run("fanout_1000_off", None);
    run("fanout_1000_exported_to_phoenix", Some(&exporting));
    group.finish();
    drop(exporting);
    telemetry.shutdown();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
