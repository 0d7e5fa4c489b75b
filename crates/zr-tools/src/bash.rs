//! `Bash`: runs a shell command in its own process group, with the agent's
//! environment only, a timeout, bounded output, and background commands
//! owned by the agent.

mod background;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::{Instant, sleep, sleep_until};
use zr_types::{Access, BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::bound::HeadTail;
use crate::state::{AgentKey, AgentStates};
use crate::toolkit::{Builtin, Hints, tool_failed};

pub(crate) use background::{BackgroundShell, BashState, stop_all};
use zr_process::Sig;

/// Default timeout of a foreground command.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Longest timeout a call may ask for.
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;
/// Bytes kept from the start and from the end of each of stdout and stderr.
const KEEP_HEAD: usize = 15_000;
const KEEP_TAIL: usize = 15_000;
/// Between SIGTERM and SIGKILL after a timeout.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// Background commands one agent may own at a time.
pub(crate) const MAX_BACKGROUND: usize = 16;
/// Ended background commands kept per agent (their logs stay readable);
/// older ones are forgotten, their logs deleted.
pub(crate) const KEEP_ENDED: usize = 32;
/// How long output is still read after the shell exited while something
/// it left behind holds the pipes open.
const LINGER: Duration = Duration::from_millis(300);

/// The variable holding the call's `ToolContext::idempotency_key` in the
/// command's environment.
pub(crate) const IDEMPOTENCY_KEY_VAR: &str = "ZR_IDEMPOTENCY_KEY";

/// Input of `Bash`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BashInput {
    /// The shell command to run (bash -c).
    command: String,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[schemars(range(min = 1, max = 600_000))]
    timeout: Option<u64>,
    /// A short description of what the command does (5-10 words), for people.
    description: Option<String>,
    /// Start the command in the background and return at once; it runs until it exits or this agent ends.
    run_in_background: Option<bool>,
}

/// The `Bash` tool.
#[derive(Debug)]
pub(crate) struct BashTool {
    states: Arc<AgentStates<BashState>>,
    shell: PathBuf,
}

impl BashTool {
    pub(crate) fn new(states: Arc<AgentStates<BashState>>) -> Self {
        let bash = PathBuf::from("/bin/bash");
        let shell = if bash.exists() {
            bash
        } else {
            PathBuf::from("/bin/sh")
        };
        Self { states, shell }
    }

    fn command(&self, command: &str, ctx: &ToolContext) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.shell);
        cmd.arg("-c")
            .arg(command)
            .current_dir(&ctx.cwd)
            .env_clear()
            .envs(&ctx.env)
            .stdin(Stdio::null());
        // The call's idempotency key (`{session}/{call id}`, the same on
        // every attempt of a durable run): a command whose effect must
        // happen once passes it on or skips a key it has seen.
        if let Some(key) = &ctx.idempotency_key {
            cmd.env(IDEMPOTENCY_KEY_VAR, key);
        }
        // Its own process group, death with zr: `zr_process::spawn`.
        cmd
    }

    async fn foreground(
        &self,
        input: BashInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let timeout_ms = input.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        let mut cmd = Command::from(self.command(&input.command, &ctx));
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let (mut child, group) = crate::sandbox::spawn(cmd, "Bash", ctx.confinement.as_ref())
            .map_err(|e| tool_failed("Bash", e))?;
        // From here on, dropping this future (cancellation) or returning
        // kills the whole group: the guard is dropped with the future.
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let mut out = HeadTail::new(KEEP_HEAD, KEEP_TAIL);
        let mut err = HeadTail::new(KEEP_HEAD, KEEP_TAIL);
        let mut status: Option<std::io::Result<ExitStatus>> = None;
        let mut timed_out = false;
        {
            let reads = async {
                tokio::join!(drain(stdout, &mut out), drain(stderr, &mut err));
            };
            tokio::pin!(reads);
            let mut reads_done = false;
            let deadline = Instant::now() + Duration::from_millis(timeout_ms);
            let linger = sleep(Duration::from_secs(u64::from(u32::MAX)));
            tokio::pin!(linger);
            loop {
                tokio::select! {
                    s = child.wait(), if status.is_none() => {
                        status = Some(s);
                        linger.as_mut().reset(Instant::now() + LINGER);
                    }
                    () = &mut reads, if !reads_done => reads_done = true,
                    () = sleep_until(deadline), if status.is_none() => {
                        timed_out = true;
                        break;
                    }
                    () = &mut linger, if status.is_some() => break,
                }
                if status.is_some() && reads_done {
                    break;
                }
            }
            if timed_out {
                group.signal(Sig::Term);
                let grace = sleep(KILL_GRACE);
                tokio::pin!(grace);
                loop {
                    tokio::select! {
                        s = child.wait(), if status.is_none() => status = Some(s),
                        () = &mut reads, if !reads_done => reads_done = true,
                        () = &mut grace => break,
                    }
                    if status.is_some() && reads_done {
                        break;
                    }
                }
                group.signal(Sig::Kill);
                if status.is_none() {
                    // The group kill covers the leader; this covers a
                    // platform without process groups.
                    let _ = child.start_kill();
                    status = Some(child.wait().await);
                }
                if !reads_done {
                    let _ = tokio::time::timeout(LINGER, &mut reads).await;
                }
            }
        }
        // Whatever the command left behind in its group goes now.
        group.end();
        Ok(render(&out, &err, status, timed_out, timeout_ms))
    }

    fn background(&self, input: &BashInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let key = AgentKey::of(ctx);
        // Ended commands stay registered (their logs stay readable) but do
        // not count against the limit.
        let running = self.states.with(&key, |s| {
            s.background
                .iter()
                .filter(|b| b.exit.borrow().is_none())
                .count()
        });
        if running >= MAX_BACKGROUND {
            return Ok(ToolOutput::error(format!(
                "Bash: this agent already runs {running} background commands (at most {MAX_BACKGROUND}); wait for some to finish."
            )));
        }
        let failed = |e: std::io::Error| tool_failed("Bash", e);
        let log = tempfile::Builder::new()
            .prefix("zr-bash-")
            .suffix(".log")
            .tempfile()
            .map_err(failed)?;
        let out_file = log.as_file().try_clone().map_err(failed)?;
        let err_file = log.as_file().try_clone().map_err(failed)?;
        let mut cmd = self.command(&input.command, ctx);
        cmd.stdout(Stdio::from(out_file))
            .stderr(Stdio::from(err_file));
        let log_path = log.path().to_path_buf();
        let (group, leader, rx) =
            background::spawn(cmd, log_path.clone(), ctx.confinement.as_ref()).map_err(failed)?;
        let pgid = group.pgid();
        let (id, forgotten) = self.states.with(&key, |s| {
            s.shells_started += 1;
            let id = format!("bash_{}", s.shells_started);
            s.background.push(BackgroundShell {
                id: id.clone(),
                group,
                leader,
                _log: log,
                exit: rx,
            });
            (id, forget_ended(&mut s.background))
        });
        // Dropped outside the lock: each drop reaps a leader, deletes a log.
        drop(forgotten);
        let pgid = pgid.map_or_else(|| "?".to_owned(), |p| p.to_string());
        Ok(ToolOutput::text(format!(
            "Started in the background as {id} (process group {pgid}). Its stdout and stderr go to {}; Read that file to follow it (a last line `[background command ended: ...]` tells when it has finished). It runs until it exits or this agent ends, when it is killed.",
            log_path.display()
        )))
    }
}

/// Takes out the oldest ended commands beyond [`KEEP_ENDED`], so that an
/// agent starting many short background commands does not pile up logs
/// (and, on Linux, unreaped leaders) until it ends.
fn forget_ended(shells: &mut Vec<BackgroundShell>) -> Vec<BackgroundShell> {
    let ended = shells.iter().filter(|b| b.exit.borrow().is_some()).count();
    let mut excess = ended.saturating_sub(KEEP_ENDED);
    let mut forgotten = Vec::new();
    let mut i = 0;
    while excess > 0 && i < shells.len() {
        if shells[i].exit.borrow().is_some() {
            forgotten.push(shells.remove(i));
            excess -= 1;
        } else {
            i += 1;
        }
    }
    forgotten
}

async fn drain<R: AsyncRead + Unpin>(pipe: Option<R>, buf: &mut HeadTail) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut chunk = vec![0_u8; 8192];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.push(&chunk[..n]),
        }
    }
}

fn render(
    out: &HeadTail,
    err: &HeadTail,
    status: Option<std::io::Result<ExitStatus>>,
    timed_out: bool,
    timeout_ms: u64,
) -> ToolOutput {
    let mut text = out.render();
    if err.total() > 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&err.render());
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let footer = if timed_out {
        format!(
            "[timed out after {} ms: the command's process group was terminated; raise `timeout` (at most {MAX_TIMEOUT_MS}) or use run_in_background]",
            timeout_ms
        )
    } else {
        match &status {
            Some(Ok(st)) => format!("[{}]", describe_status(st)),
            Some(Err(e)) => format!("[exit status unknown: {e}]"),
            None => "[exit status unknown]".to_owned(),
        }
    };
    if text.is_empty() && !timed_out && footer == "[exit code 0]" {
        return ToolOutput::text("(no output)\n[exit code 0]");
    }
    text.push_str(&footer);
    if timed_out {
        ToolOutput::error(text)
    } else {
        ToolOutput::text(text)
    }
}

fn describe_status(st: &ExitStatus) -> String {
    if let Some(code) = st.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = st.signal() {
            return format!("killed by signal {sig}");
        }
    }
    "exit status unknown".to_owned()
}

impl Builtin for BashTool {
    type Input = BashInput;
    const NAME: BuiltinName = BuiltinName::Bash;
    const HINTS: Hints = Hints {
        destructive: Some(true),
        idempotent: Some(false),
        open_world: Some(true),
    };

    fn details(&self) -> String {
        format!(
            "Runs `bash -c COMMAND` in the agent's working directory, in its own process group, with only the agent's environment variables. Timeout: `timeout` ms (default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}); on timeout the whole group gets SIGTERM, then SIGKILL. Output: stdout, then stderr after a `[stderr]` line, then the exit code; long output keeps its first and last {KEEP_HEAD} bytes and says how much was cut. Processes the command leaves behind are killed when it returns: use run_in_background for servers and watchers (output goes to a log file you can Read; they are killed when this agent ends). Prefer Read, Glob, Grep and Edit over cat, find, grep and sed."
        )
    }

    fn access(input: &Self::Input, _cwd: &Path) -> Vec<Access> {
        vec![Access::Command(input.command.clone())]
    }

    fn run<'a>(
        &'a self,
        input: BashInput,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if input.command.trim().is_empty() {
                return Ok(ToolOutput::error(
                    "Bash: `command` is empty; give the shell command to run.",
                ));
            }
            match input.timeout {
                Some(0) => {
                    return Ok(ToolOutput::error(format!(
                        "Bash: `timeout` must be between 1 and {MAX_TIMEOUT_MS} milliseconds."
                    )));
                }
                Some(t) if t > MAX_TIMEOUT_MS => {
                    return Ok(ToolOutput::error(format!(
                        "Bash: `timeout` is {t} ms; at most {MAX_TIMEOUT_MS} ms (10 minutes) is allowed. Use run_in_background for longer commands."
                    )));
                }
                _ => {}
            }
            if !ctx.cwd.is_dir() {
                return Ok(ToolOutput::error(format!(
                    "Bash: the working directory {} does not exist.",
                    ctx.cwd.display()
                )));
            }
            let display = input.description.clone();
            let out = if input.run_in_background.unwrap_or(false) {
                self.background(&input, &ctx)?
            } else {
                self.foreground(input, ctx).await?
            };
            Ok(match display {
                Some(d) => out.with_display(d),
                None => out,
            })
        })
    }
}
