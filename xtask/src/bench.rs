//! `cargo xtask bench`: every benchmark of the workspace, and the MCP echo comparison.
//!
//! 1. The criterion benchmarks: zr-resolve's resolver, zr-skills' registry
//!    views, zr-tools' file and process tools, zr-engine's turn and
//!    fan-out and `zr agents` over 400 nested agent files (reports under
//!    `target/criterion`), then one fan-out of 1,000
//!    subagents with its peak memory (`ZR_BENCH_ONCE=fanout`).
//! 2. MCP `echo` calls per second over stdio against server-everything, by
//!    zr-mcp (`cargo bench -p zr-mcp --bench echo`) and by the official
//!    TypeScript SDK (`crates/zr-mcp/benches/ts/echo_bench.mjs`), one after
//!    the other in this one run, with their ratio.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{Metadata, cargo, cargo_metadata, deps, run_cmd};

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

/// Runs every benchmark; `quick` shortens criterion's times and the number of
/// echo calls.
pub(crate) fn run(root: &Path, quick: bool) -> Result<()> {
    for (package, bench) in CRITERION {
        let mut cmd = cargo(root);
        cmd.args(["bench", "-p", package, "--bench", bench]);
        if quick {
            cmd.args(["--", "--warm-up-time", "1", "--measurement-time", "2"]);
        }
        run_cmd(cmd)?;
    }
    // Peak memory needs a process of its own: one fan-out, measured alone.
    let mut fanout = cargo(root);
    fanout
        .args(["bench", "-p", "zr-engine", "--bench", "engine"])
        .env("ZR_BENCH_ONCE", "fanout");
    run_cmd(fanout)?;
    let target_dir = cargo_metadata(root, Metadata::WorkspaceOnly)?
        .get("target_directory")
        .and_then(Value::as_str)
        .map_or_else(|| root.join("target"), Into::into);
    println!(
        "\ncriterion results: {} (HTML report: {})",
        target_dir.join("criterion").display(),
        target_dir.join("criterion/report/index.html").display()
    );
    mcp_echo(root, quick)
}

/// zr-mcp against the TypeScript SDK: `echo` calls per second, sequential and
/// 16 in flight.
fn mcp_echo(root: &Path, quick: bool) -> Result<()> {
    let deps = deps::run(root)?;
    let calls = if quick { "500" } else { "5000" };

    let mut zr = cargo(root);
    zr.args([
        "bench", "-p", "zr-mcp", "--bench", "echo", "--", "--calls", calls,
    ])
    .env("ZR_DEPS_DIR", &deps);
    let zr = json_lines(zr)?;

    let mut ts = Command::new("node");
    ts.arg(root.join("crates/zr-mcp/benches/ts/echo_bench.mjs"))
        .args(["--calls", calls])
        .env("ZR_DEPS_DIR", &deps);
    let ts = json_lines(ts)?;

    println!("\nMCP echo over stdio ({calls} calls each):");
    println!("  mode        zr-mcp calls/s   TS SDK calls/s   ratio zr/TS");
    for mode in ["sequential", "concurrent"] {
        let zr_rate = rate(&zr, mode)?;
        let ts_rate = rate(&ts, mode)?;
        println!(
            "  {mode:<11} {zr_rate:>14.0}   {ts_rate:>14.0}   {:>11.2}",
            zr_rate / ts_rate
        );
    }
    Ok(())
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

/// The `calls_per_second` of the line whose `mode` is `mode`.
fn rate(lines: &[Value], mode: &str) -> Result<f64> {
    lines
        .iter()
        .find(|line| line.get("mode").and_then(Value::as_str) == Some(mode))
        .and_then(|line| line.get("calls_per_second"))
        .and_then(Value::as_f64)
        .with_context(|| format!("no `{mode}` figure in the benchmark's output"))
}
