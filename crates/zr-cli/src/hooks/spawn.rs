//! Starting one hook command: `sh -c COMMAND` in the project folder, in
//! its own process group, killed with its whole group when its handle is
//! dropped (a hook that timed out, a run that stopped).

use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};

/// A running hook command; dropping it kills its process group.
#[derive(Debug)]
pub(crate) struct HookProcess {
    pub(crate) child: Child,
    pgid: Option<i32>,
}

impl Drop for HookProcess {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid.filter(|&p| p > 1) {
            // A group that ended already is no error.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Starts `command` with `sh -c` in `cwd`, its standard input, output and
/// error piped, with `env` added to zr's environment.
///
/// # Errors
///
/// The I/O error when `sh` cannot be started.
pub(crate) fn spawn_hook(
    command: &str,
    cwd: &Path,
    env: &[(&str, &str)],
) -> std::io::Result<HookProcess> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = cmd.spawn()?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    Ok(HookProcess { child, pgid })
}
