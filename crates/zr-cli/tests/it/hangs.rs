//! A FIFO or a device where zr reads a file (the cron store, a transcript,
//! the model script) is refused at once with an error naming the file:
//! before, the read blocked where no signal reached it (a FIFO) or filled
//! memory (`/dev/zero`).

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::{TempProject, spawn_zr, stderr};

/// Far above what a refusal takes; a hang fails here instead of hanging.
const PROMPTLY: Duration = Duration::from_secs(20);

/// `zr ARGS` in `project`, killed (and the test failed) if it has not
/// ended within [`PROMPTLY`].
fn zr_promptly(project: &TempProject, args: &[&str]) -> Output {
    let mut child = spawn_zr(project, args);
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > PROMPTLY {
            let _ = child.kill();
            let _ = child.wait();
            panic!("zr {args:?} still ran after {PROMPTLY:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn fifo(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
}

#[test]
fn a_fifo_as_the_cron_store_is_refused_at_once() {
    let project = TempProject::new();
    std::fs::create_dir_all(project.path().join(".zr")).unwrap();
    let store = project.path().join(".zr/cron.json");
    fifo(&store);
    let out = zr_promptly(&project, &["cron", "list"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "error: cannot read the cron store {}: not a regular file (a FIFO)",
            store.display()
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_fifo_in_a_session_folder_is_refused_at_once() {
    let project = TempProject::new();
    project.write(
        "script.json",
        r#"{"agents": {"root": [{"turns": [{"text": "ok"}]}]}}"#,
    );
    let out = zr_promptly(&project, &["run", "--script", "script.json", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sessions = project.path().join(".zr/sessions");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let transcripts: Vec<_> = std::fs::read_dir(&session)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert!(!transcripts.is_empty(), "{session:?}");
    for transcript in &transcripts {
        fifo(transcript);
    }
    fifo(&session.join("zr.pid"));

    let listed = zr_promptly(&project, &["sessions"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(
        stderr(&listed).contains("not a regular file (a FIFO)"),
        "{}",
        stderr(&listed)
    );
    let id = session.file_name().unwrap().to_str().unwrap();
    let resumed = zr_promptly(
        &project,
        &["resume", "--script", "script.json", id, "again"],
    );
    assert_ne!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("not a regular file (a FIFO)"),
        "{}",
        stderr(&resumed)
    );
}

#[test]
fn dev_zero_as_the_model_script_is_refused_at_once() {
    let project = TempProject::new();
    project.write(
        "zr.toml",
        "[model]\nprovider = \"scripted\"\nscript = \"/dev/zero\"\n",
    );
    let out = zr_promptly(&project, &["run", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "error: cannot read script /dev/zero: not a regular file (a character device)"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_fifo_as_zr_toml_is_refused_at_once() {
    let project = TempProject::new();
    fifo(&project.path().join("zr.toml"));
    let out = zr_promptly(&project, &["agents"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a regular file (a FIFO)"),
        "{}",
        stderr(&out)
    );
}
