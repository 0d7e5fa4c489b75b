//! A session's shared state, its configuration and the context of one
//! query.

pub(crate) mod pools;
pub(crate) mod registry;
pub(crate) mod slots;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use zr_types::{AgentId, SessionId, Usage};

use crate::config::AgentConfig;
use crate::event::{EventRouter, EventSink};
use crate::history::compact::cut::Spill;
use crate::model::budget::{BudgetEnded, TreeBudget};
use crate::model::price::add_cost;
use crate::outcome::{TaskResult, TaskStatus};
use crate::policy::permission::{Gate, Grants};
use crate::runtime::RuntimeEnvironment;
use crate::session::registry::{Notification, Registry};
use crate::session::slots::TreeSlots;
use crate::tools::catalog::{AgentTypes, Catalog, Catalogs};
use crate::transcript::Transcripts;

/// What every agent of a session shares.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) id: SessionId,
    pub(crate) runtime: Arc<RuntimeEnvironment>,
    pub(crate) config: AgentConfig,
    /// The agent types, skills and builtin definitions now (hot reload
    /// replaces them between the root's turns).
    pub(crate) catalog: Catalogs,
    child_seq: AtomicU32,
    cleanups: Mutex<Vec<JoinHandle<()>>>,
    /// The session's background agents.
    pub(crate) background: Arc<Registry>,
    /// Where background agents' events go.
    pub(crate) router: Arc<EventRouter>,
    /// What the host approved for the rest of the session.
    pub(crate) grants: Grants,
    /// Where cut tool results are written in full.
    pub(crate) spill: Arc<Spill>,
    pub(crate) transcripts: Transcripts,
    /// What a resumed session found in its transcripts and has not taken
    /// up yet.
    pub(crate) found: Mutex<Found>,
    /// The `max_concurrent` slots of the whole tree (`slots.rs`).
    pub(crate) slots: TreeSlots,
}

/// The subagents a resumed session found in its transcripts.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// By parent, call id and task index: the agent that carries the task
    /// out (a re-entered call takes it up from its transcript).
    pub(crate) tasks: BTreeMap<(AgentId, String, usize), AgentId>,
    /// Background agents cut short after their call had returned: revived
    /// in the background at the root's next run.
    pub(crate) background: Vec<AgentId>,
}

impl Session {
    /// The agent that carries out task `index` of `parent`'s call `call`,
    /// if a transcript says so (taken: a call is resumed once).
    pub(crate) fn take_found_task(
        &self,
        parent: &AgentId,
        call: &str,
        index: usize,
    ) -> Option<AgentId> {
        crate::sync::lock(&self.found)
            .tasks
            .remove(&(parent.clone(), call.to_owned(), index))
    }

    /// Forgets what was found for `agent` (it is resumed on its own).
    pub(crate) fn forget_found(&self, agent: &AgentId) {
        let mut found = crate::sync::lock(&self.found);
        found.tasks.retain(|_, id| id != agent);
        found.background.retain(|id| id != agent);
    }

    /// The background agents to revive (taken).
    pub(crate) fn take_found_background(&self) -> Vec<AgentId> {
        std::mem::take(&mut crate::sync::lock(&self.found).background)
    }
}

impl Session {
    pub(crate) fn new(
        id: SessionId,
        runtime: Arc<RuntimeEnvironment>,
        mut config: AgentConfig,
    ) -> Self {
        config.policy.delegation = config.subagent.enabled;
        config.subagent.max_concurrent = config.subagent.max_concurrent.max(1);
        let types = AgentTypes {
            sub_agents: config.sub_agents.clone(),
            skills: config.skills.clone(),
            listed_first: config.listed_first.clone(),
            instructions: config.instructions.clone(),
            skills_listed_first: config.skills_listed_first.clone(),
        };
        let catalog = Catalog::new(
            types,
            &runtime,
            config.subagent.max_concurrent,
            (config.skill_listing_chars, config.type_listing_chars),
        );
        let catalog = Catalogs::new(catalog);
        let spill = Arc::new(Spill::new(&id, config.sessions_dir.as_deref()));
        let transcripts = Transcripts::new(
            config
                .sessions_dir
                .as_ref()
                .map(|dir| dir.join(id.as_str())),
            id.clone(),
            runtime.settings().cwd.clone(),
            Arc::clone(runtime.effects()),
            runtime.observer().cloned(),
        );
        Self {
            id,
            runtime,
            catalog,
            child_seq: AtomicU32::new(0),
            cleanups: Mutex::new(Vec::new()),
            background: Arc::default(),
            router: Arc::new(EventRouter::default()),
            grants: Grants::default(),
            spill,
            transcripts,
            found: Mutex::default(),
            slots: TreeSlots::new(config.subagent.max_concurrent),
            config,
        }
    }

    /// What the permission check reads of the session.
    pub(crate) fn gate(&self) -> Gate<'_> {
        Gate {
            config: &self.config.permissions,
            grants: &self.grants,
            tools: self.runtime.builtin_tools(),
            project: &self.runtime.settings().cwd,
            spill: self.spill.dir(),
        }
    }

    /// The next subagent number of the session (1, 2, ...).
    pub(crate) fn next_child(&self) -> u32 {
        self.child_seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Numbers the next subagents after `seq` (a resumed session's
    /// existing ones).
    pub(crate) fn skip_children(&self, seq: u32) {
        self.child_seq.fetch_max(seq, Ordering::Relaxed);
    }

    /// The number of the session's last subagent so far (0: none).
    pub(crate) fn last_child(&self) -> u32 {
        self.child_seq.load(Ordering::Relaxed)
    }

    /// Forgets everything kept for `agent`: kills its background shells,
    /// drops its read ledger and todo list, tells the observer.
    pub(crate) async fn agent_finished(&self, agent: &AgentId) {
        self.runtime
            .builtin_tools()
            .agent_finished(&self.id, agent)
            .await;
        if let Some(observer) = self.runtime.observer() {
            observer.agent_finished(&self.id, agent);
        }
        self.transcripts.close(agent);
    }

    /// Remembers a cleanup started from a destructor, so that
    /// [`Session::wait_cleanups`] can wait for it.
    pub(crate) fn push_cleanup(&self, handle: JoinHandle<()>) {
        let mut cleanups = crate::sync::lock(&self.cleanups);
        cleanups.retain(|h| !h.is_finished());
        cleanups.push(handle);
    }

    /// Waits for every cleanup started from a destructor.
    pub(crate) async fn wait_cleanups(&self) {
        let handles = std::mem::take(&mut *crate::sync::lock(&self.cleanups));
        for handle in handles {
            let _ = handle.await;
        }
    }
}

/// Runs [`Session::agent_finished`] for an agent on every exit path: by
/// [`Cleanup::run`] on the normal ones, from `Drop` (in a spawned task)
/// when the agent's future is dropped.
#[derive(Debug)]
pub(crate) struct Cleanup {
    session: Arc<Session>,
    agent: Option<AgentId>,
}

impl Cleanup {
    pub(crate) fn new(session: Arc<Session>, agent: AgentId) -> Self {
        Self {
            session,
            agent: Some(agent),
        }
    }

    pub(crate) async fn run(mut self) {
        if let Some(agent) = self.agent.clone() {
            self.session.agent_finished(&agent).await;
            // Disarmed only once done: if this future is dropped while it
            // waits (the query cancelled during the grace period of the
            // agent's background commands), `Drop` finishes the cleanup and
            // the observer still hears of the agent's end.
            self.agent = None;
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let Some(agent) = self.agent.take() else {
            return;
        };
        let session = Arc::clone(&self.session);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let task = handle.spawn({
                    let session = Arc::clone(&session);
                    async move { session.agent_finished(&agent).await }
                });
                session.push_cleanup(task);
            }
            Err(_) => {
                tracing::warn!(%agent, "no async runtime to clean up after the agent; its background commands end with the process");
            }
        }
    }
}

/// The context of one query: the session, the event sink, the usage of
/// every agent under the query.
#[derive(Debug, Clone)]
pub(crate) struct QueryCtx {
    pub(crate) session: Arc<Session>,
    pub(crate) sink: EventSink,
    total: Arc<Mutex<Total>>,
    /// Notifications of background agents put into this query's
    /// conversation: queued again if the query keeps nothing.
    delivered: Arc<Mutex<Vec<Notification>>>,
    /// Subagents of the query that ended `failed`.
    failed: Arc<Mutex<Vec<TaskResult>>>,
    /// What the whole tree of the query may spend.
    budget: TreeBudget,
    /// The tree budget that ended the query, once one did.
    ended: Arc<Mutex<Option<BudgetEnded>>>,
}

impl QueryCtx {
    pub(crate) fn new(session: Arc<Session>, sink: EventSink) -> Self {
        Self {
            session,
            sink,
            total: Arc::default(),
            delivered: Arc::default(),
            failed: Arc::default(),
            budget: TreeBudget::default(),
            ended: Arc::default(),
        }
    }

    /// The context with `budget` for the whole tree of the query.
    pub(crate) fn with_budget(mut self, budget: TreeBudget) -> Self {
        self.budget = budget;
        self
    }

    /// The tree budget that is spent, if one is: from then on no agent of
    /// the query makes a request but its summary, and no subagent starts.
    pub(crate) fn budget_ended(&self) -> Option<BudgetEnded> {
        if !self.budget.is_set() {
            return None;
        }
        let mut ended = crate::sync::lock(&self.ended);
        if ended.is_none() {
            let total = crate::sync::lock(&self.total);
            *ended = self.budget.ended_by(&total.usage, total.spent);
            if let Some(end) = *ended {
                tracing::info!(%end, "the query's budget is spent");
            }
        }
        *ended
    }

    /// Remembers a subagent's result if it `failed`, for the query's
    /// result.
    pub(crate) fn note_result(&self, result: &TaskResult) {
        if result.status == TaskStatus::Failed {
            crate::sync::lock(&self.failed).push(result.clone());
        }
    }

    /// The subagents of the query that failed so far.
    pub(crate) fn failed_subagents(&self) -> Vec<TaskResult> {
        crate::sync::lock(&self.failed).clone()
    }

    /// Takes the notifications waiting for `agent`, remembering them until
    /// the query keeps its conversation ([`QueryCtx::take_delivered`]).
    pub(crate) fn notifications_for(&self, agent: &AgentId) -> Vec<String> {
        let taken = self.session.background.take_notifications(agent);
        let texts = taken.iter().map(|n| n.text().to_owned()).collect();
        crate::sync::lock(&self.delivered).extend(taken);
        texts
    }

    /// The notifications delivered so far, forgotten here.
    pub(crate) fn take_delivered(&self) -> Vec<Notification> {
        std::mem::take(&mut *crate::sync::lock(&self.delivered))
    }

    /// Adds `usage` of `model` to the query's total and returns the new
    /// total usage.
    pub(crate) fn add_usage(&self, model: &str, usage: Usage) -> Usage {
        let mut total = crate::sync::lock(&self.total);
        total.usage = total.usage.plus(usage);
        total.cost = add_cost(total.cost, model, &usage);
        total.spent += crate::model::price::cost_of(model, &usage).unwrap_or(0.0);
        total.usage
    }

    /// Adds what a subtree run elsewhere spent (`usage`, costing
    /// `cost_usd`) to the query's total.
    pub(crate) fn add_spent(&self, usage: Usage, cost_usd: f64) {
        let mut total = crate::sync::lock(&self.total);
        total.usage = total.usage.plus(usage);
        total.cost = total.cost.map(|cost| cost + cost_usd);
        total.spent += cost_usd;
    }

    /// What the tree budget has left: each limit less what the query
    /// spent so far (unset limits stay unset).
    pub(crate) fn budget_left(&self) -> TreeBudget {
        let total = crate::sync::lock(&self.total);
        TreeBudget {
            tokens: self
                .budget
                .tokens
                .map(|limit| limit.saturating_sub(total.usage.total())),
            cost_usd: self
                .budget
                .cost_usd
                .map(|limit| (limit - total.spent).max(0.0)),
        }
    }

    /// The query's total, readable after the query's tasks (and its event
    /// sink) are gone.
    pub(crate) fn spending(&self) -> Spending {
        Spending(Arc::clone(&self.total))
    }

    pub(crate) fn total_usage(&self) -> Usage {
        crate::sync::lock(&self.total).usage
    }

    /// What the query's usage cost; `None` once a model was unknown.
    pub(crate) fn total_cost(&self) -> Option<f64> {
        crate::sync::lock(&self.total).cost
    }
}

/// A query's total, held apart from its context.
#[derive(Debug, Clone)]
pub(crate) struct Spending(Arc<Mutex<Total>>);

impl Spending {
    /// The usage of every agent under the query, and what it cost at
    /// known prices (the cost budget's counter).
    pub(crate) fn get(&self) -> (Usage, f64) {
        let total = crate::sync::lock(&self.0);
        (total.usage, total.spent)
    }
}

/// The usage of every agent under a query, and what it cost.
#[derive(Debug)]
struct Total {
    usage: Usage,
    cost: Option<f64>,
    /// What the models with a price cost (the cost budget's counter).
    spent: f64,
}

impl Default for Total {
    fn default() -> Self {
        Self {
            usage: Usage::default(),
            cost: Some(0.0),
            spent: 0.0,
        }
    }
}
