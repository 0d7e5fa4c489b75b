//! Running one model turn's tool calls: read-only calls side by side,
//! the others one at a time, results in call order.

use std::sync::Arc;
use std::time::Instant;

use futures_util::{StreamExt as _, stream};
use tracing::Instrument as _;
use zr_types::{
    ContentBlock, ToolCall, ToolContext, ToolHandler, ToolName, ToolOutput, ToolResultContent,
    error_chain,
};

use crate::agent_run::AgentRun;
use crate::compact::cut::limit_result;
use crate::error::catch_panic;
use crate::event::EventKind;
use crate::find_tool;
use crate::hooks::HookAgent;
use crate::meta::AgentMeta;
use crate::permission;
use crate::session::QueryCtx;
use crate::telemetry::{self, ToolStatus};
use crate::tools::Runner;

/// At most this many read-only calls of one turn run at once.
const MAX_PARALLEL_READS: usize = 10;

/// The result of one call, and the tools it asks to load (FindTool).
struct CallOutcome {
    block: ContentBlock,
    load: Vec<ToolName>,
}

/// Runs `calls` for `agent`: each run of consecutive read-only calls side
/// by side (at most [`MAX_PARALLEL_READS`] at once), every other call alone
/// and in order. Returns one tool result per call, in call order. Tools
/// loaded through FindTool are added once all calls are done.
pub(crate) async fn run_calls(
    ctx: &QueryCtx,
    agent: &mut AgentRun,
    calls: &[ToolCall],
) -> Vec<ContentBlock> {
    let mut results = Vec::with_capacity(calls.len());
    let mut load = Vec::new();
    let mut rest = calls;
    while let Some(first) = rest.first() {
        let reads = rest.iter().take_while(|c| is_read_only(agent, c)).count();
        let (now, later) = if reads == 0 {
            rest.split_at(1)
        } else {
            rest.split_at(reads)
        };
        rest = later;
        let agent_ref: &AgentRun = agent;
        let outcomes: Vec<CallOutcome> = if now.len() == 1 {
            vec![run_one(ctx, agent_ref, first).await]
        } else {
            // The futures are made before the stream: a mapping closure
            // kept inside it fails the compiler's higher-ranked `Send`
            // check.
            let runs: Vec<_> = now
                .iter()
                .map(|call| run_one(ctx, agent_ref, call))
                .collect();
            stream::iter(runs)
                .buffered(MAX_PARALLEL_READS)
                .collect()
                .await
        };
        for outcome in outcomes {
            results.push(outcome.block);
            load.extend(outcome.load);
        }
    }
    agent.tools.load(&load);
    results
}

/// Unknown names count as read-only: they are refused without running.
fn is_read_only(agent: &AgentRun, call: &ToolCall) -> bool {
    agent
        .tools
        .get(&call.name)
        .is_none_or(|c| c.definition.is_read_only())
}

async fn run_one(ctx: &QueryCtx, agent: &AgentRun, call: &ToolCall) -> CallOutcome {
    let span = telemetry::tool_span(&call.name, &call.id, &call.input);
    let recorded = span.clone();
    async move {
        let meta = &agent.meta;
        if let Some(why) = agent.denials.stopped() {
            let why = format!("not run: agent {} was {why}", meta.id);
            let block = refused(ctx, meta, call, &why);
            telemetry::record_tool(&recorded, ToolStatus::Denied, || why.clone());
            return CallOutcome {
                block,
                load: Vec::new(),
            };
        }
        let start = Instant::now();
        let Some(tool) = agent.tools.get(&call.name) else {
            started(ctx, meta, call);
            let output = not_available(agent, &call.name);
            telemetry::record_tool(&recorded, ToolStatus::Error, || json_text(&output.content));
            let block = finish(ctx, meta, call, output, start);
            return CallOutcome {
                block,
                load: Vec::new(),
            };
        };
        // PreToolUse hooks, then the permission check, then the tool, then
        // PostToolUse (permission.rs).
        let session = &ctx.session;
        let hooks = &session.config.hooks;
        let view = || HookAgent::of(meta, session.transcripts.path(&meta.id));
        let admitted = hooks.pre_tool_use(view, call).await;
        let effective = admitted.as_ref().unwrap_or(call);
        started(ctx, meta, effective);
        let gate = session.gate();
        let admitted = match admitted {
            Ok(c) => permission::check(&gate, meta, tool, &c).await.map(|()| c),
            Err(reason) => Err(reason),
        };
        let denied = admitted.is_err();
        let (output, load) = match admitted {
            Err(reason) => {
                let output =
                    permission::refuse(&gate, &ctx.sink, meta, &agent.denials, call, reason);
                (output, Vec::new())
            }
            Ok(call) => {
                permission::ran(&agent.denials);
                let (output, load) = match tool.runner.clone() {
                    Runner::Handler(handler) => {
                        (run_handler(ctx, meta, &handler, &call).await, Vec::new())
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
                hooks.post_tool_use(view, &call, &output).await;
                (output, load)
            }
        };
        let limit = session.config.compaction.max_tool_result_bytes;
        let output = limit_result(&session.spill, limit, &meta.id, call, output).await;
        let status = match (denied, output.is_error) {
            (true, _) => ToolStatus::Denied,
            (false, true) => ToolStatus::Error,
            (false, false) => ToolStatus::Ok,
        };
        telemetry::record_tool(&recorded, status, || json_text(&output.content));
        let block = finish(ctx, meta, call, output, start);
        CallOutcome { block, load }
    }
    .instrument(span)
    .await
}

fn started(ctx: &QueryCtx, agent: &AgentMeta, call: &ToolCall) {
    ctx.sink.emit(
        agent,
        EventKind::ToolCallStarted {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            input: call.input.clone(),
        },
    );
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
) -> ToolOutput {
    let runtime = &ctx.session.runtime;
    let tool_ctx = ToolContext::new(
        ctx.session.id.clone(),
        agent.id.clone(),
        agent.cwd.clone(),
        runtime.settings().env.clone(),
    );
    let effects = runtime.effects();
    // The call itself inside the caught future: a handler may panic while
    // making its future, before any poll.
    let called = catch_panic(async { effects.tool_call(handler, call.clone(), tool_ctx).await });
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
    let summary = output.display.clone().unwrap_or_else(|| {
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
    });
    ctx.sink.emit(
        agent,
        EventKind::ToolCallFinished {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            is_error: output.is_error,
            summary,
            duration: start.elapsed(),
        },
    );
    ContentBlock::ToolResult {
        tool_use_id: call.id.clone(),
        content: output.content,
        is_error: output.is_error,
        display: output.display,
    }
}

/// A result's content as JSON, for telemetry.
fn json_text(content: &[zr_types::ToolResultContent]) -> String {
    serde_json::to_string(content).unwrap_or_default()
}
