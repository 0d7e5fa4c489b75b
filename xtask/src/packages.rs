//! The Python and Node packages in CI: the wheel built (the `zr` binary
//! inside, with the test step's `dev` profile, so only zr-cli's binary
//! links again), installed into a fresh virtual environment, and its
//! pytest suite run against the binary that wheel installed; the npm
//! package packed with that binary, installed into a fresh folder, and
//! its `node --test` suite run there.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use crate::{cargo, run_cmd, target_dir};

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

/// Packs `packages/node` with the `dev` build of `zr` in `bin/`,
/// installs the tarball into a new folder under the target folder, runs
/// its tests there (they import the installed `zr-agents`).
pub(crate) fn node(root: &Path, locked: &[&str]) -> Result<()> {
    let target = target_dir(root)?;
    let mut build = cargo(root);
    build
        .args(["build", "-p", "zr-cli", "--bin", "zr"])
        .args(locked);
    run_cmd(build)?;
    let package = root.join("packages/node");
    std::fs::create_dir_all(package.join("bin"))?;
    std::fs::copy(target.join("debug/zr"), package.join("bin/zr"))
        .context("could not copy the zr binary into packages/node/bin")?;
    let work = target.join("zr-node");
    if work.exists() {
        std::fs::remove_dir_all(&work).context("could not remove the old npm folder")?;
    }
    let (packed, fresh) = (work.join("pack"), work.join("fresh"));
    std::fs::create_dir_all(&packed)?;
    std::fs::create_dir_all(&fresh)?;
    let mut pack = Command::new("npm");
    pack.current_dir(&package)
        .args(["pack", "--silent", "--pack-destination"])
        .arg(&packed);
    run_cmd(pack).context("npm pack failed")?;
    let tarball = std::fs::read_dir(&packed)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .context("npm pack made no tarball")?;
    std::fs::write(
        fresh.join("package.json"),
        r#"{"name": "fresh", "private": true, "type": "module"}"#,
    )?;
    let mut install = Command::new("npm");
    install
        .current_dir(&fresh)
        .args(["install", "--silent", "--no-audit", "--no-fund"])
        .arg(&tarball);
    run_cmd(install).context("the npm package does not install")?;
    let tests = fresh.join("test");
    std::fs::create_dir_all(&tests)?;
    for file in std::fs::read_dir(package.join("test"))? {
        let file = file?;
        std::fs::copy(file.path(), tests.join(file.file_name()))?;
    }
    let mut run = Command::new("node");
    run.current_dir(&fresh)
        .args(["--test", "test/query.test.js"])
        .env_remove("ZR_BINARY");
    run_cmd(run)
}
