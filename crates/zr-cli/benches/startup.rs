//! Start-up of the `zr` command: the time from starting `zr run` (no MCP
//! server, a provider speaking the OpenAI API on loopback) to its first
//! model request arriving, and the whole of `zr resolve --scenario` on the
//! example scenario (`examples/research-team.json`).
//!
//! usage: `cargo bench -p zr-cli --bench startup -- [--runs N]`
//!
//! Each is run N times (20 by default) after one unmeasured run; prints one
//! JSON line each with the median and the minimum wall time and the mean
//! CPU time (user and system of the `zr` processes, from this process's
//! children's times, which the load does not inflate as it does wall
//! time) in milliseconds:
//! `{"bench":"first_request","runs":N,"median_ms":M,"min_ms":L,"mean_cpu_ms":C}`. The
//! listener reads the request up to the end of its headers, checks that it
//! is the chat completions call, then `zr` is killed: what comes after the
//! first request is the model's time, not start-up's.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

fn runs() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--runs")
        .and_then(|at| args.get(at + 1))
        .map_or(20, |v| v.parse().expect("--runs takes a positive integer"))
}

/// A `zr` command with a clean environment: no provider keys, `home` as
/// `$HOME` (no user agent types or skills), no log filter.
fn zr(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zr"));
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Reads one HTTP request's head from the listener's next connection.
fn request_head(listener: &TcpListener) -> String {
    let (mut stream, _) = listener.accept().unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "zr closed the connection before its request's head");
        head.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Start of `zr run hi` to its first model request, once.
fn first_request(project: &Path, listener: &TcpListener) -> Duration {
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let mut cmd = zr(project);
    cmd.current_dir(project)
        .env("OPENAI_BASE_URL", url)
        .args(["run", "hi"]);
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let head = request_head(listener);
    let elapsed = start.elapsed();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        head.starts_with("POST /v1/chat/completions "),
        "the first request was {head}"
    );
    elapsed
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/research-team.json")
}

/// `zr resolve --scenario` on the example, start to exit, once.
fn resolve(home: &Path) -> Duration {
    let mut cmd = zr(home);
    cmd.current_dir(home)
        .args(["resolve", "--scenario"])
        .arg(example());
    let start = Instant::now();
    let status = cmd.status().unwrap();
    let elapsed = start.elapsed();
    assert!(status.success(), "zr resolve --scenario failed: {status}");
    elapsed
}

/// User and system time of this process's waited-for children so far, in
/// milliseconds (`cutime` and `cstime` of `/proc/self/stat`, in ticks of
/// 10 ms; summed over many runs, their mean is finer than a tick).
fn children_cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks: u64 = [13, 14]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|v| v.parse::<u64>().ok()))
        .sum();
    ticks as f64 * 10.0
}

/// Runs `once` `runs` times and prints its figures as `bench`.
fn report(bench: &str, runs: usize, mut once: impl FnMut() -> Duration) {
    let cpu = children_cpu_ms();
    let mut times: Vec<Duration> = (0..runs).map(|_| once()).collect();
    let cpu = (children_cpu_ms() - cpu) / runs as f64;
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{}",
        json!({
            "bench": bench,
            "runs": times.len(),
            "median_ms": ms(times[times.len() / 2]),
            "min_ms": ms(times[0]),
            "mean_cpu_ms": cpu,
        })
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` (CI) does
    // not, and a benchmark does not run there.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runs = runs();
    let project = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    first_request(project.path(), &listener);
    report("first_request", runs, || {
        first_request(project.path(), &listener)
    });
    resolve(project.path());
    report("resolve_example", runs, || resolve(project.path()));
}
