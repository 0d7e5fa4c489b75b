//! The stage that runs an admitted call: its `call_started` record (a call
//! with effects), then what its tool's [`Runner`] says: a handler through
//! the runtime's `Effects`, FindTool over the agent's directory, Task and
//! MultiTask through the agent's `Delegate`.

use std::sync::Arc;

use zr_types::{
    Confinement, ToolCall, ToolContext, ToolHandler, ToolName, ToolOutput, error_chain,
};

use super::Step;
use crate::error::catch_panic;
use crate::event::EventKind;
use crate::meta::AgentMeta;
use crate::session::QueryCtx;
use crate::telemetry::ToolStatus;
use crate::tools::{Callable, EngineTool, Runner, find_tool};
use crate::turn::agent_run::AgentRun;

/// A call its tool ran: the result, and the tools it asks to load
/// (FindTool).
pub(super) struct Ran {
    pub(super) output: ToolOutput,
    pub(super) load: Vec<ToolName>,
}

/// Runs `call` where the gate let it through; a refused one passes by.
pub(super) async fn dispatch(
    ctx: &QueryCtx,
    agent: &AgentRun,
    call: &ToolCall,
    permitted: Step<(&Callable, Option<Confinement>)>,
) -> Step<Ran> {
    let (tool, confinement) = permitted?;
    let meta = &agent.meta;
    Ok(match &tool.runner {
        Runner::Handler(handler) => {
            if tool.has_effects() {
                ctx.session
                    .transcripts
                    .call_started(&ctx.sink, meta, &call.id);
            }
            let output = run_handler(ctx, meta, handler, call, confinement).await;
            Ran {
                output,
                load: Vec::new(),
            }
        }
        Runner::Engine(EngineTool::FindTool) => {
            let (output, load) = find_tool::find(&agent.tools, &call.input);
            Ran { output, load }
        }
        Runner::Engine(delegation @ (EngineTool::Task | EngineTool::MultiTask)) => {
            let multi = *delegation == EngineTool::MultiTask;
            let output = agent.delegate.delegate(ctx, agent, call, multi).await;
            Ran {
                output,
                load: Vec::new(),
            }
        }
    })
}

/// Calls `handler` through the runtime's `Effects`, in `agent`'s folder
/// and confinement. A handler's error or panic is an error result for
/// the model and an [`EventKind::ToolFailed`] for the host.
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
    crate::telemetry::pass_trace_context(&mut env);
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

impl Ran {
    /// How telemetry records it: `ok`, or `error` for an error result.
    pub(super) fn status(&self) -> ToolStatus {
        if self.output.is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        }
    }
}
