//! `Agent::resume_subagent`: one subagent of the session run again from
//! its transcript, in the foreground, to its result.

use std::sync::Arc;
use std::time::Instant;

use zr_caps::Isolation;
use zr_types::{AgentId, ToolName};

use crate::agent::QueryResult;
use crate::delegate::revive::{self, Revive};
use crate::delegate::subagent::{self, Announce, Limits, Subagent};
use crate::effects::Deadline;
use crate::error::EngineError;
use crate::event::EventKind;
use crate::outcome::TaskResult;
use crate::session::QueryCtx;
use crate::session::pools::root_tools;

/// The description of a resumed subagent's task.
const RESUMED: &str = "resumed";

/// Rebuilds and runs the subagent `id` through the subagent lifecycle,
/// within the `subagent.timeout` budget; its result is sent as
/// `SubagentFinished` and returned as the query's.
pub(super) async fn run(
    ctx: &QueryCtx,
    id: AgentId,
    prompt: Option<String>,
    root_loaded: &[ToolName],
) -> Result<QueryResult, EngineError> {
    let start = Instant::now();
    let session = &ctx.session;
    let loaded = revive::load(session, &id)?;
    // The root's pool as its queries resolve it (no overrides).
    let parent = root_tools(session, &session.catalog.current(), None, root_loaded)?;
    let how = Revive {
        parent: &parent,
        prompt,
        background: false,
        delegate: Some(Arc::new(crate::delegate::task::Subagents)),
    };
    let (run, warnings) = revive::rebuild(session, &id, &loaded, how)?;
    for message in warnings {
        tracing::warn!(agent = %id, "{message}");
        ctx.sink
            .emit(&run.meta, EventKind::ResumeWarning { message });
    }
    subagent::started(ctx, &run, RESUMED, 0);
    let timeout = session.config.subagent.timeout;
    let mut result = TaskResult::pending(0, run.meta.agent_type.to_string(), RESUMED.to_owned());
    result.agent_id = Some(id);
    let subagent = Subagent {
        run,
        result,
        // It works in its recorded folder (or its parent's): a worktree is
        // not made again.
        isolation: Isolation::None,
        start,
        remote: None,
    };
    let timed_out = |_| {
        format!(
            "did not finish within the {:.0} s budget and was stopped; the output is what it wrote so far",
            timeout.as_secs_f64()
        )
    };
    let limits = Limits {
        slots: None,
        deadline: Some(Deadline::after(
            &**session.runtime.effects(),
            &subagent.run.meta.id,
            timeout,
        )),
        timed_out: &timed_out,
    };
    let result = subagent::live(ctx, subagent, limits, std::future::pending(), &mut Announce).await;
    Ok(QueryResult {
        status: result.status,
        output: result.output,
        turns: result.turns,
        usage: result.usage,
        total_usage: ctx.total_usage(),
        cost_usd: ctx.total_cost(),
        duration: result.duration,
        failed_subagents: ctx.failed_subagents(),
        value: result.value,
        budget_ended: ctx.budget_ended(),
    })
}
