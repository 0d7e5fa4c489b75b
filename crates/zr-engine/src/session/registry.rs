//! The session's background agents: their entries (what the host lists
//! and inspects), the notifications of their ends waiting for their
//! parent's next turn, and the count of those still running.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;
use zr_types::{AgentId, Usage};

use crate::outcome::{Progress, TaskResult};
use crate::sync::lock;

/// A background agent as the host sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundAgent {
    /// Its id (its path).
    pub id: AgentId,
    /// `fork` or its type's name.
    pub agent_type: String,
    /// The task's short description.
    pub description: String,
    /// The agent that started it.
    pub parent: AgentId,
    /// Time since it was started (until it finished, once it has).
    pub elapsed: Duration,
    /// Model requests made so far.
    pub turns: u32,
    /// Tokens used so far.
    pub usage: Usage,
    /// The latest progress summary.
    pub progress: Option<String>,
    /// Its result, once it finished (also when it was stopped).
    pub result: Option<TaskResult>,
}

impl BackgroundAgent {
    /// Whether it still runs.
    #[must_use]
    pub fn is_running(&self) -> bool {
        self.result.is_none()
    }
}

/// A finished background agent's result, waiting for its parent's next
/// turn.
#[derive(Debug, Clone)]
pub(crate) struct Notification {
    parent: AgentId,
    text: String,
}

#[derive(Debug)]
pub(crate) struct Entry {
    agent_type: String,
    description: String,
    parent: AgentId,
    started: Instant,
    progress: Arc<Mutex<Progress>>,
    summary: Option<String>,
    result: Option<TaskResult>,
    task: Option<JoinHandle<()>>,
}

impl Entry {
    /// A background agent of type `agent_type` working on `description`
    /// for `parent`, started now.
    pub(crate) fn new(
        agent_type: String,
        description: String,
        parent: AgentId,
        progress: Arc<Mutex<Progress>>,
    ) -> Self {
        Self {
            agent_type,
            description,
            parent,
            started: Instant::now(),
            progress,
            summary: None,
            result: None,
            task: None,
        }
    }
}

/// The session's background agents and the notifications not yet
/// delivered.
#[derive(Debug)]
pub(crate) struct Registry {
    entries: Mutex<BTreeMap<AgentId, Entry>>,
    notifications: Mutex<Vec<Notification>>,
    /// How many agents' tasks are not over yet (their cleanup and
    /// SubagentStop hooks included).
    running: watch::Sender<usize>,
    /// Set when the session ends: an agent launched later is stopped at
    /// once (a query may outlive its [`crate::Agent`]).
    closed: AtomicBool,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            entries: Mutex::default(),
            notifications: Mutex::default(),
            running: watch::Sender::new(0),
            closed: AtomicBool::new(false),
        }
    }
}

impl Registry {
    /// Every background agent of the session, by id.
    pub(crate) fn list(&self) -> Vec<BackgroundAgent> {
        lock(&self.entries)
            .iter()
            .map(|(id, entry)| view(id, entry))
            .collect()
    }

    /// One background agent.
    pub(crate) fn get(&self, id: &AgentId) -> Option<BackgroundAgent> {
        lock(&self.entries).get(id).map(|entry| view(id, entry))
    }

    /// Takes the task of a running agent, to stop it.
    pub(crate) fn take_task(&self, id: &AgentId) -> Option<JoinHandle<()>> {
        lock(&self.entries).get_mut(id).and_then(|e| e.task.take())
    }

    /// Stops every background agent, and those launched from now on (the
    /// session ends).
    pub(crate) fn abort_all(&self) {
        let mut entries = lock(&self.entries);
        self.closed.store(true, Ordering::Relaxed);
        for entry in entries.values_mut() {
            if let Some(task) = entry.task.take() {
                task.abort();
            }
        }
    }

    /// Waits until no background agent runs: each one's task is over, its
    /// cleanup and SubagentStop hooks done (or, for a task that was
    /// stopped, spawned as session cleanups).
    pub(crate) async fn wait_idle(&self) {
        let mut running = self.running.subscribe();
        // `wait_for` fails only when the sender is gone, and the registry
        // owns it.
        let _ = running.wait_for(|n| *n == 0).await;
    }

    /// Takes the notifications waiting for `parent`, oldest first.
    pub(crate) fn take_notifications(&self, parent: &AgentId) -> Vec<Notification> {
        let mut all = lock(&self.notifications);
        let (mine, others): (Vec<_>, Vec<_>) = all.drain(..).partition(|n| &n.parent == parent);
        *all = others;
        mine
    }

    /// Puts notifications back (the query that took them did not keep its
    /// conversation), ahead of newer ones.
    pub(crate) fn requeue(&self, mut notifications: Vec<Notification>) {
        let mut all = lock(&self.notifications);
        notifications.append(&mut all);
        *all = notifications;
    }

    pub(crate) fn set_summary(&self, id: &AgentId, summary: &str) {
        if let Some(entry) = lock(&self.entries).get_mut(id) {
            entry.summary = Some(summary.to_owned());
        }
    }

    /// Records `result` as the end of `id` and queues its notification.
    /// Only the first end counts.
    pub(crate) fn finish(&self, result: &TaskResult, parent: &AgentId) -> bool {
        let Some(id) = result.agent_id.as_ref() else {
            return false;
        };
        {
            let mut entries = lock(&self.entries);
            let Some(entry) = entries.get_mut(id) else {
                return false;
            };
            if entry.result.is_some() {
                return false;
            }
            entry.result = Some(result.clone());
            entry.task = None;
        }
        lock(&self.notifications).push(Notification {
            parent: parent.clone(),
            text: notification_text(result),
        });
        true
    }
}

impl Registry {
    /// Records `result`, the end of a background agent of an earlier run
    /// of the session whose parent never heard of it, and queues its
    /// notification.
    pub(crate) fn report(&self, result: &TaskResult, parent: &AgentId) {
        let Some(id) = result.agent_id.clone() else {
            return;
        };
        let entry = Entry::new(
            result.agent_type.clone(),
            result.description.clone(),
            parent.clone(),
            Arc::default(),
        );
        lock(&self.entries).insert(id, entry);
        self.finish(result, parent);
    }

    /// Records the new background agent `id` and counts it as running
    /// until the returned guard drops.
    pub(crate) fn insert(self: &Arc<Self>, id: AgentId, entry: Entry) -> Running {
        lock(&self.entries).insert(id, entry);
        self.running.send_modify(|n| *n += 1);
        Running(Arc::clone(self))
    }

    /// Hands the task of `id` to the registry, unless the session ended
    /// (then the task is given back, to be dropped: the agent ends,
    /// cancelled, before it starts). `spawn` runs under the entries' lock,
    /// so that [`Registry::abort_all`] sees the task and the agent cannot
    /// have ended before it is recorded.
    pub(crate) fn adopt<T>(&self, id: &AgentId, work: T, spawn: impl FnOnce(T) -> JoinHandle<()>) {
        let mut entries = lock(&self.entries);
        if self.closed.load(Ordering::Relaxed) {
            drop(entries);
            drop(work);
        } else {
            let task = spawn(work);
            if let Some(entry) = entries.get_mut(id) {
                entry.task = Some(task);
            }
        }
    }
}

/// Counts one background agent out of the registry's running ones when
/// dropped.
#[derive(Debug)]
pub(crate) struct Running(Arc<Registry>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Notification {
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

fn view(id: &AgentId, entry: &Entry) -> BackgroundAgent {
    let (turns, usage) = {
        let progress = lock(&entry.progress);
        (progress.turns, progress.usage)
    };
    BackgroundAgent {
        id: id.clone(),
        agent_type: entry.agent_type.clone(),
        description: entry.description.clone(),
        parent: entry.parent.clone(),
        elapsed: entry
            .result
            .as_ref()
            .map_or_else(|| entry.started.elapsed(), |r| r.duration),
        turns: entry.result.as_ref().map_or(turns, |r| r.turns),
        usage: entry.result.as_ref().map_or(usage, |r| r.usage),
        progress: entry.summary.clone(),
        result: entry.result.clone(),
    }
}

/// Whether `text` holds the notification of the background agent `id`'s
/// end (its parent got it).
pub(crate) fn notified_in(text: &str, id: &AgentId) -> bool {
    text.contains(&format!(
        "<background-task-finished>\nThe background agent {id} ("
    ))
}

/// The message that tells a parent a background agent ended.
fn notification_text(result: &TaskResult) -> String {
    let json = serde_json::to_string(result).unwrap_or_default();
    format!(
        "<background-task-finished>\nThe background agent {} ({}) finished with status {}. Its result:\n{json}\n</background-task-finished>",
        result
            .agent_id
            .as_ref()
            .map_or_else(String::new, ToString::to_string),
        result.description,
        result.status.as_str(),
    )
}
