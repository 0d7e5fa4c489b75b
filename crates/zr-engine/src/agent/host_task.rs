//! A task a host hands straight to a subagent type ([`Agent::run_task`]):
//! the root's `Task` call without the root's model, through the same code
//! (`task::run_call`: input checks, the call's budget, the pool, the one
//! subagent lifecycle, the transcript).
//!
//! This is what `zr mcp serve` runs for each MCP `tools/call`: the caller
//! (another host's model) plays the root's part. Calls may run at once;
//! each is its own call of the session's root, with its own budget and
//! events, while the root's conversation is never touched.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::Stream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use zr_types::{AgentId, AgentName, BuiltinName, ToolCall};

use crate::agent::{Agent, join_spawned, root_meta};
use crate::delegate::task::{run_call, run_described};
use crate::effects::remote::{RemoteEnd, SubagentSpec};
use crate::error::EngineError;
use crate::event::{Event, EventKind, EventSink};
use crate::model::budget::TreeBudget;
use crate::outcome::{TaskResult, TaskStatus};
use crate::session::pools::root_tools;
use crate::session::{QueryCtx, Session, Spending};
use crate::turn::agent_run::AgentRun;

/// What a host asks one subagent to do: the fields of a `Task` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTask {
    /// The subagent type ([`AgentConfig::sub_agents`](crate::AgentConfig::sub_agents)).
    pub subagent_type: AgentName,
    /// A short description (3-5 words), shown in events and the
    /// transcript.
    pub description: String,
    /// The task itself: the subagent's first message.
    pub prompt: String,
    /// A JSON Schema its answer must match, replacing the type's
    /// `output_schema` (the `Task` call's field); the answer's value is
    /// then [`TaskResult::value`].
    pub output_schema: Option<serde_json::Value>,
}

impl Agent {
    /// Runs `task` as the session's root would with a `Task` call: the
    /// subagent type's pool (derived, never the root's capabilities), its
    /// turn and token budgets, the `subagent` limits (one time budget per
    /// call), its permission mode clamped by the root's, its transcript in
    /// the session folder. A type whose definition says `background: true`
    /// runs in the background (its pool follows R5) and the returned
    /// [`TaskRun`] waits for its end. Several tasks may run at once; the
    /// root's conversation is not touched (this is not a query, so it
    /// never makes the agent [`Busy`](EngineError::Busy)).
    ///
    /// The events of the subagent come through the [`TaskRun`] as a
    /// query's do. Dropping it (or [`TaskRun::cancel`]) stops the
    /// subagent and kills the processes its tool calls started.
    ///
    /// Must be called within a Tokio runtime.
    pub fn run_task(&self, task: HostTask) -> TaskRun {
        let session = Arc::clone(self.session());
        let mut input = serde_json::json!({
            "subagent_type": task.subagent_type.as_str(),
            "description": task.description,
            "prompt": task.prompt,
        });
        if let (Some(schema), Some(map)) = (task.output_schema, input.as_object_mut()) {
            map.insert("output_schema".to_owned(), schema);
        }
        let call = ToolCall {
            id: format!("host-{}", self.next_host_call()),
            name: BuiltinName::Task.as_str().to_owned(),
            input,
        };
        // Subscribed before anything starts: a background agent's events
        // go through the session's router, not the call's sink.
        let background = session
            .catalog
            .current()
            .sub_agents
            .get(&task.subagent_type)
            .is_some_and(|d| d.background)
            .then(|| session.router.subscribe());
        spawn_run(session, TreeBudget::default(), |ctx| {
            host_call(ctx, call, background)
        })
    }

    /// Runs one subagent from its description, at any depth (its
    /// ancestors are rebuilt from theirs, from the root down, without
    /// running), within the tree budget the description carries: what a
    /// durable backend's child invocation receives
    /// ([`Effects::remote_subagent`](crate::Effects::remote_subagent)).
    /// The subagent is built as the root's task would build it here: the
    /// task checked as the call's input is, its pool resolved from its
    /// type and the root's pool (this agent's project: nothing of the
    /// description but the type and the task reaches the resolver), the id
    /// its parent gave it; then the one subagent lifecycle (hooks,
    /// worktree, loop, transcript). The call's slots and budget are the
    /// parent's, not this run's. A background one
    /// ([`SubagentSpec::background`]) is built as a background agent (its
    /// pool, its permission prompts denied) and runs to its end here.
    ///
    /// # Errors
    ///
    /// Through [`TaskRun::finish`]: [`EngineError::InvalidTask`] when the
    /// description does not fit this project (an unknown type, an id its
    /// parent could not have given, a type whose definition says
    /// `background: true` in a description that does not, parents that
    /// are not the chain of its ancestors' descriptions); the root's pool
    /// errors as for
    /// [`Agent::run_task`].
    ///
    /// Must be called within a Tokio runtime.
    pub fn run_described(&self, spec: SubagentSpec) -> TaskRun {
        let budget = spec.budget;
        spawn_run(Arc::clone(self.session()), budget, |ctx| async move {
            let root = root_run(&ctx.session)?;
            run_described(&ctx, root, &spec)
                .await
                .map_err(|message| EngineError::InvalidTask { message })
        })
    }
}

/// Spawns `work` (a host's task of `session`, its events into the
/// context's sink) as a [`TaskRun`].
fn spawn_run<F>(
    session: Arc<Session>,
    budget: TreeBudget,
    work: impl FnOnce(QueryCtx) -> F,
) -> TaskRun
where
    F: Future<Output = Result<TaskResult, EngineError>> + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return TaskRun {
            rx,
            task: None,
            early: Some(EngineError::NoRuntime),
            spending: None,
            session,
        };
    };
    let ctx =
        QueryCtx::new(Arc::clone(&session), EventSink::new(Instant::now(), tx)).with_budget(budget);
    let spending = ctx.spending();
    let join = handle.spawn(work(ctx));
    TaskRun {
        rx,
        task: Some(join),
        early: None,
        spending: Some(spending),
        session,
    }
}

/// The session's root as a host's call sees it: its pool (no query's
/// overrides), its meta, no history.
fn root_run(session: &Session) -> Result<AgentRun, EngineError> {
    let tools = root_tools(session, &session.catalog.current(), None, &[])?;
    Ok(AgentRun::new(
        root_meta(session, None, None, None),
        tools,
        Vec::new(),
    ))
}

/// The call of `run_task`, under a root that does not run.
async fn host_call(
    ctx: QueryCtx,
    call: ToolCall,
    background: Option<mpsc::UnboundedReceiver<Event>>,
) -> Result<TaskResult, EngineError> {
    let root = root_run(&ctx.session)?;
    let result = run_call(&ctx, &root, &call, false)
        .await
        .map_err(|message| EngineError::InvalidTask { message })?
        .into_iter()
        .next()
        .ok_or_else(|| EngineError::InvalidTask {
            message: "the call started no task".to_owned(),
        })?;
    match (result.status, &result.agent_id, background) {
        (TaskStatus::Background, Some(id), Some(events)) => follow(&ctx, id.clone(), events).await,
        _ => Ok(result),
    }
}

/// Passes on the events of background agent `id` until it finishes; its
/// result. Dropped (the host cancelled), it stops the agent.
async fn follow(
    ctx: &QueryCtx,
    id: AgentId,
    mut events: mpsc::UnboundedReceiver<Event>,
) -> Result<TaskResult, EngineError> {
    let _stop = StopOnDrop {
        session: Arc::clone(&ctx.session),
        agent: id.clone(),
    };
    while let Some(event) = events.recv().await {
        if event.agent != id {
            continue;
        }
        if let EventKind::SubagentFinished { result } = &event.kind {
            let result = TaskResult::clone(result);
            ctx.sink.send(&event.agent, &event.agent_type, event.kind);
            return Ok(result);
        }
        ctx.sink.send(&event.agent, &event.agent_type, event.kind);
    }
    Err(EngineError::Cancelled)
}

/// Stops a background agent when the call that waits for it ends (a
/// finished agent has nothing left to stop).
struct StopOnDrop {
    session: Arc<Session>,
    agent: AgentId,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.session.background.take_task(&self.agent) {
            task.abort();
        }
    }
}

/// A running [`Agent::run_task`]: a stream of the subagent's [`Event`]s,
/// ending when it ends.
#[derive(Debug)]
pub struct TaskRun {
    rx: mpsc::UnboundedReceiver<Event>,
    task: Option<JoinHandle<Result<TaskResult, EngineError>>>,
    early: Option<EngineError>,
    /// What its whole subtree spent.
    spending: Option<Spending>,
    session: Arc<Session>,
}

impl TaskRun {
    /// Waits for the task's result, discarding the events not yet read.
    ///
    /// # Errors
    ///
    /// - [`EngineError::InvalidTask`]: the input was refused (an empty
    ///   prompt or description, an unknown type, an output schema that
    ///   does not compile); nothing started;
    /// - [`EngineError::Resolve`] or [`EngineError::MissingHandler`]: the
    ///   root's pool (which the subagent's is resolved against) cannot be
    ///   built;
    /// - [`EngineError::Cancelled`], [`EngineError::NoRuntime`],
    ///   [`EngineError::Panicked`] as for a query.
    ///
    /// A subagent that fails, times out or is denied is a [`TaskResult`]
    /// with that status, not an error.
    pub async fn finish(mut self) -> Result<TaskResult, EngineError> {
        join_spawned(&mut self.early, &mut self.rx, &mut self.task).await
    }

    /// Waits for the result of a subagent run from its description
    /// ([`Agent::run_described`]), with what its whole subtree spent (for
    /// its parent's query, elsewhere).
    ///
    /// # Errors
    ///
    /// As [`TaskRun::finish`].
    pub async fn finish_remote(mut self) -> Result<RemoteEnd, EngineError> {
        let result = join_spawned(&mut self.early, &mut self.rx, &mut self.task).await?;
        let (usage, cost_usd) = self
            .spending
            .as_ref()
            .map_or_else(Default::default, Spending::get);
        Ok(RemoteEnd {
            result,
            usage,
            cost_usd,
        })
    }

    /// Stops the subagent and waits until its tools and processes are
    /// gone.
    pub async fn cancel(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
        self.session.wait_cleanups().await;
    }
}

impl Stream for TaskRun {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for TaskRun {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
