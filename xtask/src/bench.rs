//! `cargo xtask bench`: every benchmark of the workspace, in one run.
//!
//! 1. The criterion benchmarks: zr-resolve's resolver, zr-skills' registry
//!    views, zr-tools' file and process tools, zr-engine's turn and
//!    fan-out, zr-telemetry's fan-out of 1,000 subagents with and without
//!    OTLP export to a loopback receiver, and `zr agents` over 400 nested
//!    agent files (reports under `target/criterion`).
//! 2. The engine at scale, each in a process of its own (peak memory is a
//!    process's): fan-outs of 1,000, 10,000 and 100,000 subagents (wall,
//!    CPU, peak RSS, per subagent) and a 200-turn query (its last turns'
//!    cost against its first), with their ratios.
//! 3. Start-up: `zr run` to its first model request, and
//!    `zr resolve --scenario` on the example (`zr-cli`'s `startup` bench).
//! 4. Instruction counts (`valgrind --tool=callgrind`, installed if
//!    missing) of what wall time is too noisy to decide on a shared
//!    machine: the fan-out's growth, the turns' growth, the resolver at
//!    2,000 and 20,000 tools ([`callgrind`]).
//! 5. MCP `echo` calls over stdio by zr-mcp, the official TypeScript SDK and
//!    the official Python SDK, against server-everything and against the
//!    rmcp echo server ([`mcp`]).
//!
//! `--quick` shortens criterion's times, uses smaller sizes and fewer calls.

mod callgrind;
mod mcp;

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{Metadata, cargo, cargo_metadata, run_cmd};

/// The criterion benchmarks: (package, bench target).
const CRITERION: &[(&str, &str)] = &[
    ("zr-resolve", "resolve"),
    ("zr-skills", "registry"),
    ("zr-skills", "reload"),
    ("zr-tools", "tools"),
    ("zr-engine", "engine"),
    ("zr-telemetry", "fanout"),
    ("zr-cli", "agents"),
];

/// Runs every benchmark; `quick` shortens criterion's times, the sizes and
/// the number of echo calls.
pub(crate) fn run(root: &Path, quick: bool) -> Result<()> {
    print_load("start");
    for (package, bench) in CRITERION {
        let mut cmd = cargo(root);
        cmd.args(["bench", "-p", package, "--bench", bench]);
        if quick {
            cmd.args(["--", "--warm-up-time", "1", "--measurement-time", "2"]);
            // The telemetry fan-out's quick size.
            cmd.env("ZR_BENCH_SUBAGENTS", "100");
        }
        run_cmd(cmd)?;
    }
    let target_dir = target_dir(root)?;
    println!(
        "\ncriterion results: {} (HTML report: {})",
        target_dir.join("criterion").display(),
        target_dir.join("criterion/report/index.html").display()
    );
    engine_scale(root, quick)?;
    startup(root, quick)?;
    callgrind::run(root, quick)?;
    mcp::run(root, &target_dir, quick)?;
    print_load("end");
    Ok(())
}

/// The workspace's target directory.
fn target_dir(root: &Path) -> Result<std::path::PathBuf> {
    Ok(cargo_metadata(root, Metadata::WorkspaceOnly)?
        .get("target_directory")
        .and_then(Value::as_str)
        .map_or_else(|| root.join("target"), Into::into))
}

/// The load average, printed with the figures: they are only as good as
/// the machine was quiet.
fn print_load(when: &str) {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!(
        "\nload average at the {when} of the run: {}",
        load.join(" ")
    );
}

/// One run of the engine bench with `ZR_BENCH_ONCE=once`: its JSON line.
fn engine_once(root: &Path, once: &str) -> Result<Value> {
    let mut cmd = cargo(root);
    cmd.args(["bench", "-p", "zr-engine", "--bench", "engine"])
        .env("ZR_BENCH_ONCE", once);
    json_lines(cmd)?
        .into_iter()
        .next()
        .with_context(|| format!("ZR_BENCH_ONCE={once} printed no figures"))
}

/// The engine at scale: fan-outs of growing size, and a long query.
fn engine_scale(root: &Path, quick: bool) -> Result<()> {
    let sizes: &[usize] = if quick {
        &[1_000, 10_000]
    } else {
        &[1_000, 10_000, 100_000]
    };
    let mut runs = Vec::new();
    for &n in sizes {
        runs.push(engine_once(root, &format!("fanout:{n}"))?);
    }
    println!(
        "\nEngine fan-out (each subagent: 3 no-op tool calls in one turn, then an answer; 10 at once):"
    );
    println!(
        "  subagents       wall ms     cpu ms  us/subagent wall  us/subagent cpu  peak KiB  KiB/subagent"
    );
    for run in &runs {
        println!(
            "  {:>9} {:>13.1} {:>10.1} {:>17.2} {:>16.2} {:>9} {:>13.2}",
            num(run, "subagents")?,
            num(run, "wall_ms")?,
            num(run, "cpu_ms")?,
            num(run, "wall_us_per_subagent")?,
            num(run, "cpu_us_per_subagent")?,
            num(run, "peak_kib")?,
            num(run, "kib_per_subagent")?,
        );
    }
    for pair in runs.windows(2) {
        println!(
            "  {}x subagents: {:.2}x wall, {:.2}x cpu",
            num(&pair[1], "subagents")? / num(&pair[0], "subagents")?,
            num(&pair[1], "wall_ms")? / num(&pair[0], "wall_ms")?,
            num(&pair[1], "cpu_ms")? / num(&pair[0], "cpu_ms")?,
        );
    }
    let turns = engine_once(root, "turns:200")?;
    println!(
        "\nA 200-turn query (one no-op call per turn): {:.1} ms; first 10 turns {:.1} us each, last 10 {:.1} us each: last / first {:.2}",
        num(&turns, "wall_ms")?,
        num(&turns, "first_turns_us")?,
        num(&turns, "last_turns_us")?,
        num(&turns, "last_over_first")?,
    );
    Ok(())
}

/// `zr run` to its first model request, and `zr resolve --scenario`.
fn startup(root: &Path, quick: bool) -> Result<()> {
    let mut cmd = cargo(root);
    cmd.args(["bench", "-p", "zr-cli", "--bench", "startup", "--"])
        .args(["--runs", if quick { "5" } else { "20" }]);
    let lines = json_lines(cmd)?;
    println!("\nStart-up of the release `zr` (no MCP server):");
    for line in &lines {
        println!(
            "  {:<16} median {:>6.1} ms, min {:>6.1} ms ({} runs)",
            line.get("bench").and_then(Value::as_str).unwrap_or("?"),
            num(line, "median_ms")?,
            num(line, "min_ms")?,
            num(line, "runs")?,
        );
    }
    Ok(())
}

/// The number under `key` of a JSON line.
fn num(line: &Value, key: &str) -> Result<f64> {
    line.get(key)
        .and_then(Value::as_f64)
        .with_context(|| format!("no `{key}` in {line}"))
}

/// Runs `cmd` (stderr inherited) and parses the JSON lines it prints.
fn json_lines(mut cmd: Command) -> Result<Vec<Value>> {
    let shown = format!("{cmd:?}");
    let output = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("could not start {shown}"))?;
    if !output.status.success() {
        bail!("{shown} failed: {}", output.status);
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| line.starts_with('{'))
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}
