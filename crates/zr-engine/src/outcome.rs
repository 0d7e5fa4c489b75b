//! What a run leaves: an agent's progress while it runs, how its loop
//! ended ([`RunOutcome`]), and the result of a delegated task
//! ([`TaskResult`], [`TaskStatus`], [`WorktreeInfo`]) as the delegating
//! model, the hooks, the events and the host see it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zr_types::{AgentId, Message, StopReason, ToolDefinition, ToolName, Usage, error_chain};

use zr_providers::ProviderError;

/// How a subagent's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// It finished its work.
    Completed,
    /// The call's time budget ran out first; it was stopped.
    TimedOut,
    /// It could not run or its model failed.
    Failed,
    /// It was stopped from outside: a background agent stopped by the
    /// host or by the end of its session. (A cancelled query reports no
    /// result for its tasks: it ends with [`EngineError::Cancelled`](crate::EngineError::Cancelled) or is
    /// dropped.)
    Cancelled,
    /// It used all its turns; the output is its summary.
    MaxTurns,
    /// It was stopped because its tool calls were denied too often (by
    /// default 3 in a row or 20 in all; see
    /// [`PermissionConfig`](crate::PermissionConfig)); the output is what it
    /// wrote so far, the error says which limit it hit.
    Denied,
    /// It reached its token or tool-call budget; the output is what it
    /// wrote so far.
    BudgetExhausted,
    /// A hook stopped it (Claude Code's `"continue": false`, see
    /// [`HookReply::halt`](crate::HookReply::halt)); the output is what it
    /// wrote so far, the error the hook's reason.
    Stopped,
    /// It was started in the background and runs on: the call's result
    /// for it says only that. Its parent gets its final result in a
    /// message at a later turn; the host sees it in
    /// [`crate::Agent::background_agents`].
    Background,
}

impl TaskStatus {
    /// The status as the model sees it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::TimedOut => "timed_out",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::MaxTurns => "max_turns",
            Self::Denied => "denied",
            Self::BudgetExhausted => "budget_exhausted",
            Self::Stopped => "stopped",
            Self::Background => "background",
        }
    }

    /// The status named `name` ([`TaskStatus::as_str`]), as a transcript
    /// recorded it.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        [
            Self::Completed,
            Self::TimedOut,
            Self::Failed,
            Self::Cancelled,
            Self::MaxTurns,
            Self::Denied,
            Self::BudgetExhausted,
            Self::Stopped,
            Self::Background,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// The result of one delegated task, as the delegating model gets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task's position in the call.
    pub index: usize,
    /// The subagent's id (its path), when it was created.
    pub agent_id: Option<AgentId>,
    /// `fork` or the subagent type's name.
    pub agent_type: String,
    /// The task's short description.
    pub description: String,
    /// How it ended.
    pub status: TaskStatus,
    /// Its conclusion (for `max_turns`, its summary; for `timed_out` and
    /// `budget_exhausted`, what it wrote so far). For an agent with an
    /// output schema, the answer's text; the model gets [`TaskResult::value`]
    /// instead.
    pub output: String,
    /// For an agent with an output schema (its type's `output_schema` or
    /// the call's) that completed: its answer, parsed and valid. `None`
    /// otherwise; a `failed` task whose answer did not match says why in
    /// [`TaskResult::error`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// Model requests made.
    pub turns: u32,
    /// Tokens used.
    pub usage: Usage,
    /// What its tokens cost, in US dollars, by the price table
    /// ([`price_of`](crate::price_of)) for its model; `None` for a model
    /// the table does not know. For the host: the model is not told.
    #[serde(skip)]
    pub cost_usd: Option<f64>,
    /// Wall time from the call's start, queueing included.
    #[serde(
        rename = "duration_ms",
        serialize_with = "millis",
        deserialize_with = "from_millis"
    )]
    pub duration: Duration,
    /// What went wrong, for every status but `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For an isolated subagent (`isolation: worktree`) that ran: its
    /// worktree, and whether it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeInfo>,
}

fn millis<S: Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// The other way (a result read back from a durable journal).
fn from_millis<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    u64::deserialize(d).map(Duration::from_millis)
}

impl TaskResult {
    /// The result of task `index` before its agent ran: `failed`, nothing
    /// done yet.
    pub(crate) fn pending(index: usize, agent_type: String, description: String) -> Self {
        Self {
            index,
            agent_id: None,
            agent_type,
            description,
            status: TaskStatus::Failed,
            output: String::new(),
            value: None,
            turns: 0,
            usage: Usage::default(),
            cost_usd: None,
            duration: Duration::ZERO,
            error: None,
            worktree: None,
        }
    }
}

/// Copies what an agent stopped from outside (timed out, cancelled) did
/// so far into its task's result: what it wrote, its turns and usage.
pub(crate) fn fill_from_progress(result: &mut TaskResult, progress: &Mutex<Progress>) {
    let progress = crate::sync::lock(progress);
    result.output = progress.written();
    result.turns = progress.turns;
    result.usage = progress.usage;
}

/// Copies how an agent's run ended into its task's result.
pub(crate) fn fill_from_outcome(result: &mut TaskResult, outcome: RunOutcome) {
    result.error = outcome_error(&outcome);
    result.status = outcome.status;
    result.output = outcome.output;
    result.value = outcome.value;
    result.turns = outcome.turns;
    result.usage = outcome.usage;
}

/// What went wrong in a run that ended as `outcome` (`None` when it
/// completed).
pub(crate) fn outcome_error(outcome: &RunOutcome) -> Option<String> {
    let no_answer = outcome.no_answer.as_ref().map(|reason| {
        format!(
            "its model stopped ({}) without an answer or a tool call",
            reason.as_str()
        )
    });
    outcome
        .error
        .as_ref()
        .map(|e| error_chain(e))
        .or_else(|| outcome.invalid.clone())
        .or(no_answer)
        .or_else(|| outcome.denied.clone())
        .or_else(|| outcome.halted.clone())
        .or_else(|| (outcome.status != TaskStatus::Completed).then(|| describe(outcome.status)))
}

fn describe(status: TaskStatus) -> String {
    match status {
        TaskStatus::MaxTurns => "used all its turns; the output is its summary".to_owned(),
        TaskStatus::BudgetExhausted => {
            "reached its token or tool-call budget; the output is what it wrote so far".to_owned()
        }
        TaskStatus::Denied => "stopped after too many of its tool calls were denied".to_owned(),
        other => other.as_str().to_owned(),
    }
}

/// Where an isolated subagent worked, and what became of its worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeInfo {
    /// The worktree's folder.
    #[serde(serialize_with = "lossy")]
    pub path: PathBuf,
    /// Its branch, `zr/<session>/<agent>`.
    pub branch: String,
    /// Whether the agent left something: uncommitted changes to tracked
    /// files, untracked files (ignored ones do not count), or commits. A
    /// worktree that could not be checked counts as changed.
    pub changed: bool,
    /// The files it changed, as `git status` names them (`M src/a.rs`,
    /// `?? notes.txt`), at most [`WorktreeInfo::MAX_LISTED`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Files it left that git ignores (build output, `.env`), at most
    /// [`WorktreeInfo::MAX_LISTED`]: they do not keep the worktree, and
    /// are removed with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    /// Whether the worktree and its branch are still there: a changed one
    /// is kept, an unchanged one removed (kept only when removing it
    /// failed).
    pub kept: bool,
}

fn lossy<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

impl WorktreeInfo {
    /// How many files [`WorktreeInfo::files`] and
    /// [`WorktreeInfo::ignored`] list at most.
    pub const MAX_LISTED: usize = 20;

    /// One line for the report people read.
    pub(crate) fn describe(&self) -> String {
        let (path, branch) = (self.path.display(), &self.branch);
        let ignored = if self.ignored.is_empty() {
            String::new()
        } else {
            format!(
                "; ignored files it left, removed with it: {}",
                self.ignored.join(", ")
            )
        };
        match (self.changed, self.kept) {
            (true, _) if self.files.is_empty() => {
                format!("worktree kept with its changes: {path} (branch {branch})")
            }
            (true, _) => format!(
                "worktree kept with its changes: {path} (branch {branch}): {}",
                self.files.join(", ")
            ),
            (false, false) if self.ignored.is_empty() => {
                "worktree removed: nothing changed in it".to_owned()
            }
            (false, false) => {
                format!("worktree removed: no tracked or untracked file changed{ignored}")
            }
            (false, true) => {
                format!("worktree unchanged but could not be removed: {path} (branch {branch})")
            }
        }
    }
}

/// What an agent did so far; read when it is stopped from outside (timed
/// out, cancelled) to report its partial work.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    pub(crate) turns: u32,
    pub(crate) usage: Usage,
    pub(crate) tool_calls: u32,
    /// The text of finished model turns.
    pub(crate) text: Vec<String>,
    /// The text of the turn being streamed.
    pub(crate) partial: String,
    /// A background agent's conversation and advertised tools as of its
    /// latest request, for progress summaries; `None` for the others.
    pub(crate) snapshot: Option<(Vec<Message>, Vec<Arc<ToolDefinition>>)>,
}

impl Progress {
    /// Everything the agent wrote, the unfinished turn included.
    pub(crate) fn written(&self) -> String {
        let mut parts: Vec<&str> = self.text.iter().map(String::as_str).collect();
        if !self.partial.is_empty() {
            parts.push(&self.partial);
        }
        parts.join("\n\n")
    }
}

/// How an agent's run ended.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    pub(crate) status: TaskStatus,
    pub(crate) output: String,
    pub(crate) turns: u32,
    pub(crate) usage: Usage,
    pub(crate) error: Option<ProviderError>,
    /// Why the model stopped, when it stopped with no answer and no tool
    /// call for a reason other than ending its turn (status `failed`).
    pub(crate) no_answer: Option<StopReason>,
    pub(crate) history: Vec<Message>,
    /// The tools it loaded through FindTool (the root keeps them).
    pub(crate) loaded: Vec<ToolName>,
    /// Why the agent was stopped for too many permission denials (status
    /// `denied`).
    pub(crate) denied: Option<String>,
    /// Why a hook stopped the agent (status `stopped`).
    pub(crate) halted: Option<String>,
    /// The answer of an agent with an output schema, parsed and valid.
    pub(crate) value: Option<serde_json::Value>,
    /// Why its answer was refused (status `failed`): what the schema
    /// check said after the repair turn.
    pub(crate) invalid: Option<String>,
}
