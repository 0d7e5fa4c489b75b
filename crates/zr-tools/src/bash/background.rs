//! Background commands: started with `run_in_background`, owned by one
//! agent, killed (whole process group) when that agent ends.
//!
//! A process group is addressed by its leader's pid. Once the leader is
//! reaped and its group has emptied, that number may be handed to a new
//! process, even a new group leader (another agent's command), and a late
//! `killpg` would hit it. On Linux the leader of a background command is
//! therefore never reaped while the agent owns it: its exit is observed
//! with `waitid(WNOWAIT)`, and the zombie keeps its pid (and so the group
//! id) reserved until the group has been killed and the leader is reaped
//! on drop. Elsewhere the leader is reaped as soon as it exits.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use tempfile::NamedTempFile;
use tokio::sync::watch;

use zr_process::{ProcessGroup, Sig};

/// How long background commands get between SIGTERM and SIGKILL when their
/// agent ends.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Bash's per-agent state: the background commands an agent still owns.
#[derive(Debug, Default)]
pub(crate) struct BashState {
    /// Background commands still owned by the agent.
    pub(crate) background: Vec<BackgroundShell>,
    /// The number of background commands ever started (for ids).
    pub(crate) shells_started: u32,
}

/// A command running in the background for one agent.
#[derive(Debug)]
pub(crate) struct BackgroundShell {
    /// `bash_N`, unique within the agent.
    pub(crate) id: String,
    /// Kills the group when the shell is dropped.
    pub(crate) group: ProcessGroup,
    /// The group leader, while it is not reaped.
    pub(crate) leader: Leader,
    /// Where stdout and stderr go; held only so the file is deleted with the shell.
    pub(crate) _log: NamedTempFile,
    /// The leader's exit status once it has exited.
    pub(crate) exit: watch::Receiver<Option<ExitStatus>>,
}

impl Drop for BackgroundShell {
    fn drop(&mut self) {
        // The group first (its id is still reserved by the leader), then
        // the leader; after that the group id is never signalled again.
        self.group.signal(Sig::Kill);
        self.leader.reap(&self.group);
    }
}

/// The leader of a background command's group.
#[derive(Debug)]
pub(crate) struct Leader {
    /// Not reaped until the shell is dropped (Linux).
    #[cfg(target_os = "linux")]
    child: Option<std::process::Child>,
}

impl Leader {
    /// Reaps the leader (after its group was sent SIGKILL) and releases
    /// `group`, whose id may be reused from then on.
    fn reap(&mut self, group: &ProcessGroup) {
        #[cfg(target_os = "linux")]
        if let Some(mut child) = self.child.take() {
            group.release();
            if let Ok(None) = child.try_wait() {
                // Killed a moment ago and not gone yet: reap it off this
                // thread (a drop must not block). Should no thread be
                // available, the zombie stays until this process ends.
                let _ = std::thread::Builder::new()
                    .name("zr-bash-reaper".to_owned())
                    .spawn(move || {
                        let _ = child.wait();
                    });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = group;
    }
}

/// Starts `cmd` (its output already sent to the log) as a background
/// command: its group guard, its leader, and a channel that receives its
/// exit status. When it exits, a last line
/// `[background command ended: ...]` is appended to `log`.
pub(crate) fn spawn(
    cmd: std::process::Command,
    log: PathBuf,
    confinement: Option<&zr_types::Confinement>,
) -> std::io::Result<(ProcessGroup, Leader, watch::Receiver<Option<ExitStatus>>)> {
    let (tx, rx) = watch::channel(None);
    #[cfg(target_os = "linux")]
    {
        let (child, group) = crate::sandbox::spawn_std(cmd, "Bash (background)", confinement)?;
        tokio::spawn(linux::watch_exit(child.id(), log, tx));
        Ok((group, Leader { child: Some(child) }, rx))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.kill_on_drop(false);
        let (mut child, group) = crate::sandbox::spawn(cmd, "Bash (background)", confinement)?;
        tokio::spawn(async move {
            if let Ok(status) = child.wait().await {
                ended(&log, status, &tx).await;
            }
        });
        Ok((group, Leader {}, rx))
    }
}

/// Appends the end line to the log (gone if the agent ended first) and
/// publishes the status.
async fn ended(log: &std::path::Path, status: ExitStatus, tx: &watch::Sender<Option<ExitStatus>>) {
    let line = format!(
        "\n[background command ended: {}]\n",
        super::describe_status(&status)
    );
    if let Ok(mut f) = tokio::fs::OpenOptions::new().append(true).open(log).await {
        let _ = tokio::io::AsyncWriteExt::write_all(&mut f, line.as_bytes()).await;
    }
    let _ = tx.send(Some(status));
}

#[cfg(target_os = "linux")]
mod linux {
    //! Watching a child's exit without reaping it.

    use std::os::unix::process::ExitStatusExt;
    use std::path::PathBuf;
    use std::process::ExitStatus;
    use std::time::Duration;

    use nix::errno::Errno;
    use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
    use nix::unistd::Pid;
    use tokio::sync::watch;

    /// How often a running background command is checked for its exit.
    const POLL: Duration = Duration::from_millis(100);

    /// Polls `pid` until it has exited (left a zombie, not reaped), then
    /// reports it; stops when the shell is dropped or the child is gone.
    pub(super) async fn watch_exit(pid: u32, log: PathBuf, tx: watch::Sender<Option<ExitStatus>>) {
        let Ok(raw) = i32::try_from(pid) else {
            return;
        };
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        loop {
            if tx.is_closed() {
                return; // the shell was dropped: the leader is reaped there
            }
            let status = match waitid(Id::Pid(Pid::from_raw(raw)), flags) {
                Ok(WaitStatus::Exited(_, code)) => ExitStatus::from_raw((code & 0xff) << 8),
                Ok(WaitStatus::Signaled(_, signal, core)) => {
                    ExitStatus::from_raw(signal as i32 | if core { 0x80 } else { 0 })
                }
                Ok(_) | Err(Errno::EINTR) => {
                    tokio::time::sleep(POLL).await;
                    continue;
                }
                Err(err) => {
                    tracing::debug!(pid, %err, "cannot watch a background command");
                    return;
                }
            };
            super::ended(&log, status, &tx).await;
            return;
        }
    }
}

/// Stops every shell: SIGTERM to each group, up to [`STOP_GRACE`] for the
/// leaders to exit, then SIGKILL to each group (grandchildren included).
pub(crate) async fn stop_all(shells: Vec<BackgroundShell>) -> usize {
    let count = shells.len();
    for shell in &shells {
        tracing::debug!(id = %shell.id, pgid = ?shell.group.pgid(), "stopping background command");
        shell.group.signal(Sig::Term);
    }
    let wait_all = async {
        for shell in &shells {
            let mut rx = shell.exit.clone();
            // A closed channel means the waiter is gone: nothing to wait for.
            let _ = rx.wait_for(Option::is_some).await;
        }
    };
    let _ = tokio::time::timeout(STOP_GRACE, wait_all).await;
    // Dropping each shell sends SIGKILL to its group and reaps its leader.
    drop(shells);
    count
}
