//! Instruction counts (`valgrind --tool=callgrind`) where wall time is too
//! noisy to decide on a shared two-core machine: how the engine's fan-out
//! and a query's turns grow, and the resolver at 2,000 against 20,000
//! tools (with a simulated 1 MiB last-level cache, this machine's L2).
//!
//! Counts do not depend on the load; they are the same within a fraction
//! of a percent between runs (the engine's worker threads may interleave
//! differently). Valgrind is installed with `apt-get` when missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::report::Report;
use crate::run_cmd;

pub(crate) fn run(root: &Path, quick: bool, report: &mut Report) -> Result<()> {
    ensure_valgrind()?;
    let engine = bench_executable(root, "zr-engine", "engine")?;
    let resolver = bench_executable(root, "zr-resolve", "resolve")?;
    let out = std::env::temp_dir().join(format!("zr-callgrind-{}", std::process::id()));
    fs::create_dir_all(&out)?;

    // The sizes of the engine bench's wall-time rows (`engine::sizes`):
    // 100,000 runs about a minute under callgrind.
    let sizes = super::engine::sizes(quick);
    let fanout = |n: usize| count(&engine, &format!("fanout:{n}"), &[], &out);
    let counts = sizes
        .iter()
        .map(|&n| fanout(n).map(|c| c.ir))
        .collect::<Result<Vec<_>>>()?;
    println!("\nInstructions (callgrind), whole process:");
    for (pair, counts) in sizes.windows(2).zip(counts.windows(2)) {
        let ((small, large), (i_small, i_large)) = ((pair[0], pair[1]), (counts[0], counts[1]));
        let ratio = i_large as f64 / i_small as f64;
        println!(
            "  fan-out of {small}: {i_small}; of {large}: {i_large}; ratio {ratio:.2} for {}x the subagents",
            large / small
        );
        println!(
            "  per subagent: {:.0} at {small}, {:.0} for each one added up to {large}",
            i_small as f64 / small as f64,
            (i_large - i_small) as f64 / (large - small) as f64
        );
        report.at_most(
            format!(
                "{}x subagents ({small} to {large}) ≤ 11x the time",
                large / small
            ),
            format!(
                "{ratio:.2}x ({:.0} / {:.0} instructions per subagent)",
                i_large as f64 / large as f64,
                i_small as f64 / small as f64
            ),
            ratio,
            1.1 * (large / small) as f64,
            "instructions",
        );
    }

    let turns = |n: usize| count(&engine, &format!("turns:{n}"), &[], &out);
    let (t10, t100, t200) = (turns(10)?.ir, turns(100)?.ir, turns(200)?.ir);
    let early = (t100 - t10) as f64 / 90.0;
    let late = (t200 - t100) as f64 / 100.0;
    println!(
        "  a turn of a query: {early:.0} each for turns 11-100, {late:.0} each for turns 101-200: ratio {:.2}",
        late / early
    );
    report.at_most(
        "200-turn query: last turns ≤ 1.5x the first",
        format!(
            "{:.2}x ({late:.0} instructions per turn of 101-200, {early:.0} of 11-100)",
            late / early
        ),
        late / early,
        1.5,
        "instructions",
    );

    let cache = [
        "--cache-sim=yes",
        "--LL=1048576,16,64",
        "--toggle-collect=*resolve_session*",
    ];
    let (small, large) = if quick { (200, 2_000) } else { (2_000, 20_000) };
    let a = count(&resolver, &small.to_string(), &cache, &out)?;
    let b = count(&resolver, &large.to_string(), &cache, &out)?;
    println!("  resolver session (51 pools) of {small} tools / {large} tools / ratio:");
    println!(
        "    instructions          {:>13} {:>13} {:>6.1}",
        a.ir,
        b.ir,
        b.ir as f64 / a.ir as f64
    );
    // At 200 tools (`--quick`) everything fits the simulated cache: no
    // misses, and no ratio.
    let miss_ratio = (a.ll_misses > 0).then(|| b.ll_misses as f64 / a.ll_misses as f64);
    println!(
        "    last-level misses     {:>13} {:>13} {:>6}",
        a.ll_misses,
        b.ll_misses,
        miss_ratio.map_or_else(|| "-".to_owned(), |r| format!("{r:.1}"))
    );
    let misses = miss_ratio.map_or_else(
        || format!("{} last-level misses against none", b.ll_misses),
        |r| format!("{r:.1}x last-level misses"),
    );
    report.at_most(
        format!("resolver session {large} / {small} tools ≤ 11"),
        format!("{:.2}x instructions, {misses}", b.ir as f64 / a.ir as f64),
        b.ir as f64 / a.ir as f64,
        11.0,
        "instructions",
    );
    let _ = fs::remove_dir_all(&out);
    Ok(())
}

/// What one callgrind run counted.
struct Counts {
    ir: u64,
    /// Data reads and writes that missed the simulated last level (0
    /// without `--cache-sim`).
    ll_misses: u64,
}

/// Runs `exe` once under callgrind with `ZR_BENCH_ONCE=once`.
fn count(exe: &Path, once: &str, extra: &[&str], out: &Path) -> Result<Counts> {
    let file = out.join(format!("callgrind.{}.out", once.replace(':', "-")));
    let mut cmd = Command::new("valgrind");
    cmd.arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", file.display()))
        .args(extra)
        .arg(exe)
        .env("ZR_BENCH_ONCE", once)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    run_cmd(cmd).with_context(|| format!("callgrind of ZR_BENCH_ONCE={once}"))?;
    let text = fs::read_to_string(&file)?;
    parse(&text).with_context(|| format!("no totals in {}", file.display()))
}

/// The `events:` and `summary:` (or `totals:`) lines of a callgrind file.
fn parse(text: &str) -> Option<Counts> {
    let events: Vec<&str> = text
        .lines()
        .find_map(|l| l.strip_prefix("events:"))?
        .split_whitespace()
        .collect();
    let totals: Vec<u64> = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })?
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    let event = |name: &str| {
        events
            .iter()
            .position(|e| *e == name)
            .and_then(|i| totals.get(i).copied())
    };
    Some(Counts {
        ir: event("Ir")?,
        ll_misses: event("DLmr").unwrap_or(0) + event("DLmw").unwrap_or(0),
    })
}

/// Installs valgrind with `apt-get` (as root) when it is not on `PATH`.
fn ensure_valgrind() -> Result<()> {
    let found = || {
        Command::new("valgrind")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if found() {
        return Ok(());
    }
    println!("valgrind is missing: installing it with apt-get (the bench needs it; tests do not)");
    crate::deps::apt_install(&["valgrind"]).context(
        "could not install valgrind; install it (Debian: apt-get install valgrind) and run again",
    )?;
    if !found() {
        bail!("valgrind is still not on PATH after apt-get install");
    }
    Ok(())
}

/// Builds a bench target (`bench` profile) and returns its executable.
fn bench_executable(root: &Path, package: &str, bench: &str) -> Result<PathBuf> {
    let output = super::bench_cargo(root)
        .args(["--bench", bench, "--no-run"])
        .arg("--message-format=json")
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("could not start cargo bench --no-run")?;
    if !output.status.success() {
        bail!("cargo bench -p {package} --bench {bench} --no-run failed");
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m.get("reason").and_then(Value::as_str) == Some("compiler-artifact"))
        .filter(|m| m.pointer("/target/name").and_then(Value::as_str) == Some(bench))
        .find_map(|m| {
            m.get("executable")
                .and_then(Value::as_str)
                .map(PathBuf::from)
        })
        .with_context(|| format!("cargo did not name the executable of bench {bench}"))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn reads_the_events_and_the_summary() {
        let text = "version: 1\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 100 20 10 1 2 3 4 5 6\n";
        let counts = parse(text).unwrap();
        assert_eq!((counts.ir, counts.ll_misses), (100, 11));
        let plain = "events: Ir\ntotals: 42\n";
        assert_eq!(parse(plain).unwrap().ir, 42);
        assert!(parse("events: Ir\n").is_none());
    }
}
