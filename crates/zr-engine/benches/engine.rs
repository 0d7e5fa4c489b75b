//! Engine overhead with the scripted provider: the cost of one turn (also
//! with transcripts written, and with a permission handler and a hook
//! asked about every call), a fan-out of 1,000 subagents that make
//! three tool calls each, the same 1,000 as the leaves of a tree three
//! levels deep (10 x 10 x 10), and the effects boundary's cost per file-tool
//! call (issue 33): `gate/read_100/default` against
//! `gate/read_100/bypassPermissions`, a query of 100 turns that each Read
//! a small file of the project; in `default` the gate resolves the path
//! and checks it against the agent's places, in `bypassPermissions` it
//! returns at once, so their difference over 100 is the boundary's cost
//! per call.
//!
//! `ZR_BENCH_ONCE=fanout:N cargo bench -p zr-engine --bench engine` runs
//! one fan-out of N subagents (`fanout` alone: 1,000) through
//! `Agent::prompt` and prints its wall time, CPU time and peak memory
//! (`VmHWM`) as a JSON line instead of running criterion;
//! `ZR_BENCH_ONCE=tree:N` does the same for a tree of N leaves three
//! levels deep (`tree` alone: 10 x 10 x 10), beside the flat fan-out;
//! `ZR_BENCH_ONCE=fanout_streamed:N` runs it through `Agent::query`,
//! reading every event as a host that shows them does (`prompt` makes
//! none); `ZR_BENCH_ONCE=turns:N` runs one query of N tool
//! turns and prints the cost of its first and last turns;
//! `ZR_BENCH_ONCE=gate:N` runs N rounds of the `gate/read_100` queries,
//! one of each mode per round in alternating order (a shared machine's
//! slow spell lands on both), and prints their medians, wall and CPU, and
//! the difference per Read. The heap bytes
//! of the same runs come from the `heap` bench (a counting allocator,
//! which would slow this one down).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group};
use futures_util::StreamExt as _;
use serde_json::json;
use support::{
    Extra, TREE_LEVELS, agent, agent_with, agent_with_noop, reader, reads_script, runtime,
    tree_agent, tree_branching, tree_script, tree_size, turns_script,
};
use zr_caps::PermissionMode;
use zr_engine::{QueryOverrides, TaskStatus};
use zr_test_support::bench::fanout_script;
use zr_types::{BoxFuture, ToolCall, ToolContext, ToolError, ToolHandler, ToolOutput};

const TURNS: usize = 20;

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
    // The same 1,000 agents doing the same work, three levels deep: 10
    // leads, 100 subs, 1,000 workers (1,111 agents). Under `cargo test`
    // (no `--bench`: criterion runs each function once, as `cargo xtask
    // ci` does) a tree of 8 leaves checks that it runs.
    let branching = if std::env::args().any(|a| a == "--bench") {
        10
    } else {
        2
    };
    let tree = tree_script(branching);
    let (agents, tokens) = tree_size(branching);
    group.bench_function(
        format!("tree_{}_leaves_{TREE_LEVELS}_levels", branching.pow(3)),
        |b| {
            b.iter_batched(
                || tree_agent(&tree, 10),
                |(dir, agent)| {
                    let result = rt.block_on(agent.prompt("go")).unwrap();
                    assert_eq!(result.status, TaskStatus::Completed);
                    // Every agent of the tree answered (each: 2 responses).
                    assert_eq!(result.total_usage.total(), tokens, "{agents} agents");
                    (dir, agent)
                },
                BatchSize::PerIteration,
            );
        },
    );
    group.finish();
    gate(c, &rt);
}

/// The reads of the `gate/read_N` benchmarks.
const READS: usize = 100;

/// A query of [`READS`] turns that each Read a small file, with the gate
/// on (`default`: a read-only tool, checked against the boundary) and off
/// (`bypassPermissions`).
fn gate(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let script = reads_script(READS);
    let mut group = c.benchmark_group("gate");
    for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
        // What is measured really happens: every Read returns the file.
        let (dir, agent) = reader(&script, mode);
        let result = rt.block_on(agent.prompt("go")).unwrap();
        assert_eq!(result.turns, READS as u32 + 1);
        let reads = agent
            .history()
            .iter()
            .filter(|m| format!("{m:?}").contains("line 9 of a small file"))
            .count();
        assert_eq!(reads, READS, "{mode}: Reads that returned the file");
        drop((result, agent, dir));
        group.bench_function(format!("read_{READS}/{mode}"), |b| {
            b.iter_batched(
                || reader(&script, mode),
                |(dir, agent)| {
                    let result = rt.block_on(agent.prompt("go")).unwrap();
                    assert_eq!(result.turns, READS as u32 + 1);
                    (dir, agent)
                },
                BatchSize::PerIteration,
            );
        });
    }
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

/// This process's CPU time so far, every thread, user and system, to the
/// nanosecond (`/proc/self/stat`'s clock ticks are 10 ms here: a 1,000
/// fan-out's 15 ms read as 10 or 20).
fn cpu_time() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map_or(Duration::ZERO, Duration::from)
}

/// `ZR_BENCH_ONCE=fanout:N`: one fan-out of N subagents in this process,
/// with its wall time, CPU time and peak memory, as one JSON line;
/// `streamed`: through `Agent::query`, every event read.
fn once_fanout(subagents: usize, streamed: bool) {
    let rt = runtime();
    support::warm_up(&rt);
    let (_dir, agent) = agent(&fanout_script(subagents), 10);
    // The peak so far (setting up, the warm-up) is not the query's: `5`
    // resets `VmHWM` to the current RSS (Linux 4.0 and later).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = status_kib("VmRSS:");
    let cpu = cpu_time();
    let start = Instant::now();
    let mut events = 0_usize;
    let result = if streamed {
        rt.block_on(async {
            let mut query = agent.query("go", QueryOverrides::default());
            while query.next().await.is_some() {
                events += 1;
            }
            query.finish().await
        })
    } else {
        rt.block_on(agent.prompt("go"))
    }
    .unwrap();
    let wall = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu);
    let peak = status_kib("VmHWM:");
    assert_eq!(result.status, TaskStatus::Completed);
    let n = subagents as f64;
    println!(
        "{}",
        json!({
            "bench": if streamed { "fanout_streamed" } else { "fanout" },
            "subagents": subagents,
            "events": events,
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

/// `ZR_BENCH_ONCE=tree:N`: one tree of N leaves ([`TREE_LEVELS`] levels
/// of subagents, N^(1/3) children per delegating agent) in this process,
/// with its wall time, CPU time and peak memory as one JSON line, per
/// agent (every subagent of the tree, leads and subs included) and per
/// leaf; the same figures as `fanout:N`'s, so that the two sit side by
/// side.
fn once_tree(leaves: usize) {
    let rt = runtime();
    support::warm_up(&rt);
    let branching = tree_branching(leaves);
    let (agents, tokens) = tree_size(branching);
    let (_dir, agent) = tree_agent(&tree_script(branching), 10);
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = status_kib("VmRSS:");
    let cpu = cpu_time();
    let start = Instant::now();
    let result = rt.block_on(agent.prompt("go")).unwrap();
    let wall = start.elapsed();
    let cpu = cpu_time().saturating_sub(cpu);
    let peak = status_kib("VmHWM:");
    assert_eq!(result.status, TaskStatus::Completed);
    assert_eq!(result.total_usage.total(), tokens, "every agent answered");
    let subagents = (agents - 1) as f64;
    let n = leaves as f64;
    println!(
        "{}",
        json!({
            "bench": "tree",
            "levels": TREE_LEVELS,
            "branching": branching,
            "leaves": leaves,
            "subagents": agents - 1,
            "wall_ms": wall.as_secs_f64() * 1e3,
            "cpu_ms": cpu.as_secs_f64() * 1e3,
            "wall_us_per_subagent": wall.as_secs_f64() * 1e6 / subagents,
            "cpu_us_per_subagent": cpu.as_secs_f64() * 1e6 / subagents,
            "wall_us_per_leaf": wall.as_secs_f64() * 1e6 / n,
            "cpu_us_per_leaf": cpu.as_secs_f64() * 1e6 / n,
            "rss_before_kib": before,
            "peak_kib": peak,
            "kib_per_subagent": peak.saturating_sub(before) as f64 / subagents,
            "kib_per_leaf": peak.saturating_sub(before) as f64 / n,
            "tokens": result.total_usage.total(),
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
        _: &'a ToolCall,
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

/// The median of `xs` (sorted here).
fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// `ZR_BENCH_ONCE=gate:N`: N rounds of a `default` and a
/// `bypassPermissions` query of [`READS`] Reads, alternating which goes
/// first, and their medians (wall and process CPU, in ms) as a JSON line,
/// with the difference per Read in µs.
fn once_gate(rounds: usize) {
    let rt = runtime();
    support::warm_up(&rt);
    let script = reads_script(READS);
    let modes = [PermissionMode::Default, PermissionMode::BypassPermissions];
    let mut wall = [Vec::new(), Vec::new()];
    let mut cpu = [Vec::new(), Vec::new()];
    for round in 0..rounds + 2 {
        for k in [round % 2, 1 - round % 2] {
            let (dir, agent) = reader(&script, modes[k]);
            let cpu_start = cpu_time();
            let start = Instant::now();
            let result = rt.block_on(agent.prompt("go")).unwrap();
            let elapsed = start.elapsed();
            let spent = cpu_time().saturating_sub(cpu_start);
            assert_eq!(result.turns, READS as u32 + 1);
            drop((result, agent, dir));
            // The first two rounds warm up.
            if round >= 2 {
                wall[k].push(elapsed.as_secs_f64() * 1e3);
                cpu[k].push(spent.as_secs_f64() * 1e3);
            }
        }
    }
    let [wall_on, wall_off] = wall.map(|mut xs| median(&mut xs));
    let [cpu_on, cpu_off] = cpu.map(|mut xs| median(&mut xs));
    let per = |on: f64, off: f64| (on - off) * 1e3 / READS as f64;
    println!(
        "{}",
        json!({
            "bench": "gate",
            "rounds": rounds,
            "reads": READS,
            "default_wall_ms": wall_on,
            "bypass_wall_ms": wall_off,
            "default_cpu_ms": cpu_on,
            "bypass_cpu_ms": cpu_off,
            "wall_us_per_read": per(wall_on, wall_off),
            "cpu_us_per_read": per(cpu_on, cpu_off),
        })
    );
}

fn main() {
    match support::once() {
        Some((kind, n)) if kind == "gate" => return once_gate(n),
        Some((kind, n)) if kind == "fanout" => return once_fanout(n, false),
        Some((kind, n)) if kind == "fanout_streamed" => return once_fanout(n, true),
        Some((kind, n)) if kind == "tree" => return once_tree(n),
        Some((kind, n)) if kind == "turns" => return once_turns(n),
        Some((other, _)) => {
            panic!(
                "ZR_BENCH_ONCE={other}: expected fanout:N, fanout_streamed:N, tree:N, turns:N or gate:N"
            )
        }
        None => {}
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
