//! `/proc` helpers for the tests: is a pid alive, wait with a bound.

use std::time::{Duration, Instant};

/// Alive and not a zombie.
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let rest = stat.get(stat.rfind(')')? + 2..)?;
            Some(!rest.starts_with('Z') && !rest.starts_with('X'))
        })
        .unwrap_or(false)
}

/// Waits until `done`, at most `bound`; whether it happened.
pub(crate) fn within(bound: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills `pids` (cleanup after a failed assertion).
pub(crate) fn kill_all(pids: &[u32]) {
    for &pid in pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// The pids of the children of `parent` whose command line starts with `prefix`.
pub(crate) fn children_named(parent: u32, prefix: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let ppid = stat
                .get(stat.rfind(')').unwrap_or(0) + 2..)
                .and_then(|rest| rest.split(' ').nth(1)?.parse::<u32>().ok());
            ppid == Some(parent)
                && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .starts_with(prefix)
                })
        })
        .collect()
}
