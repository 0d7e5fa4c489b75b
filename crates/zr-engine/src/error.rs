//! Errors of the engine.

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;
use zr_providers::ProviderError;
use zr_resolve::ResolveError;
use zr_types::{AgentId, SessionId, ToolName};

/// The engine could not build or run an agent.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The resolver refused an agent's tool sources.
    #[error("cannot resolve the tool pool of agent {agent}")]
    Resolve {
        /// The agent.
        agent: AgentId,
        /// Why.
        #[source]
        source: ResolveError,
    },
    /// A tool in an agent's pool has no handler registered with the
    /// runtime.
    #[error(
        "tool '{tool}' of agent {agent} has no handler: register the same definition (Arc) with RuntimeEnvironment::with_tool"
    )]
    MissingHandler {
        /// The agent.
        agent: AgentId,
        /// The tool.
        tool: ToolName,
    },
    /// A query was started while another query of the same agent was
    /// running.
    #[error("agent {agent} is already running a query; wait for it to finish or cancel it")]
    Busy {
        /// The agent.
        agent: AgentId,
    },
    /// The model request failed.
    #[error("model request of agent {agent} failed")]
    Provider {
        /// The agent.
        agent: AgentId,
        /// Why.
        #[source]
        source: ProviderError,
    },
    /// The model stopped with neither an answer nor a tool call, for a
    /// reason other than ending its turn (its output limit, a full context
    /// window, a refusal).
    #[error("the model of agent {agent} stopped ({}) without an answer or a tool call", stop_reason.as_str())]
    NoAnswer {
        /// The agent.
        agent: AgentId,
        /// Why the model stopped.
        stop_reason: zr_types::StopReason,
    },
    /// An agent's output schema is not a JSON Schema (its type's
    /// `output_schema`, or [`AgentConfig::output_schema`](crate::AgentConfig::output_schema) for the root);
    /// the agent did not run.
    #[error("the output schema of agent {agent} (from {from}) is {message}")]
    OutputSchema {
        /// The agent.
        agent: AgentId,
        /// Where the schema came from: `type NAME` or `AgentConfig`.
        from: String,
        /// What is wrong with it.
        message: String,
    },
    /// The root's answer did not match its output schema
    /// ([`AgentConfig::output_schema`](crate::AgentConfig::output_schema)),
    /// after one repair turn.
    #[error("the answer of agent {agent} was refused: {message}")]
    InvalidAnswer {
        /// The agent.
        agent: AgentId,
        /// What the schema check said.
        message: String,
    },
    /// A hook refused the query's prompt before the model saw it: a
    /// UserPromptSubmit hook blocked it (exit code 2, `"decision":
    /// "block"`) or a SessionStart or UserPromptSubmit hook stopped the
    /// session (`"continue": false`). The reason is the user's, not the
    /// model's; the conversation stays as it was (the prompt is not in
    /// it).
    #[error("the prompt was not sent: a {event} hook refused it: {reason}")]
    PromptBlocked {
        /// `UserPromptSubmit` or `SessionStart`.
        event: String,
        /// The hook's reason.
        reason: String,
    },
    /// The query's task was aborted before it produced a result (the
    /// [`Query`](crate::Query) was cancelled or its runtime shut down).
    #[error("the query was cancelled")]
    Cancelled,
    /// A host's task ([`Agent::run_task`](crate::Agent::run_task)) was
    /// refused before anything started: the message names the field.
    #[error("{message}")]
    InvalidTask {
        /// What is wrong, as a `Task` call's model would be told.
        message: String,
    },
    /// A query was started outside a Tokio runtime.
    #[error("a query must be started within a Tokio runtime")]
    NoRuntime,
    /// The engine itself panicked (a bug); the query's agents were stopped.
    #[error("the query's task panicked: {message}")]
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// The cron scheduler could not read or update the cron store.
    #[error("the cron scheduler cannot use its store")]
    Cron {
        /// Why.
        #[source]
        source: zr_tools::CronStoreError,
    },
    /// An isolated subagent (`isolation: worktree`) could not get its git
    /// worktree; it did not run.
    #[error("agent {agent} cannot run in a git worktree")]
    Worktree {
        /// The agent.
        agent: AgentId,
        /// Why.
        #[source]
        source: WorktreeError,
    },
    /// Resuming needs transcripts, and the configuration writes none.
    #[error(
        "transcripts are off: set AgentConfig::sessions_dir to the folder the session was written to"
    )]
    TranscriptsOff,
    /// An agent's transcript could not be read back.
    #[error("cannot resume agent {agent} of session {session}")]
    Resume {
        /// The session.
        session: SessionId,
        /// The agent.
        agent: AgentId,
        /// Why.
        #[source]
        source: TranscriptError,
    },
    /// A subagent whose transcript is of the older format (version 1,
    /// which recorded its type's definition as a hash alone), and whose
    /// type changed or is gone since it started: resuming it with what the
    /// configuration has now could give it more than it started with.
    #[error(
        "cannot resume agent {agent}: {}, and its transcript (an older format) does not record the definition it started with; start a new agent of the type instead",
        if *removed {
            format!("there is no subagent type '{agent_type}' in the configuration any more")
        } else {
            format!("the definition of type '{agent_type}' changed since it started")
        }
    )]
    DefinitionChanged {
        /// The agent.
        agent: AgentId,
        /// Its type, as its transcript names it.
        agent_type: String,
        /// The type is gone (rather than changed).
        removed: bool,
    },
}

/// Making an isolated subagent's git worktree failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WorktreeError {
    /// `git` could not be started.
    #[error("cannot run git (is it installed and on the PATH of the runtime's environment?)")]
    GitMissing {
        /// The error of the spawn.
        #[source]
        source: std::io::Error,
    },
    /// The delegating agent's folder is not inside a git work tree.
    #[error("{} is not inside a git work tree: {stderr}", dir.display())]
    NotARepository {
        /// The folder.
        dir: PathBuf,
        /// What git said.
        stderr: String,
    },
    /// The repository has no commit to start a worktree from.
    #[error("the repository at {} has no commit yet; a worktree starts from one", repo.display())]
    NoCommit {
        /// The repository's top folder.
        repo: PathBuf,
    },
    /// The agent's branch exists already (left by an earlier run).
    #[error("branch {branch} already exists in the repository at {}", repo.display())]
    BranchExists {
        /// The repository's top folder.
        repo: PathBuf,
        /// The branch.
        branch: String,
    },
    /// A git command failed.
    #[error("`git {args}` in {} failed ({status}): {stderr}", dir.display())]
    Git {
        /// Where it ran.
        dir: PathBuf,
        /// Its arguments.
        args: String,
        /// `exit code N` or `killed by a signal`.
        status: String,
        /// What it wrote to stderr (at most a few KiB).
        stderr: String,
    },
    /// A git command did not finish in time; it was killed.
    #[error("`git {args}` in {} did not finish within {} s", dir.display(), after.as_secs())]
    GitTimedOut {
        /// Where it ran.
        dir: PathBuf,
        /// Its arguments.
        args: String,
        /// The limit.
        after: Duration,
    },
    /// A folder or file for the worktree could not be made.
    #[error("cannot create {}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The message of a caught panic (`no message` when its payload is not
/// text).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

/// Runs `future`; a panic while it runs is caught and given back as its
/// message. Callers wrap the call in an `async` block so that a panic while
/// the callee makes its future is caught too.
pub(crate) async fn catch_panic<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    use futures_util::FutureExt as _;
    std::panic::AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .map_err(|panic| panic_message(panic.as_ref()))
}

/// `reason` as the model reads it: a blank one says that `who` gave none.
pub(crate) fn reason_of<'a>(reason: &'a str, who: &str) -> std::borrow::Cow<'a, str> {
    if reason.trim().is_empty() {
        format!("the {who} gave no reason").into()
    } else {
        reason.into()
    }
}

/// `timeout` as people read it: `60 s`, `1.5 s`.
pub(crate) fn seconds(timeout: Duration) -> String {
    let secs = timeout.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{} s", timeout.as_secs())
    } else {
        format!("{secs} s")
    }
}

/// A transcript file could not be read back. A torn last line is not an
/// error (it is ignored); everything else that is wrong names the file and,
/// where there is one, the line (1-based).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The file could not be read.
    #[error("cannot read the transcript {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line before the last one is not a record.
    #[error("transcript {}, line {line}: not a valid record", path.display())]
    InvalidLine {
        /// The file.
        path: PathBuf,
        /// The line.
        line: usize,
        /// What the JSON reader said.
        #[source]
        source: serde_json::Error,
    },
    /// The file holds no complete first record, or its first record is not
    /// a header.
    #[error("transcript {} does not start with a header record", path.display())]
    MissingHeader {
        /// The file.
        path: PathBuf,
    },
    /// A header after the first line (two agents wrote one file).
    #[error("transcript {}, line {line}: a second header", path.display())]
    SecondHeader {
        /// The file.
        path: PathBuf,
        /// The line.
        line: usize,
    },
    /// The file was written by a newer version of the format.
    #[error("transcript {} has format version {version}; this version reads up to {supported}", path.display())]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The file's version.
        version: u32,
        /// The newest version this code reads.
        supported: u32,
    },
}
