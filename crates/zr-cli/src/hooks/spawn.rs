//! Running one hook command: `sh -c COMMAND` in the project folder,
//! through zr-process (its own process group, killed when zr dies, even by
//! SIGKILL), its event as JSON on standard input, its standard output and
//! error read (64 KiB each at most); killed with its whole group when its
//! future is dropped (a hook that timed out, a run that stopped).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, Command};
use zr_process::ProcessGroup;

/// What a finished command said.
#[derive(Debug)]
pub(crate) struct Ran {
    /// `None`: killed by a signal.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// The most bytes read of a command's standard output and error each.
const OUTPUT_LIMIT: u64 = 64 * 1024;

/// How long a command's output is read after the command exited, before
/// what it left holding the pipes is killed.
const AFTER_EXIT: Duration = Duration::from_millis(200);

/// A running hook command; dropping it kills its process group.
#[derive(Debug)]
struct HookProcess {
    child: Child,
    /// Dropped after the child: kills what the command started (ended
    /// sooner when what it left holds the command's output).
    group: ProcessGroup,
}

/// Starts `command` for the hook `event` with `sh -c` in `cwd`, its
/// standard input, output and error piped, with `env` added to zr's
/// environment.
fn spawn_hook(
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

/// Runs `command` for `event` in `project` with `input` on its standard
/// input; `None` (with a warning) when it cannot start. A command that
/// ends with a code other than 0 or 2, or by a signal, is a warning (a
/// non-blocking error, as in Claude Code).
pub(crate) async fn run_command(
    event: &str,
    command: &str,
    (project, vars): (&Path, &[(String, String)]),
    input: String,
) -> Option<Ran> {
    let dir = project.to_string_lossy();
    let mut env: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.extend([
        ("ZR_PROJECT_DIR", dir.as_ref()),
        ("CLAUDE_PROJECT_DIR", dir.as_ref()),
    ]);
    // The hook runs inside the span of what it is called for.
    let mut trace = std::collections::BTreeMap::new();
    zr_engine::pass_trace_context(&mut trace);
    env.extend(trace.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let mut process = match spawn_hook(event, command, project, &env) {
        Ok(p) => p,
        Err(error) => {
            tracing::warn!("the {event} hook `{command}` could not start: {error}");
            return None;
        }
    };
    let mut stdin = process.child.stdin.take();
    let mut stdout = process.child.stdout.take();
    let mut stderr = process.child.stderr.take();
    let write = async {
        if let Some(mut pipe) = stdin.take() {
            // A command that does not read its input is no error.
            let _ = pipe.write_all(input.as_bytes()).await;
            let _ = pipe.shutdown().await;
        }
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let (child, group) = (&mut process.child, &process.group);
    let status = {
        let reads = async {
            tokio::join!(
                read_into(stdout.take(), &mut out),
                read_into(stderr.take(), &mut err)
            )
        };
        let exits = async {
            write.await;
            child.wait().await
        };
        tokio::pin!(reads, exits);
        tokio::select! {
            _ = &mut reads => exits.await,
            status = &mut exits => {
                // The command ended, but something it started may hold
                // its output open: take what comes within a moment,
                // then kill its group (what holds the pipes) and stop
                // waiting.
                if tokio::time::timeout(AFTER_EXIT, &mut reads).await.is_err() {
                    group.end();
                    let _ = tokio::time::timeout(AFTER_EXIT, &mut reads).await;
                }
                status
            }
        }
    };
    let ran = Ran {
        code: status.ok().and_then(|s| s.code()),
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    };
    if !matches!(ran.code, Some(0 | 2)) {
        tracing::warn!(
            "the {event} hook `{command}` failed ({}): {}",
            ran.code.map_or_else(
                || "killed by a signal".to_owned(),
                |c| format!("exit code {c}")
            ),
            ran.stderr.trim()
        );
    }
    Some(ran)
}

/// Up to [`OUTPUT_LIMIT`] bytes of `pipe` into `text` (what was read stays
/// there if the read is given up).
async fn read_into(pipe: Option<impl tokio::io::AsyncRead + Unpin>, text: &mut Vec<u8>) {
    if let Some(pipe) = pipe {
        // What was read before an error is what the command said.
        let _ = pipe.take(OUTPUT_LIMIT).read_to_end(text).await;
    }
}
