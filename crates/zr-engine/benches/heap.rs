//! Heap bytes of the engine bench's runs, counted by a counting global
//! allocator (`peak_alloc`), which the timed `engine` bench does not have:
//! the count costs a few atomic operations per allocation.
//!
//! `ZR_BENCH_ONCE=fanout:N cargo bench -p zr-engine --bench heap` runs one
//! fan-out of N subagents (as the `engine` bench's) and prints, as one JSON
//! line, the heap in use before the query, its peak while the query ran
//! and what is still held when it has returned, per subagent;
//! `ZR_BENCH_ONCE=tree:N` for the `engine` bench's tree of N leaves, per
//! subagent of the tree. `ZR_BENCH_ONCE=turns:N` does the same
//! for one query of N tool turns, per turn. Without `ZR_BENCH_ONCE` it
//! returns at once (under `cargo test --all-targets` too).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

// The turn benchmarks' extras (transcripts, a permission handler) are the
// `engine` bench's.
#[allow(dead_code)]
mod support;

use peak_alloc::PeakAlloc;
use serde_json::json;
use support::{agent, runtime, tree_agent, tree_branching, tree_script, tree_size, turns_script};
use zr_test_support::bench::fanout_script;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Runs one query of `script` with `max_concurrent` subagents at once and
/// prints its heap figures, per `unit` (`per` of them).
fn measure(bench: &str, script: &serde_json::Value, max_concurrent: usize, unit: &str, per: usize) {
    measure_session(bench, || agent(script, max_concurrent), unit, per);
}

/// As [`measure`], on the session `session` makes (after the warm-up).
fn measure_session(
    bench: &str,
    session: impl FnOnce() -> (tempfile::TempDir, zr_engine::Agent),
    unit: &str,
    per: usize,
) {
    let rt = runtime();
    support::warm_up(&rt);
    let (dir, agent) = session();
    let before = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let result = rt.block_on(agent.prompt("go")).unwrap();
    let peak = HEAP.peak_usage();
    let held = HEAP.current_usage();
    assert_eq!(result.status, zr_engine::TaskStatus::Completed);
    drop(result);
    let after_result = HEAP.current_usage();
    drop((agent, dir));
    let n = per as f64;
    let kib = |bytes: usize| bytes as f64 / 1024.0;
    println!(
        "{}",
        json!({
            "bench": format!("heap_{bench}"),
            unit: per,
            "heap_before_kib": kib(before),
            "heap_peak_kib": kib(peak),
            "peak_kib_per": kib(peak.saturating_sub(before)) / n,
            "held_at_end_kib_per": kib(held.saturating_sub(before)) / n,
            "session_after_result_kib_per": kib(after_result.saturating_sub(before)) / n,
        })
    );
}

fn main() {
    match support::once() {
        Some((kind, n)) if kind == "fanout" => {
            measure("fanout", &fanout_script(n), 10, "subagents", n)
        }
        Some((kind, n)) if kind == "tree" => {
            // Per agent of the tree (leads and subs too), as the `engine`
            // bench's `tree:N`.
            let branching = tree_branching(n);
            let script = tree_script(branching);
            let subagents = tree_size(branching).0 - 1;
            measure_session("tree", || tree_agent(&script, 10), "subagents", subagents);
        }
        Some((kind, n)) if kind == "turns" => measure("turns", &turns_script(n), 3, "turns", n),
        Some((other, _)) => panic!("ZR_BENCH_ONCE={other}: expected fanout:N, tree:N or turns:N"),
        None => {}
    }
}
