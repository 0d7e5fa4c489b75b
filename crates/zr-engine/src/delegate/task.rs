//! Task and MultiTask: delegating to isolated subagents, with one time
//! budget per call, a queue beyond `max_concurrent`, and one result per
//! task in input order.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use zr_caps::{AgentDefinition, Budget, Isolation, ModelAliases};
use zr_protocol::transcript::TaskRef;
use zr_resolve::{DerivedKind, Role};
use zr_types::{
    AgentId, AgentName, BoxFuture, BuiltinName, ContentBlock, Message, MessageRole,
    SkillDefinition, ToolCall, ToolOutput, ToolResultContent, error_chain,
};

use crate::delegate::background;
use crate::delegate::revive::{self, Revive};
use crate::delegate::subagent::{self, Announce, End, Limits, Subagent};
use crate::effects::Deadline;
use crate::effects::remote::SubagentSpec;
use crate::error::EngineError;
use crate::event::EventKind;
use crate::meta::AgentMeta;
use crate::model::agent_model::{effort, subagent_model};
use crate::model::structured::{Structured, subagent_output};
use crate::outcome::{TaskResult, TaskStatus};
use crate::policy::permission;
use crate::session::QueryCtx;
use crate::session::pools::{derived_kind, narrowing, subagent_tools, system_prompt, writes_files};
use crate::session::slots::TreeSlots;
use crate::tools::type_listing;
use crate::turn::agent_run::{AgentRun, Delegate};

/// One task of a call, checked.
#[derive(Debug, Clone)]
struct TaskInput {
    description: String,
    prompt: String,
    subagent_type: Option<AgentName>,
    /// `run_in_background` (Task only).
    background: bool,
    /// `output_schema`, compiled: replaces the type's.
    output: Option<Arc<Structured>>,
    /// `output_schema` as the call held it.
    schema: Option<Value>,
    /// `model`: the model the typed subagent runs on instead of its
    /// type's (an alias or `NAME:model-id` of a provider profile).
    model: Option<String>,
}

const FIELDS: &str = "description, prompt, subagent_type, output_schema, model";
const TASK_FIELDS: &str =
    "description, prompt, subagent_type, output_schema, model, run_in_background";
/// [`TASK_FIELDS`] one by one; a MultiTask's are all but the last.
const TASK_FIELD_NAMES: [&str; 6] = [
    "description",
    "prompt",
    "subagent_type",
    "output_schema",
    "model",
    "run_in_background",
];
const MAX_TASKS: usize = 10;
/// Up to this many types, an unknown type's error names them all.
const NAMED_ALL: usize = 10;

/// The subagent types a call may name.
type Types = BTreeMap<AgentName, AgentDefinition>;

/// `at` names the task in errors (`Task`, `MultiTask.tasks[2]`); it is
/// formatted only for one.
fn parse_task(
    types: &Types,
    value: &Value,
    at: impl fmt::Display,
    multi: bool,
) -> Result<TaskInput, String> {
    let (fields, names) = if multi {
        (FIELDS, &TASK_FIELD_NAMES[..5])
    } else {
        (TASK_FIELDS, &TASK_FIELD_NAMES[..])
    };
    let Value::Object(map) = value else {
        return Err(format!("{at}: expected an object with {fields}"));
    };
    if let Some(key) = map.keys().find(|k| !names.contains(&k.as_str())) {
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
    // A few types are all named; of many, the closest to `wanted`: the
    // listing the model saw may have left the one it means out.
    let available = |wanted: &str| {
        let names = types.keys().map(AgentName::as_str);
        if types.is_empty() {
            "none are defined; leave subagent_type out to fork".to_owned()
        } else if types.len() <= NAMED_ALL {
            format!("available: {}", names.collect::<Vec<_>>().join(", "))
        } else {
            format!(
                "the closest of the {} types: {}",
                types.len(),
                type_listing::closest(names, wanted).join(", ")
            )
        }
    };
    let subagent_type = match map.get("subagent_type") {
        None | Some(Value::Null) => None,
        // Looked up by text: a key is a valid name, so a text that is not
        // one is not found either.
        Some(Value::String(name)) => match types.get_key_value(name.as_str()) {
            Some((name, _)) => Some(name.clone()),
            None => {
                return Err(format!(
                    "{at}.subagent_type: no subagent type '{name}'; {}",
                    available(name)
                ));
            }
        },
        Some(other) => {
            return Err(format!(
                "{at}.subagent_type: expected a string, got {other}"
            ));
        }
    };
    let model = match map.get("model") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => {
            return Err(format!("{at}.model: must not be empty"));
        }
        Some(Value::String(_)) if subagent_type.is_none() => {
            return Err(format!(
                "{at}.model: a fork runs on its parent's model (it continues its parent's conversation); name a subagent_type to choose a model"
            ));
        }
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(other) => return Err(format!("{at}.model: expected a string, got {other}")),
    };
    let schema = map.get("output_schema").filter(|s| !s.is_null()).cloned();
    let output = match &schema {
        None => None,
        Some(schema) => {
            Some(Structured::compile_call(schema).map_err(|e| format!("{at}.output_schema: {e}"))?)
        }
    };
    Ok(TaskInput {
        description,
        prompt,
        subagent_type,
        background,
        output,
        schema,
        model,
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
        .map(|(i, task)| parse_task(types, task, format_args!("MultiTask.tasks[{i}]"), true))
        .collect()
}

/// The root's [`Delegate`]: Task and MultiTask calls start subagents.
#[derive(Debug)]
pub(crate) struct Subagents;

impl Delegate for Subagents {
    /// Boxed: a subagent's loop is the same code as its parent's, and a
    /// boxed `Send` future breaks the type-level recursion.
    fn delegate<'a>(
        &'a self,
        ctx: &'a QueryCtx,
        parent: &'a AgentRun,
        call: &'a ToolCall,
        multi: bool,
    ) -> BoxFuture<'a, ToolOutput> {
        Box::pin(delegate_inner(ctx, parent, call, multi))
    }
}

/// Runs a Task (`multi == false`) or MultiTask call of `parent`.
async fn delegate_inner(
    ctx: &QueryCtx,
    parent: &AgentRun,
    call: &ToolCall,
    multi: bool,
) -> ToolOutput {
    let results = match run_call(ctx, parent, call, multi).await {
        Ok(results) => results,
        Err(message) => return ToolOutput::error(message),
    };
    let display = report(&results, ctx.session.config.subagent.timeout);
    let mut values: Vec<Value> = results.iter().map(for_model).collect();
    let value = if multi {
        // Moved in: `json!` would serialize every result a second time.
        let mut object = Map::new();
        object.insert("results".to_owned(), Value::Array(values));
        Value::Object(object)
    } else {
        values.pop().unwrap_or(Value::Null)
    };
    ToolOutput {
        content: vec![ToolResultContent::Json { value }],
        is_error: false,
        display: Some(display),
    }
}

/// Runs the tasks of a Task (`multi == false`) or MultiTask call of
/// `parent` under one [`CallBudget`]: one result per task, in input
/// order; `Err` is what the model is told when the input is wrong
/// (nothing started). The one path of every delegation: a model's call
/// and a host's ([`crate::agent::host_task`]).
pub(crate) async fn run_call(
    ctx: &QueryCtx,
    parent: &AgentRun,
    call: &ToolCall,
    multi: bool,
) -> Result<Vec<TaskResult>, String> {
    let catalog = ctx.session.catalog.current();
    // A type whose `tools` names the types it may start (`Agent(worker)`)
    // sees only those; a fork of such an agent is refused.
    let allowed = parent
        .meta
        .narrowing
        .as_deref()
        .and_then(AgentDefinition::spawn_types);
    let restricted: Option<Types> = allowed.as_ref().map(|names| {
        catalog
            .sub_agents
            .iter()
            .filter(|(name, _)| names.contains(&name.as_str()))
            .map(|(name, d)| (name.clone(), d.clone()))
            .collect()
    });
    let types = restricted.as_ref().unwrap_or(&catalog.sub_agents);
    let tasks =
        parse(types, call, multi).map_err(|message| format!("{message}. Nothing was started."))?;
    if let Some(names) = &allowed
        && let Some(at) = tasks.iter().position(|t| t.subagent_type.is_none())
    {
        let at = if multi {
            format!("MultiTask.tasks[{at}]")
        } else {
            "Task".to_owned()
        };
        return Err(format!(
            "{at}.subagent_type: required: agent {} may start only the types {}, not a fork. Nothing was started.",
            parent.meta.id,
            names.join(", ")
        ));
    }
    if let Some(check) = &ctx.session.config.model_check {
        let aliases = &ctx.session.config.model_aliases;
        for (i, task) in tasks.iter().enumerate() {
            let Some(definition) = task.subagent_type.as_ref().and_then(|n| types.get(n)) else {
                continue;
            };
            let model = task_model(
                aliases,
                definition,
                task.model.as_deref(),
                &parent.meta.model,
            );
            if let Err(why) = check.check(definition, &model) {
                let at = if multi {
                    format!("MultiTask.tasks[{i}]")
                } else {
                    "Task".to_owned()
                };
                let whose = if task.model.is_some() {
                    format!("{at}.model")
                } else {
                    format!("{at}: subagent type '{}'", definition.name)
                };
                return Err(format!("{whose}: {why}. Nothing was started."));
            }
        }
    }
    let config = ctx.session.config.subagent;
    let effects = ctx.session.runtime.effects();
    // Budgets nest: a call's time ends no later than its parent's.
    let own = Deadline::after(&**effects, &parent.meta.id, config.timeout);
    let (deadline, timeout) = match &parent.deadline {
        Some(theirs) if theirs.at() < own.at() => (
            theirs.clone(),
            theirs
                .at()
                .saturating_duration_since(tokio::time::Instant::now()),
        ),
        _ => (own, config.timeout),
    };
    let budget = CallBudget {
        slots: &ctx.session.slots,
        deadline,
        start: Instant::now(),
        timeout,
        capped: timeout < config.timeout,
    };
    let runs = tasks
        .into_iter()
        .enumerate()
        .map(|(index, task)| run_task(ctx, parent, call, &budget, index, task));
    // The parent's slot is its children's while it waits on them.
    let lent = parent.slot.lend();
    let results = futures_util::future::join_all(runs).await;
    lent.back().await;
    Ok(results)
}

/// A task's result as its delegating model gets it: with a structured
/// answer, the `value` without its text (the same JSON twice would only
/// cost tokens).
fn for_model(result: &TaskResult) -> Value {
    let mut value = serde_json::to_value(result).unwrap_or(Value::Null);
    if result.value.is_some()
        && let Some(map) = value.as_object_mut()
    {
        map.remove("output");
    }
    value
}

/// What the tasks of one call share: one time budget, queueing included
/// (never past its parent's); and what they share with every other
/// subagent of the tree: the `max_concurrent` slots.
struct CallBudget<'a> {
    slots: &'a TreeSlots,
    /// When the budget ends: one timer for the call.
    deadline: Deadline,
    /// When the call started (task durations count from here).
    start: Instant,
    /// The budget, for messages.
    timeout: Duration,
    /// Whether the budget is what the parent had left (shorter than
    /// `subagent.timeout`).
    capped: bool,
}

async fn run_task(
    ctx: &QueryCtx,
    parent: &AgentRun,
    call: &ToolCall,
    budget: &CallBudget<'_>,
    index: usize,
    task: TaskInput,
) -> TaskResult {
    let catalog = ctx.session.catalog.current();
    let agent_type = task
        .subagent_type
        .as_ref()
        .map_or_else(|| "fork".to_owned(), |n| n.as_str().to_owned());
    let mut result = TaskResult::pending(index, agent_type, task.description.clone());
    // Nothing new starts once the query's budget is spent.
    if let Some(end) = ctx.budget_ended() {
        result.status = TaskStatus::BudgetExhausted;
        result.error = Some(format!("not started: {end} is spent"));
        return result;
    }
    let found = ctx
        .session
        .take_found_task(&parent.meta.id, &call.id, index);
    let fresh = found.is_none();
    let ready = match found {
        Some(id) => take_up(ctx, parent, &id, index),
        None => prepare(ctx, parent, call, &task, index, None)
            .map(|run| Ready::Run(run, catalog.isolation_of(task.subagent_type.as_ref()))),
    };
    let (run, isolation) = match ready {
        Ok(Ready::Run(run, isolation)) => (run, isolation),
        Ok(Ready::Recorded(recorded)) => {
            ctx.note_result(&recorded);
            subagent::finished(ctx, &Arc::from(recorded.agent_type.as_str()), &recorded);
            return recorded;
        }
        Err(error) => {
            result.error = Some(error_chain(&error));
            result.duration = budget.start.elapsed();
            ctx.note_result(&result);
            return result;
        }
    };
    // A typed subagent of the root, or of a subagent run from its own
    // description, may run elsewhere: its description is what a local run
    // would build it from (a parent in a worktree keeps its children with
    // it: the worktree is on its worker). The task is not needed after
    // this: its texts move into the description.
    let described =
        parent.meta.id.is_root() || (parent.described.is_some() && parent.meta.worktree.is_none());
    let spec = match task.subagent_type {
        Some(name) if fresh && described => Some(SubagentSpec {
            subagent_type: name,
            description: task.description,
            prompt: task.prompt,
            output_schema: task.schema,
            model: task.model,
            call: call.id.clone(),
            index,
            agent: run.meta.id.clone(),
            parents: parent.described.as_ref().map_or_else(
                || vec![parent.meta.id.clone()],
                |own| {
                    let mut parents = own.parents.clone();
                    parents.push(parent.meta.id.clone());
                    parents
                },
            ),
            parent: parent
                .described
                .as_ref()
                .map(|own| Box::new(SubagentSpec::clone(own))),
            budget: ctx.budget_left(),
            background: run.meta.background,
            session: Some(ctx.session.id.clone()),
            remote: isolation == Isolation::Remote,
        }),
        _ => None,
    };
    let subagent = announce(ctx, run, isolation, result, budget.start, spec);
    if isolation == Isolation::Remote && subagent.remote.is_none() {
        // Never a silent local run.
        let mut result = subagent.result;
        result.error = Some(format!(
            "the type '{}' says `isolation: remote`, and nothing here runs it remotely: {}",
            result.agent_type,
            if described {
                "set [durable] ingress = \"http://HOST:8080\" in zr.toml (a Restate server whose workers serve this project)"
            } else {
                "only a subagent of the root (or of a remote or durable subagent) can run remotely"
            }
        ));
        result.duration = budget.start.elapsed();
        ctx.note_result(&result);
        subagent::finished(ctx, &subagent.run.meta.agent_type, &result);
        return result;
    }
    if subagent.run.meta.background {
        let mut result = background::launch(ctx, subagent);
        result.duration = budget.start.elapsed();
        return result;
    }
    let secs = budget.timeout.as_secs_f64();
    let what = if budget.capped {
        format!("its parent's remaining {secs:.1} s")
    } else {
        format!("the call's {secs:.0} s")
    };
    let timed_out = |ran: bool| {
        if ran {
            format!(
                "did not finish within {what} budget and was stopped (its tools and processes too); the output is what it wrote so far"
            )
        } else {
            let what = what.replace("the call's ", "");
            format!("did not start: it waited in the queue for the whole {what} budget")
        }
    };
    let limits = Limits {
        slots: Some(budget.slots),
        deadline: Some(budget.deadline.clone()),
        timed_out: &timed_out,
    };
    let mut end = Foreground(ctx);
    subagent::live(ctx, subagent, limits, std::future::pending(), &mut end).await
}

/// Step 1 of `run`'s lifecycle: its result knows its id, type and
/// description, and `SubagentStarted` is sent; the effects are asked
/// whether the subagent `spec` describes runs elsewhere (a background one
/// starts there now, before its call returns).
fn announce(
    ctx: &QueryCtx,
    run: AgentRun,
    isolation: Isolation,
    mut result: TaskResult,
    start: Instant,
    spec: Option<SubagentSpec>,
) -> Subagent {
    result.agent_id = Some(run.meta.id.clone());
    if let Some(task) = &run.meta.task {
        // Nearly always the type the result was made with: no new text.
        if *result.agent_type != *run.meta.agent_type {
            result.agent_type = run.meta.agent_type.to_string();
        }
        result.description.clone_from(&task.description);
    }
    subagent::started(ctx, &run, &result.description, result.index);
    Subagent {
        isolation,
        run,
        result,
        start,
        remote: subagent::placed(ctx, spec.as_ref()),
    }
}

/// Runs the subagent `spec` describes, under `root` (the root, rebuilt
/// by this worker), as [`run_task`] runs a task of a call: its ancestors
/// rebuilt from their descriptions, from the root down (each one's pool,
/// depth and mode, as its own parent built it; none of them runs), then
/// the same checks of the task, the same pool and first messages, the id
/// its parent gave it, then the one lifecycle. The call's slots and budget
/// are the parent's (it holds them while this runs). A background agent
/// (`spec.background`) is built as one (its pool, its prompts denied) and
/// runs to its end here; its parent, which did not wait, hears of it.
/// `Err`: the description does not fit this worker's project (nothing
/// started).
pub(crate) async fn run_described(
    ctx: &QueryCtx,
    root: AgentRun,
    spec: &SubagentSpec,
) -> Result<TaskResult, String> {
    let lineage = spec.lineage();
    let ids: Vec<AgentId> = std::iter::once(root.meta.id.clone())
        .chain(lineage.iter().map(|s| s.agent.clone()))
        .collect();
    // The i-th description's parents are the root and the i before it.
    if lineage
        .iter()
        .enumerate()
        .any(|(i, s)| s.parents != ids[..=i])
    {
        return Err(format!(
            "{}: its parents {:?} are not the chain its parents' descriptions make, from {}",
            spec.agent,
            spec.parents.iter().map(AgentId::as_str).collect::<Vec<_>>(),
            root.meta.id
        ));
    }
    let mut parent = root;
    for ancestor in &lineage[..lineage.len() - 1] {
        let (run, _) = described(ctx, &parent, ancestor)?;
        parent = run;
    }
    let (run, task) = described(ctx, &parent, spec)?;
    if run.meta.background != spec.background {
        return Err(format!(
            "{}: the type '{}' runs in the background, and its description does not say so",
            spec.agent, spec.subagent_type
        ));
    }
    let catalog = ctx.session.catalog.current();
    let isolation = catalog.isolation_of(task.subagent_type.as_ref());
    let result = TaskResult::pending(
        spec.index,
        spec.subagent_type.as_str().to_owned(),
        task.description.clone(),
    );
    let subagent = announce(ctx, run, isolation, result, Instant::now(), None);
    let mut end = Foreground(ctx);
    Ok(subagent::live(
        ctx,
        subagent,
        Limits::NONE,
        std::future::pending(),
        &mut end,
    )
    .await)
}

/// The subagent `spec` describes, built (not run) under `parent` with
/// the id `parent` gave it, and its task.
fn described(
    ctx: &QueryCtx,
    parent: &AgentRun,
    spec: &SubagentSpec,
) -> Result<(AgentRun, TaskInput), String> {
    let catalog = ctx.session.catalog.current();
    let mut task = parse_task(
        &catalog.sub_agents,
        &spec.task_input(),
        "the described task",
        true,
    )?;
    task.background = spec.background;
    let call = ToolCall {
        id: spec.call.clone(),
        name: BuiltinName::MultiTask.as_str().to_owned(),
        input: Value::Null,
    };
    let run = prepare(ctx, parent, &call, &task, spec.index, Some(&spec.agent))
        .map_err(|e| error_chain(&e))?
        .with_described(Arc::new(spec.clone()));
    Ok((run, task))
}

/// A foreground subagent's end: a failed one is noted for the query's
/// result before its SubagentStop hooks; `SubagentFinished` after them.
struct Foreground<'a>(&'a QueryCtx);

impl End for Foreground<'_> {
    fn settled(&mut self, result: &TaskResult) {
        self.0.note_result(result);
    }

    fn publish(&mut self, ctx: &QueryCtx, agent_type: &Arc<str>, result: TaskResult) -> TaskResult {
        Announce.publish(ctx, agent_type, result)
    }
}

/// A task ready to run, or already done.
#[allow(clippy::large_enum_variant)] // one per task, moved once
enum Ready {
    /// Its subagent, and where it works.
    Run(AgentRun, Isolation),
    /// The result its transcript recorded.
    Recorded(TaskResult),
}

/// Task `index` of a call entered again after a resume, whose subagent
/// `id` has a transcript: its recorded result when it finished, else the
/// subagent rebuilt to continue from its transcript (in its recorded
/// folder: no new worktree).
fn take_up(
    ctx: &QueryCtx,
    parent: &AgentRun,
    id: &AgentId,
    index: usize,
) -> Result<Ready, EngineError> {
    let session = &ctx.session;
    let loaded = revive::load(session, id)?;
    if let Some(recorded) = revive::recorded_result(id, &loaded, index) {
        tracing::info!(agent = %id, status = recorded.status.as_str(), "the task had finished: its result comes from its transcript");
        return Ok(Ready::Recorded(recorded));
    }
    let how = Revive {
        parent: &parent.tools,
        prompt: None,
        background: loaded.header.background,
        delegate: Some(Arc::clone(&parent.delegate)),
    };
    let (run, warnings) = revive::rebuild(session, id, &loaded, how)?;
    for message in warnings {
        tracing::warn!(agent = %id, "{message}");
        ctx.sink
            .emit(&run.meta, EventKind::ResumeWarning { message });
    }
    Ok(Ready::Run(run, Isolation::None))
}

/// Builds the subagent of task `index`: its id (the next of the session,
/// or `given`, which must be one its parent could have given it), system
/// prompt, resolved pool and first messages.
fn prepare(
    ctx: &QueryCtx,
    parent: &AgentRun,
    call: &ToolCall,
    task: &TaskInput,
    index: usize,
    given: Option<&AgentId>,
) -> Result<AgentRun, EngineError> {
    let session = &ctx.session;
    let catalog = session.catalog.current();
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
    let id = match given {
        None => parent.meta.id.child(session.next_child(), label),
        Some(id) => child_of(&parent.meta.id, label, id)?,
    };
    // One level below its parent; its type's own `maxDepth` may lower the
    // ceiling of its subtree (a fork has none: it keeps its parent's).
    let depth = parent
        .meta
        .depth
        .child(definition.and_then(|d| d.max_depth));
    let tools = subagent_tools(session, &id, definition, (role, depth), &parent.tools)?;
    let memory = definition.and_then(|d| {
        crate::delegate::agent_memory::folder(
            d,
            &session.runtime.settings().cwd,
            session.config.permissions.boundary.home.as_deref(),
        )
    });
    let (system, model, max_turns, budget, history) = match definition {
        Some(d) => typed(
            &session.config.model_aliases,
            d,
            catalog.instructions.as_deref(),
            parent,
            task,
            (&catalog.skills, memory.as_deref()),
        ),
        None => fork(
            parent,
            call,
            task,
            depth.delegates(session.config.policy.max_depth),
        ),
    };
    let meta = AgentMeta {
        id,
        agent_type: Arc::from(label),
        parent: Some(parent.meta.id.clone()),
        mode: permission::effective_mode(
            parent.meta.mode,
            definition.and_then(|d| d.permission_mode),
        ),
        background: task.background || definition.is_some_and(|d| d.background),
        cwd: Arc::clone(&parent.meta.cwd),
        // Set by its worktree, if it is isolated.
        worktree: None,
        memory: memory.map(Arc::from),
        reads_only: match role {
            Role::Derived { kind, .. } => matches!(kind, DerivedKind::Explore | DerivedKind::Plan),
            Role::Fork { .. } => parent.meta.reads_only,
            Role::Root => false,
        },
        writes: writes_files(&tools, definition),
        narrowing: definition.and_then(narrowing),
        model,
        system,
        max_turns,
        output: None,
        // A fork reasons as its parent does.
        effort: match definition {
            Some(d) => d.effort.map(effort),
            None => parent.meta.effort,
        },
        task: Some(TaskRef {
            call: call.id.clone(),
            index,
            description: task.description.clone(),
        }),
        depth,
    };
    let output = subagent_output(task.output.clone(), definition, &meta.id)?;
    let budget = within_parent(budget, parent);
    let meta = AgentMeta { output, ..meta };
    let cache_prefix = definition
        .is_none()
        .then(|| shared_prefix(parent))
        .flatten();
    let run = delegating(session, AgentRun::new(meta, tools, history));
    Ok(run
        // Only its transcript's header reads it: no copy without one.
        .with_definition(
            definition
                .filter(|_| session.transcripts.enabled())
                .map(|d| Arc::new(d.clone())),
        )
        .with_budget(budget, parent.tokens.as_ref())
        .with_cache_prefix(cache_prefix)
        .with_hooks(session.config.hooks_of_type(definition)))
}

/// A child's `budget` capped by what its parent has left of its own token
/// budget (budgets nest: a child never spends more than its parent may).
fn within_parent(mut budget: zr_caps::Budget, parent: &AgentRun) -> zr_caps::Budget {
    if let Some(limit) = parent.budget.tokens {
        let used = crate::sync::lock(&parent.progress).usage.total();
        let left = limit.saturating_sub(used);
        budget.tokens = Some(budget.tokens.map_or(left, |own| own.min(left)));
    }
    budget
}

/// `id` when it is the id of a `label` subagent of `parent`.
fn child_of(parent: &AgentId, label: &str, id: &AgentId) -> Result<AgentId, EngineError> {
    let seq = id
        .as_str()
        .strip_prefix(parent.as_str())
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(seq, _)| seq.parse::<u32>().ok());
    match seq {
        Some(seq) if parent.child(seq, label) == *id => Ok(id.clone()),
        _ => Err(EngineError::InvalidTask {
            message: format!("{id} is not the id of a '{label}' subagent of {parent}"),
        }),
    }
}

type Start = (Arc<str>, Arc<str>, u32, Budget, Vec<Message>);

/// A typed subagent: its own prompt (with the project's instructions, then
/// its memory's section when its type has memory), an empty history but
/// for its first turn (its preloaded skills, its type's initial prompt, the
/// task).
fn typed(
    aliases: &ModelAliases,
    definition: &AgentDefinition,
    instructions: Option<&str>,
    parent: &AgentRun,
    task: &TaskInput,
    (skills, memory): (&[Arc<SkillDefinition>], Option<&Path>),
) -> Start {
    let system = crate::delegate::agent_memory::with_section(
        system_prompt(definition, instructions),
        memory,
    );
    // The call's `model` first, then the type's (Claude Code's order).
    // Most types run on their parent's model: its text is shared.
    let model = task_model(
        aliases,
        definition,
        task.model.as_deref(),
        &parent.meta.model,
    );
    let model = if *model == *parent.meta.model {
        Arc::clone(&parent.meta.model)
    } else {
        Arc::from(model)
    };
    (
        system,
        model,
        definition.effective_max_turns(parent.meta.max_turns),
        definition.budget,
        vec![crate::delegate::first_turn::message(
            definition,
            skills,
            &task.prompt,
        )],
    )
}

/// The model a typed subagent of `definition` runs on: the call's
/// `model` when it gave one (an alias resolved, `inherit`: the parent's),
/// else its type's.
fn task_model(
    aliases: &ModelAliases,
    definition: &AgentDefinition,
    call: Option<&str>,
    parent: &str,
) -> String {
    match call {
        Some(model) => aliases.model_for(&zr_caps::ModelChoice::parse(model), parent),
        None => subagent_model(aliases, definition, parent),
    }
}

/// How many first messages a fork of `parent` shares with the parent's
/// last request: its history but the answer holding the delegating call.
fn shared_prefix(parent: &AgentRun) -> Option<usize> {
    match parent.history.last() {
        Some(last) if last.role == MessageRole::Assistant => Some(parent.history.len() - 1),
        _ => None,
    }
}

/// `run` with [`Subagents`] carrying out its Task and MultiTask calls
/// when its depth lets it delegate (R4 left it the tools); else it keeps
/// [`crate::turn::agent_run::NoDelegation`], which refuses them.
pub(crate) fn delegating(session: &crate::session::Session, run: AgentRun) -> AgentRun {
    if run.meta.depth.delegates(session.config.policy.max_depth) {
        run.with_delegate(Arc::new(Subagents))
    } else {
        run
    }
}

/// A fork: the parent's prompt and history, the parent's pending tool
/// calls answered, then the task. `delegates`: the fork may delegate in
/// turn (it is below the depth limit).
fn fork(parent: &AgentRun, call: &ToolCall, task: &TaskInput, delegates: bool) -> Start {
    let mut history = Vec::clone(&parent.history);
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
            "You are a fork of the agent above, with its history, working on one task. {}Do the task and answer with your conclusion only.\n\nTask: {}",
            if delegates { "" } else { "You cannot delegate. " },
            task.prompt
        ),
    });
    history.push(Message {
        role: MessageRole::User,
        content,
    });
    (
        Arc::clone(&parent.meta.system),
        Arc::clone(&parent.meta.model),
        (parent.meta.max_turns / 2).max(1),
        Budget::default(),
        history,
    )
}

#[cfg(test)]
mod tests;

/// The report people see.
fn report(results: &[TaskResult], timeout: Duration) -> String {
    // About one line of 100 bytes per result: few regrowths.
    let mut text = String::with_capacity(64 + 128 * results.len());
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
        let id: &dyn fmt::Display = match &r.agent_id {
            Some(id) => id,
            None => &"-",
        };
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
