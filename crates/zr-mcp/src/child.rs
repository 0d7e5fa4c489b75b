//! Server child processes: a clean environment, their own process group
//! (`zr_process`: they die with zr), stderr to `tracing` with its last
//! lines kept for errors, reaped and killed.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use zr_process::{ProcessGroup, Sig};
use zr_types::ServerName;

use crate::config::StdioConfig;
use crate::error::McpError;

/// The longest stderr line passed to `tracing`; the rest of a longer line is
/// dropped (a server that never writes a newline cannot fill our memory).
const MAX_STDERR_LINE: usize = 8 * 1024;

/// How many of the server's last stderr lines an error shows.
const STDERR_TAIL: usize = 10;

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
    /// Kills the server's whole process group when dropped; released by
    /// the reaper once the process ended.
    pub(crate) guard: Arc<ProcessGroup>,
    /// The last lines the server wrote to stderr.
    pub(crate) stderr: StderrTail,
}

/// Kills the process group now (the reaper releases it once the leader is
/// collected; until then the id is still ours).
pub(crate) fn kill(guard: &ProcessGroup) {
    guard.signal(Sig::Kill);
}

/// The last [`STDERR_TAIL`] lines a server wrote to stderr.
#[derive(Debug, Clone)]
pub(crate) struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// `true` once stderr reached its end.
    ended: watch::Receiver<bool>,
}

impl StderrTail {
    /// The lines, after waiting up to `wait` for stderr to end (a server
    /// that just exited may have lines still in the pipe).
    pub(crate) async fn last_lines(&self, wait: Duration) -> Vec<String> {
        let mut ended = self.ended.clone();
        let _ = tokio::time::timeout(wait, ended.wait_for(|e| *e)).await;
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
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
        .kill_on_drop(true);
    let label = format!("MCP server {server}");
    let (mut child, group) = zr_process::spawn(command, &label).map_err(spawn_error)?;
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
    let lines = Arc::new(Mutex::new(VecDeque::new()));
    let (ended_tx, ended) = watch::channel(false);
    tokio::spawn(forward_stderr(
        server.clone(),
        stderr,
        Arc::clone(&lines),
        ended_tx,
    ));

    let guard = Arc::new(group);
    let reaper_group: Weak<ProcessGroup> = Arc::downgrade(&guard);
    let (exit_tx, exit) = watch::channel(None);
    let reaper_server = server.clone();
    tokio::spawn(async move {
        match child.wait().await {
            Ok(status) => {
                // Processes the server started in its group die with it. The
                // group id cannot have been reused yet: it was the leader's
                // pid, collected just now.
                if let Some(group) = reaper_group.upgrade() {
                    group.end();
                }
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
        guard,
        stderr: StderrTail { lines, ended },
    })
}

/// Passes each stderr line to `tracing` (target `zr_mcp::server`), never to
/// our own output, and keeps the last [`STDERR_TAIL`] in `tail`; says
/// `ended` at the end of the stream.
async fn forward_stderr(
    server: ServerName,
    stderr: impl AsyncRead + Unpin,
    tail: Arc<Mutex<VecDeque<String>>>,
    ended: watch::Sender<bool>,
) {
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
                    // Kept without its indentation (stack traces), for one
                    // line of an error.
                    let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(text.trim_start().to_owned());
                }
            }
            Ok(false) | Err(_) => {
                let _ = ended.send(true);
                return;
            }
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
