//! The Python package in CI: the wheel built (the `zr` binary inside,
//! with the test step's `dev` profile, so only zr-cli's binary links
//! again), installed into a fresh virtual environment, and its pytest
//! suite run against the binary that wheel installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::{Metadata, cargo_metadata, run_cmd};

/// The pinned pytest of the fresh environment (and its dependencies),
/// the same versions as `xtask/deps/requirements.txt`.
const PYTEST: [&str; 5] = [
    "pytest==9.2.0",
    "iniconfig==2.3.1",
    "packaging==26.4",
    "pluggy==1.7.0",
    "Pygments==2.21.0",
];

/// Builds the wheel with `.deps/venv`'s maturin, installs it into a new
/// environment under the target folder, runs `packages/python/tests`.
pub(crate) fn python(root: &Path, deps: &Path, locked: &[&str]) -> Result<()> {
    let target = target_dir(root)?;
    let wheels = target.join("wheels");
    if wheels.exists() {
        std::fs::remove_dir_all(&wheels).context("could not clear the old wheels")?;
    }
    let mut build = Command::new(deps.join("venv/bin/maturin"));
    build
        .current_dir(root.join("packages/python"))
        .args(["build", "--profile", "dev", "--out"])
        .arg(&wheels)
        .args(locked);
    if std::env::var_os("CARGO_INCREMENTAL").is_none() {
        build.env("CARGO_INCREMENTAL", "0");
    }
    run_cmd(build).context("maturin could not build the wheel")?;
    let wheel = std::fs::read_dir(&wheels)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .context("maturin built no wheel")?;

    let venv = target.join("zr-python-venv");
    if venv.exists() {
        std::fs::remove_dir_all(&venv).context("could not remove the old environment")?;
    }
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let mut make = Command::new(python);
    make.args(["-m", "venv"]).arg(&venv);
    run_cmd(make)?;
    let mut install = Command::new(venv.join("bin/pip"));
    install
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .arg(&wheel)
        .args(PYTEST);
    run_cmd(install).context("the wheel does not install")?;

    let mut pytest = Command::new(venv.join("bin/python"));
    pytest
        .current_dir(root.join("packages/python"))
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        // The binary the wheel installed, not one found elsewhere.
        .env_remove("ZR_BINARY");
    run_cmd(pytest)
}

fn target_dir(root: &Path) -> Result<PathBuf> {
    let metadata = cargo_metadata(root, Metadata::WorkspaceOnly)?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .context("cargo metadata gave no target directory")
}
