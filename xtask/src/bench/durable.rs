//! Issue 22's fan-out through Restate (`zr-cli`'s `durable` bench): the
//! same session of subagents run locally and by `zr worker` processes
//! (one, then two) on a restate-server; wall time and the cost per
//! journaled step (the durable run's wall time over the journal entries
//! the admin API counts for the session and its child invocations).

use std::path::Path;

use anyhow::{Result, bail};

use super::report::Report;
use super::{bench_cargo, json_lines, num};

/// Runs the bench: 1,000 subagents, 20 with `quick`.
pub(crate) fn run(root: &Path, quick: bool, report: &mut Report) -> Result<()> {
    let n = if quick { 20 } else { 1_000 };
    let mut cmd = bench_cargo(root);
    cmd.args(["--bench", "durable"])
        .env("ZR_BENCH_SUBAGENTS", n.to_string());
    let lines = json_lines(cmd)?;
    println!("\nThe {n}-subagent fan-out, locally and through Restate (release `zr`):");
    let mut local = None;
    for line in &lines {
        let bench = line.get("bench").and_then(|b| b.as_str()).unwrap_or("?");
        let wall = num(line, "wall_ms")?;
        let entries = num(line, "journal_entries")?;
        if bench == "local" {
            local = Some(wall);
            println!("  {bench:<10} {:>8.2} s", wall / 1e3);
            report.note(
                format!("issue 22: {n}-subagent fan-out, local `zr run`"),
                format!("{:.2} s", wall / 1e3),
                "wall",
            );
            continue;
        }
        if entries <= 0.0 {
            bail!("{bench}: no journal entries counted: {line}");
        }
        let per_step = wall * 1e3 / entries;
        let ratio = local.map_or(String::new(), |l| format!(", {:.1}x local", wall / l));
        println!(
            "  {bench:<10} {:>8.2} s, {entries:.0} journal entries, {per_step:.0} µs per step{ratio}",
            wall / 1e3
        );
        report.note(
            format!(
                "issue 22: {n}-subagent fan-out, `zr run --durable` with {}",
                bench.replace("restate-", "worker x")
            ),
            format!(
                "{:.2} s; {per_step:.0} µs per journaled step ({entries:.0} entries){ratio}",
                wall / 1e3
            ),
            "wall",
        );
    }
    if lines.len() != 3 {
        bail!("the durable bench printed {} runs, not 3", lines.len());
    }
    Ok(())
}
