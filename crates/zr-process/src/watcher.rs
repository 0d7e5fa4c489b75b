//! The watcher: a small `sh` process that outlives this one by a moment.
//! It learns each live group over a pipe (`+PGID`, `-PGID`) and, when the
//! pipe closes (this process ended, however: the kernel closes its files
//! even on SIGKILL), sends SIGKILL to every group still listed, so a
//! grandchild in a child's group dies too.
//!
//! It runs in its own process group (Ctrl-C at the terminal does not reach
//! it), in `/`, with an empty environment and no output, and ignores
//! SIGINT and SIGHUP. Its end of the pipe is the only one it holds: every
//! descriptor zr opens is close-on-exec, so no other child keeps the pipe
//! open after zr died.

use std::io::Write as _;
use std::process::{Child, ChildStdin, Command, Stdio};

/// The watcher's program. Groups are kept as the positional parameters.
const SCRIPT: &str = r#"trap '' INT HUP
set --
while IFS= read -r line; do
  case "$line" in
    +*) set -- "$@" "${line#+}" ;;
    -*) gone="${line#-}"; keep=""
        for g in "$@"; do [ "$g" = "$gone" ] || keep="$keep $g"; done
        set -- $keep ;;
  esac
done
for g in "$@"; do kill -9 "-$g" 2>/dev/null; done
"#;

/// A running watcher.
#[derive(Debug)]
pub(crate) struct Watcher {
    child: Child,
    stdin: ChildStdin,
}

impl Watcher {
    /// Starts a watcher that already knows `groups`.
    pub(crate) fn start(groups: impl Iterator<Item = u32>) -> std::io::Result<Self> {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(SCRIPT)
            .arg("zr-watcher")
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("the watcher's input pipe is missing"))?;
        let mut watcher = Self { child, stdin };
        for pgid in groups {
            watcher.tell('+', pgid)?;
        }
        Ok(watcher)
    }

    /// Sends `+PGID` or `-PGID`.
    pub(crate) fn tell(&mut self, op: char, pgid: u32) -> std::io::Result<()> {
        self.stdin.write_all(format!("{op}{pgid}\n").as_bytes())
    }

    /// The watcher's pid.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Collects the watcher if it has ended (a watcher that died early is
    /// replaced; its zombie is reaped here).
    pub(crate) fn reap(mut self) {
        let _ = self.child.try_wait();
    }
}
