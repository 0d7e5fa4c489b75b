//! The `examples` step of `cargo xtask ci`: builds every example of the
//! workspace (the same profile and features as the test step, which has
//! built them already) and runs each one offline, bounded in time.
//!
//! An example fails the step when it exits unsuccessfully, runs longer
//! than [`BOUND`] (its process group is then killed), or prints nothing on
//! standard output. Provider keys are removed from its environment, so an
//! example always plays its inline script and never calls a real API.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::cargo;

/// How long one example may run.
const BOUND: Duration = Duration::from_secs(60);

/// Variables that would make an example call a real model API.
const PROVIDER_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
];

/// Builds and runs every example; prints one line per example and one
/// line naming them all.
pub(crate) fn run(root: &Path, locked: &[&str]) -> Result<()> {
    let examples = build(root, locked)?;
    if examples.is_empty() {
        bail!("the workspace has no examples");
    }
    let start = Instant::now();
    for (name, exe) in &examples {
        let elapsed = run_one(root, name, exe)?;
        println!("  {name:<28} {:>6.2}s", elapsed.as_secs_f64());
    }
    let names: Vec<&str> = examples.iter().map(|(name, _)| name.as_str()).collect();
    println!(
        "examples: ran {} ({}) in {:.1}s",
        names.len(),
        names.join(", "),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo build --workspace --examples`: each example's name and
/// executable, sorted by name.
fn build(root: &Path, locked: &[&str]) -> Result<Vec<(String, PathBuf)>> {
    let mut cmd = cargo(root);
    cmd.args(["build", "--workspace", "--examples"])
        .args(locked)
        .args(["--message-format", "json-render-diagnostics"])
        .stdout(Stdio::piped());
    let output = cmd.output().context("could not start cargo build")?;
    if !output.status.success() {
        bail!(
            "cargo build --workspace --examples failed: {}",
            output.status
        );
    }
    let mut examples = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let is_example = message["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "example"));
        if message["reason"] != "compiler-artifact" || !is_example {
            continue;
        }
        if let (Some(name), Some(exe)) = (
            message["target"]["name"].as_str(),
            message["executable"].as_str(),
        ) {
            examples.push((name.to_owned(), PathBuf::from(exe)));
        }
    }
    examples.sort();
    Ok(examples)
}

/// Runs one example in its own process group, without provider keys;
/// fails unless it exits successfully within [`BOUND`] having printed
/// something. Returns how long it took.
fn run_one(root: &Path, name: &str, exe: &Path) -> Result<Duration> {
    let mut cmd = Command::new(exe);
    cmd.current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for var in PROVIDER_VARS {
        cmd.env_remove(var);
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("could not start example {name}"))?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_bounded(&mut child)?;
    let elapsed = start.elapsed();
    // A timed-out example's group is killed, so the pipes close.
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let show = || {
        format!(
            "--- stdout\n{}--- stderr\n{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        )
    };
    match status {
        None => bail!("example {name} did not finish within {BOUND:?}\n{}", show()),
        Some(status) if !status.success() => {
            bail!("example {name} failed: {status}\n{}", show())
        }
        Some(_) if stdout.iter().all(u8::is_ascii_whitespace) => {
            bail!("example {name} printed nothing on stdout\n{}", show())
        }
        Some(_) => Ok(elapsed),
    }
}

/// Reads a pipe to its end on a thread of its own.
fn drain(pipe: Option<impl std::io::Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child` up to [`BOUND`]; past it, kills its process group
/// and returns `None`.
fn wait_bounded(child: &mut Child) -> Result<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + BOUND;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            // The whole group: an example's own children go too.
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
