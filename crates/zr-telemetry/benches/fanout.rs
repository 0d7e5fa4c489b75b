//! What telemetry costs: the engine's 1,000-subagent fan-out (100
//! MultiTask calls of 10 tasks, each subagent making three tool calls,
//! as in zr-engine's `engine` bench) with no telemetry, and with every
//! span exported over OTLP/HTTP to a receiver on loopback. Both run on one
//! current-thread runtime, the exporter on its own thread; the target is
//! at most 1.3x.
//!
//! The receiver is a loopback OTLP sink of the bench's own (`sink.rs`, over
//! zr-test-support's `receive`: a
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

#[path = "fanout/sink.rs"]
mod sink;

use std::sync::Arc;
use std::time::Instant;

use criterion::{BatchSize, Criterion, criterion_group};
use serde_json::{Value, json};
use tempfile::TempDir;
use zr_engine::{Agent, TaskStatus, Tracer};
use zr_telemetry::{Telemetry, TelemetryConfig};
use zr_test_support::bench::{Noop, NoopSession, fanout_script, noop_session};
use zr_test_support::phoenix::Phoenix;

/// How long each model reply takes (`ZR_BENCH_MODEL_MS`, default 0: the
/// engine's cost alone).
fn model_ms() -> u64 {
    std::env::var("ZR_BENCH_MODEL_MS")
        .ok()
        .filter(|v| !v.is_empty())
        .map_or(0, |v| v.parse().expect("ZR_BENCH_MODEL_MS is a number"))
}

/// zr-test-support's fan-out script with each model reply taking
/// [`model_ms`].
fn delayed_fanout(subagents: usize) -> Value {
    let mut script = fanout_script(subagents);
    let delay = model_ms();
    let runs = script["agents"]
        .as_object_mut()
        .into_iter()
        .flat_map(|agents| agents.values_mut());
    for run in runs.flat_map(|runs| runs.as_array_mut().into_iter().flatten()) {
        for turn in run["turns"].as_array_mut().into_iter().flatten() {
            turn["delay_ms"] = json!(delay);
        }
    }
    script
}

/// The fan-out's root on a runtime of its own, reporting to `tracer`.
fn agent(script: &Value, tracer: Option<&Arc<dyn Tracer>>) -> (TempDir, Agent) {
    let NoopSession {
        dir,
        mut runtime,
        config,
    } = noop_session(script, true, Arc::new(Noop));
    if let Some(tracer) = tracer {
        runtime = runtime.with_tracer(Arc::clone(tracer));
    }
    (dir, Agent::new(Arc::new(runtime), config))
}

/// Where the spans go: the sink or Phoenix, kept alive for the bench.
enum Receiver {
    Sink(sink::Sink),
    Phoenix(Phoenix),
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
        Ok("phoenix") => Receiver::Phoenix(rt.block_on(Phoenix::start())),
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
    let fanout = delayed_fanout(subagents);
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
    let script = delayed_fanout(subagents);
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
