//! The fan-out of issue 22 through Restate: `ZR_BENCH_SUBAGENTS` subagents
//! (1,000 by default; a multiple of ten), each making one Bash call, run
//! by `zr run` locally, then by `zr run --durable` on a restate-server
//! with one and with two `zr worker` processes behind a loopback proxy
//! (the scale-out test's session, its commands not sleeping).
//!
//! usage: `cargo bench -p zr-cli --bench durable` (without `--bench`, as
//! `cargo test --all-targets` runs it, it returns at once)
//!
//! Prints one JSON line per run: `{"bench":"local"|"restate-1"|
//! "restate-2","subagents":N,"wall_ms":W,"journal_entries":E}`; the
//! entries (the session's and its child invocations') are counted from
//! the admin API, 0 for the local run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs,
    dead_code,
    reason = "a bench over the tests' helpers"
)]

#[path = "../tests/it/scale_out.rs"]
#[allow(
    unused_imports,
    reason = "the kill test's imports; its tests are not built here"
)]
mod scale_out;
#[path = "../tests/it/support.rs"]
mod support;
#[path = "../tests/it/worker.rs"]
#[allow(
    unused_imports,
    reason = "its tests' imports; its tests are not built here"
)]
mod worker;

use std::time::Instant;

use serde_json::json;

use scale_out::{Cluster, PROMPT, local_run, spawn};

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n: usize = std::env::var("ZR_BENCH_SUBAGENTS")
        .ok()
        .map_or(1_000, |v| v.parse().expect("ZR_BENCH_SUBAGENTS: a number"));
    let started = Instant::now();
    let local = local_run(n, "0");
    println!(
        "{}",
        json!({"bench": "local", "subagents": n, "wall_ms": started.elapsed().as_millis(), "journal_entries": 0})
    );
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    for workers in [1, 2] {
        let cluster = Cluster::start(n, workers, "0");
        let started = Instant::now();
        let out = cluster.finish(spawn(&cluster.shared, &["run", "--durable", PROMPT]));
        let wall = started.elapsed();
        cluster.check(&out, &local, n);
        let session: zr_types::SessionId = support::stderr(&out)
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.strip_suffix(':'))
            .and_then(|s| s.parse().ok())
            .expect("`session ID: submitted to ...`");
        let entries = rt
            .block_on(zr_restate::journal_entries(
                &cluster.server.admin_url(),
                &session,
            ))
            .expect("the admin API counts the journal");
        println!(
            "{}",
            json!({"bench": format!("restate-{workers}"), "subagents": n, "wall_ms": wall.as_millis(), "journal_entries": entries})
        );
    }
}
