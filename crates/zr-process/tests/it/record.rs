//! The record file lists live groups while they run; what a dead zr left
//! is found from it (group members, and processes that left their group
//! but carry its owner variable), and killed.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{alive, kill_all, within};

const HEADER: &str = "# zr process record: the process groups a zr process started that still run";

/// `/proc/PID/stat`'s start time.
fn start_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split(' ').nth(19).unwrap().parse().unwrap()
}

#[test]
fn the_record_lists_a_running_group_until_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("processes");
    let recording = zr_process::record_in(&path);
    let mut sleep = Command::new("sleep");
    sleep.arg("310");
    let (mut child, group) = zr_process::spawn_std(sleep, "a sleep").unwrap();
    let pid = child.id();
    let text = std::fs::read_to_string(&path).unwrap();
    let me = std::process::id();
    assert!(
        text.starts_with(&format!("{HEADER}\nowner {me} {}\n", start_of(me))),
        "{text}"
    );
    assert!(
        text.contains(&format!("group {pid} {} a sleep\n", start_of(pid))),
        "{text}"
    );
    drop(group);
    child.wait().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(&format!("group {pid} ")), "{text}");
    drop(recording);
    assert!(!path.exists(), "the record goes with the recording");
}

#[test]
fn what_a_dead_owner_left_is_found_and_killed() {
    let dir = tempfile::tempdir().unwrap();
    // A group as a killed zr would leave it: a leader and a grandchild.
    let mut shell = Command::new("sh");
    shell
        .args(["-c", "sleep 311 & echo $!; exec sleep 312"])
        .stdout(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut shell, 0);
    let mut leader = shell.spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(leader.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let grandchild: u32 = line.trim().parse().unwrap();
    // A process that left its group but carries the dead owner's mark.
    let mut escaped = Command::new("setsid")
        .args(["sleep", "313"])
        .env(zr_process::OWNER_VAR, "999999999.7")
        .spawn()
        .unwrap();
    // And one in no recorded group, without the mark: not ours.
    let mut stranger = Command::new("sleep").arg("314").spawn().unwrap();
    let path = dir.path().join("processes");
    let leader_pid = leader.id();
    std::fs::write(
        &path,
        format!(
            "{HEADER}\nowner 999999999 7\ngroup {leader_pid} {} Bash\ngroup {} 1 reused\n",
            start_of(leader_pid),
            stranger.id()
        ),
    )
    .unwrap();
    // `setsid` execs `sleep`: until it has, its command line reads
    // `setsid sleep 313`.
    assert!(within(Duration::from_secs(2), || {
        let found = zr_process::leftovers(&path);
        found.len() == 3 && found.iter().any(|l| l.command == "sleep 313")
    }));
    let found = zr_process::leftovers(&path);
    let pids: Vec<u32> = found.iter().map(|l| l.pid).collect();
    let mut expected = vec![leader_pid, grandchild, escaped.id()];
    expected.sort_unstable();
    assert_eq!(pids, expected, "{found:?}");
    let commands: Vec<&str> = found.iter().map(|l| l.command.as_str()).collect();
    assert!(commands.contains(&"sleep 313"), "{commands:?}");

    zr_process::kill_leftovers(&path, &found);
    assert!(!path.exists(), "the record is gone once its processes are");
    let gone = within(Duration::from_secs(1), || {
        !alive(grandchild)
            && leader.try_wait().unwrap().is_some()
            && escaped.try_wait().unwrap().is_some()
    });
    assert!(alive(stranger.id()), "a reused group id is not ours");
    kill_all(&[grandchild, stranger.id()]);
    let _ = stranger.wait();
    assert!(gone, "every leftover was killed");
}

#[test]
fn a_live_owner_has_no_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    let mut sleep = Command::new("sleep");
    sleep.arg("315");
    let (mut child, group) = zr_process::spawn_std(sleep, "sleep").unwrap();
    let path = dir.path().join("processes");
    let me = std::process::id();
    std::fs::write(
        &path,
        format!(
            "{HEADER}\nowner {me} {}\ngroup {} {} sleep\n",
            start_of(me),
            child.id(),
            start_of(child.id())
        ),
    )
    .unwrap();
    assert_eq!(zr_process::leftovers(&path), []);
    assert_eq!(zr_process::leftovers(&dir.path().join("absent")), []);
    std::fs::write(&path, "not a record\n").unwrap();
    assert_eq!(zr_process::leftovers(&path), []);
    drop(group);
    child.wait().unwrap();
}
