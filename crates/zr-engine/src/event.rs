//! Events: the one stream through which a host follows a query.
//! [`Event::to_wire`] (in `wire.rs`) is how zr-protocol writes them.

mod wire;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use zr_types::{AgentId, StopReason, Usage};

use crate::meta::AgentMeta;
use crate::outcome::TaskResult;

/// One thing that happened during a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Time since the query started.
    pub at: Duration,
    /// The agent it happened in; its id is its path (`root.0002-explore`).
    pub agent: AgentId,
    /// The agent's type: `root`, `fork` or the subagent type's name.
    pub agent_type: Arc<str>,
    /// What happened.
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EventKind {
    /// A piece of the model's text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of the model's reasoning.
    ThinkingDelta {
        /// The new text.
        text: String,
    },
    /// The provider retries the current request; discard this agent's
    /// deltas since its last `TurnFinished` or `ModelRetry`.
    ModelRetry {
        /// The attempt that failed.
        attempt: u32,
        /// The wait before the next attempt.
        delay: Duration,
        /// What went wrong.
        reason: String,
    },
    /// A model request ended.
    TurnFinished {
        /// The 1-based turn.
        turn: u32,
        /// Why the model stopped.
        stop_reason: StopReason,
        /// This request's usage.
        usage: Usage,
    },
    /// Usage after a model request: the agent's so far, and the whole
    /// query's so far (every agent under it).
    Usage {
        /// The agent's usage.
        agent: Usage,
        /// The query's usage.
        total: Usage,
    },
    /// A tool call starts.
    ToolCallStarted {
        /// The provider's call id.
        call_id: String,
        /// The tool's name as the model wrote it.
        tool: String,
        /// The input as the model wrote it.
        input: Value,
    },
    /// A tool call ended (also when it was refused without running).
    ToolCallFinished {
        /// The provider's call id.
        call_id: String,
        /// The tool's name as the model wrote it.
        tool: String,
        /// Whether the model got an error result.
        is_error: bool,
        /// The result's text for people (its `display`, else its text).
        summary: String,
        /// How long it ran.
        duration: Duration,
    },
    /// A tool could not be carried out at all (`Err(ToolError)` or a
    /// panic); the model got an error result too.
    ToolFailed {
        /// The provider's call id.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The error and its causes.
        error: String,
    },
    /// A subagent was created; `agent` is the subagent. It may wait in the
    /// call's queue before [`EventKind::SubagentRunning`].
    SubagentStarted {
        /// The delegating agent.
        parent: AgentId,
        /// The task's short description.
        description: String,
        /// Its index in the call's task list.
        index: usize,
        /// Whether it runs in the background: the call returned at once,
        /// and its later events come through the session (see
        /// [`crate::Agent::background_events`]).
        background: bool,
    },
    /// A queued subagent got a slot and runs.
    SubagentRunning,
    /// A subagent ended.
    SubagentFinished {
        /// Its result, as the delegating model gets it.
        result: Box<TaskResult>,
    },
    /// A few words on what a background subagent is doing, produced every
    /// [`crate::SubagentConfig::progress_interval`] by a tools-disabled
    /// side request over its conversation.
    SubagentProgress {
        /// The summary.
        summary: String,
    },
    /// A tool call was refused by a PreToolUse hook, the agent's permission
    /// mode, the host's permission callback or the user; it did not run
    /// and the model got the reason as an error result.
    PermissionDenied {
        /// The provider's call id.
        call_id: String,
        /// The tool's name as the model wrote it.
        tool: String,
        /// What the model was told.
        reason: String,
    },
    /// The agent's older history was replaced by a summary the model wrote
    /// (tools disabled) because its context passed the compaction
    /// threshold; the most recent messages were kept verbatim.
    Compacted {
        /// The context the last request used, in tokens.
        before_tokens: u64,
        /// An estimate of the context after the replacement (a quarter of
        /// the bytes of what was removed and added).
        after_tokens: u64,
        /// How many messages the summary replaced.
        messages: usize,
        /// The summary request's usage (counted in the agent's usage, its
        /// token budget and the query's total; not a turn).
        usage: Usage,
    },
    /// Compaction was due but the summary request failed; the history was
    /// kept as it was and the agent continues.
    CompactionFailed {
        /// The context the last request used, in tokens.
        before_tokens: u64,
        /// What went wrong.
        reason: String,
    },
    /// The agent's transcript could not be written; the agent goes on, and
    /// its transcript stays as it was before this record (sent once per
    /// transcript: nothing more is written to it).
    TranscriptError {
        /// The transcript file.
        path: PathBuf,
        /// The error and its causes.
        error: String,
    },
    /// Resuming the agent changed something it was written with (an
    /// unknown type run as general-purpose, a missing folder replaced by
    /// its parent's, a definition that changed since).
    ResumeWarning {
        /// What changed, and why.
        message: String,
    },
    /// A hook stopped the agent (Claude Code's `"continue": false`): it
    /// ends with [`TaskStatus::Stopped`](crate::TaskStatus::Stopped).
    HookStopped {
        /// Which hook, and its reason (`stopped by a PostToolUse hook:
        /// ...`).
        reason: String,
    },
}

/// Sends events of one query, or of the session's background agents;
/// cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct EventSink {
    start: Instant,
    route: Route,
}

#[derive(Debug, Clone)]
enum Route {
    /// The stream of one query.
    Query(mpsc::UnboundedSender<Event>),
    /// The stream of a query whose events nobody reads ([`crate::Agent::prompt`]
    /// discards them): none is made. The sender is kept, so that the
    /// stream closes when the query ends, as a heard one does.
    Unheard { _open: mpsc::UnboundedSender<Event> },
    /// The session's router: background agents outlive the query that
    /// started them.
    Session(Arc<EventRouter>),
}

impl EventSink {
    pub(crate) fn new(start: Instant, tx: mpsc::UnboundedSender<Event>) -> Self {
        Self {
            start,
            route: Route::Query(tx),
        }
    }

    /// The sink of a query whose events nobody reads: it sends none.
    pub(crate) fn unheard(start: Instant, tx: mpsc::UnboundedSender<Event>) -> Self {
        Self {
            start,
            route: Route::Unheard { _open: tx },
        }
    }

    /// Whether anybody reads the events sent here (a background agent's
    /// always may: they go to the session's subscribers too).
    pub(crate) fn heard(&self) -> bool {
        !matches!(self.route, Route::Unheard { .. })
    }

    /// Sends the event `kind` makes, made only when somebody reads it.
    pub(crate) fn emit_with(&self, agent: &AgentMeta, kind: impl FnOnce() -> EventKind) {
        if self.heard() {
            self.emit(agent, kind());
        }
    }

    /// A sink for a background agent launched by a query that started at
    /// `start`: its events go through `router`.
    pub(crate) fn background(&self, router: Arc<EventRouter>) -> Self {
        Self {
            start: self.start,
            route: Route::Session(router),
        }
    }

    /// Sends an event; a host that stopped listening loses nothing it
    /// asked for, so a closed channel is ignored.
    /// Sends `kind` as an event of `agent`.
    pub(crate) fn emit(&self, agent: &AgentMeta, kind: EventKind) {
        self.send(&agent.id, &agent.agent_type, kind);
    }

    pub(crate) fn send(&self, agent: &AgentId, agent_type: &Arc<str>, kind: EventKind) {
        if !self.heard() {
            return;
        }
        let event = Event {
            at: self.start.elapsed(),
            agent: agent.clone(),
            agent_type: Arc::clone(agent_type),
            kind,
        };
        match &self.route {
            Route::Query(tx) => {
                let _ = tx.send(event);
            }
            Route::Session(router) => router.send(event),
            Route::Unheard { .. } => {}
        }
    }
}

/// Where the events of background agents go: to the stream of the query
/// that runs at the moment (if one does), and to every subscriber of
/// [`crate::Agent::background_events`].
#[derive(Debug, Default)]
pub(crate) struct EventRouter {
    inner: Mutex<RouterInner>,
}

#[derive(Debug, Default)]
struct RouterInner {
    /// The running query's number and stream.
    current: Option<(u64, mpsc::UnboundedSender<Event>)>,
    subscribers: Vec<mpsc::UnboundedSender<Event>>,
}

impl EventRouter {
    fn lock(&self) -> std::sync::MutexGuard<'_, RouterInner> {
        crate::sync::lock(&self.inner)
    }

    fn send(&self, event: Event) {
        let mut inner = self.lock();
        if let Some((_, tx)) = &inner.current {
            let _ = tx.send(event.clone());
        }
        inner
            .subscribers
            .retain(|tx| tx.send(event.clone()).is_ok());
    }

    /// Query number `query` runs and streams to `tx`.
    pub(crate) fn query_started(&self, query: u64, tx: mpsc::UnboundedSender<Event>) {
        self.lock().current = Some((query, tx));
    }

    /// Query number `query` ended: its stream must close, so the router
    /// lets go of it.
    pub(crate) fn query_ended(&self, query: u64) {
        let mut inner = self.lock();
        if inner.current.as_ref().is_some_and(|(q, _)| *q == query) {
            inner.current = None;
        }
    }

    /// A new subscriber.
    pub(crate) fn subscribe(&self) -> mpsc::UnboundedReceiver<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().subscribers.push(tx);
        rx
    }
}
