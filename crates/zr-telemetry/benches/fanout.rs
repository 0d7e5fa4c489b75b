//! What telemetry costs: the engine's 1,000-subagent fan-out (100
//! MultiTask calls of 10 tasks, each subagent making three tool calls,
//! as in zr-engine's `engine` bench) with no telemetry, and with every
//! span exported over OTLP/HTTP to a receiver on loopback. Both run on one
//! current-thread runtime, the exporter on its own thread; the target is
//! at most 1.3x.
//!
//! The receiver is a loopback OTLP sink of the bench's own (`sink.rs`: a
//! process of its own that reads each export request whole and answers
//! 200, as a collector does), so that what is measured is zr's side; `ZR_BENCH_RECEIVER=phoenix`
//! exports to Arize Phoenix from `.deps/phoenix` instead, whose ingestion
//! then shares the machine's cores with the run. `ZR_BENCH_SUBAGENTS=N`
//! sets the size (`cargo xtask bench --quick`: 100);
//! `ZR_BENCH_MODEL_MS=N` makes every model reply take N ms (a model's
//! realistic latency; 0 by default: the engine's own cost). Without `--bench`
//! (as `cargo test --all-targets` runs it) it returns at once.
//!
//! `ZR_BENCH_ONCE=MODE:N` (`MODE` one of `setup`, `off`, `exported`) runs
//! no criterion: it sets up as the bench does (the sink, the exporter, a
//! warm-up fan-out of 10 exported subagents), runs one fan-out of N
//! subagents without telemetry (`off`), exported (`exported`) or not at
//! all (`setup`), shuts the exporter down (sending what is queued) and
//! prints the run's wall and CPU time (`cpu_ms`: the process's, every
//! thread). Under
//! `valgrind --tool=callgrind` the three modes' instruction counts give
//! what the run costs with and without export, every thread of the
//! process counted (the exporter's too; the sink is another process):
//! `(exported - setup) / (off - setup)`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "../tests/it/phoenix.rs"]
#[allow(
    dead_code,
    reason = "the tests' Phoenix, shared; the bench reads no spans back"
)]
mod phoenix;
#[path = "fanout/receive.rs"]
mod receive;
#[path = "fanout/sink.rs"]
mod sink;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group};
use serde_json::{Value, json};
use tempfile::TempDir;
use zr_caps::{AgentDefinition, RuntimeSettings};
use zr_engine::{Agent, AgentConfig, RuntimeEnvironment, ScriptedProvider, TaskStatus, Tracer};
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
        _: &'a ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

fn usage() -> Value {
    json!({"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0})
}

/// How long each model reply takes (`ZR_BENCH_MODEL_MS`, default 0: the
/// engine's cost alone).
fn model_ms() -> u64 {
    std::env::var("ZR_BENCH_MODEL_MS")
        .ok()
        .filter(|v| !v.is_empty())
        .map_or(0, |v| v.parse().expect("ZR_BENCH_MODEL_MS is a number"))
}

fn fanout_script(subagents: usize) -> Value {
    let delay = model_ms();
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
        "root": [{"turns": [
            {"tool_calls": calls, "usage": usage(), "delay_ms": delay},
            {"text": "all done", "usage": usage(), "delay_ms": delay}
        ]}],
        "worker": [{"turns": [
            {"tool_calls": noop, "usage": usage(), "delay_ms": delay},
            {"text": "worked", "usage": usage(), "delay_ms": delay}
        ]}]
    }})
}

/// The fan-out's root on a runtime of its own, reporting to `tracer`.
fn agent(script: &Value, tracer: Option<&Arc<dyn Tracer>>) -> (TempDir, Agent) {
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
    let mut runtime = RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(dir.path().join("cron.json")),
    )
    .with_tool(Arc::clone(&noop), Arc::new(Noop));
    if let Some(tracer) = tracer {
        runtime = runtime.with_tracer(Arc::clone(tracer));
    }
    let mut worker = AgentDefinition::new("worker".parse().unwrap(), "works", "You work.");
    worker.capabilities.custom_tools = Some(vec![Arc::clone(&noop)]);
    let mut config = AgentConfig::new("You delegate.").with_sub_agent(worker);
    config.options.custom_tools = vec![noop];
    config.subagent.max_concurrent = 10;
    config.subagent.timeout = Duration::from_secs(3_600);
    (dir, Agent::new(Arc::new(runtime), config))
}

/// Where the spans go: the sink or Phoenix, kept alive for the bench.
enum Receiver {
    Sink(sink::Sink),
    Phoenix(phoenix::Phoenix),
}

impl Receiver {
    fn endpoint(&self) -> String {
        match self {
            Self::Sink(sink) => sink.traces_endpoint(),
            Self::Phoenix(phoenix) => phoenix.traces_endpoint(),
        }
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let receiver = match std::env::var("ZR_BENCH_RECEIVER").as_deref() {
        Ok("phoenix") => Receiver::Phoenix(rt.block_on(phoenix::Phoenix::start())),
        Ok("sink") | Err(_) => Receiver::Sink(sink::Sink::start()),
        Ok(other) => panic!("ZR_BENCH_RECEIVER={other}: expected sink or phoenix"),
    };
    let subagents: usize = std::env::var("ZR_BENCH_SUBAGENTS").ok().map_or(1_000, |n| {
        n.parse().expect("ZR_BENCH_SUBAGENTS is a number")
    });
    let mut config = TelemetryConfig::new(receiver.endpoint());
    config.queue_size = 65_536;
    let telemetry = Telemetry::start(config).unwrap();
    let exporting = telemetry.tracer();
    let fanout = fanout_script(subagents);
    let mut group = c.benchmark_group("telemetry");
    group.sample_size(10);
    let mut run = |name: &str, tracer: Option<&Arc<dyn Tracer>>| {
        group.bench_function(name, |b| {
            b.iter_batched(
                || agent(&fanout, tracer),
                |(dir, agent)| {
                    let result = rt.block_on(agent.prompt("go")).unwrap();
                    assert_eq!(result.status, TaskStatus::Completed);
                    (dir, agent)
                },
                BatchSize::PerIteration,
            );
        });
    };
    let exported = match receiver {
        Receiver::Sink(_) => "exported",
        Receiver::Phoenix(_) => "exported_to_phoenix",
    };
    run(&format!("fanout_{subagents}_off"), None);
    run(&format!("fanout_{subagents}_{exported}"), Some(&exporting));
    group.finish();
    drop(exporting);
    telemetry.shutdown();
    if let Receiver::Sink(sink) = &receiver {
        let (requests, bytes) = sink.received();
        println!("the sink received {requests} export requests, {bytes} bytes");
        // Said loudly, without stopping the other benches of `cargo xtask
        // bench`: a second figure that exported nothing measures nothing.
        if requests == 0 {
            println!(
                "WARNING: no export request reached the sink: fanout_{subagents}_{exported} does not measure telemetry's cost"
            );
        }
    }
}

criterion_group!(benches, bench);

/// `ZR_BENCH_ONCE=MODE:N`: see the module's documentation.
fn once(mode: &str, subagents: usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let sink = sink::Sink::start();
    let mut config = TelemetryConfig::new(sink.traces_endpoint());
    config.queue_size = 65_536;
    let telemetry = Telemetry::start(config).unwrap();
    let exporting = telemetry.tracer();
    let run = |script: &Value, tracer: Option<&Arc<dyn Tracer>>| {
        let (_dir, agent) = agent(script, tracer);
        let result = rt.block_on(agent.prompt("go")).unwrap();
        assert_eq!(result.status, TaskStatus::Completed);
    };
    run(&fanout_script(10), Some(&exporting));
    let script = fanout_script(subagents);
    let cpu_before = process_cpu_ms();
    let start = Instant::now();
    match mode {
        "setup" => {}
        "off" => run(&script, None),
        "exported" => run(&script, Some(&exporting)),
        other => panic!("ZR_BENCH_ONCE={other}:N: expected setup, off or exported"),
    }
    let wall = start.elapsed();
    drop(exporting);
    telemetry.shutdown();
    let cpu_ms = process_cpu_ms() - cpu_before;
    let (requests, bytes) = sink.received();
    println!(
        "{}",
        json!({
            "bench": "telemetry_fanout",
            "mode": mode,
            "subagents": subagents,
            "model_ms": model_ms(),
            "wall_ms": wall.as_secs_f64() * 1e3,
            "cpu_ms": cpu_ms,
            "export_requests": requests,
            "export_bytes": bytes,
        })
    );
}

/// The CPU time of this process so far, every thread, in ms (user and
/// system, from `/proc/self/stat`, in clock ticks of 10 ms).
fn process_cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime
    // are the 14th and 15th of the line.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) * 10.0
}

fn main() {
    if std::env::var(sink::SERVE).is_ok_and(|v| v == "serve") {
        return sink::serve_here();
    }
    if let Some(once_var) = std::env::var("ZR_BENCH_ONCE")
        .ok()
        .filter(|v| !v.is_empty())
    {
        let (mode, n) = once_var.split_once(':').unwrap_or((once_var.as_str(), ""));
        let n = if n.is_empty() {
            1_000
        } else {
            n.parse().unwrap_or_else(|_| {
                panic!("ZR_BENCH_ONCE={once_var}: expected MODE:N with a number N")
            })
        };
        return once(mode, n);
    }
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
