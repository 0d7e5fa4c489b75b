//! MCP `echo` calls per second over stdio, by three clients against two
//! servers, in one run: zr-mcp (`cargo bench -p zr-mcp --bench echo`), the
//! official TypeScript SDK (`crates/zr-mcp/benches/ts/echo_bench.mjs`) and
//! the official Python SDK (`crates/zr-mcp/benches/py/echo_bench.py`),
//! against server-everything (Node) and against `zr-echo-server` (rmcp's
//! server side, built here with the `echo-server` feature), which costs
//! so little per call that the clients' own cost decides.
//!
//! Issue 18's targets (zr-mcp at least 1.5x the TypeScript client's calls
//! per second sequentially, 2x with 16 in flight) are for the client, so
//! they are judged against the echo server. Against server-everything one
//! Node event loop answers every call and bounds every client alike; its
//! ratios are reported beside them, not judged.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use serde_json::Value;

use super::report::Report;
use super::{json_lines, num};
use crate::{deps, run_cmd};

/// The Node server, which bounds every client (its ratios are reported,
/// not judged).
const SERVER_EVERYTHING: &str = "server-everything";

/// The clients, as printed.
const CLIENTS: [&str; 3] = ["zr-mcp", "TS SDK", "Python SDK"];

pub(crate) fn run(root: &Path, target_dir: &Path, quick: bool, report: &mut Report) -> Result<()> {
    let deps = deps::run(root)?;
    let calls = if quick { "500" } else { "5000" };
    // The echo server is a binary of the `echo` bench's package: cargo
    // builds it with the bench (`bench` profile, in `target/release`).
    let mut build = super::bench_cargo(root);
    build.args(["--bench", "echo", "--no-run"]);
    run_cmd(build)?;
    let echo_server = target_dir.join("release/zr-echo-server");
    for (server, bin) in [
        (SERVER_EVERYTHING, None),
        ("zr-echo-server (rmcp)", Some(echo_server.as_path())),
    ] {
        let with_server = |cmd: &mut Command| {
            if let Some(bin) = bin {
                cmd.arg("--server-bin").arg(bin);
            }
        };
        let mut zr = super::bench_cargo(root);
        zr.args(["--bench", "echo", "--", "--calls", calls])
            .env("ZR_DEPS_DIR", &deps);
        with_server(&mut zr);
        let mut ts = Command::new("node");
        ts.arg(root.join("crates/zr-mcp/benches/ts/echo_bench.mjs"))
            .args(["--calls", calls])
            .env("ZR_DEPS_DIR", &deps);
        with_server(&mut ts);
        let mut py = Command::new(deps.join("venv/bin/python"));
        py.arg(root.join("crates/zr-mcp/benches/py/echo_bench.py"))
            .args(["--calls", calls])
            .env("ZR_DEPS_DIR", &deps);
        with_server(&mut py);
        let lines = [json_lines(zr)?, json_lines(ts)?, json_lines(py)?];
        print_table(server, calls, &lines, report)?;
    }
    Ok(())
}

fn print_table(
    server: &str,
    calls: &str,
    lines: &[Vec<Value>; 3],
    report: &mut Report,
) -> Result<()> {
    println!(
        "\nMCP echo over stdio against {server} ({calls} calls each, 16 in flight when concurrent):"
    );
    println!(
        "  mode        {:>12} calls/s (cpu us/call)   zr/TS   zr/Python",
        "client"
    );
    for mode in ["sequential", "concurrent"] {
        let mut rates = Vec::new();
        let mut cpus = Vec::new();
        for (client, lines) in CLIENTS.iter().zip(lines) {
            let line = of_mode(lines, mode)?;
            let rate = num(line, "calls_per_second")?;
            let cpu = num(line, "cpu_us_per_call")?;
            println!("  {mode:<11} {client:>12} {rate:>8.0} ({cpu:>6.1})");
            rates.push(rate);
            cpus.push(cpu);
        }
        let (limit, shown) = if mode == "sequential" {
            (1.5, "sequential")
        } else {
            (2.0, "16 in flight")
        };
        let ratio = rates[0] / rates[1];
        let measured = format!(
            "{ratio:.2}x ({:.0} / {:.0} calls/s; Python {:.0}, zr/Python {:.2}x)",
            rates[0],
            rates[1],
            rates[2],
            rates[0] / rates[2]
        );
        if server == SERVER_EVERYTHING {
            report.note(
                format!("MCP against {server} (bound by the server), {shown}: zr-mcp / TS client"),
                measured,
                "wall",
            );
        } else {
            report.at_least(
                format!("MCP against {server}, {shown}: zr-mcp ≥ {limit}x the TS client"),
                measured,
                ratio,
                limit,
                "wall",
            );
        }
        report.note(
            format!("MCP against {server}, {shown}: client CPU per call"),
            format!(
                "zr-mcp {:.1} µs, TS {:.1} µs, Python {:.1} µs (TS / zr {:.2}x)",
                cpus[0],
                cpus[1],
                cpus[2],
                cpus[1] / cpus[0]
            ),
            "cpu",
        );
        println!(
            "  {mode:<11} {:>12} {:>8} {:>8} {:>13.2} {:>11.2}",
            "ratio",
            "",
            "",
            rates[0] / rates[1],
            rates[0] / rates[2]
        );
    }
    Ok(())
}

/// The line whose `mode` is `mode`.
fn of_mode<'a>(lines: &'a [Value], mode: &str) -> Result<&'a Value> {
    lines
        .iter()
        .find(|line| line.get("mode").and_then(Value::as_str) == Some(mode))
        .with_context(|| format!("no `{mode}` figure in the benchmark's output"))
}
