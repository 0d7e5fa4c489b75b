//! Background commands: started with `run_in_background`, owned by one
//! agent, killed (whole process group) when that agent ends.

use std::process::ExitStatus;
use std::time::Duration;

use tempfile::NamedTempFile;
use tokio::sync::watch;

use super::process::{GroupGuard, Sig};

/// How long background commands get between SIGTERM and SIGKILL when their
/// agent ends.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// A command running in the background for one agent.
#[derive(Debug)]
pub(crate) struct BackgroundShell {
    /// `bash_N`, unique within the agent.
    pub(crate) id: String,
    /// Kills the group when the shell is dropped.
    pub(crate) group: GroupGuard,
    /// Where stdout and stderr go; held only so the file is deleted with the shell.
    pub(crate) _log: NamedTempFile,
    /// The leader's exit status once it has exited.
    pub(crate) exit: watch::Receiver<Option<ExitStatus>>,
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
    // Dropping each guard sends SIGKILL to its group.
    drop(shells);
    count
}
