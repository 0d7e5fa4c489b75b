//! The state every renderer follows: each agent of the run, its type,
//! status, current tool, turns, tokens and times.

use std::collections::BTreeMap;
use std::time::Duration;

use zr_engine::{Event, EventKind, TaskStatus};
use zr_types::AgentId;

/// Where an agent is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for a slot of its call.
    Queued,
    /// Running.
    Running,
    /// Ended.
    Done(TaskStatus),
}

/// One agent of the run.
#[derive(Debug, Clone)]
pub(crate) struct AgentRow {
    /// `root`, `fork` or the type's name.
    pub(crate) agent_type: String,
    /// The task's description (empty for the root).
    pub(crate) description: String,
    /// Whether it runs in the background.
    pub(crate) background: bool,
    /// Where it is.
    pub(crate) phase: Phase,
    /// The tool it is running, if any.
    pub(crate) tool: Option<String>,
    /// Model requests finished.
    pub(crate) turns: u32,
    /// Tokens used: [`Usage::total`](zr_types::Usage::total), cache
    /// reads and writes included (what "tokens" means in every renderer
    /// and in `zr sessions`).
    pub(crate) tokens: u64,
    /// When it started (since the run started).
    pub(crate) started: Duration,
    /// When it ended.
    pub(crate) ended: Option<Duration>,
}

/// Every agent of a run, in id order: children follow their parent at
/// any depth, siblings in start order ([`AgentId`]'s order, by number:
/// `root.9999-x` before `root.10000-x`, which text order would turn
/// round).
#[derive(Debug, Default)]
pub(crate) struct AgentTable {
    rows: BTreeMap<AgentId, AgentRow>,
}

impl AgentTable {
    /// Applies one event.
    pub(crate) fn apply(&mut self, event: &Event) {
        let row = self
            .rows
            .entry(event.agent.clone())
            .or_insert_with(|| AgentRow {
                agent_type: event.agent_type.to_string(),
                description: String::new(),
                background: false,
                phase: Phase::Running,
                tool: None,
                turns: 0,
                tokens: 0,
                started: event.at,
                ended: None,
            });
        match &event.kind {
            EventKind::SubagentStarted {
                description,
                background,
                ..
            } => {
                row.description.clone_from(description);
                row.background = *background;
                row.phase = Phase::Queued;
                row.started = event.at;
            }
            EventKind::SubagentRunning => row.phase = Phase::Running,
            EventKind::TurnFinished { turn, .. } => row.turns = *turn,
            EventKind::Usage { agent, .. } => {
                row.tokens = agent.total();
            }
            EventKind::ToolCallStarted { tool, .. } => row.tool = Some(tool.clone()),
            EventKind::ToolCallFinished { .. } | EventKind::ToolFailed { .. } => row.tool = None,
            EventKind::SubagentFinished { result } => {
                row.phase = Phase::Done(result.status);
                row.tool = None;
                row.turns = row.turns.max(result.turns);
                row.ended = Some(event.at);
            }
            _ => {}
        }
    }

    /// The agents in id order.
    pub(crate) fn rows(&self) -> impl Iterator<Item = (&str, &AgentRow)> {
        self.rows.iter().map(|(id, row)| (id.as_str(), row))
    }

    /// One agent.
    pub(crate) fn get(&self, id: &AgentId) -> Option<&AgentRow> {
        self.rows.get(id)
    }

    /// The tokens of every agent seen, background agents that went on
    /// after the root's answer included.
    pub(crate) fn tokens(&self) -> u64 {
        self.rows
            .values()
            .fold(0_u64, |sum, row| sum.saturating_add(row.tokens))
    }
}
