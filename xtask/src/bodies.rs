//! The check of captured model request bodies against the official SDKs'
//! request types, run by `cargo xtask ci` after the tests.
//!
//! The test step runs with `ZR_CAPTURED_BODIES` naming an emptied
//! [`CAPTURE_DIR`]; every loopback model server of the tests writes the
//! bodies it receives there (one helper, `crates/zr-test-support/src/capture.rs`).
//! Then `xtask/validate_bodies.py`, in the pinned virtual environment that
//! holds the `anthropic` and `openai` packages, checks each body with
//! pydantic against the SDKs' TypedDicts, extra keys forbidden at every
//! level, prints how many it checked per wire and fails naming each invalid
//! file with its error.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The variable the tests' capture helper reads.
pub(crate) const CAPTURE_VAR: &str = "ZR_CAPTURED_BODIES";
/// Where `ci` has the tests capture bodies, relative to the workspace root.
pub(crate) const CAPTURE_DIR: &str = "target/captured-bodies";
/// The validator, relative to the workspace root.
const VALIDATOR: &str = "xtask/validate_bodies.py";
/// The wires whose providers `ci`'s tests must exercise: a run that
/// captured none of their bodies lost its capture, not its bugs.
pub(crate) const REQUIRED: [&str; 3] = ["anthropic", "openai-chat", "openai-responses"];

/// Creates [`CAPTURE_DIR`] under `root`, emptied of an earlier run's bodies.
pub(crate) fn fresh_dir(root: &Path) -> Result<PathBuf> {
    let dir = root.join(CAPTURE_DIR);
    if dir.exists() {
        fs::remove_dir_all(&dir).with_context(|| format!("could not empty {}", dir.display()))?;
    }
    fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    Ok(dir)
}

/// The validator over the bodies in `dir`, run with the Python of the
/// `deps` folder, failing when a wire of `required` has no body.
pub(crate) fn validator(
    root: &Path,
    deps: &Path,
    dir: &Path,
    required: &[&str],
) -> Result<Command> {
    let python = deps.join("venv/bin/python");
    if !python.exists() {
        bail!(
            "{} is missing: run `cargo xtask deps` first",
            python.display()
        );
    }
    let mut cmd = Command::new(python);
    cmd.arg(root.join(VALIDATOR)).arg(dir);
    for wire in required {
        cmd.args(["--require", wire]);
    }
    Ok(cmd)
}

#[cfg(test)]
mod tests;
