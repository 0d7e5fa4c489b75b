//! Server child processes: a clean environment, their own process group, stderr to `tracing`, reaped and killed.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use zr_types::ServerName;

use crate::config::StdioConfig;
use crate::error::McpError;

/// The longest stderr line passed to `tracing`; the rest of a longer line is
/// dropped (a server that never writes a newline cannot fill our memory).
const MAX_STDERR_LINE: usize = 8 * 1024;

/// The variables a child gets from the host besides its configured ones.
pub(crate) const BASE_ENV: [&str; 3] = ["PATH", "HOME", "LANG"];

/// A running server process.
#[derive(Debug)]
pub(crate) struct Child {
    pub(crate) id: u32,
    pub(crate) stdout: ChildStdout,
    pub(crate) stdin: ChildStdin,
    /// `Some` once the process has ended (filled by the reaper task).
    pub(crate) exit: watch::Receiver<Option<ExitStatus>>,
    pub(crate) guard: KillGuard,
}

/// Kills the server's whole process group when dropped, unless the reaper
/// saw the process end.
#[derive(Debug)]
pub(crate) struct KillGuard {
    pgid: Pid,
    exited: Arc<AtomicBool>,
}

impl KillGuard {
    pub(crate) fn kill(&self) {
        if !self.exited.load(Ordering::Acquire) {
            // The group id is the child's pid (it leads its own group); the
            // reaper has not collected it yet, so the id is still ours.
            // ESRCH (already gone) is the only expected failure.
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for KillGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `config`'s command in its own process group, with only the
/// configured variables plus [`BASE_ENV`] from `base_env`.
pub(crate) fn spawn(
    server: &ServerName,
    config: &StdioConfig,
    base_env: &BTreeMap<String, String>,
    hub_cwd: &Path,
) -> Result<Child, McpError> {
    let spawn_error = |source| McpError::Spawn {
        server: server.clone(),
        command: config.command.clone(),
        source,
    };
    let mut command = Command::new(&config.command);
    command
        .args(&config.args)
        .env_clear()
        .envs(base_env)
        .envs(&config.env)
        .current_dir(match &config.cwd {
            Some(cwd) => hub_cwd.join(cwd),
            None => hub_cwd.to_owned(),
        })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    let mut child = command.spawn().map_err(spawn_error)?;
    let (Some(stdin), Some(stdout), Some(stderr), Some(pid)) = (
        child.stdin.take(),
        child.stdout.take(),
        child.stderr.take(),
        child.id(),
    ) else {
        return Err(spawn_error(std::io::Error::other(
            "the child's pipes or pid were not available",
        )));
    };
    let pgid = Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
    tokio::spawn(forward_stderr(server.clone(), stderr));

    let exited = Arc::new(AtomicBool::new(false));
    let (exit_tx, exit) = watch::channel(None);
    let reaper_exited = Arc::clone(&exited);
    let reaper_server = server.clone();
    tokio::spawn(async move {
        match child.wait().await {
            Ok(status) => {
                // Processes the server started in its group die with it. The
                // group id cannot have been reused yet: it was the leader's
                // pid, collected just now.
                let _ = killpg(pgid, Signal::SIGKILL);
                reaper_exited.store(true, Ordering::Release);
                tracing::debug!(server = %reaper_server, %status, "MCP server process ended");
                let _ = exit_tx.send(Some(status));
            }
            Err(error) => {
                tracing::warn!(server = %reaper_server, %error, "cannot wait for MCP server process");
            }
        }
    });
    Ok(Child {
        id: pid,
        stdout,
        stdin,
        exit,
        guard: KillGuard { pgid, exited },
    })
}

/// Passes each stderr line to `tracing` (target `zr_mcp::server`), never to
/// our own output.
async fn forward_stderr(server: ServerName, stderr: impl AsyncRead + Unpin) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_bounded_line(&mut reader, &mut line).await {
            Ok(true) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end();
                if !text.is_empty() {
                    tracing::info!(target: "zr_mcp::server", server = %server, "{text}");
                }
            }
            Ok(false) | Err(_) => return,
        }
    }
}

/// Reads one line, keeping at most [`MAX_STDERR_LINE`] bytes of it. `false`
/// at the end of the stream.
async fn read_bounded_line(
    reader: &mut BufReader<impl AsyncRead + Unpin>,
    line: &mut Vec<u8>,
) -> std::io::Result<bool> {
    let mut any = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(any);
        }
        any = true;
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let room = MAX_STDERR_LINE.saturating_sub(line.len());
        line.extend_from_slice(&available[..take.min(room)]);
        reader.consume(take);
        if newline.is_some() {
            return Ok(true);
        }
    }
}
