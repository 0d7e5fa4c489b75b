//! The Stop stage of the loop: when the model ends its turn with an
//! answer, the Stop hooks (the root's) or SubagentStop hooks (a
//! subagent's) may keep it working. A block's reason becomes the agent's
//! next user message, `stop_hook_active` is `true` at every stop after a
//! block, and at most [`Hooks::max_stop_blocks`](crate::Hooks::max_stop_blocks)
//! blocks in a row (8 by default) are followed: the next one is ignored
//! with a warning, and the agent stops with the answer it gave, so that
//! a hook that always blocks cannot keep an agent going forever (its turn
//! limit and budgets hold as well).

use crate::history::push_user_text;
use crate::session::QueryCtx;
use crate::turn::agent_run::AgentRun;

/// One run's Stop blocks so far (every block keeps the agent going, and
/// a stop that is not blocked ends the run: they are all in a row).
#[derive(Debug, Default)]
pub(super) struct Stops {
    blocks: u32,
}

impl Stops {
    /// Runs the Stop hooks of `run`, which answered `answer`: `true` when
    /// one keeps it working (its reason was added to the history).
    pub(super) async fn keep_going(
        &mut self,
        run: &mut AgentRun,
        ctx: &QueryCtx,
        answer: &str,
    ) -> bool {
        let session = &ctx.session;
        let Some(reason) = run.hooks(session).stop(answer, self.blocks > 0).await else {
            return false;
        };
        let event = if run.meta.parent.is_none() {
            "Stop"
        } else {
            "SubagentStop"
        };
        let limit = session.config.hooks.max_stop_blocks();
        if self.blocks >= limit {
            tracing::warn!(
                agent = %run.meta.id,
                limit,
                %reason,
                "{event} hooks blocked the stop {limit} times in a row; the agent stops anyway (the limit is [hooks] max_stop_blocks)"
            );
            return false;
        }
        self.blocks += 1;
        tracing::info!(agent = %run.meta.id, blocks = self.blocks, %reason, "a {event} hook keeps the agent working");
        push_user_text(
            run.history_mut(),
            &format!("{event} hook feedback:\n{reason}"),
        );
        true
    }
}
