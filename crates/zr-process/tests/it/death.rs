//! A child dies with its parent, SIGKILL included, and so does what it
//! started in its group; a child does not die when the thread that asked
//! for it ends.

use std::io::BufRead as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{alive, children_named, kill_all, within};

/// The variable that turns [`parent_helper`] on.
const HELPER: &str = "ZR_PROCESS_TEST_PARENT";

/// Not a test: the parent the next test kills. It starts a `sleep` (a
/// direct child) and a shell whose background `sleep` is a grandchild in
/// the shell's group, prints their pids and waits to be killed.
#[test]
#[ignore = "run by a_sigkilled_parent_leaves_no_child_or_grandchild"]
fn parent_helper() {
    if std::env::var_os(HELPER).is_none() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut direct = tokio::process::Command::new("sleep");
        direct.arg("301");
        let (child, _group) = zr_process::spawn(direct, "sleep").unwrap();
        let mut shell = std::process::Command::new("sh");
        shell.args(["-c", "sleep 302 & echo $!; exec sleep 303"]);
        shell.stdout(Stdio::piped());
        let (mut shell, _shell_group) = zr_process::spawn_std(shell, "sh").unwrap();
        let mut line = String::new();
        std::io::BufReader::new(shell.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        println!(
            "pids {} {} {} {}",
            child.id().unwrap(),
            shell.id(),
            line.trim(),
            zr_process::watcher_pid().unwrap()
        );
        tokio::time::sleep(Duration::from_secs(300)).await;
    });
}

#[test]
fn a_sigkilled_parent_leaves_no_child_or_grandchild() {
    let mut parent = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "death::parent_helper",
            "--ignored",
            "--nocapture",
        ])
        .env(HELPER, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(parent.stdout.take().unwrap());
    let pids = loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the helper ended without its pids"
        );
        if let Some(rest) = line.trim().strip_prefix("pids ") {
            break rest
                .split(' ')
                .map(|p| p.parse::<u32>().unwrap())
                .collect::<Vec<_>>();
        }
    };
    let [direct, shell, grandchild, watcher] = pids[..] else {
        panic!("four pids: {pids:?}");
    };
    assert!(pids.iter().all(|&p| alive(p)), "all running: {pids:?}");
    parent.kill().unwrap(); // SIGKILL: no destructor runs
    parent.wait().unwrap();
    let gone = within(Duration::from_secs(1), || {
        !alive(direct) && !alive(shell) && !alive(grandchild)
    });
    let left: Vec<u32> = [direct, shell, grandchild]
        .into_iter()
        .filter(|&p| alive(p))
        .collect();
    kill_all(&left);
    assert!(gone, "alive 1 s after the parent's SIGKILL: {left:?}");
    assert!(
        within(Duration::from_secs(1), || !alive(watcher)),
        "the watcher ends once it killed the groups"
    );
}

#[test]
fn a_child_outlives_the_thread_that_asked_for_it() {
    // A tokio blocking thread retires after its idle time; a child forked
    // from it with a parent-death signal would die then. Children are
    // forked from the spawner thread instead.
    let (child, group) = std::thread::spawn(|| {
        let mut sleep = std::process::Command::new("sleep");
        sleep.arg("304");
        zr_process::spawn_std(sleep, "sleep").unwrap()
    })
    .join()
    .unwrap();
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        alive(pid),
        "the child still runs after its asking thread ended"
    );
    let spawner_children = children_named(std::process::id(), "sleep 304");
    assert_eq!(spawner_children, [pid], "a child of this process");
    drop(group);
    let mut child = child;
    child.wait().unwrap();
    assert!(!alive(pid));
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_group_kills_the_grandchildren() {
    let mut shell = tokio::process::Command::new("sh");
    shell
        .args(["-c", "sleep 305 & echo $!; wait"])
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let (mut child, group) = zr_process::spawn(shell, "sh").unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line)
        .await
        .unwrap();
    let grandchild: u32 = line.trim().parse().unwrap();
    assert!(alive(grandchild));
    assert_eq!(group.pgid(), child.id());
    drop(group);
    assert!(
        within(Duration::from_secs(1), || !alive(grandchild)),
        "the grandchild died with its group"
    );
    let _ = child.wait().await;
}
