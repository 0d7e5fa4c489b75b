//! `cargo xtask ci`: every check the project requires, in order, failing fast.
//!
//! The steps: `deps` (the pinned outside programs, [`deps`]; Arize Phoenix
//! installs in the background and the receiver step waits for it), `fmt`,
//! `tidy` ([`tidy`]), clippy with `-D warnings`, the tests (10,000 proptest
//! cases per property, 256 with `--quick`; insta in check mode), the
//! Python and Node packages (the wheel and the npm tarball built,
//! installed fresh, their test suites run: [`packages`]), the
//! request bodies the tests' loopback model servers captured checked
//! against the `anthropic` and `openai` Python SDKs' types ([`bodies`]),
//! the crash matrix (zr-cli's `durable::crash_matrix`), the receiver tests
//! against a real Arize Phoenix, doctests, no unreviewed snapshot, `cargo package` of the
//! crates meant for publishing (zr-types, zr-caps, zr-resolve), and
//! `cargo doc` with warnings denied. Benchmarks never run here (`cargo
//! xtask bench`).

use std::cell::RefCell;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use crate::{bodies, cargo, deps, examples, packages, run_cmd, target_dir, tidy};

/// Proptest cases per property in a full run, as DESIGN.md requires.
const PROPTEST_CASES_FULL: &str = "10000";
/// The name that picks zr-telemetry's tests against Arize Phoenix.
const RECEIVER_TESTS: &str = "exported_to_phoenix";
/// Proptest cases per property with `--quick`.
const PROPTEST_CASES_QUICK: &str = "256";

/// Runs every CI step. `quick` lowers the proptest case count for local use.
pub(crate) fn run(root: &Path, quick: bool) -> Result<()> {
    let mut timings = Vec::new();
    let result = run_steps(root, quick, &mut timings);
    print_timings(&timings);
    match &result {
        Ok(()) => println!("ci: all {} steps passed", timings.len()),
        Err(_) => println!("ci: FAILED"),
    }
    result
}

/// The steps, in order; each one's duration is pushed onto `timings`.
fn run_steps(root: &Path, quick: bool, timings: &mut Vec<(&'static str, Duration)>) -> Result<()> {
    let proptest_cases = if quick {
        PROPTEST_CASES_QUICK
    } else {
        PROPTEST_CASES_FULL
    };
    // `--locked` only makes sense once a lock file exists.
    let locked: &[&str] = if root.join("Cargo.lock").exists() {
        &["--locked"]
    } else {
        &[]
    };
    let deps = root.join(deps::DEPS_DIR);
    // Tests must fail on an unreviewed or missing snapshot.
    let test_env = |cmd: &mut Command| {
        cmd.env("PROPTEST_CASES", proptest_cases)
            .env("INSTA_UPDATE", "no")
            .env("INSTA_FORCE_PASS", "0")
            .env("CI", "true")
            .env("ZR_DEPS_DIR", &deps);
    };

    let mut step = |name: &'static str, f: &dyn Fn() -> Result<()>| -> Result<()> {
        println!("\n==> {name}");
        let start = Instant::now();
        let result = f();
        timings.push((name, start.elapsed()));
        result.map_err(|err| anyhow!("ci step `{name}` failed: {err:#}"))
    };

    // Outside programs the tests run against (MCP servers, the conformance
    // suite, the Python SDK): installed from pinned lists, skipped when
    // current. Arize Phoenix goes on installing in the background until the
    // receiver step (dropped, it is killed).
    let phoenix = RefCell::new(None);
    step("deps", &|| {
        let (_, pending) = deps::start(root)?;
        *phoenix.borrow_mut() = Some(pending);
        Ok(())
    })?;

    step("fmt", &|| {
        let mut cmd = cargo(root);
        cmd.args(["fmt", "--all", "--check"]);
        run_cmd(cmd)
    })?;
    step("tidy", &|| tidy::run(root))?;
    step("clippy", &|| {
        let mut cmd = cargo(root);
        cmd.args(["clippy", "--workspace", "--all-targets"])
            .args(locked)
            .args(["--", "-D", "warnings"]);
        run_cmd(cmd)
    })?;
    // The loopback model servers of the tests write every request body
    // they receive here, for the SDK-type check below.
    let captured = root.join(bodies::CAPTURE_DIR);
    step("test", &|| {
        let mut cmd = cargo(root);
        cmd.args(["test", "--workspace", "--all-targets"])
            .args(locked)
            .env(bodies::CAPTURE_VAR, bodies::fresh_dir(root)?);
        test_env(&mut cmd);
        run_cmd(cmd)
    })?;
    // Every example of the workspace, offline (provider keys removed),
    // each within a minute and printing something; built with the test
    // step's profile and features, so only linking is left.
    step("examples", &|| examples::run(root, locked))?;
    // The Python package: the wheel (zr's binary inside) built with the
    // test step's profile, installed into a fresh virtual environment,
    // and its pytest suite of real queries against a loopback model.
    step("python package", &|| packages::python(root, &deps, locked))?;
    // The npm package: packed with that binary, installed into a fresh
    // folder, its `node --test` suite run there.
    step("node package", &|| packages::node(root, locked))?;
    step("request bodies", &|| {
        run_cmd(bodies::validator(
            root,
            &deps,
            &captured,
            &bodies::REQUIRED,
        )?)
    })?;
    // Kills `zr` with SIGKILL after sampled transcript records and resumes
    // it (`ZR_CRASH_POINTS`: 30 here; `all` or a number for a longer run);
    // prints the number of points and the time.
    step("crash matrix", &|| {
        let mut cmd = cargo(root);
        cmd.args(["test", "-p", "zr-cli", "--test", "it"])
            .args(locked)
            .args([
                "--",
                "--ignored",
                "--exact",
                "durable::crash_matrix",
                "--nocapture",
            ]);
        test_env(&mut cmd);
        if std::env::var_os("ZR_CRASH_POINTS").is_none() {
            cmd.env("ZR_CRASH_POINTS", "30");
        }
        run_cmd(cmd)
    })?;
    // The OpenTelemetry export read back from a real receiver: waits for
    // the Phoenix install `deps` started (a line every 30 s), then runs
    // zr-telemetry's ignored tests, which start Phoenix.
    step("receiver", &|| {
        if let Some(pending) = phoenix.borrow_mut().take() {
            pending.wait()?;
        }
        // The whole workspace's `it` binaries (filtered to the receiver
        // tests): `-p zr-telemetry` alone would unify features differently
        // and rebuild half the dependencies.
        let mut cmd = cargo(root);
        cmd.args(["test", "--workspace", "--test", "it"])
            .args(locked)
            .args(["--", "--ignored", "--nocapture", RECEIVER_TESTS]);
        test_env(&mut cmd);
        run_cmd(cmd)
    })?;
    step("doctest", &|| {
        let mut cmd = cargo(root);
        cmd.args(["test", "--workspace", "--doc"]).args(locked);
        test_env(&mut cmd);
        run_cmd(cmd)
    })?;
    step("unreviewed snapshots", &|| {
        tidy::check_no_pending_snapshots(root)
    })?;
    // The crates meant for publishing package and build alone, in
    // dependency order (nothing is uploaded).
    step("package crates", &|| {
        forget_packaged(&PACKAGED)?;
        // The tarballs build in a target folder of their own: cargo takes
        // a registry crate's build as fixed by its version, so in the
        // workspace's folder an earlier run's `zr-types 0.1.0` would be
        // reused with its old sources. Forgetting our crates' fingerprints
        // there rebuilds them and keeps their dependencies' builds.
        let verify = target_dir(root)?.join("package-verify");
        forget_fingerprints(&verify.join("debug/.fingerprint"), &PACKAGED)?;
        let mut cmd = cargo(root);
        cmd.arg("package")
            .args(PACKAGED.iter().flat_map(|name| ["-p", name]))
            .args(locked)
            .arg("--target-dir")
            .arg(&verify);
        run_cmd(cmd)
    })?;
    step("doc", &|| {
        let mut cmd = cargo(root);
        cmd.args(["doc", "--workspace", "--no-deps"])
            .args(locked)
            .env("RUSTDOCFLAGS", "-D warnings");
        run_cmd(cmd)
    })?;
    Ok(())
}

/// The crates meant for publishing, in dependency order.
const PACKAGED: [&str; 3] = ["zr-types", "zr-caps", "zr-resolve"];

/// Removes the build fingerprints of `crates` under `fingerprints`, so
/// that cargo builds them again.
fn forget_fingerprints(fingerprints: &Path, crates: &[&str]) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(fingerprints) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if crates.iter().any(|c| {
            name.strip_prefix(c)
                .is_some_and(|rest| rest.starts_with('-'))
        }) {
            std::fs::remove_dir_all(entry.path())
                .with_context(|| format!("could not remove {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Removes what an earlier `cargo package` unpacked of `crates` in
/// cargo's registry sources: cargo verifies a crate against its
/// workspace siblings unpacked from a temporary registry, and reuses an
/// unpacked copy of the same name and version even when its source
/// changed since (a stale zr-types failed the check here).
fn forget_packaged(crates: &[&str]) -> Result<()> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let Some(sources) = home.map(|h| h.join("registry/src")) else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(&sources) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        for unpacked in std::fs::read_dir(registry.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = unpacked.file_name();
            let name = name.to_string_lossy();
            if crates.iter().any(|c| {
                name.strip_prefix(c)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|v| v.starts_with(|ch: char| ch.is_ascii_digit()))
            }) {
                std::fs::remove_dir_all(unpacked.path())?;
            }
        }
    }
    Ok(())
}

/// Prints how long each step took.
fn print_timings(timings: &[(&str, Duration)]) {
    println!("\n==> timings");
    let mut total = Duration::ZERO;
    for (name, elapsed) in timings {
        println!("  {name:<22} {:>8.1}s", elapsed.as_secs_f64());
        total += *elapsed;
    }
    println!("  {:<22} {:>8.1}s", "total", total.as_secs_f64());
}
