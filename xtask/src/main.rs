//! `cargo xtask`: project automation for zr (`ci`, `tidy`, `bench`).
// xtask is a command-line tool: printing to stdout and stderr is its job.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod bodies;
mod ci;
mod deps;
mod examples;
mod packages;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

const USAGE: &str = "\
usage: cargo xtask <command> [--quick]

commands:
  ci [--quick]     fmt, tidy, clippy, tests, the request bodies the tests
                   captured checked against the anthropic and openai SDKs'
                   types, every example run offline, the crash matrix, snapshot review check, docs
                   (--quick: 256 proptest cases instead of 10000)
  tidy             layering and source checks only
  packages         build the Python wheel and the npm package, install
                   each fresh, run their test suites (steps of `ci`;
                   maturin and pytest from .deps, or $ZR_DEPS_DIR)
  examples         build every example and run each offline (a step of
                   `ci`)
  deps             install the MCP servers, conformance suite and Python
                   SDKs that tests run against into .deps/ (pinned in
                   xtask/deps/; also the first step of `ci`)
  bench [--quick]  run every criterion benchmark and the MCP echo
                   comparison (zr-mcp against the TypeScript SDK)
                   (--quick: shorter warm-up and measurement)";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Parses the command line and dispatches to a subcommand.
fn run() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(command) = args.next() else {
        println!("{USAGE}");
        bail!("no command given");
    };
    let mut quick = false;
    for arg in args {
        match arg.as_str() {
            "--quick" if !["tidy", "deps", "examples", "packages"].contains(&command.as_str()) => {
                quick = true
            }
            other => bail!("unknown argument `{other}` for `{command}`\n\n{USAGE}"),
        }
    }
    let root = project_root()?;
    match command.as_str() {
        "ci" => ci::run(&root, quick),
        "tidy" => tidy::run(&root),
        "examples" => examples::run(&root, &["--locked"]),
        "deps" => deps::run(&root).map(|_| ()),
        "packages" => {
            let deps = std::env::var_os("ZR_DEPS_DIR")
                .map_or_else(|| root.join(deps::DEPS_DIR), PathBuf::from);
            packages::python(&root, &deps, &["--locked"])?;
            packages::node(&root, &["--locked"])
        }
        "bench" => bench::run(&root, quick),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}

/// The workspace root: the parent of this crate's manifest directory.
fn project_root() -> Result<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .context("xtask's manifest directory has no parent")
}

/// A `cargo` command run from the workspace root, using the same cargo that
/// launched xtask when there is one.
fn cargo(root: &Path) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root);
    // No incremental caches unless asked for: they are a large share of the
    // target folder (14 of 23 GB in a long-used one), CI builds every crate
    // once, and a CI run once failed on a full disk while linking tests.
    if std::env::var_os("CARGO_INCREMENTAL").is_none() {
        cmd.env("CARGO_INCREMENTAL", "0");
    }
    cmd
}

/// Runs `cmd` with inherited stdio and fails unless it exits successfully.
fn run_cmd(mut cmd: Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed: {status}");
    }
    Ok(())
}

/// How much `cargo metadata` to ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metadata {
    /// `--no-deps`: workspace members and their direct dependencies only.
    WorkspaceOnly,
    /// Everything, including the resolved dependency graph (`resolve`).
    WithResolve,
}

/// `cargo metadata --format-version 1` (with `--no-deps` for
/// [`Metadata::WorkspaceOnly`]), parsed.
fn cargo_metadata(root: &Path, scope: Metadata) -> Result<serde_json::Value> {
    let mut cmd = cargo(root);
    cmd.args(["metadata", "--format-version", "1"]);
    if scope == Metadata::WorkspaceOnly {
        cmd.arg("--no-deps");
    }
    let output = cmd.output().context("could not start cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("cargo metadata printed invalid JSON")
}

/// The workspace's target directory, as `cargo metadata` says.
fn target_dir(root: &Path) -> Result<std::path::PathBuf> {
    Ok(cargo_metadata(root, Metadata::WorkspaceOnly)?
        .get("target_directory")
        .and_then(serde_json::Value::as_str)
        .map_or_else(|| root.join("target"), Into::into))
}

/// Every file under `dir` (recursively), sorted, skipping `target` and
/// hidden directories. A missing `dir` yields nothing.
fn walk_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        if !dir.is_dir() {
            continue;
        }
        let entries = std::fs::read_dir(&dir)
            .with_context(|| format!("could not read directory {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("could not read {}", dir.display()))?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if entry.file_type()?.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    pending.push(path);
                }
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// `path` relative to `root` for messages, or as is if it lies elsewhere.
fn display_rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
