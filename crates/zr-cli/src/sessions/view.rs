//! One session as its transcripts tell it: its agents in tree order, each
//! with its status, timing, tokens and cost. `zr sessions` sums it up;
//! `zr sessions show` prints it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use zr_engine::price_of;
use zr_types::Usage;

use super::read::{AgentFile, read_agent};
use super::running::running;

/// A session read back from its folder.
#[derive(Debug)]
pub(crate) struct SessionView {
    pub(crate) id: String,
    /// Its agents, sorted by id (`root` first).
    pub(crate) agents: Vec<AgentView>,
    /// A live `zr` process runs it now.
    pub(crate) running: bool,
}

/// One agent of a session.
#[derive(Debug)]
pub(crate) struct AgentView {
    pub(crate) id: String,
    pub(crate) file: AgentFile,
}

impl AgentView {
    /// The tool calls of `agent` as `Read 3, Grep 2 (1 failed)`.
    pub(crate) fn tool_summary(&self) -> String {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut failed = 0;
        let mut unanswered = 0;
        for (name, error) in self.file.tool_calls() {
            *counts.entry(name).or_default() += 1;
            match error {
                Some(true) => failed += 1,
                None => unanswered += 1,
                Some(false) => {}
            }
        }
        if counts.is_empty() {
            return "-".to_owned();
        }
        let mut text = counts
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut notes = Vec::new();
        if failed > 0 {
            notes.push(format!("{failed} failed"));
        }
        if unanswered > 0 {
            notes.push(format!("{unanswered} without a result"));
        }
        if !notes.is_empty() {
            let _ = write!(text, " ({})", notes.join(", "));
        }
        text
    }
}

/// When an agent waited and ran, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timing {
    /// When its parent's delegating reply was written: where its wait for
    /// a slot began (`None` for the root, or a transcript without times).
    pub(crate) queued_ms: Option<u64>,
    /// When its run began.
    pub(crate) start_ms: u64,
    /// Its last record's time.
    pub(crate) end_ms: u64,
}

impl Timing {
    /// How long it waited before its run began; `None` without a wait's
    /// start.
    pub(crate) fn waited_ms(self) -> Option<u64> {
        Some(self.start_ms.saturating_sub(self.queued_ms?))
    }

    /// How long it ran.
    pub(crate) fn ran_ms(self) -> u64 {
        self.end_ms.saturating_sub(self.start_ms)
    }
}

/// The agent ids with a transcript in `folder`, sorted.
pub(crate) fn agent_ids(folder: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".jsonl").map(str::to_owned)
        })
        .collect();
    ids.sort();
    ids
}

/// The start time encoded in a session id (`s-` + 13 hex digits of
/// milliseconds + `-` + 8 hex digits).
pub(crate) fn started_from_id(id: &str) -> Option<u64> {
    let (ms, _) = id.strip_prefix("s-")?.split_once('-')?;
    u64::from_str_radix(ms, 16).ok()
}

impl SessionView {
    /// The session `id` in `folder`; `shown_root`: what the paths in
    /// `warnings` are relative to.
    pub(crate) fn load(
        id: &str,
        folder: &Path,
        shown_root: &Path,
        warnings: &mut Vec<String>,
    ) -> Self {
        let agents = agent_ids(folder)
            .into_iter()
            .map(|agent| {
                let path = folder.join(format!("{agent}.jsonl"));
                let shown = crate::inspect::shown_path(&path, shown_root);
                let file = read_agent(&path, &shown, warnings);
                AgentView { id: agent, file }
            })
            .collect();
        Self {
            id: id.to_owned(),
            agents,
            running: running(folder).is_some(),
        }
    }

    /// The session's start: its id's time, else its earliest agent's.
    pub(crate) fn origin(&self) -> u64 {
        self.started_ms()
            .or_else(|| self.agents.iter().filter_map(|a| a.file.created_ms).min())
            .unwrap_or(0)
    }

    /// Its background agents whose last run was cut short (`zr resume`
    /// revives them), by id.
    pub(crate) fn background_cut_short(&self) -> Vec<&str> {
        self.agents
            .iter()
            .filter(|a| a.file.background && a.file.messages > 0 && a.file.ended.is_none())
            .map(|a| a.id.as_str())
            .collect()
    }

    /// The root's transcript, if there is one.
    pub(crate) fn root(&self) -> Option<&AgentFile> {
        self.agent("root").map(|a| &a.file)
    }

    /// The agent `id`.
    pub(crate) fn agent(&self, id: &str) -> Option<&AgentView> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// `completed`, `failed`, `max_turns`, ... (the root's last `finished`
    /// record), `running` (a live `zr` process runs it), `interrupted`
    /// (cut short: Ctrl-C, a kill, a crash) or `empty` (no root transcript
    /// with a message).
    pub(crate) fn status(&self) -> String {
        match self.root() {
            Some(r) if r.ended.is_none() && self.running => "running".to_owned(),
            Some(r) if r.messages == 0 => "empty".to_owned(),
            Some(r) => r.ended.clone().unwrap_or_else(|| "interrupted".to_owned()),
            None if self.running => "running".to_owned(),
            None => "empty".to_owned(),
        }
    }

    /// Start time: from the id, else the root's header.
    pub(crate) fn started_ms(&self) -> Option<u64> {
        started_from_id(&self.id).or_else(|| self.root().and_then(|r| r.created_ms))
    }

    /// Tokens of the finished runs, over all agents.
    pub(crate) fn usage(&self) -> Usage {
        self.agents
            .iter()
            .fold(Usage::default(), |sum, a| sum.plus(a.file.usage))
    }

    /// Estimated cost in US dollars; `None` when an agent with tokens used
    /// a model without a known price.
    pub(crate) fn cost(&self) -> Option<f64> {
        self.agents
            .iter()
            .try_fold(0.0, |sum, a| Some(sum + agent_cost(&a.file)?))
    }

    /// The status of agent `agent`: its last run's end, else `running` or
    /// `interrupted`.
    pub(crate) fn agent_status(&self, agent: &AgentFile) -> String {
        match &agent.ended {
            Some(status) => status.clone(),
            None if self.running => "running".to_owned(),
            None => "interrupted".to_owned(),
        }
    }

    /// When `agent` waited and ran; `None` without a header time.
    pub(crate) fn timing(&self, agent: &AgentFile) -> Option<Timing> {
        let start_ms = agent.created_ms?;
        let queued_ms = agent
            .parent
            .as_deref()
            .and_then(|parent| self.agent(parent))
            .and_then(|parent| parent.file.delegations().filter(|&at| at <= start_ms).max());
        Some(Timing {
            queued_ms,
            start_ms,
            end_ms: agent.last_ms.unwrap_or(start_ms).max(start_ms),
        })
    }

    /// The agents in tree order with their depth: each after its parent,
    /// siblings by id; an agent whose parent has no transcript hangs under
    /// the root.
    pub(crate) fn tree(&self) -> Vec<(usize, &AgentView)> {
        let known = |id: &str| self.agent(id).is_some();
        let parent_of = |a: &AgentView| -> Option<String> {
            if a.id == "root" {
                return None;
            }
            match a.file.parent.as_deref() {
                Some(p) if known(p) && p != a.id => Some(p.to_owned()),
                _ if known("root") => Some("root".to_owned()),
                _ => None,
            }
        };
        let mut out = Vec::with_capacity(self.agents.len());
        let mut placed = vec![false; self.agents.len()];
        let mut stack: Vec<(usize, usize)> = self
            .agents
            .iter()
            .enumerate()
            .filter(|(_, a)| parent_of(a).is_none())
            .map(|(i, _)| (0, i))
            .rev()
            .collect();
        while let Some((depth, index)) = stack.pop() {
            let Some(slot) = placed.get_mut(index) else {
                continue;
            };
            if std::mem::replace(slot, true) {
                continue;
            }
            let Some(agent) = self.agents.get(index) else {
                continue;
            };
            out.push((depth, agent));
            let children: Vec<usize> = self
                .agents
                .iter()
                .enumerate()
                .filter(|(_, c)| parent_of(c).as_deref() == Some(agent.id.as_str()))
                .map(|(i, _)| i)
                .collect();
            stack.extend(children.into_iter().rev().map(|i| (depth + 1, i)));
        }
        out
    }
}

/// What `agent`'s finished runs cost; `None` for an unknown model that
/// used tokens.
pub(crate) fn agent_cost(agent: &AgentFile) -> Option<f64> {
    let model = agent.model.as_deref().unwrap_or_default();
    match price_of(model) {
        Some(price) => Some(price.cost(&agent.usage)),
        None if agent.usage.total() == 0 => Some(0.0),
        None => None,
    }
}
