//! Compaction: keeps an agent's context under its window by replacing the
//! older part of its history with a summary the model writes (tools
//! disabled), and cuts oversized tool results (see [`cut`]).

mod cut;

use futures_util::StreamExt as _;
use zr_providers::{ModelEvent, ModelRequest, RequestOrigin, ToolChoice};
use zr_types::{ContentBlock, Message, MessageRole, ToolResultContent, Usage, error_chain, texts};

use crate::event::EventKind;
use crate::run::{AgentRun, push_user_text};
use crate::session::QueryCtx;

pub(crate) use cut::{Spill, limit_result};

/// The request that asks the model for the summary of the older history.
pub(crate) const SUMMARY_PROMPT: &str = "Your context is nearly full: the conversation up to here will be replaced by the summary you write now, and you will continue the work from that summary and the most recent messages. Do not call any tools. Write the summary for yourself, specific and complete, under these headings:
1. Goals: what the user asked for, with exact wording where it matters, and any constraints.
2. Decisions: what was decided and why.
3. Files and commands: every file read, created or changed (full paths) and what changed; commands run and their important results or errors.
4. State: what is done and what is in progress.
5. Next: what is left to do, the next step first.";

/// The first line of the message that replaces the older history.
pub(crate) const SUMMARY_HEADER: &str = "[Summary of the earlier conversation, written by you when the context was nearly full. The messages it replaces are gone; what follows it is verbatim.]";

/// When and how agents compact their history, and how large a tool result
/// may be ([`crate::AgentConfig::compaction`]). Every agent of the session
/// (the root, subagents and forks) uses the same settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionConfig {
    /// Whether histories are compacted at all (tool results are cut
    /// regardless, by `max_tool_result_bytes`).
    pub enabled: bool,
    /// The model's context window in tokens. Bounds the summary request:
    /// older tool results are left out of it, oldest first, until it fits.
    pub context_window: u64,
    /// Compact before the next request when the last request used more
    /// than this many tokens of context (input, both cache kinds and
    /// output; before an agent's first request: an estimate of a quarter of
    /// the characters).
    pub threshold: u64,
    /// How many of the most recent messages stay verbatim (at least; more
    /// when a tool use and its result would otherwise be separated).
    pub keep_recent: usize,
    /// Tool results larger than this (their text, JSON as compact text)
    /// are cut to about this many bytes, head and tail, with a marker
    /// naming the file that holds the whole result. `None`: never cut.
    pub max_tool_result_bytes: Option<usize>,
}

impl Default for CompactionConfig {
    /// Compaction on, a 200,000-token window, compaction above 160,000
    /// tokens, the last 6 messages kept, results cut above 100,000 bytes.
    fn default() -> Self {
        Self {
            enabled: true,
            context_window: 200_000,
            threshold: 160_000,
            keep_recent: 6,
            max_tool_result_bytes: Some(100_000),
        }
    }
}

/// The context one agent used, as its last model response reported it.
#[derive(Debug, Default)]
pub(crate) struct ContextUse {
    last: Option<u64>,
    /// Summary requests that failed in a row.
    failures: u32,
    /// Requests to make before the next attempt after a failure: 1, 2, 4,
    /// then 8 (a summary request that keeps failing must not double the
    /// cost of every turn).
    skip: u32,
}

impl ContextUse {
    /// Books the usage of a model response: its input (cache reads and
    /// writes included) and output is what the next request starts from.
    pub(crate) fn observe(&mut self, usage: Usage) {
        self.last = Some(usage.total());
    }
}

/// Compacts `run`'s history before its next request when the context it
/// used is above the threshold. A failed summary request leaves the history
/// as it was (a warning and [`EventKind::CompactionFailed`]). Returns
/// whether it compacted (the summary's usage is then booked to the agent,
/// which may have spent its token budget).
pub(crate) async fn before_request(
    run: &mut AgentRun,
    ctx: &QueryCtx,
    used: &mut ContextUse,
) -> bool {
    let config = ctx.session.config.compaction;
    if !config.enabled {
        return false;
    }
    let before = used
        .last
        .unwrap_or_else(|| estimate(&run.system).saturating_add(estimate_messages(&run.history)));
    if before <= config.threshold {
        return false;
    }
    let Some(split) = split_point(&run.history, config.keep_recent) else {
        tracing::debug!(
            agent = %run.id,
            before,
            "context above the compaction threshold, but no older history to summarise"
        );
        return false;
    };
    if used.skip > 0 {
        used.skip -= 1;
        tracing::debug!(agent = %run.id, before, left = used.skip, "compaction failed lately; not tried before this request");
        return false;
    }
    match summarise(run, ctx, split, config).await {
        Ok((summary, usage)) => {
            used.failures = 0;
            book(run, ctx, usage);
            let after = before
                .saturating_sub(estimate_messages(&run.history[..split]))
                .saturating_add(estimate(&summary))
                .saturating_add(estimate(SUMMARY_HEADER));
            let replacement = Replacement {
                messages: split,
                summary,
                before_tokens: before,
                after_tokens: after,
                usage,
            };
            replace_history(ctx, run, &replacement);
            // Known only after the next response; nothing to compact before it.
            used.last = Some(after);
            true
        }
        Err(reason) => {
            used.failures = used.failures.saturating_add(1);
            used.skip = 1 << (used.failures - 1).min(3);
            tracing::warn!(agent = %run.id, before, %reason, "compaction failed; the history is kept as it is");
            ctx.sink.send(
                &run.id,
                &run.agent_type,
                EventKind::CompactionFailed {
                    before_tokens: before,
                    reason,
                },
            );
            false
        }
    }
}

/// A compaction's result: what replaces the older history.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Replacement {
    /// How many of the oldest messages the summary replaces (a split point
    /// from [`split_point`]).
    pub(crate) messages: usize,
    /// The model's summary of them.
    pub(crate) summary: String,
    /// The context the last request used.
    pub(crate) before_tokens: u64,
    /// An estimate of the context after the replacement.
    pub(crate) after_tokens: u64,
    /// The summary request's usage.
    pub(crate) usage: Usage,
}

/// Replaces the oldest `replacement.messages` messages of `run`'s history
/// by one user message holding the summary (marked as a summary of the
/// earlier conversation) and reports it with [`EventKind::Compacted`]. The
/// one place where an agent's history is rewritten rather than appended
/// to. The split comes from [`split_point`]: the kept part starts with an
/// assistant message, or with a user message without tool results that the
/// summary joins, so roles still alternate and no tool use is separated
/// from its result.
pub(crate) fn replace_history(ctx: &QueryCtx, run: &mut AgentRun, replacement: &Replacement) {
    let split = replacement.messages.min(run.history.len());
    splice(
        &mut run.history,
        split,
        format!("{SUMMARY_HEADER}\n\n{}", replacement.summary),
    );
    // A fork's history no longer starts with its parent's request.
    run.cache_prefix = None;
    crate::transcript::replace_history(ctx, run);
    tracing::info!(
        agent = %run.id,
        messages = split,
        before_tokens = replacement.before_tokens,
        after_tokens = replacement.after_tokens,
        "history compacted"
    );
    ctx.sink.send(
        &run.id,
        &run.agent_type,
        EventKind::Compacted {
            before_tokens: replacement.before_tokens,
            after_tokens: replacement.after_tokens,
            messages: split,
            usage: replacement.usage,
        },
    );
}

/// Replaces `history[..split]` by a user text: a message of its own, or
/// the first block of the kept part's first message when that is the
/// user's.
fn splice(history: &mut Vec<Message>, split: usize, text: String) {
    history.drain(..split);
    let block = ContentBlock::Text { text };
    match history.first_mut() {
        Some(first) if first.role == MessageRole::User => first.content.insert(0, block),
        _ => history.insert(
            0,
            Message {
                role: MessageRole::User,
                content: vec![block],
            },
        ),
    }
}

/// Where the history splits into the part to summarise (`..split`) and the
/// part kept verbatim (`split..`, at least its last `keep_recent`
/// messages): the latest index at or before `len - keep_recent` whose
/// message is the assistant's, or the user's without tool results. Never
/// 0 (something must be summarised); `None` when no index fits.
pub(crate) fn split_point(history: &[Message], keep_recent: usize) -> Option<usize> {
    let target = history.len().saturating_sub(keep_recent);
    (1..=target).rev().find(|&i| {
        history.get(i).is_some_and(|m| match m.role {
            MessageRole::Assistant => true,
            MessageRole::User => !m
                .content
                .iter()
                .any(|b| matches!(b, ContentBlock::ToolResult { .. })),
        })
    })
}

/// Sends the summary request over `run.history[..split]`: tools disabled,
/// older tool results left out (oldest first) until it fits the window.
/// Returns the summary's text and the request's usage.
async fn summarise(
    run: &AgentRun,
    ctx: &QueryCtx,
    split: usize,
    config: CompactionConfig,
) -> Result<(String, Usage), String> {
    let mut messages = run.history[..split].to_vec();
    let max_tokens = ctx.session.runtime.max_tokens();
    let room = config
        .context_window
        .saturating_sub(u64::from(max_tokens))
        .saturating_sub(estimate(&run.system) + estimate(SUMMARY_PROMPT))
        .saturating_sub(
            run.tools
                .advertised()
                .iter()
                .map(|t| u64::try_from(t.wire_size().div_ceil(4)).unwrap_or(u64::MAX))
                .fold(0, u64::saturating_add),
        );
    let left_out = fit(&mut messages, room);
    if left_out > 0 {
        tracing::info!(agent = %run.id, left_out, "older tool results left out of the summary request");
    }
    push_user_text(&mut messages, SUMMARY_PROMPT);
    let turn = crate::sync::lock(&run.progress).turns + 1;
    let request = ModelRequest {
        model: run.model.clone(),
        system: run.system.clone(),
        tools: run.tools.advertised(),
        messages,
        max_tokens,
        tool_choice: ToolChoice::None,
        cache_prefix: None,
        origin: RequestOrigin {
            agent: run.id.clone(),
            agent_type: run.agent_type.to_string(),
            turn,
        },
    };
    let mut stream = ctx.session.runtime.provider().stream(request);
    while let Some(item) = stream.next().await {
        match item {
            Err(error) => return Err(error_chain(&error)),
            Ok(ModelEvent::Completed(response)) => {
                // Tools are disabled: a tool use in the answer is ignored.
                let summary = texts(&response.content).collect::<Vec<_>>().join("\n");
                let summary = summary.trim();
                if summary.is_empty() {
                    return Err("the model's summary was empty".to_owned());
                }
                return Ok((summary.to_owned(), response.usage));
            }
            Ok(_) => {}
        }
    }
    Err("the model's stream ended before the summary was complete".to_owned())
}

/// The summary request's usage counts like any request's: the agent's
/// usage (and so its token budget) and the query's total. It is not a turn.
fn book(run: &AgentRun, ctx: &QueryCtx, usage: Usage) {
    let agent = {
        let mut progress = crate::sync::lock(&run.progress);
        progress.usage = progress.usage.plus(usage);
        progress.usage
    };
    let total = ctx.add_usage(usage);
    ctx.sink
        .send(&run.id, &run.agent_type, EventKind::Usage { agent, total });
}

/// Replaces the content of the oldest tool results with a note until
/// `messages` fit in `room` tokens (estimated). Returns how many were left
/// out.
fn fit(messages: &mut [Message], room: u64) -> usize {
    let mut size = estimate_messages(messages);
    let mut left_out = 0;
    for block in messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
        if size <= room {
            break;
        }
        if let ContentBlock::ToolResult { content, .. } = block {
            let bytes = serde_json::to_string(content).map_or(0, |s| s.len());
            let note = vec![ToolResultContent::Text {
                text: format!("[a result of {bytes} bytes, left out of the summary request]"),
            }];
            let old = estimate_json(content);
            let new = estimate_json(&note);
            if new < old {
                *content = note;
                size = size.saturating_sub(old - new);
                left_out += 1;
            }
        }
    }
    left_out
}

/// A token estimate: a quarter of the bytes.
fn estimate(text: &str) -> u64 {
    u64::try_from(text.len().div_ceil(4)).unwrap_or(u64::MAX)
}

fn estimate_json<T: serde::Serialize + ?Sized>(value: &T) -> u64 {
    serde_json::to_string(value).map_or(0, |s| estimate(&s))
}

fn estimate_messages(messages: &[Message]) -> u64 {
    estimate_json(messages)
}

#[cfg(test)]
mod tests;
