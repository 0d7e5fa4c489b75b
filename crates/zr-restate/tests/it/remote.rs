//! `isolation: remote`: a session running here, in this process, whose
//! `rem` subagent runs on a worker of a real Restate server
//! ([`zr_restate::RemoteAgents`]), in a fresh worktree of the worker's
//! project (a git repository). The first worker dies inside the
//! subagent's tool call; the second finishes it, and its effect happens
//! once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use zr_engine::{Agent, LocalEffects, TaskStatus};
use zr_types::SessionId;

use crate::host::{Ledger, TestHost};
use crate::workers::{Takeover, crashed};
use zr_test_support::restate::RestateServer;

const SESSION: &str = "s-0000000000031-00000031";

/// The root hands one job to `rem`; `rem` writes its note (the worker
/// dies right after it) and answers.
fn script() -> Value {
    json!({"turns_from": "history", "agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": {"description": "remote job", "prompt": "do the remote job", "subagent_type": "rem"}}]},
            {"text": "root done"}
        ]}],
        "rem": [{"turns": [
            {"tool_calls": [{"name": "bump", "input": {"n": 1, "crash": true, "write": "note.txt"}}]},
            {"text": "rem done"}
        ]}]
    }})
}

/// Makes `dir` a git repository with one commit.
fn git_init(dir: &Path) {
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "zr")
            .env("GIT_AUTHOR_EMAIL", "zr@example.com")
            .env("GIT_COMMITTER_NAME", "zr")
            .env("GIT_COMMITTER_EMAIL", "zr@example.com")
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    std::fs::write(dir.join("README"), "the worker's project\n").expect("a file");
    git(&["init", "-q"]);
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "start"]);
}

/// Every file named `name` under `dir`.
fn found(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(found(&path, name));
        } else if path.file_name().is_some_and(|n| n == name) {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_remote_subagent_of_a_local_session_runs_on_a_worker_and_survives_it() {
    zr_test_support::restate::log_to_test();
    // Under the target's folder: the workers write their notes there.
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary folder");
    let server = RestateServer::start();
    let ledger = Arc::new(Ledger::default());
    let (first, second, crash) = TestHost::crashing_pair(
        &script(),
        scratch.path().join("a"),
        scratch.path().join("b"),
        &ledger,
    );
    let remote = |host: Arc<TestHost>| {
        let mut host = Arc::into_inner(host).expect("not shared yet");
        host.remote_type = true;
        git_init(&host.dir);
        Arc::new(host)
    };
    let (first, second) = (remote(first), remote(second));
    let workers = Takeover::start(&server, &first, &second).await;

    // The session itself runs here.
    let mut local = TestHost::new(script(), scratch.path().join("local"), Arc::clone(&ledger));
    local.remote_type = true;
    let (runtime, config) = local.build();
    let session: SessionId = SESSION.parse().expect("a session id");
    let runtime = runtime.with_effects(Arc::new(zr_restate::RemoteAgents::new(
        Arc::new(LocalEffects),
        server.ingress_url(),
    )));
    let agent = Agent::with_session_id(Arc::new(runtime), config, session);
    let run = tokio::spawn(async move { agent.prompt("go").await });

    crashed(&server, &crash, "the remote agent never reached its bump").await;
    workers.take_over();
    let result = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .unwrap_or_else(|_| panic!("the local session did not end\n{}", server.log()))
        .expect("the session's task")
        .expect("the local run ends");
    assert_eq!(result.output, "root done");
    assert_eq!(result.status, TaskStatus::Completed);

    // The root's second request holds the remote agent's answer.
    let root = local.root_requests.lock().expect("not poisoned").clone();
    assert_eq!(root.len(), 2, "only the root asked here");
    let told = serde_json::to_string(&root[1]).expect("messages serialise");
    assert!(told.contains("rem done"), "{told}");
    assert_eq!(local.requests.load(Ordering::SeqCst), 2);
    // The remote agent's requests were the workers': the first before
    // its death, the second after; none twice.
    let asked_by = |host: &TestHost| host.agents.lock().expect("not poisoned").clone();
    assert!(asked_by(&first).iter().all(|a| a == "root.0001-rem"));
    assert!(asked_by(&second).iter().all(|a| a == "root.0001-rem"));
    assert_eq!(
        first.requests.load(Ordering::SeqCst) + second.requests.load(Ordering::SeqCst),
        2
    );

    // One key, one effect; the call cut short ran again with its key.
    let key = format!("{SESSION}/toolu_01_0_root.0001-rem");
    let effects = ledger.effects.lock().expect("not poisoned").clone();
    assert_eq!(effects.len(), 1, "{effects:?}");
    assert!(effects.values().all(|n| *n == 1));
    let attempts = ledger.attempts.lock().expect("not poisoned").clone();
    assert_eq!(
        attempts.values().copied().collect::<Vec<_>>(),
        [2],
        "{attempts:?} ({key}?)"
    );

    // Its note is in a worktree of the second worker's project, not in
    // the project's own folder, nor here.
    let notes = found(&second.dir, "note.txt");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(second.dir.join(".zr/worktrees")),
        "{}",
        notes[0].display()
    );
    assert!(found(&local.dir, "note.txt").is_empty());
    drop(server);
}
