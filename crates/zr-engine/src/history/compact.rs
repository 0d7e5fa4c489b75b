//! Compaction's plan: when an agent's history is compacted, where it
//! splits, what the summary request holds and what replaces the older
//! part; and cutting oversized tool results (see [`cut`]). The request
//! itself is the loop's (a side request, tools disabled).

pub(crate) mod cut;

use std::sync::Arc;

use zr_types::{
    AgentId, ContentBlock, Message, MessageRole, ToolDefinition, ToolResultContent, Usage,
};

use crate::history::push_user_text;

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

    /// Whether `agent`'s history (under `system`) is to be compacted
    /// before its next request, and where it splits. `None` when the
    /// context is under the threshold, nothing older can be summarised,
    /// or a recent failure says to wait.
    pub(crate) fn plan(
        &mut self,
        config: CompactionConfig,
        agent: &AgentId,
        system: &str,
        history: &[Message],
    ) -> Option<Plan> {
        if !config.enabled {
            return None;
        }
        let before = self
            .last
            .unwrap_or_else(|| estimate(system).saturating_add(estimate_messages(history)));
        if before <= config.threshold {
            return None;
        }
        let Some(split) = split_point(history, config.keep_recent) else {
            tracing::debug!(
                %agent,
                before,
                "context above the compaction threshold, but no older history to summarise"
            );
            return None;
        };
        if self.skip > 0 {
            self.skip -= 1;
            tracing::debug!(%agent, before, left = self.skip, "compaction failed lately; not tried before this request");
            return None;
        }
        Some(Plan { before, split })
    }

    /// The summary of `plan` came back: the context it leaves (an
    /// estimate, known only after the next response; nothing to compact
    /// before it).
    pub(crate) fn compacted(&mut self, plan: Plan, history: &[Message], summary: &str) -> u64 {
        self.failures = 0;
        let after = plan
            .before
            .saturating_sub(estimate_messages(&history[..plan.split]))
            .saturating_add(estimate(summary))
            .saturating_add(estimate(SUMMARY_HEADER));
        self.last = Some(after);
        after
    }

    /// The summary request failed: the next attempts wait 1, 2, 4, then 8
    /// requests.
    pub(crate) fn failed(&mut self) {
        self.failures = self.failures.saturating_add(1);
        self.skip = 1 << (self.failures - 1).min(3);
    }
}

/// A compaction to make: the context before it, and where the history
/// splits ([`split_point`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) before: u64,
    pub(crate) split: usize,
}

/// The summary request's messages: `history[..split]`, its oldest tool
/// results left out until it fits in `room` tokens (estimated), then the
/// question. Also how many results were left out.
pub(crate) fn summary_messages(
    history: &[Message],
    split: usize,
    room: u64,
) -> (Vec<Message>, usize) {
    let mut messages = history[..split].to_vec();
    let left_out = fit(&mut messages, room);
    push_user_text(&mut messages, SUMMARY_PROMPT);
    (messages, left_out)
}

/// The room a summary request has for the conversation: the window less
/// the answer's `max_tokens`, the system prompt, the question and the
/// advertised `tools`.
pub(crate) fn summary_room(
    config: CompactionConfig,
    max_tokens: u32,
    system: &str,
    tools: &[Arc<ToolDefinition>],
) -> u64 {
    config
        .context_window
        .saturating_sub(u64::from(max_tokens))
        .saturating_sub(estimate(system) + estimate(SUMMARY_PROMPT))
        .saturating_sub(
            tools
                .iter()
                .map(|t| u64::try_from(t.wire_size().div_ceil(4)).unwrap_or(u64::MAX))
                .fold(0, u64::saturating_add),
        )
}

/// Replaces the oldest `replacement.messages` messages of `history` by
/// one user message holding the summary, marked as a summary of the
/// earlier conversation; returns how many were replaced.
pub(crate) fn replace(history: &mut Vec<Message>, replacement: &Replacement) -> usize {
    let split = replacement.messages.min(history.len());
    splice(
        history,
        split,
        format!("{SUMMARY_HEADER}\n\n{}", replacement.summary),
    );
    split
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
    u64::try_from(cut::json_len(value).div_ceil(4)).unwrap_or(u64::MAX)
}

fn estimate_messages(messages: &[Message]) -> u64 {
    estimate_json(messages)
}

#[cfg(test)]
mod tests;
