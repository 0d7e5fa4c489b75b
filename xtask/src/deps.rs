//! `cargo xtask deps`: installs the outside programs that tests and benchmarks run against.
//!
//! Everything goes into `.deps/` at the workspace root (git-ignored), from
//! pinned lists kept in `xtask/deps/`:
//!
//! - `.deps/node`: `npm ci` of `package.json` + `package-lock.json` (the MCP
//!   servers, the MCP conformance suite, the TypeScript SDK, and
//!   `restate-server` for the durable-run tests: its platform package holds
//!   the server binary, about 220 MB, most of this folder);
//! - `.deps/npm-cache`: an npm cache holding the packages the examples'
//!   `.mcp.json` start with `npx` ([`NPX_PACKAGES`], at the versions
//!   `package.json` pins; tidy checks that the examples name those), so
//!   that the tests that run an example start its servers offline (their
//!   `$HOME/.npmrc` names this cache, with `prefer-offline`);
//! - `.deps/venv`: a Python virtual environment with `requirements.txt` (the
//!   Python MCP SDK for the fault server; the `anthropic` and `openai` SDKs
//!   whose request types check the captured request bodies);
//! - `.deps/phoenix`: one with `phoenix-requirements.txt` (Arize Phoenix,
//!   the receiver of zr-telemetry's tests; its pins clash with the MCP
//!   SDK's, so it has a folder of its own; about 850 MB);
//! - a headless Chromium (the `zr sessions show --html` test renders its
//!   page): Debian's `chromium-headless-shell` (named in
//!   `xtask/deps/debian.txt`), installed with `apt-get` when no Chromium is
//!   on `PATH` and `ZR_BROWSER` is unset. It goes where the system puts it,
//!   not into `.deps/`: Debian's package pulls shared libraries with it.
//!
//! Each part is redone only when its pinned list changed since the last
//! install (a stamp file holds a copy of the lists), so a second run costs
//! two file reads.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::run_cmd;

mod background;

/// Where the installs go, relative to the workspace root. Tests look here too
/// (or in `$ZR_DEPS_DIR`).
pub(crate) const DEPS_DIR: &str = ".deps";

/// The pinned list of Arize Phoenix, in `xtask/deps`.
const PHOENIX_REQUIREMENTS: &str = "phoenix-requirements.txt";

/// Installs whatever is missing or out of date and waits for all of it;
/// returns the `.deps` folder.
pub(crate) fn run(root: &Path) -> Result<PathBuf> {
    let (deps, phoenix) = start(root)?;
    phoenix.wait()?;
    Ok(deps)
}

/// Like [`run`], except that Arize Phoenix (about 190 MB of wheels, most of
/// its install time spent downloading) installs in the background: `ci`
/// builds and runs the other tests meanwhile and waits for it in the
/// receiver step. Dropping the [`background::Pending`] install kills it.
pub(crate) fn start(root: &Path) -> Result<(PathBuf, background::Pending)> {
    let deps = root.join(DEPS_DIR);
    let pinned = root.join("xtask/deps");
    // First, so that it downloads while the rest installs.
    let phoenix = background::start(&deps.join("phoenix"), &pinned, PHOENIX_REQUIREMENTS)?;
    node(&deps.join("node"), &pinned)?;
    npx(&deps.join(NPM_CACHE), &pinned)?;
    python(&deps.join("venv"), &pinned, "requirements.txt")?;
    browser(&pinned)?;
    Ok((deps, phoenix))
}

/// The Chromium names the tests look for on `PATH`, in order.
const BROWSERS: [&str; 3] = ["chromium-headless-shell", "chromium", "chromium-browser"];

/// A headless Chromium: on `PATH` already, or Debian's packages of
/// `debian.txt` installed with `apt-get` (which needs root; elsewhere the
/// error says what to install).
fn browser(pinned: &Path) -> Result<()> {
    if std::env::var_os("ZR_BROWSER").is_some() {
        println!("deps: browser from ZR_BROWSER");
        return Ok(());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .flat_map(|dir| BROWSERS.map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file());
    if let Some(found) = found {
        println!("deps: browser {}", found.display());
        return Ok(());
    }
    let list = pinned.join("debian.txt");
    let text =
        fs::read_to_string(&list).with_context(|| format!("could not read {}", list.display()))?;
    let packages: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    println!("deps: installing {} with apt-get", packages.join(" "));
    apt_install(&packages).with_context(|| {
        format!(
            "could not install {} (a headless Chromium for the session page test); install it, or set ZR_BROWSER to a Chromium binary",
            packages.join(" ")
        )
    })
}

/// Installs Debian's `packages` with `apt-get` (as root); when that fails
/// (a fresh machine's package lists may be missing or old), updates the
/// lists once and tries again.
pub(crate) fn apt_install(packages: &[&str]) -> Result<()> {
    let install = || {
        let mut cmd = Command::new("apt-get");
        cmd.args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive");
        run_cmd(cmd)
    };
    install().or_else(|_| {
        let mut update = Command::new("apt-get");
        update.args(["update", "-qq"]);
        run_cmd(update)?;
        install()
    })
}

/// `npm ci` into `dir` from the pinned `package.json` and lock file.
fn node(dir: &Path, pinned: &Path) -> Result<()> {
    let files = ["package.json", "package-lock.json"];
    install("node", dir, pinned, &files, || {
        fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
        for file in files {
            fs::copy(pinned.join(file), dir.join(file))
                .with_context(|| format!("could not copy {file} into {}", dir.display()))?;
        }
        let mut cmd = Command::new("npm");
        cmd.current_dir(dir)
            .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"]);
        run_cmd(cmd).context("npm ci failed; is Node.js with npm installed?")
    })
}

/// The npm cache in `.deps` that the examples' `npx` servers are fetched
/// into.
pub(crate) const NPM_CACHE: &str = "npm-cache";

/// The npm packages the examples' `.mcp.json` start with `npx`, as
/// `npx -y NAME@VERSION`: a new user's first command fetches them; `VERSION`
/// is the one `package.json` pins (the tests' own copy in `.deps/node`).
pub(crate) const NPX_PACKAGES: &[&str] = &["@modelcontextprotocol/server-filesystem"];

/// Fetches [`NPX_PACKAGES`] at their pinned versions into the npm cache
/// `dir`, where `npx` keeps what it installs (`_npx`): an `npx -y
/// NAME@VERSION` with this cache and `prefer-offline` then starts without
/// the network.
fn npx(dir: &Path, pinned: &Path) -> Result<()> {
    install("npx", dir, pinned, &["package.json"], || {
        let pins = node_pins(pinned)?;
        for name in NPX_PACKAGES {
            let version = pins
                .get(*name)
                .with_context(|| format!("{name} is not pinned in xtask/deps/package.json"))?;
            let mut cmd = Command::new("npx");
            cmd.arg("--yes")
                .arg("--cache")
                .arg(dir)
                .arg(format!("--package={name}@{version}"))
                .args(["--", "node", "-e", ""]);
            run_cmd(cmd).with_context(|| format!("npx could not fetch {name}@{version}"))?;
        }
        Ok(())
    })
}

/// The `dependencies` of the pinned `package.json`: name to exact version.
pub(crate) fn node_pins(pinned: &Path) -> Result<BTreeMap<String, String>> {
    let path = pinned.join("package.json");
    let text =
        fs::read_to_string(&path).with_context(|| format!("could not read {}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let deps = json["dependencies"]
        .as_object()
        .with_context(|| format!("{} has no dependencies", path.display()))?;
    Ok(deps
        .iter()
        .filter_map(|(name, version)| Some((name.clone(), version.as_str()?.to_owned())))
        .collect())
}

/// A virtual environment in `dir` with the pinned `requirements`.
fn python(dir: &Path, pinned: &Path, requirements: &str) -> Result<()> {
    install("python", dir, pinned, &[requirements], || {
        venv(dir)?;
        let mut pip = Command::new(dir.join("bin/pip"));
        pip.args(["install", "--quiet", "--disable-pip-version-check"])
            .arg("-r")
            .arg(pinned.join(requirements));
        run_cmd(pip).context("pip install failed")
    })
}

/// A fresh virtual environment in `dir` (`$PYTHON`, else `python3`).
fn venv(dir: &Path) -> Result<()> {
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let mut venv = Command::new(python);
    venv.args(["-m", "venv"]).arg(dir);
    run_cmd(venv).context("could not create the virtual environment; is python3 installed?")
}

/// Runs `install` into `dir` unless the stamp there matches the pinned
/// `files`; writes the stamp last, so an interrupted install is redone.
fn install(
    what: &str,
    dir: &Path,
    pinned: &Path,
    files: &[&str],
    install: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let Some(wanted) = outdated(what, dir, pinned, files)? else {
        return Ok(());
    };
    install()?;
    write_stamp(dir, &wanted)
}

/// The stamp `dir` should get once installed, or `None` (and a line saying
/// so) when its stamp matches the pinned `files` already.
fn outdated(what: &str, dir: &Path, pinned: &Path, files: &[&str]) -> Result<Option<String>> {
    let wanted = stamp_of(pinned, files)?;
    if fs::read_to_string(dir.join(STAMP)).ok().as_deref() == Some(wanted.as_str()) {
        println!("deps: {what} packages up to date in {}", dir.display());
        return Ok(None);
    }
    println!("deps: installing {what} packages into {}", dir.display());
    Ok(Some(wanted))
}

/// The file in an install's folder that holds the lists it was made from.
const STAMP: &str = ".zr-stamp";

fn write_stamp(dir: &Path, stamp: &str) -> Result<()> {
    let path = dir.join(STAMP);
    fs::write(&path, stamp).with_context(|| format!("could not write {}", path.display()))
}

/// The stamp for a set of pinned files: their names and contents.
fn stamp_of(pinned: &Path, files: &[&str]) -> Result<String> {
    let mut stamp = String::new();
    for file in files {
        let path = pinned.join(file);
        let text = fs::read_to_string(&path)
            .with_context(|| format!("could not read {}", path.display()))?;
        stamp.push_str(&format!("== {file}\n{text}\n"));
    }
    Ok(stamp)
}
