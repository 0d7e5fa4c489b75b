//! Running git for worktrees: with the runtime's environment, killed when
//! dropped, bounded in time, failing with what ran where.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::error::WorktreeError;

/// How long one git command may take (`worktree add` checks out a whole
/// tree).
const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Variables that would point git at another repository than the folder
/// it is run in.
const REPO_VARS: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_NAMESPACE",
];

/// One argument of a git command: text or a path.
pub(super) type Arg<'a> = &'a (dyn AsRef<OsStr> + Sync);

/// At most this much of git's stderr goes into an error.
const MAX_STDERR: usize = 4096;

/// What a git command printed, and whether it succeeded.
#[derive(Debug)]
pub(super) struct Output {
    pub(super) success: bool,
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: String,
    status: String,
}

impl Output {
    /// The first line of stdout, as text.
    pub(super) fn line(&self) -> String {
        String::from_utf8_lossy(&self.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    }
}

/// Runs `git -C DIR ...` with the runtime's child-process environment
/// (the same as the agent's tools get), minus the variables that select a
/// repository.
#[derive(Debug, Clone, Copy)]
pub(super) struct Git<'a> {
    env: &'a BTreeMap<String, String>,
}

impl<'a> Git<'a> {
    pub(super) fn new(env: &'a BTreeMap<String, String>) -> Self {
        Self { env }
    }

    /// Runs git in `dir`, whatever its exit status.
    pub(super) async fn output(
        self,
        dir: &Path,
        args: &[Arg<'_>],
    ) -> Result<Output, WorktreeError> {
        let mut cmd = Command::new("git");
        cmd.arg("-C")
            .arg(dir)
            .args(args.iter().map(|a| a.as_ref()))
            .env_clear()
            .envs(
                self.env
                    .iter()
                    .filter(|(k, _)| !REPO_VARS.contains(&k.as_str())),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let described = || describe(args);
        let output = match tokio::time::timeout(GIT_TIMEOUT, cmd.output()).await {
            Ok(Ok(output)) => output,
            Ok(Err(source)) => return Err(WorktreeError::GitMissing { source }),
            Err(_) => {
                return Err(WorktreeError::GitTimedOut {
                    dir: dir.to_path_buf(),
                    args: described(),
                    after: GIT_TIMEOUT,
                });
            }
        };
        let mut stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        if stderr.len() > MAX_STDERR {
            let mut cut = MAX_STDERR;
            while !stderr.is_char_boundary(cut) {
                cut -= 1;
            }
            stderr.truncate(cut);
            stderr.push_str(" [...]");
        }
        let status = match output.status.code() {
            Some(code) => format!("exit code {code}"),
            None => "killed by a signal".to_owned(),
        };
        tracing::debug!(dir = %dir.display(), args = %described(), %status, "git");
        Ok(Output {
            success: output.status.success(),
            stdout: output.stdout,
            stderr,
            status,
        })
    }

    /// Runs git in `dir` and requires success; returns its stdout.
    pub(super) async fn run(self, dir: &Path, args: &[Arg<'_>]) -> Result<Output, WorktreeError> {
        let output = self.output(dir, args).await?;
        if output.success {
            Ok(output)
        } else {
            Err(WorktreeError::Git {
                dir: dir.to_path_buf(),
                args: describe(args),
                status: output.status,
                stderr: output.stderr,
            })
        }
    }
}

fn describe(args: &[Arg<'_>]) -> String {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A path git printed on a line of its own.
pub(super) fn path_from(line: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        PathBuf::from(OsStr::from_bytes(line))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(line).into_owned())
    }
}
