//! A mark that a `zr` process is running a session: `zr.pid` in the
//! session's folder, removed when the run ends (also on Ctrl-C, SIGTERM
//! and SIGHUP). A process killed outright leaves it behind; a mark whose
//! process is gone does not count. Whether the process lives is read from
//! `/proc`, so elsewhere than on Linux no session shows as running.

use std::path::{Path, PathBuf};

use zr_types::SessionId;

/// The mark's file name in a session folder.
const FILE: &str = "zr.pid";

/// Removes the mark when dropped.
#[derive(Debug)]
pub(crate) struct RunningMark {
    path: PathBuf,
}

impl RunningMark {
    /// Marks `session` (in `sessions_dir`) as run by this process. A mark
    /// that cannot be written is logged and ignored: it only informs
    /// `zr sessions` and `zr resume`.
    pub(crate) fn create(sessions_dir: &Path, session: &SessionId) -> Option<Self> {
        let folder = sessions_dir.join(session.as_str());
        let path = folder.join(FILE);
        let written = std::fs::create_dir_all(&folder)
            .and_then(|()| std::fs::write(&path, format!("{}\n", std::process::id())));
        match written {
            Ok(()) => Some(Self { path }),
            Err(error) => {
                tracing::debug!(path = %path.display(), %error, "cannot mark the session as running");
                None
            }
        }
    }
}

impl Drop for RunningMark {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        // A run that wrote no transcript leaves no empty folder behind
        // (`remove_dir` removes only an empty one).
        if let Some(folder) = self.path.parent() {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// The id of the live process (other than this one) running the session
/// in `folder`, if any.
pub(crate) fn running_pid(folder: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(folder.join(FILE)).ok()?;
    let pid: u32 = text.trim().parse().ok()?;
    let alive = pid != std::process::id()
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            // A zombie has ended.
            .and_then(|stat| {
                let rest = stat.get(stat.rfind(')')? + 2..)?;
                Some(!rest.starts_with('Z'))
            })
            .unwrap_or(false);
    alive.then_some(pid)
}
