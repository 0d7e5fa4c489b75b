//! The Arize Phoenix install, run in the background while `ci` builds.
//!
//! Phoenix is the largest install of `cargo xtask deps` (about 190 MB of
//! wheels, 850 MB installed) and most of its time is the download, which
//! costs the build next to nothing. So `ci` starts it first, goes on with
//! the other installs, the build and the tests, and waits for it only in
//! the receiver step. pip writes to `.deps/phoenix-install.log` (not into
//! the build's output); the stamp is written once pip succeeded, so an
//! install that failed or was killed is redone next time.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::{outdated, venv, write_stamp};

/// How often [`Pending::wait`] says it is still waiting.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// An install under way, or nothing to wait for. Dropping it kills pip.
#[derive(Debug)]
pub(crate) struct Pending {
    running: Option<Running>,
}

#[derive(Debug)]
struct Running {
    child: Child,
    dir: PathBuf,
    log: PathBuf,
    stamp: String,
    started: Instant,
}

/// Starts pip installing `requirements` (every package pinned, `--no-deps`)
/// into a virtual environment in `dir`, unless it is up to date.
pub(super) fn start(dir: &Path, pinned: &Path, requirements: &str) -> Result<Pending> {
    let Some(stamp) = outdated("phoenix", dir, pinned, &[requirements])? else {
        return Ok(Pending { running: None });
    };
    venv(dir)?;
    let log = dir.with_file_name("phoenix-install.log");
    let out =
        fs::File::create(&log).with_context(|| format!("could not create {}", log.display()))?;
    let err = out.try_clone().context("could not share the install log")?;
    let child = Command::new(dir.join("bin/pip"))
        .args([
            "install",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
        ])
        .arg("--no-deps")
        .arg("-r")
        .arg(pinned.join(requirements))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .context("could not start pip")?;
    println!(
        "deps: phoenix installs in the background (log: {})",
        log.display()
    );
    Ok(Pending {
        running: Some(Running {
            child,
            dir: dir.to_path_buf(),
            log,
            stamp,
            started: Instant::now(),
        }),
    })
}

impl Pending {
    /// Waits for the install to end, saying every 30 s how long it has run
    /// and how much it has installed; fails with the end of pip's log.
    pub(crate) fn wait(mut self) -> Result<()> {
        let Some(mut running) = self.running.take() else {
            return Ok(());
        };
        let mut said = Instant::now();
        let status = loop {
            if let Some(status) = running.child.try_wait().context("could not wait for pip")? {
                break status;
            }
            if said.elapsed() >= PROGRESS_EVERY {
                said = Instant::now();
                println!(
                    "deps: waiting for the phoenix install ({:.0} s so far, {} MB in {})",
                    running.started.elapsed().as_secs_f64(),
                    size_of(&running.dir) >> 20,
                    running.dir.display()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let took = running.started.elapsed().as_secs_f64();
        if !status.success() {
            let log = fs::read_to_string(&running.log).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            bail!(
                "pip install of phoenix failed after {took:.0} s ({status}); {} ends:\n{}",
                running.log.display(),
                lines[lines.len().saturating_sub(20)..].join("\n")
            );
        }
        println!(
            "deps: phoenix installed in {took:.0} s ({} MB)",
            size_of(&running.dir) >> 20
        );
        write_stamp(&running.dir, &running.stamp)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(running) = &mut self.running {
            // A ci run that failed before the receiver step: pip must not
            // outlive it (and the stamp stays unwritten).
            let _ = running.child.kill();
            let _ = running.child.wait();
        }
    }
}

/// The bytes of the files under `dir`, symbolic links not followed.
fn size_of(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => size_of(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}
