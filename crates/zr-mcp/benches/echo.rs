//! `echo` calls per second through zr-mcp over stdio: sequential, and 16 in flight.
//!
//! usage: `cargo bench -p zr-mcp --bench echo -- [--calls N] [--concurrency K] [--server-bin PATH]`
//!
//! The server is server-everything (Node), or with `--server-bin` the
//! binary at PATH (the rmcp echo server, `zr-echo-server`, built with
//! `--features echo-server`). Prints one JSON line per mode, the same shape
//! as the official SDKs' counterparts (`benches/ts/echo_bench.mjs`,
//! `benches/py/echo_bench.py`), which `cargo xtask bench` compares it with:
//! `{"client":"zr-mcp","mode":"sequential","calls":N,"concurrency":1,"seconds":S,"calls_per_second":R,"cpu_us_per_call":C}`,
//! C being this process's CPU time (every thread, user and system) per call.
//! The concurrent mode keeps K calls in flight (K workers taking the next
//! call number as each finishes). Needs the servers from `cargo xtask deps`.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use zr_mcp::{HubOptions, Lease, McpConfig, McpHub, ServerConfig, StdioConfig, TransportConfig};

const WARM_UP_CALLS: usize = 100;

fn option(name: &str, fallback: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == name) {
        None => fallback,
        Some(at) => match args.get(at + 1).and_then(|v| v.parse().ok()) {
            Some(value) if value > 0 => value,
            _ => panic!("{name} takes a positive integer"),
        },
    }
}

fn everything_js() -> String {
    zr_test_support::deps::installed(
        "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    )
    .display()
    .to_string()
}

async fn echo(lease: &Lease, i: usize) {
    let message = format!("hello {i}");
    let out = lease
        .call("echo", json!({ "message": message }))
        .await
        .expect("echo answers");
    let answered = out.content.iter().any(
        |c| matches!(c, zr_types::ToolResultContent::Text { text } if text.contains(&message)),
    );
    assert!(!out.is_error && answered, "echo {i} answered {out:?}");
}

/// This process's CPU time so far (every thread).
fn cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map_or(Duration::ZERO, Duration::from)
}

/// The value of `--server-bin`, if given.
fn server_bin() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--server-bin")?;
    Some(
        args.get(at + 1)
            .cloned()
            .expect("--server-bin takes a path"),
    )
}

fn report(mode: &str, calls: usize, concurrency: usize, seconds: f64, cpu: Duration) {
    let line = json!({
        "client": "zr-mcp",
        "mode": mode,
        "calls": calls,
        "concurrency": concurrency,
        "seconds": seconds,
        "calls_per_second": calls as f64 / seconds,
        "cpu_us_per_call": cpu.as_secs_f64() * 1e6 / calls as f64,
    });
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` (CI) does
    // not, and a benchmark does not run there.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let calls = option("--calls", 2000);
    let concurrency = option("--concurrency", 16);
    // Two workers, as a host on this two-core machine would run.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let stdio = match server_bin() {
            Some(bin) => StdioConfig::new(bin),
            None => StdioConfig::new("node").with_args([everything_js(), "stdio".into()]),
        };
        let server = ServerConfig::new(
            "every".parse().expect("a valid name"),
            TransportConfig::Stdio(stdio),
        );
        let hub = McpHub::new(
            McpConfig::from_servers([server]),
            HubOptions::new(std::env::temp_dir()).with_connect_timeout(Duration::from_secs(30)),
        );
        let lease = Arc::new(
            hub.acquire("every")
                .await
                .expect("server-everything starts"),
        );

        // The server's and our first calls are slower.
        for i in 0..WARM_UP_CALLS {
            echo(&lease, i).await;
        }

        let (start, used) = (Instant::now(), cpu());
        for i in 0..calls {
            echo(&lease, i).await;
        }
        report(
            "sequential",
            calls,
            1,
            start.elapsed().as_secs_f64(),
            cpu().saturating_sub(used),
        );

        let next = Arc::new(AtomicUsize::new(0));
        let (start, used) = (Instant::now(), cpu());
        let workers: Vec<_> = (0..concurrency)
            .map(|_| {
                let lease = Arc::clone(&lease);
                let next = Arc::clone(&next);
                tokio::spawn(async move {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= calls {
                            break;
                        }
                        echo(&lease, i).await;
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.await.expect("a worker finishes");
        }
        report(
            "concurrent",
            calls,
            concurrency,
            start.elapsed().as_secs_f64(),
            cpu().saturating_sub(used),
        );
    });
}
