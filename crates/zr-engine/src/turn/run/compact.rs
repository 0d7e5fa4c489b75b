//! The compaction step before a model request: when the plan says so,
//! the PreCompact hooks, then one side request for the summary, then the
//! history rewritten, the transcript told and the host notified.

use std::sync::Arc;

use zr_types::Usage;

use crate::event::EventKind;
use crate::history::compact::{self, ContextUse, Replacement};
use crate::policy::hooks::CompactTrigger;
use crate::session::QueryCtx;
use crate::sync::lock;
use crate::turn::agent_run::AgentRun;
use zr_types::texts;

use super::model::{Ask, side_request};

/// Compacts `run`'s history before its next request when the context it
/// used is above the threshold. A failed summary request leaves the history
/// as it was (a warning and [`EventKind::CompactionFailed`]). Returns
/// whether it compacted (the summary's usage is then booked to the agent,
/// which may have spent its token budget).
pub(super) async fn before_request(
    run: &mut AgentRun,
    ctx: &QueryCtx,
    used: &mut ContextUse,
) -> bool {
    let config = ctx.session.config.compaction;
    let Some(plan) = used.plan(config, &run.meta.id, &run.meta.system, &run.history) else {
        return false;
    };
    run.hooks(&ctx.session)
        .pre_compact(CompactTrigger::Auto)
        .await;
    match summarise(run, ctx, plan.split).await {
        Ok((summary, usage)) => {
            book(run, ctx, usage);
            let after = used.compacted(plan, &run.history, &summary);
            let replacement = Replacement {
                messages: plan.split,
                summary,
                before_tokens: plan.before,
                after_tokens: after,
                usage,
            };
            replace_history(ctx, run, &replacement);
            true
        }
        Err(reason) => {
            used.failed();
            let before = plan.before;
            tracing::warn!(agent = %run.meta.id, before, %reason, "compaction failed; the history is kept as it is");
            ctx.sink.emit(
                &run.meta,
                EventKind::CompactionFailed {
                    before_tokens: before,
                    reason,
                },
            );
            false
        }
    }
}

/// Replaces the older history of `run` as `replacement` says
/// ([`compact::replace`]) and reports it with [`EventKind::Compacted`]:
/// the one place where an agent's history is rewritten rather than
/// appended to. The split comes from [`compact::split_point`]: the kept
/// part starts with an assistant message, or with a user message without
/// tool results that the summary joins, so roles still alternate and no
/// tool use is separated from its result.
fn replace_history(ctx: &QueryCtx, run: &mut AgentRun, replacement: &Replacement) {
    let split = compact::replace(run.history_mut(), replacement);
    // A fork's history no longer starts with its parent's request.
    run.cache_prefix = None;
    ctx.session
        .transcripts
        .replace_history(&ctx.sink, &run.meta, &run.history);
    tracing::info!(
        agent = %run.meta.id,
        messages = split,
        before_tokens = replacement.before_tokens,
        after_tokens = replacement.after_tokens,
        "history compacted"
    );
    ctx.sink.emit(
        &run.meta,
        EventKind::Compacted {
            before_tokens: replacement.before_tokens,
            after_tokens: replacement.after_tokens,
            messages: split,
            usage: replacement.usage,
        },
    );
}

/// The summary side request over `run.history[..split]`: tools disabled,
/// older tool results left out (oldest first) until it fits the window.
/// Returns the summary's text and the request's usage.
async fn summarise(
    run: &AgentRun,
    ctx: &QueryCtx,
    split: usize,
) -> Result<(String, Usage), String> {
    let config = ctx.session.config.compaction;
    let max_tokens = ctx.session.runtime.max_tokens();
    let tools = run.tools.advertised();
    let room = compact::summary_room(config, max_tokens, &run.meta.system, &tools);
    let (messages, left_out) = compact::summary_messages(&run.history, split, room);
    if left_out > 0 {
        tracing::info!(agent = %run.meta.id, left_out, "older tool results left out of the summary request");
    }
    let ask = Ask {
        meta: &run.meta,
        tools,
        messages: Arc::new(messages),
        max_tokens,
        turn: lock(&run.progress).turns + 1,
        cache_prefix: None,
    };
    match side_request(ctx, ask, None).await {
        Err(error) => Err(zr_types::error_chain(&error)),
        Ok(None) => Err("the model's stream ended before the summary was complete".to_owned()),
        Ok(Some(response)) => {
            let summary = texts(&response.content).collect::<Vec<_>>().join("\n");
            let summary = summary.trim();
            if summary.is_empty() {
                return Err("the model's summary was empty".to_owned());
            }
            Ok((summary.to_owned(), response.usage))
        }
    }
}

/// The summary request's usage counts like any request's: the agent's
/// usage (and so its token budget) and the query's total. It is not a turn.
fn book(run: &AgentRun, ctx: &QueryCtx, usage: Usage) {
    let agent = {
        let mut progress = lock(&run.progress);
        progress.usage = progress.usage.plus(usage);
        progress.usage
    };
    run.book_tokens(&usage);
    let total = ctx.add_usage(&run.meta.model, usage);
    ctx.sink.emit(&run.meta, EventKind::Usage { agent, total });
}
