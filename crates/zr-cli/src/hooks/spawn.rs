//! Starting one hook command: `sh -c COMMAND` in the project folder,
//! through zr-process (its own process group, killed when zr dies, even by
//! SIGKILL), and killed with its whole group when its handle is dropped
//! (a hook that timed out, a run that stopped).

use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};
use zr_process::ProcessGroup;

/// A running hook command; dropping it kills its process group.
#[derive(Debug)]
pub(crate) struct HookProcess {
    pub(crate) child: Child,
    /// Dropped after the child: kills what the command started (ended
    /// sooner when what it left holds the command's output).
    pub(crate) group: ProcessGroup,
}

/// Starts `command` for the hook `event` with `sh -c` in `cwd`, its
/// standard input, output and error piped, with `env` added to zr's
/// environment.
///
/// # Errors
///
/// The I/O error when `sh` cannot be started.
pub(crate) fn spawn_hook(
    event: &str,
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
        .kill_on_drop(true);
    let (child, group) = zr_process::spawn(cmd, &format!("hook {event}"))?;
    Ok(HookProcess { child, group })
}
