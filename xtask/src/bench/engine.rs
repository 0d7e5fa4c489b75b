//! The engine at scale, each run in a process of its own (peak memory is a
//! process's): fan-outs of 1,000, 10,000 and 100,000 subagents (wall, CPU,
//! peak RSS, per subagent) and a 200-turn query (its last turns' cost
//! against its first), with their ratios; then the heap bytes of the
//! 1,000 fan-out, counted by the `heap` bench's counting allocator; and
//! the same 1,000 leaves as a tree three levels deep beside the flat
//! fan-out ([`tree`]).

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use super::report::Report;
use super::{json_lines, num};

/// One run of zr-engine's `bench` with `ZR_BENCH_ONCE=once`: its JSON line.
fn once(root: &Path, bench: &str, once: &str) -> Result<Value> {
    let mut cmd = super::bench_cargo(root);
    cmd.args(["--bench", bench]).env("ZR_BENCH_ONCE", once);
    json_lines(cmd)?
        .into_iter()
        .next()
        .with_context(|| format!("ZR_BENCH_ONCE={once} of bench {bench} printed no figures"))
}

/// The fan-out sizes: `quick` stops at 10,000.
pub(crate) fn sizes(quick: bool) -> &'static [usize] {
    if quick {
        &[1_000, 10_000]
    } else {
        &[1_000, 10_000, 100_000]
    }
}

/// How many rounds of processes measure the fan-outs: each round runs one
/// process per size, smallest first, so that every size meets the same
/// spells of a shared machine. The machine's speed moves by a third within
/// seconds: the same binary's 1,000 fan-out took 12.5 to 21.5 µs of CPU
/// per subagent in five runs a minute apart, and its 10,000 fan-out 12.5
/// to 20.6; run one size after the other, the 10x ratios moved from 8x to
/// 12x between two whole runs. Instruction counts ([`super::callgrind`])
/// decide where the medians still disagree.
const ROUNDS: usize = 9;

/// `ZR_BENCH_ONCE=fanout:N` for every size in [`ROUNDS`] interleaved
/// rounds; per size, the run of the median wall time (its own CPU and
/// memory with it) and the wall times' range.
fn median_fanouts(root: &Path, sizes: &[usize]) -> Result<Vec<(Value, f64, f64)>> {
    let mut runs: Vec<Vec<Value>> = vec![Vec::new(); sizes.len()];
    for _ in 0..ROUNDS {
        for (n, runs) in sizes.iter().zip(&mut runs) {
            runs.push(once(root, "engine", &format!("fanout:{n}"))?);
        }
    }
    runs.into_iter()
        .map(|mut runs| {
            // (wall, run index), fastest first.
            let mut order = runs
                .iter()
                .enumerate()
                .map(|(at, run)| Ok((num(run, "wall_ms")?, at)))
                .collect::<Result<Vec<_>>>()?;
            order.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (min, max) = (order[0].0, order[order.len() - 1].0);
            Ok((runs.swap_remove(order[order.len() / 2].1), min, max))
        })
        .collect()
}

pub(crate) fn run(root: &Path, quick: bool, report: &mut Report) -> Result<()> {
    let mut runs = Vec::new();
    let mut ranges = Vec::new();
    for (run, min, max) in median_fanouts(root, sizes(quick))? {
        runs.push(run);
        ranges.push((min, max));
    }
    println!(
        "\nEngine fan-out (each subagent: 3 no-op tool calls in one turn, then an answer; 10 at once):"
    );
    println!("  (each row: the process of the median wall time; the range over all of them)");
    println!(
        "  subagents       wall ms (range)         cpu ms  us/subagent wall  us/subagent cpu  peak KiB  KiB/subagent"
    );
    for (run, (min, max)) in runs.iter().zip(&ranges) {
        println!(
            "  {:>9} {:>13.1} ({min:.1}-{max:.1}) {:>10.1} {:>17.2} {:>16.2} {:>9} {:>13.2}",
            num(run, "subagents")?,
            num(run, "wall_ms")?,
            num(run, "cpu_ms")?,
            num(run, "wall_us_per_subagent")?,
            num(run, "cpu_us_per_subagent")?,
            num(run, "peak_kib")?,
            num(run, "kib_per_subagent")?,
        );
    }
    let first = &runs[0];
    let (wall, cpu) = (
        num(first, "wall_us_per_subagent")?,
        num(first, "cpu_us_per_subagent")?,
    );
    report.at_most(
        "wall per subagent at 1,000 ≤ 15 µs (fresh processes, one fan-out each)",
        format!("{wall:.1} µs (CPU {cpu:.1} µs), median of {ROUNDS} processes"),
        wall,
        15.0,
        "wall",
    );
    report.at_most(
        "CPU per subagent at 1,000 ≤ 15 µs (the wall target, without the load)",
        format!("{cpu:.1} µs"),
        cpu,
        15.0,
        "cpu",
    );
    let rss = num(first, "kib_per_subagent")?;
    report.at_most(
        "peak RSS per subagent at 1,000 ≤ 4 KiB",
        format!(
            "{rss:.2} KiB ({} KiB before the query, {} KiB peak)",
            num(first, "rss_before_kib")?,
            num(first, "peak_kib")?
        ),
        rss,
        4.0,
        "rss",
    );
    for pair in runs.windows(2) {
        let times = num(&pair[1], "subagents")? / num(&pair[0], "subagents")?;
        let (wall, cpu) = (
            num(&pair[1], "wall_ms")? / num(&pair[0], "wall_ms")?,
            num(&pair[1], "cpu_ms")? / num(&pair[0], "cpu_ms")?,
        );
        println!("  {times}x subagents: {wall:.2}x wall, {cpu:.2}x cpu");
        let target = format!(
            "{times}x subagents ({} to {}) ≤ {:.0}x the time",
            num(&pair[0], "subagents")?,
            num(&pair[1], "subagents")?,
            times * 1.1
        );
        report.at_most(&target, format!("{wall:.2}x"), wall, times * 1.1, "wall");
        report.at_most(&target, format!("{cpu:.2}x"), cpu, times * 1.1, "cpu");
    }
    let heap = once(root, "heap", "fanout:1000")?;
    let (peak, held) = (
        num(&heap, "peak_kib_per")?,
        num(&heap, "held_at_end_kib_per")?,
    );
    println!(
        "  heap of the 1,000 fan-out (counting allocator): {peak:.2} KiB per subagent at peak, {held:.2} KiB still held by the query's result and session at its end"
    );
    report.at_most(
        "heap per subagent at 1,000 ≤ 4 KiB",
        format!("{peak:.2} KiB at peak, {held:.2} KiB held at the end"),
        peak,
        4.0,
        "heap",
    );

    tree(root, &runs[0])?;

    let turns = once(root, "engine", "turns:200")?;
    let ratio = num(&turns, "last_over_first")?;
    println!(
        "\nA 200-turn query (one no-op call per turn): {:.1} ms; first 10 turns {:.1} us each, last 10 {:.1} us each: last / first {ratio:.2}",
        num(&turns, "wall_ms")?,
        num(&turns, "first_turns_us")?,
        num(&turns, "last_turns_us")?,
    );
    report.at_most(
        "200-turn query: last turns ≤ 1.5x the first",
        format!(
            "{ratio:.2}x ({:.1} µs / {:.1} µs, means of 10)",
            num(&turns, "last_turns_us")?,
            num(&turns, "first_turns_us")?
        ),
        ratio,
        1.5,
        "wall",
    );
    Ok(())
}

/// Issue 37's tree: the 1,000 fan-out's leaves three levels deep (10
/// leads, 100 subs, 1,000 workers: 1,110 subagents), [`ROUNDS`]
/// processes, the one of the median wall time printed beside `flat`
/// (the 1,000 fan-out's median run), per subagent and per leaf; then its
/// heap per subagent.
fn tree(root: &Path, flat: &Value) -> Result<()> {
    let mut runs = (0..ROUNDS)
        .map(|_| once(root, "engine", "tree:1000"))
        .collect::<Result<Vec<_>>>()?;
    let mut order = runs
        .iter()
        .enumerate()
        .map(|(at, run)| Ok((num(run, "wall_ms")?, at)))
        .collect::<Result<Vec<_>>>()?;
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (min, max) = (order[0].0, order[order.len() - 1].0);
    let tree = runs.swap_remove(order[order.len() / 2].1);
    println!(
        "
A tree of 1,000 leaves, 3 levels (10 x 10 x 10: {} subagents), beside the flat 1,000 fan-out (medians of {ROUNDS} processes):",
        num(&tree, "subagents")?
    );
    println!(
        "  shape      subagents  wall ms (range)        cpu ms  us/subagent wall  us/subagent cpu  KiB/subagent"
    );
    println!(
        "  flat       {:>9} {:>8.1} {:>21} {:>8.1} {:>17.2} {:>16.2} {:>13.2}",
        num(flat, "subagents")?,
        num(flat, "wall_ms")?,
        "",
        num(flat, "cpu_ms")?,
        num(flat, "wall_us_per_subagent")?,
        num(flat, "cpu_us_per_subagent")?,
        num(flat, "kib_per_subagent")?,
    );
    println!(
        "  tree       {:>9} {:>8.1} {:>21} {:>8.1} {:>17.2} {:>16.2} {:>13.2}",
        num(&tree, "subagents")?,
        num(&tree, "wall_ms")?,
        format!("({min:.1}-{max:.1})"),
        num(&tree, "cpu_ms")?,
        num(&tree, "wall_us_per_subagent")?,
        num(&tree, "cpu_us_per_subagent")?,
        num(&tree, "kib_per_subagent")?,
    );
    println!(
        "  tree per leaf: {:.2} us wall, {:.2} us cpu, {:.2} KiB",
        num(&tree, "wall_us_per_leaf")?,
        num(&tree, "cpu_us_per_leaf")?,
        num(&tree, "kib_per_leaf")?,
    );
    let heap = once(root, "heap", "tree:1000")?;
    println!(
        "  heap of the tree (counting allocator): {:.2} KiB per subagent at peak, {:.2} KiB held at its end",
        num(&heap, "peak_kib_per")?,
        num(&heap, "held_at_end_kib_per")?,
    );
    Ok(())
}
