//! Engine overhead with the scripted provider: the cost of one turn (also
//! with transcripts written, and with a permission handler and a hook
//! asked about every call), and a fan-out of 1,000 subagents that make
//! three tool calls each.
//!
//! `ZR_BENCH_ONCE=fanout:N cargo bench -p zr-engine --bench engine` runs
//! one fan-out of N subagents (`fanout` alone: 1,000) and prints its wall
//! time, CPU time and peak memory (`VmHWM`) as a JSON line instead of
//! running criterion; `ZR_BENCH_ONCE=turns:N` runs one query of N tool
//! turns and prints the cost of its first and last turns.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group};
use serde_json::{Value, json};
use tempfile::TempDir;
use zr_caps::{AgentDefinition, RuntimeSettings};
use zr_engine::{
    Agent, AgentConfig, Decision, Hook, Hooks, PermissionConfig, PermissionHandler,
    PermissionRequest, RuntimeEnvironment, ScriptedProvider, TaskStatus,
};
use zr_tools::BuiltinTools;
use zr_types::{
    Annotations, BoxFuture, ToolCall, ToolContext, ToolDefinition, ToolError, ToolHandler,
    ToolOrigin, ToolOutput, Usage,
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

/// Allows every call it is asked about.
#[derive(Debug)]
struct AllowAll;

impl PermissionHandler for AllowAll {
    fn can_use_tool<'a>(&'a self, _: &'a PermissionRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async { Decision::Allow })
    }
}

/// A hook with every default: called, does nothing.
#[derive(Debug)]
struct Pass;

impl Hook for Pass {}

const USAGE: Usage = Usage {
    input_tokens: 100,
    output_tokens: 20,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
};

fn noop_calls(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"name": "noop", "input": {"i": i}}))
        .collect()
}

/// What the turn benchmarks add to a session.
#[derive(Debug, Clone, Copy)]
enum Extra {
    Nothing,
    /// `sessions_dir` set: every agent writes its transcript.
    Transcripts,
    /// `noop` is not read-only, so the permission handler is asked about
    /// every call; a hook sees each call before and after.
    Permissions,
}

/// A fresh session over `script`, with the `noop` tool and a `worker`
/// subagent type.
fn agent(script: &Value, max_concurrent: usize) -> (TempDir, Agent) {
    agent_with(script, max_concurrent, Extra::Nothing)
}

fn agent_with(script: &Value, max_concurrent: usize, extra: Extra) -> (TempDir, Agent) {
    agent_with_noop(script, max_concurrent, extra, Arc::new(Noop))
}

fn agent_with_noop(
    script: &Value,
    max_concurrent: usize,
    extra: Extra,
    handler: Arc<dyn ToolHandler>,
) -> (TempDir, Agent) {
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
                read_only: !matches!(extra, Extra::Permissions),
                ..Annotations::default()
            }),
    );
    let runtime = RuntimeEnvironment::new(
        provider,
        settings,
        BuiltinTools::new(dir.path().join("cron.json")),
    )
    .with_tool(Arc::clone(&noop), handler);
    let mut worker = AgentDefinition::new("worker".parse().unwrap(), "works", "You work.");
    worker.capabilities.custom_tools = Some(vec![Arc::clone(&noop)]);
    let mut config = AgentConfig::new("You delegate.").with_sub_agent(worker);
    config.options.custom_tools = vec![noop];
    config.subagent.max_concurrent = max_concurrent;
    config.subagent.timeout = Duration::from_secs(3_600);
    // Room for the longest turn benchmark (`turns:N`).
    config.max_turns = 1_000;
    match extra {
        Extra::Nothing => {}
        Extra::Transcripts => config.sessions_dir = Some(dir.path().join("sessions")),
        Extra::Permissions => {
            config.permissions = PermissionConfig::with_handler(Arc::new(AllowAll));
            config.hooks = Hooks::new().with(Arc::new(Pass));
        }
    }
    (dir, Agent::new(Arc::new(runtime), config))
}

const TURNS: usize = 20;

/// `tool_turns` turns that each call `noop` once, then an answer.
fn turns_script(tool_turns: usize) -> Value {
    let mut turns: Vec<Value> = (0..tool_turns)
        .map(|_| json!({"text": "step", "tool_calls": noop_calls(1), "usage": USAGE}))
        .collect();
    turns.push(json!({"text": "done", "usage": USAGE}));
    json!({"agents": {"root": [{"turns": turns}]}})
}

/// `subagents / 10` MultiTask calls of 10 tasks in one root turn, each
/// subagent making 3 tool calls in its first turn and answering in its
/// second.
fn fanout_script(subagents: usize) -> Value {
    let calls: Vec<Value> = (0..subagents / 10)
        .map(|c| {
            let tasks: Vec<Value> = (0..10)
                .map(|t| json!({"description": format!("task {c}.{t}"), "prompt": "work", "subagent_type": "worker"}))
                .collect();
            json!({"name": "MultiTask", "input": {"tasks": tasks}})
        })
        .collect();
    json!({"agents": {
        "root": [{"turns": [{"tool_calls": calls, "usage": USAGE}, {"text": "all done", "usage": USAGE}]}],
        "worker": [{"turns": [
            {"tool_calls": noop_calls(3), "usage": USAGE},
            {"text": "worked", "usage": USAGE}
        ]}]
    }})
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("engine");
    // The marginal cost of a turn (one model request and one tool call) is
    // the difference of these two, divided by the turns between them.
    for turns in [0, TURNS] {
        let script = turns_script(turns);
        group.bench_function(format!("query_of_{}_turns", turns + 1), |b| {
            b.iter_batched(
                || agent(&script, 3),
                // Returned, so that criterion drops the session (and its
                // folder) outside the measurement.
                |(dir, agent)| {
                    let result = rt.block_on(agent.prompt("go")).unwrap();
                    assert_eq!(result.turns, turns as u32 + 1);
                    (dir, agent)
                },
                BatchSize::PerIteration,
            );
        });
    }
    let script = turns_script(TURNS);
    for (name, extra) in [
        ("transcripts", Extra::Transcripts),
        ("permission_handler_and_hook", Extra::Permissions),
    ] {
        // What is measured really happens.
        let (dir, agent) = agent_with(&script, 3, extra);
        rt.block_on(agent.prompt("go")).unwrap();
        if let Extra::Transcripts = extra {
            let root = dir
                .path()
                .join("sessions")
                .join(agent.session_id().as_str())
                .join("root.jsonl");
            let records = std::fs::read_to_string(&root).unwrap().lines().count();
            assert!(
                records > 2 * TURNS,
                "{records} records in {}",
                root.display()
            );
        }
        group.bench_function(format!("query_of_{}_turns_with_{name}", TURNS + 1), |b| {
            b.iter_batched(
                || agent_with(&script, 3, extra),
                |(dir, agent)| {
                    let result = rt.block_on(agent.prompt("go")).unwrap();
                    assert_eq!(result.turns, TURNS as u32 + 1);
                    (dir, agent)
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.sample_size(10);
    let fanout = fanout_script(1_000);
    group.bench_function("fanout_1000_subagents_3_calls_each", |b| {
        b.iter_batched(
            || agent(&fanout, 10),
            |(dir, agent)| {
                let result = rt.block_on(agent.prompt("go")).unwrap();
                assert_eq!(result.status, TaskStatus::Completed);
                (dir, agent)
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group!(benches, bench);

fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn cpu_time() -> Duration {
    // utime + stime of this process, in clock ticks (100 per second here).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks: u64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// `ZR_BENCH_ONCE=fanout:N`: one fan-out of N subagents in this process,
/// with its wall time, CPU time and peak memory, as one JSON line.
fn once_fanout(subagents: usize) {
    let rt = runtime();
    let (_dir, agent) = agent(&fanout_script(subagents), 10);
    let before = status_kib("VmRSS:");
    let cpu = cpu_time();
    let start = Instant::now();
    let result = rt.block_on(agent.prompt("go")).unwrap();
    let wall = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu);
    let peak = status_kib("VmHWM:");
    assert_eq!(result.status, TaskStatus::Completed);
    let n = subagents as f64;
    println!(
        "{}",
        json!({
            "bench": "fanout",
            "subagents": subagents,
            "wall_ms": wall.as_secs_f64() * 1e3,
            "cpu_ms": cpu.as_secs_f64() * 1e3,
            "wall_us_per_subagent": wall.as_secs_f64() * 1e6 / n,
            "cpu_us_per_subagent": cpu.as_secs_f64() * 1e6 / n,
            "rss_before_kib": before,
            "peak_kib": peak,
            "kib_per_subagent": peak.saturating_sub(before) as f64 / n,
            "tokens": result.total_usage.input_tokens + result.total_usage.output_tokens,
        })
    );
}

/// A `noop` that notes when each call ran: the time between two calls of
/// a one-call-per-turn query is one turn (model request, reply, the call,
/// its result in the history).
#[derive(Debug, Default)]
struct Stamped(std::sync::Mutex<Vec<Instant>>);

impl ToolHandler for Stamped {
    fn call<'a>(
        &'a self,
        _: ToolCall,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.0.lock().unwrap().push(Instant::now());
        Box::pin(async { Ok(ToolOutput::text("ok")) })
    }
}

/// The turns `turns[..k]` and `turns[len-k..]` averaged, in microseconds.
fn first_and_last(stamps: &[Instant], k: usize) -> (f64, f64) {
    let gaps: Vec<f64> = stamps
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1e6)
        .collect();
    assert!(gaps.len() >= 2, "turns:N needs N >= 3");
    let k = k.min(gaps.len() / 2).max(1);
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    (mean(&gaps[..k]), mean(&gaps[gaps.len() - k..]))
}

/// `ZR_BENCH_ONCE=turns:N`: one query of N turns that each call `noop`,
/// with the cost of its first and its last turns (the mean of 10 each,
/// from the first call on: the first turn's own start is the query's).
fn once_turns(turns: usize) {
    let rt = runtime();
    let stamped = Arc::new(Stamped::default());
    let (_dir, agent) = agent_with_noop(
        &turns_script(turns),
        3,
        Extra::Nothing,
        Arc::clone(&stamped) as Arc<dyn ToolHandler>,
    );
    let start = Instant::now();
    let result = rt.block_on(agent.prompt("go")).unwrap();
    let wall = start.elapsed();
    assert_eq!(result.turns, turns as u32 + 1);
    let stamps = stamped.0.lock().unwrap();
    assert_eq!(stamps.len(), turns);
    let (first, last) = first_and_last(&stamps, 10);
    println!(
        "{}",
        json!({
            "bench": "turns",
            "turns": turns,
            "wall_ms": wall.as_secs_f64() * 1e3,
            "first_turns_us": first,
            "last_turns_us": last,
            "last_over_first": last / first,
        })
    );
}

fn main() {
    let once = std::env::var("ZR_BENCH_ONCE").unwrap_or_default();
    let size = |text: &str| {
        text.parse::<usize>()
            .expect("ZR_BENCH_ONCE=fanout:N or turns:N")
    };
    match once.split_once(':').unwrap_or((once.as_str(), "")) {
        ("fanout", "") => return once_fanout(1_000),
        ("fanout", n) => return once_fanout(size(n)),
        ("turns", n) => return once_turns(size(n)),
        ("", _) => {}
        (other, _) => panic!("ZR_BENCH_ONCE={other}: expected fanout:N or turns:N"),
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
