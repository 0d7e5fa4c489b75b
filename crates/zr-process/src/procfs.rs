//! What `/proc` says about a process: its state, parent, group, start
//! time, command line and environment. Linux only; elsewhere nothing is
//! found.

/// The fields of `/proc/PID/stat` zr needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    /// `R`, `S`, `Z`, ...
    pub(crate) state: char,
    /// The process group.
    pub(crate) pgid: u32,
    /// Start time in clock ticks since boot: with the pid, it names one
    /// process for good (a reused pid has a later start).
    pub(crate) start: u64,
}

impl Stat {
    /// Alive, not a zombie.
    pub(crate) fn alive(self) -> bool {
        self.state != 'Z' && self.state != 'X'
    }
}

/// `/proc/PID/stat`, or `None` when the process is gone.
pub(crate) fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parses a `stat` line; the command name is in parentheses and may hold
/// spaces and parentheses, so the fields start after the last `)`.
pub(crate) fn parse_stat(text: &str) -> Option<Stat> {
    let rest = text.get(text.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split(' ').collect();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        pgid: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Every pid in `/proc`.
pub(crate) fn pids() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The command line, arguments joined by spaces, at most 120 characters.
pub(crate) fn command_line(pid: u32) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).replace('\0', " ");
    let text = text.trim();
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text.to_owned()
    }
}

/// Whether the process's initial environment holds `entry` (`NAME=VALUE`)
/// exactly. Unreadable (another user's process) is `false`.
pub(crate) fn environment_has(pid: u32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|bytes| bytes.split(|b| *b == 0).any(|e| e == entry.as_bytes()))
}
