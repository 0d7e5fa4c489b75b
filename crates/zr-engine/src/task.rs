//! Task and MultiTask: delegating to isolated subagents, with one time
//! budget per call, a queue beyond `max_concurrent`, and one result per
//! task in input order.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use tokio::sync::Semaphore;
use zr_caps::{AgentDefinition, AgentType, Budget, ModelAliases, derive};
use zr_resolve::{DerivedKind, ResolveInput, Role, resolve};
use zr_types::{
    AgentId, AgentName, ContentBlock, Message, MessageRole, ToolCall, ToolOutput,
    ToolResultContent, Usage, error_chain,
};

use crate::EngineError;
use crate::background;
use crate::event::EventKind;
use crate::hooks;
use crate::permission::{self, Denials};
use crate::run::{AgentRun, Progress, RunOutcome};
use crate::session::{QueryCtx, Session};
use crate::tools::AgentTools;
use crate::worktree::{Scope, WorktreeInfo, isolation_of};

/// How a subagent's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
    /// result for its tasks: it ends with [`EngineError::Cancelled`] or is
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
            Self::Background => "background",
        }
    }
}

/// The result of one delegated task, as the delegating model gets it.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// `budget_exhausted`, what it wrote so far).
    pub output: String,
    /// Model requests made.
    pub turns: u32,
    /// Tokens used.
    pub usage: Usage,
    /// Wall time from the call's start, queueing included.
    #[serde(rename = "duration_ms", serialize_with = "millis")]
    pub duration: Duration,
    /// What went wrong, for every status but `completed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For an isolated subagent (`isolation: worktree`) that ran: its
    /// worktree, and whether it was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeInfo>,
}

fn millis<S: Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// One task of a call, checked.
#[derive(Debug, Clone)]
struct TaskInput {
    description: String,
    prompt: String,
    subagent_type: Option<AgentName>,
    /// `run_in_background` (Task only).
    background: bool,
}

const FIELDS: &str = "description, prompt, subagent_type";
const TASK_FIELDS: &str = "description, prompt, subagent_type, run_in_background";
const MAX_TASKS: usize = 10;

/// The subagent types a call may name.
type Types = BTreeMap<AgentName, AgentDefinition>;

fn parse_task(types: &Types, value: &Value, at: &str, multi: bool) -> Result<TaskInput, String> {
    let fields = if multi { FIELDS } else { TASK_FIELDS };
    let Value::Object(map) = value else {
        return Err(format!("{at}: expected an object with {fields}"));
    };
    if let Some(key) = map
        .keys()
        .find(|k| !fields.split(", ").any(|f| f == k.as_str()))
    {
        return Err(format!("{at}: unknown field '{key}'; fields: {fields}"));
    }
    let background = match map.get("run_in_background") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(format!(
                "{at}.run_in_background: expected true or false, got {other}"
            ));
        }
    };
    let text = |map: &Map<String, Value>, key: &str| match map.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("{at}.{key}: must not be empty")),
        Some(other) => Err(format!("{at}.{key}: expected a string, got {other}")),
        None => Err(format!("{at}.{key}: required")),
    };
    let description = text(map, "description")?;
    let prompt = text(map, "prompt")?;
    let available = || {
        let names: Vec<&str> = types.keys().map(AgentName::as_str).collect();
        if names.is_empty() {
            "none are defined; leave subagent_type out to fork".to_owned()
        } else {
            format!("available: {}", names.join(", "))
        }
    };
    let subagent_type = match map.get("subagent_type") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => match name.parse::<AgentName>() {
            Ok(name) if types.contains_key(&name) => Some(name),
            _ => {
                return Err(format!(
                    "{at}.subagent_type: no subagent type '{name}'; {}",
                    available()
                ));
            }
        },
        Some(other) => {
            return Err(format!(
                "{at}.subagent_type: expected a string, got {other}"
            ));
        }
    };
    Ok(TaskInput {
        description,
        prompt,
        subagent_type,
        background,
    })
}

fn parse(types: &Types, call: &ToolCall, multi: bool) -> Result<Vec<TaskInput>, String> {
    if !multi {
        return Ok(vec![parse_task(types, &call.input, "Task", false)?]);
    }
    let Value::Object(map) = &call.input else {
        return Err("MultiTask: expected an object with 'tasks'".to_owned());
    };
    if let Some(key) = map.keys().find(|k| k.as_str() != "tasks") {
        return Err(format!("MultiTask: unknown field '{key}'; fields: tasks"));
    }
    let tasks = match map.get("tasks") {
        Some(Value::Array(tasks)) => tasks,
        Some(other) => return Err(format!("MultiTask.tasks: expected an array, got {other}")),
        None => return Err("MultiTask.tasks: required".to_owned()),
    };
    if tasks.is_empty() || tasks.len() > MAX_TASKS {
        return Err(format!(
            "MultiTask.tasks: expected 1 to {MAX_TASKS} tasks, got {}",
            tasks.len()
        ));
    }
    tasks
        .iter()
        .enumerate()
        .map(|(i, task)| parse_task(types, task, &format!("MultiTask.tasks[{i}]"), true))
        .collect()
}

/// Runs a Task (`multi == false`) or MultiTask call of `parent`.
///
/// Boxed: a subagent's loop is the same code as its parent's, and a boxed
/// `Send` future breaks the type-level recursion.
pub(crate) fn delegate<'a>(
    ctx: &'a QueryCtx,
    parent: &'a AgentRun,
    call: &'a ToolCall,
    multi: bool,
) -> Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>> {
    Box::pin(delegate_inner(ctx, parent, call, multi))
}

async fn delegate_inner(
    ctx: &QueryCtx,
    parent: &AgentRun,
    call: &ToolCall,
    multi: bool,
) -> ToolOutput {
    let catalog = ctx.session.catalog.current();
    let tasks = match parse(&catalog.sub_agents, call, multi) {
        Ok(tasks) => tasks,
        Err(message) => return ToolOutput::error(format!("{message}. Nothing was started.")),
    };
    let config = ctx.session.config.subagent;
    let budget = CallBudget {
        slots: Semaphore::new(config.max_concurrent),
        deadline: deadline_after(config.timeout),
        start: Instant::now(),
        timeout: config.timeout,
    };
    let runs = tasks
        .into_iter()
        .enumerate()
        .map(|(index, task)| run_task(ctx, parent, call, &budget, index, task));
    let results = futures_util::future::join_all(runs).await;
    let display = report(&results, config.timeout);
    let value = if multi {
        serde_json::json!({ "results": results })
    } else {
        results
            .first()
            .and_then(|r| serde_json::to_value(r).ok())
            .unwrap_or(Value::Null)
    };
    ToolOutput {
        content: vec![ToolResultContent::Json { value }],
        is_error: false,
        display: Some(display),
    }
}

/// What the tasks of one call share: `max_concurrent` slots and one time
/// budget, queueing included.
struct CallBudget {
    slots: Semaphore,
    /// When the budget ends.
    deadline: tokio::time::Instant,
    /// When the call started (task durations count from here).
    start: Instant,
    /// The budget, for messages.
    timeout: Duration,
}

async fn run_task(
    ctx: &QueryCtx,
    parent: &AgentRun,
    call: &ToolCall,
    budget: &CallBudget,
    index: usize,
    task: TaskInput,
) -> TaskResult {
    let CallBudget {
        slots,
        deadline,
        start,
        timeout,
    } = budget;
    let (deadline, start) = (*deadline, *start);
    let agent_type = task
        .subagent_type
        .as_ref()
        .map_or_else(|| "fork".to_owned(), |n| n.as_str().to_owned());
    let mut result = TaskResult::pending(index, agent_type, task.description.clone());
    let run = match prepare(ctx, parent, call, &task) {
        Ok(run) => run,
        Err(error) => {
            result.error = Some(error_chain(&error));
            result.duration = start.elapsed();
            ctx.note_result(&result);
            return result;
        }
    };
    let id = run.id.clone();
    let ty = Arc::clone(&run.agent_type);
    let progress = Arc::clone(&run.progress);
    result.agent_id = Some(id.clone());
    ctx.sink.send(
        &id,
        &ty,
        EventKind::SubagentStarted {
            parent: parent.id.clone(),
            description: task.description.clone(),
            index,
            background: run.background,
        },
    );
    if run.background {
        let isolation = isolation_of(&ctx.session.catalog.current(), task.subagent_type.as_ref());
        let mut result = background::launch(ctx, run, result, isolation);
        result.duration = start.elapsed();
        return result;
    }
    if let Some(observer) = ctx.session.runtime.observer() {
        observer.agent_started(&ctx.session.id, &id, run.tools.pool());
    }
    let isolation = isolation_of(&ctx.session.catalog.current(), task.subagent_type.as_ref());
    let scope = Scope::new(&ctx.session, &id, isolation);
    // After the cleanup is armed: a query dropped during a slow hook still
    // ends the agent for the observer.
    let hook_agent = hooks::agent_of(ctx, &run);
    hooks::subagent_start(ctx, &hook_agent, &parent.id).await;
    let started = AtomicBool::new(false);
    let work = {
        let (started, scope) = (&started, &scope);
        let (id, ty) = (id.clone(), Arc::clone(&ty));
        let mut run = run;
        async move {
            // A closed semaphore cannot happen (it is never closed); run
            // anyway rather than fail the task.
            let _slot = slots.acquire().await.ok();
            // `timeout_at` polls this future before it checks the clock: a
            // slot freed by a task stopped at the deadline must not start
            // a queued one after the budget is spent.
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            started.store(true, Ordering::Relaxed);
            if let Err(error) = scope.enter(&mut run).await {
                return Some(Err(error));
            }
            ctx.sink.send(&id, &ty, EventKind::SubagentRunning);
            Some(Ok(run.run(ctx).await))
        }
    };
    match tokio::time::timeout_at(deadline, work).await {
        Ok(Some(Err(error))) => result.error = Some(error_chain(&error)),
        Ok(Some(Ok(outcome))) => fill_from_outcome(&mut result, outcome),
        Ok(None) | Err(_) => {
            fill_from_progress(&mut result, &progress);
            let ran = started.load(Ordering::Relaxed);
            result.status = TaskStatus::TimedOut;
            let secs = timeout.as_secs_f64();
            result.error = Some(if ran {
                format!(
                    "did not finish within the call's {secs:.0} s budget and was stopped (its tools and processes too); the output is what it wrote so far"
                )
            } else {
                format!("did not start: it waited in the queue for the whole {secs:.0} s budget")
            });
        }
    }
    result.worktree = scope.finish().await;
    result.duration = start.elapsed();
    ctx.note_result(&result);
    hooks::subagent_stop(ctx, &hook_agent, &result).await;
    ctx.sink.send(
        &id,
        &ty,
        EventKind::SubagentFinished {
            result: Box::new(result.clone()),
        },
    );
    result
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
            turns: 0,
            usage: Usage::default(),
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
    result.status = outcome.status;
    result.output = outcome.output;
    result.turns = outcome.turns;
    result.usage = outcome.usage;
    let no_answer = outcome.no_answer.as_ref().map(|reason| {
        format!(
            "its model stopped ({}) without an answer or a tool call",
            reason.as_str()
        )
    });
    result.error = outcome
        .error
        .as_ref()
        .map(|e| error_chain(e))
        .or(no_answer)
        .or(outcome.denied)
        .or_else(|| (outcome.status != TaskStatus::Completed).then(|| describe(outcome.status)));
}

/// When a call with budget `timeout` must end; a budget too large for the
/// clock (a host's "no limit") means in about thirty years.
fn deadline_after(timeout: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(Duration::from_secs(30 * 365 * 24 * 3600)))
        .unwrap_or(now)
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

pub(crate) fn derived_kind(agent_type: &AgentType) -> DerivedKind {
    match agent_type {
        AgentType::Explore => DerivedKind::Explore,
        AgentType::Plan => DerivedKind::Plan,
        AgentType::GeneralPurpose | AgentType::Verification => DerivedKind::GeneralPurpose,
        AgentType::Custom(_) => DerivedKind::Custom,
    }
}

/// Builds the subagent of `task`: its id, system prompt, resolved pool and
/// first messages.
fn prepare(
    ctx: &QueryCtx,
    parent: &AgentRun,
    call: &ToolCall,
    task: &TaskInput,
) -> Result<AgentRun, EngineError> {
    let session = &ctx.session;
    let config = &session.config;
    let catalog = session.catalog.current();
    let seq = session.next_child();
    let definition = task
        .subagent_type
        .as_ref()
        .and_then(|name| catalog.sub_agents.get(name));
    let (role, label) = match definition {
        Some(d) => (
            Role::Derived {
                kind: derived_kind(&d.agent_type),
                background: task.background || d.background,
            },
            d.name.as_str(),
        ),
        None => (
            Role::Fork {
                background: task.background,
            },
            "fork",
        ),
    };
    let id = parent.id.child(seq, label);
    let tools = subagent_tools(session, &id, definition, role, &parent.tools)?;
    let (system, model, max_turns, budget, history) = match definition {
        Some(d) => typed(&config.model_aliases, d, parent, task),
        None => fork(parent, call, task),
    };
    Ok(AgentRun {
        id,
        agent_type: Arc::from(label),
        model,
        system,
        tools,
        history,
        max_turns,
        budget,
        progress: Arc::new(Mutex::new(Progress::default())),
        parent: Some(parent.id.clone()),
        cwd: parent.cwd.clone(),
        mode: permission::effective_mode(parent.mode, definition.and_then(|d| d.permission_mode)),
        background: task.background || definition.is_some_and(|d| d.background),
        denials: Denials::default(),
        cache_prefix: definition
            .is_none()
            .then(|| shared_prefix(parent))
            .flatten(),
        reload: None,
    })
}

/// The pool of the subagent `id` of the agent with `parent` tools: its
/// type's capabilities (none for a fork) derived (C2) and resolved in
/// `role` against the parent's pool; a fork also keeps what the parent
/// loaded.
pub(crate) fn subagent_tools(
    session: &Session,
    id: &AgentId,
    definition: Option<&AgentDefinition>,
    role: Role,
    parent: &AgentTools,
) -> Result<AgentTools, EngineError> {
    let config = &session.config;
    let catalog = session.catalog.current();
    let empty = zr_caps::AgentCapabilities::default();
    let capabilities = derive(
        &config.options,
        definition.map_or(&empty, |d| &d.capabilities),
    );
    let parent_pool = Arc::clone(parent.pool());
    let input = ResolveInput::new(
        role,
        &catalog.builtins,
        &capabilities,
        &catalog.skills,
        &config.policy,
    )
    .with_parent(&parent_pool);
    let pool = resolve(&input).map_err(|source| EngineError::Resolve {
        agent: id.clone(),
        source,
    })?;
    let mut tools = AgentTools::new(id, Arc::new(pool), &catalog.engine_tools, &session.runtime)?;
    if definition.is_none() {
        tools.inherit_loaded(parent);
    }
    Ok(tools)
}

/// A typed subagent's system prompt: its definition's prompt, then its
/// `append_prompt`.
pub(crate) fn system_prompt(definition: &AgentDefinition) -> String {
    let mut system = definition.prompt.clone();
    if let Some(extra) = &definition.append_prompt {
        system.push_str("\n\n");
        system.push_str(extra);
    }
    system
}

type Start = (String, String, u32, Budget, Vec<Message>);

/// A typed subagent: its own prompt, an empty history but for the task.
fn typed(
    aliases: &ModelAliases,
    definition: &AgentDefinition,
    parent: &AgentRun,
    task: &TaskInput,
) -> Start {
    let system = system_prompt(definition);
    let model = crate::agent_model::subagent_model(aliases, definition, &parent.model);
    (
        system,
        model,
        definition.effective_max_turns(parent.max_turns),
        definition.budget,
        vec![Message::user_text(task.prompt.clone())],
    )
}

/// How many first messages a fork of `parent` shares with the parent's
/// last request: its history but the answer holding the delegating call.
fn shared_prefix(parent: &AgentRun) -> Option<usize> {
    match parent.history.last() {
        Some(last) if last.role == MessageRole::Assistant => Some(parent.history.len() - 1),
        _ => None,
    }
}

/// A fork: the parent's prompt and history, the parent's pending tool
/// calls answered, then the task.
fn fork(parent: &AgentRun, call: &ToolCall, task: &TaskInput) -> Start {
    let mut history = parent.history.clone();
    let pending: Vec<ContentBlock> = history
        .last()
        .filter(|m| m.role == MessageRole::Assistant)
        .map(|m| {
            m.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, .. } => Some(ContentBlock::ToolResult {
                        tool_use_id: id.clone(),
                        content: vec![ToolResultContent::Text {
                            text: if *id == call.id {
                                "Forked: you are the subagent that carries out this call's task, below.".to_owned()
                            } else {
                                "Not run in the fork.".to_owned()
                            },
                        }],
                        is_error: false,
                        display: None,
                    }),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let mut content = pending;
    content.push(ContentBlock::Text {
        text: format!(
            "You are a fork of the agent above, with its history, working on one task. You cannot delegate. Do the task and answer with your conclusion only.\n\nTask: {}",
            task.prompt
        ),
    });
    history.push(Message {
        role: MessageRole::User,
        content,
    });
    (
        parent.system.clone(),
        parent.model.clone(),
        (parent.max_turns / 2).max(1),
        Budget::default(),
        history,
    )
}

#[cfg(test)]
mod tests;

/// The report people see.
fn report(results: &[TaskResult], timeout: Duration) -> String {
    let mut text = String::new();
    let done = results
        .iter()
        .filter(|r| r.status == TaskStatus::Completed)
        .count();
    let _ = writeln!(
        text,
        "{done} of {} tasks completed (budget {} s)",
        results.len(),
        timeout.as_secs()
    );
    for r in results {
        let id = r
            .agent_id
            .as_ref()
            .map_or_else(|| "-".to_owned(), ToString::to_string);
        let _ = writeln!(
            text,
            "[{}] {} ({}, {}): {} after {:.1} s, {} turns, {} tokens",
            r.index,
            r.description,
            r.agent_type,
            id,
            r.status.as_str(),
            r.duration.as_secs_f64(),
            r.turns,
            r.usage.total(),
        );
        if let Some(error) = &r.error {
            let _ = writeln!(text, "    {error}");
        }
        if let Some(worktree) = &r.worktree {
            let _ = writeln!(text, "    {}", worktree.describe());
        }
        for line in r.output.lines().take(5) {
            let _ = writeln!(text, "    > {line}");
        }
    }
    text
}
