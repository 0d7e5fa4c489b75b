//! Running one model turn's tool calls: read-only calls and delegations
//! (Task, MultiTask) side by side, the others one at a time, results in
//! call order, each result written
//! to the transcript as it comes (and a `call_started` record before a
//! call that is not read-only runs). A turn finished after a resume
//! reuses the results on disk and answers a started call as interrupted.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use futures_util::{StreamExt as _, stream};
use zr_types::{
    Confinement, ContentBlock, ToolCall, ToolContext, ToolHandler, ToolName, ToolOutput,
    ToolResultContent, error_chain,
};

use crate::error::catch_panic;
use crate::event::EventKind;
use crate::history::compact::cut::limit_result;
use crate::meta::AgentMeta;
use crate::policy::permission;
use crate::session::QueryCtx;
use crate::telemetry::in_span::in_span;
use crate::telemetry::{self, ToolStatus};
use crate::tools::Runner;
use crate::tools::find_tool;
use crate::turn::agent_run::AgentRun;

/// At most this many read-only or delegating calls of one turn run at
/// once (the subagents of delegations are bounded by `max_concurrent`
/// besides).
const MAX_PARALLEL_READS: usize = 10;

/// What a transcript recorded of a turn a kill cut short; empty for a
/// new turn.
#[derive(Debug, Default)]
pub(crate) struct Recorded {
    /// Results on disk, by call id: never produced again.
    pub(crate) results: BTreeMap<String, ContentBlock>,
    /// Calls recorded as started: one without a result that is not
    /// read-only is answered as interrupted, never run again.
    pub(crate) started: BTreeSet<String>,
}

/// The answer to a call that had started when the process stopped and
/// whose result was not recorded.
pub(crate) const INTERRUPTED_CALL: &str = "interrupted: this call had started when the previous run stopped, and its result was not recorded. It was not run again: its effect may or may not have happened. Check before repeating it.";

/// The result of one call, and the tools it asks to load (FindTool).
struct CallOutcome {
    block: ContentBlock,
    load: Vec<ToolName>,
    /// Taken from the transcript (not written again).
    recorded: bool,
}

/// Runs `calls` for `agent`: each run of consecutive calls that may run
/// beside others ([`runs_beside`]: read-only ones, Task and MultiTask)
/// side by side (at most [`MAX_PARALLEL_READS`] at once), every other call
/// alone and in order. Returns one tool result per call, in call order. Tools
/// loaded through FindTool are added once all calls are done.
///
/// Each batch of calls is dropped as soon as it ran: the inputs of a long
/// turn's calls (a root's hundred MultiTask calls of ten tasks each) are
/// held once, by the history, not also by the calls still to come and by
/// those done.
pub(crate) async fn run_calls(
    ctx: &QueryCtx,
    agent: &mut AgentRun,
    calls: Vec<ToolCall>,
    recorded: &Recorded,
) -> Vec<ContentBlock> {
    let mut results = Vec::with_capacity(calls.len());
    let mut load = Vec::new();
    let mut rest = std::collections::VecDeque::from(calls);
    while !rest.is_empty() {
        let reads = rest.iter().take_while(|c| runs_beside(agent, c)).count();
        let now: Vec<ToolCall> = rest.drain(..reads.max(1)).collect();
        let agent_ref: &AgentRun = agent;
        let mut keep = |outcome: CallOutcome| {
            if !outcome.recorded {
                ctx.session
                    .transcripts
                    .result(&ctx.sink, &agent_ref.meta, &outcome.block);
            }
            results.push(outcome.block);
            load.extend(outcome.load);
        };
        if let [call] = now.as_slice() {
            keep(run_one(ctx, agent_ref, call, recorded).await);
        } else {
            // The futures are made before the stream: a mapping closure
            // kept inside it fails the compiler's higher-ranked `Send`
            // check.
            let runs: Vec<_> = now
                .iter()
                .map(|call| run_one(ctx, agent_ref, call, recorded))
                .collect();
            let mut outcomes = stream::iter(runs).buffered(MAX_PARALLEL_READS);
            // In call order, each as soon as it and those before it ended.
            while let Some(outcome) = outcomes.next().await {
                keep(outcome);
            }
        }
    }
    agent.tools.load(&load);
    results
}

/// Whether `call` may run beside the other calls of its turn: a
/// read-only tool, or a delegation (Task and MultiTask calls of one turn
/// start together, seed 001; their subagents share the agent's
/// `max_concurrent` slots, and each call keeps its own time budget).
/// Unknown names count as read-only: they are refused without running.
fn runs_beside(agent: &AgentRun, call: &ToolCall) -> bool {
    agent.tools.get(&call.name).is_none_or(|c| {
        c.definition.is_read_only() || matches!(c.runner, Runner::Task | Runner::MultiTask)
    })
}

async fn run_one(
    ctx: &QueryCtx,
    agent: &AgentRun,
    call: &ToolCall,
    recorded: &Recorded,
) -> CallOutcome {
    let span = telemetry::tool_span(
        ctx.session.runtime.tracer(),
        &call.name,
        &call.id,
        &call.input,
    );
    let traced = span.clone();
    in_span(async move {
        let meta = &agent.meta;
        let answer = |block| CallOutcome {
            block,
            load: Vec::new(),
            recorded: false,
        };
        if let Some(block) = recorded.results.get(&call.id) {
            return CallOutcome {
                block: block.clone(),
                load: Vec::new(),
                recorded: true,
            };
        }
        if let Some(why) = agent.stopped() {
            let why = format!("not run: agent {} was {why}", meta.id);
            telemetry::record_tool(&traced, ToolStatus::Denied, || why.clone());
            return answer(refused(ctx, meta, call, &why));
        }
        let start = Instant::now();
        let Some(tool) = agent.tools.get(&call.name) else {
            started(ctx, meta, call);
            let output = not_available(agent, &call.name);
            telemetry::record_tool(&traced, ToolStatus::Error, || json_text(&output.content));
            return answer(finish(ctx, meta, call, output, start));
        };
        let side_effecting =
            matches!(tool.runner, Runner::Handler(_)) && !tool.definition.is_read_only();
        if side_effecting && recorded.started.contains(&call.id) {
            tracing::info!(tool = %call.name, "answered as interrupted: started before the resume, no result recorded");
            return answer(refused(ctx, meta, call, INTERRUPTED_CALL));
        }
        // The stages of a call: the PreToolUse hooks, the permission check
        // (permission.rs), the tool, the PostToolUse hooks (hooks.rs).
        let session = &ctx.session;
        let hooks = agent.hooks(session);
        let admitted = hooks.pre_tool_use(call).await;
        let effective = admitted.as_ref().map_or(call, |a| &a.call);
        started(ctx, meta, effective);
        let gate = session.gate();
        let admitted = match admitted {
            Ok(a) => permission::check(&gate, meta, tool, &a.call, a.permission.as_ref(), &hooks)
                .await
                .map(|confinement| (a.call, confinement)),
            Err(reason) => Err(reason),
        };
        let denied = admitted.is_err();
        let (output, load, notes) = match admitted {
            Err(reason) => {
                let output =
                    permission::refuse(&gate, &ctx.sink, meta, &agent.denials, call, reason);
                (output, Vec::new(), Vec::new())
            }
            Ok((call, confinement)) => {
                permission::ran(&agent.denials);
                let (output, load) = match tool.runner.clone() {
                    Runner::Handler(handler) => {
                        if side_effecting {
                            session.transcripts.call_started(&ctx.sink, meta, &call.id);
                        }
                        (
                            run_handler(ctx, meta, &handler, &call, confinement).await,
                            Vec::new(),
                        )
                    }
                    Runner::FindTool => find_tool::find(&agent.tools, &call.input),
                    Runner::Task => (
                        agent.delegate.delegate(ctx, agent, &call, false).await,
                        Vec::new(),
                    ),
                    Runner::MultiTask => (
                        agent.delegate.delegate(ctx, agent, &call, true).await,
                        Vec::new(),
                    ),
                };
                let notes = hooks.post_tool_use(&call, &output).await;
                (output, load, notes)
            }
        };
        let limit = session.config.compaction.max_tool_result_bytes;
        let mut output = limit_result(&session.spill, limit, &meta.id, call, output).await;
        // What PostToolUse hooks tell the model comes after the result,
        // which was cut without it.
        output
            .content
            .extend(notes.into_iter().map(|text| ToolResultContent::Text { text }));
        let status = match (denied, output.is_error) {
            (true, _) => ToolStatus::Denied,
            (false, true) => ToolStatus::Error,
            (false, false) => ToolStatus::Ok,
        };
        telemetry::record_tool(&traced, status, || json_text(&output.content));
        let block = finish(ctx, meta, call, output, start);
        CallOutcome {
            block,
            load,
            recorded: false,
        }
    }, span)
    .await
}

fn started(ctx: &QueryCtx, agent: &AgentMeta, call: &ToolCall) {
    ctx.sink.emit_with(agent, || EventKind::ToolCallStarted {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        input: call.input.clone(),
    });
}

/// The answer to a call of a tool the agent does not have. Nothing runs.
fn not_available(agent: &AgentRun, name: &str) -> ToolOutput {
    let hint = if agent.tools.in_directory(name) {
        format!(" yet: load it first with FindTool (query \"select:{name}\")")
    } else {
        String::new()
    };
    tracing::info!(tool = name, "refused: not in the agent's pool");
    ToolOutput::error(format!(
        "tool '{name}' is not available to agent {}{hint}",
        agent.meta.id
    ))
}

async fn run_handler(
    ctx: &QueryCtx,
    agent: &AgentMeta,
    handler: &Arc<dyn ToolHandler>,
    call: &ToolCall,
    confinement: Option<Confinement>,
) -> ToolOutput {
    let runtime = &ctx.session.runtime;
    // The processes the call starts are inside its span.
    let mut env = runtime.settings().env.clone();
    telemetry::pass_trace_context(&mut env);
    let tool_ctx = ToolContext::new(
        ctx.session.id.clone(),
        agent.id.clone(),
        Arc::clone(&agent.cwd),
        env,
    )
    .with_background(agent.background)
    .with_confinement(confinement)
    .for_call(&call.id);
    let effects = runtime.effects();
    // The call itself inside the caught future: a handler may panic while
    // making its future, before any poll.
    let called = catch_panic(async { effects.tool_call(handler, call, tool_ctx).await });
    let failure = match called.await {
        Ok(Ok(output)) => return output,
        Ok(Err(error)) => error_chain(&error),
        Err(panic) => format!("tool '{}' panicked: {panic}", call.name),
    };
    tracing::warn!(tool = %call.name, error = %failure, "tool call could not be carried out");
    ctx.sink.emit(
        agent,
        EventKind::ToolFailed {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            error: failure.clone(),
        },
    );
    ToolOutput::error(failure)
}

/// A call answered without running (a budget is exhausted).
pub(crate) fn refused(
    ctx: &QueryCtx,
    agent: &AgentMeta,
    call: &ToolCall,
    why: &str,
) -> ContentBlock {
    started(ctx, agent, call);
    finish(ctx, agent, call, ToolOutput::error(why), Instant::now())
}

fn finish(
    ctx: &QueryCtx,
    agent: &AgentMeta,
    call: &ToolCall,
    output: ToolOutput,
    start: Instant,
) -> ContentBlock {
    ctx.sink.emit_with(agent, || EventKind::ToolCallFinished {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        is_error: output.is_error,
        summary: summary(&output),
        duration: start.elapsed(),
    });
    ContentBlock::ToolResult {
        tool_use_id: call.id.clone(),
        content: output.content,
        is_error: output.is_error,
        display: output.display,
    }
}

/// A result's text for people: its `display`, else its content.
fn summary(output: &ToolOutput) -> String {
    output.display.clone().unwrap_or_else(|| {
        output
            .content
            .iter()
            .map(|c| match c {
                ToolResultContent::Text { text } => text.clone(),
                ToolResultContent::Image { .. } => "[image]".to_owned(),
                ToolResultContent::Json { value } => value.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// A result's content as JSON, for telemetry.
fn json_text(content: &[zr_types::ToolResultContent]) -> String {
    serde_json::to_string(content).unwrap_or_default()
}
