//! The agent loop: request, stream, run tool calls, append results, repeat.

mod answer;
mod compact;
pub(crate) mod model;
mod reload;
mod stop;

use std::sync::Arc;

use zr_types::{ContentBlock, Message, MessageRole, StopReason};

use crate::event::EventKind;
use crate::history::compact::ContextUse;
use crate::history::{calls_of, open_turn, push_user_text, text_of};
use crate::outcome::{RunOutcome, TaskStatus};
use crate::session::QueryCtx;
use crate::sync::lock;
use crate::transcript::Start;
use crate::turn::agent_run::AgentRun;
use crate::turn::agent_run::Resumption;
use crate::turn::exec::{self, Recorded, report};
use model::Ask;
use zr_providers::ProviderError;
use zr_providers::{ModelResponse, ToolChoice};

/// The message that asks an agent at its turn limit for a summary.
const SUMMARY_REQUEST: &str = "You have used all your turns. Do not call any tools. Summarise what you finished, what you found, and what is left undone.";

/// The message that asks an agent whose budget (its own or the query's)
/// is spent for a summary.
const BUDGET_SUMMARY_REQUEST: &str = "Your budget is spent. Do not call any tools. Summarise what you finished, what you found, and what is left undone.";

impl AgentRun {
    fn emit(&self, ctx: &QueryCtx, kind: EventKind) {
        ctx.sink.emit(&self.meta, kind);
    }

    /// The agent's next request: its history as it is, its tools.
    fn ask(&self, ctx: &QueryCtx, turn: u32) -> Ask<'_> {
        Ask {
            meta: &self.meta,
            tools: self.tools.advertised(),
            messages: Arc::clone(&self.history),
            max_tokens: ctx.session.runtime.max_tokens(),
            turn,
            cache_prefix: self.cache_prefix,
        }
    }

    /// Streams one turn's request, forwarding deltas as events.
    async fn call_model(&self, ctx: &QueryCtx, turn: u32) -> Result<ModelResponse, ProviderError> {
        self.sync_transcript(ctx);
        let response = model::request(
            ctx,
            self.ask(ctx, turn),
            ToolChoice::Auto,
            Some(&self.progress),
        );
        response.await?.ok_or_else(stream_ended)
    }

    fn sync_transcript(&self, ctx: &QueryCtx) {
        ctx.session
            .transcripts
            .sync(&ctx.sink, &self.meta, &self.history);
    }

    /// Books a finished request: usage, progress, events.
    fn record(&self, ctx: &QueryCtx, turn: u32, response: &ModelResponse) {
        let agent_usage = {
            let mut progress = lock(&self.progress);
            progress.turns = turn;
            progress.usage = progress.usage.plus(response.usage);
            progress.partial.clear();
            let text = text_of(&response.content);
            if !text.is_empty() {
                progress.text.push(text);
            }
            progress.usage
        };
        self.book_tokens(&response.usage);
        let total = ctx.add_usage(&self.meta.model, response.usage);
        self.emit(
            ctx,
            EventKind::TurnFinished {
                turn,
                stop_reason: response.stop_reason.clone(),
                usage: response.usage,
            },
        );
        self.emit(
            ctx,
            EventKind::Usage {
                agent: agent_usage,
                total,
            },
        );
    }

    /// Its own token budget, or one of an ancestor's that its subtree
    /// shares, is spent.
    fn over_token_budget(&self) -> bool {
        let used = lock(&self.progress).usage;
        self.budget
            .tokens
            .is_some_and(|limit| used.total() >= limit)
            || self.tokens.as_ref().is_some_and(|pool| pool.spent())
    }

    fn outcome(
        self,
        status: TaskStatus,
        output: String,
        error: Option<ProviderError>,
    ) -> RunOutcome {
        // Only the counters: the texts stay behind.
        let (turns, usage) = {
            let progress = lock(&self.progress);
            (progress.turns, progress.usage)
        };
        RunOutcome {
            status,
            output,
            turns,
            usage,
            error,
            no_answer: None,
            denied: self.denials.stopped(),
            halted: self.halt.reason(),
            history: Arc::unwrap_or_clone(self.history),
            loaded: self.tools.loaded_names(),
            value: None,
            invalid: None,
        }
    }

    /// The outcome of an agent a hook stopped (`"continue": false`),
    /// announced to the host.
    fn halted(self, ctx: &QueryCtx) -> RunOutcome {
        if let Some(reason) = self.halt.reason() {
            tracing::warn!(agent = %self.meta.id, %reason, "a hook stopped the agent");
            self.emit(ctx, EventKind::HookStopped { reason });
        }
        let output = self.written();
        self.outcome(TaskStatus::Stopped, output, None)
    }

    fn written(&self) -> String {
        lock(&self.progress).written()
    }

    /// Runs the agent until the model ends its turn, the turn limit or a
    /// budget is reached, or the provider fails.
    pub(crate) async fn run(self, ctx: &QueryCtx) -> RunOutcome {
        let session = &ctx.session;
        // Without transcripts, the meta (a clone) is not needed.
        if !session.transcripts.enabled() {
            return self.run_inner(ctx).await;
        }
        // A fork starts with its parent's conversation and one message of
        // its own (the task); every other agent with its task alone.
        let inherited = if self.cache_prefix.is_some() {
            self.history.len().saturating_sub(1)
        } else {
            0
        };
        let start = Start {
            definition: self.definition.as_deref(),
            inherited_messages: inherited,
        };
        session
            .transcripts
            .begin(&ctx.sink, &self.meta, &self.history, start);
        let meta = self.meta.clone();
        let outcome = self.run_inner(ctx).await;
        session.transcripts.finish(&ctx.sink, &meta, &outcome);
        outcome
    }

    async fn run_inner(mut self, ctx: &QueryCtx) -> RunOutcome {
        if let Some(resumed) = self.resumed.take()
            && let Some((status, answer)) = self.resume(ctx, resumed).await
        {
            // A structured answer recorded before the kill is its value
            // again (it was checked when it was given).
            let value = match (&self.meta.output, status) {
                (Some(output), TaskStatus::Completed) => output.check(&answer).ok(),
                _ => None,
            };
            let mut outcome = self.outcome(status, answer, None);
            outcome.value = value;
            return outcome;
        }
        let mut turn = 0;
        let mut context = ContextUse::default();
        let mut stops = stop::Stops::default();
        loop {
            for text in ctx.notifications_for(&self.meta.id) {
                push_user_text(self.history_mut(), &text);
            }
            reload::refresh_root(ctx, &mut self);
            // The summary's usage may spend the token budget: no request then.
            if compact::before_request(&mut self, ctx, &mut context).await
                && self.over_token_budget()
            {
                let output = self.written();
                return self.outcome(TaskStatus::BudgetExhausted, output, None);
            }
            // A PreCompact hook may have stopped it.
            if self.halt.reason().is_some() {
                return self.halted(ctx);
            }
            if self.meta.background {
                lock(&self.progress).snapshot =
                    Some((Vec::clone(&self.history), self.tools.advertised()));
            }
            if turn >= self.meta.max_turns {
                return self.summarise(ctx, turn, TaskStatus::MaxTurns).await;
            }
            if ctx.budget_ended().is_some() {
                return self.summarise(ctx, turn, TaskStatus::BudgetExhausted).await;
            }
            turn += 1;
            let response = match self.call_model(ctx, turn).await {
                Ok(response) => response,
                Err(error) => {
                    let output = self.written();
                    return self.outcome(TaskStatus::Failed, output, Some(error));
                }
            };
            self.record(ctx, turn, &response);
            context.observe(response.usage);
            let calls = calls_of(&response.content);
            let final_text = text_of(&response.content);
            self.push_answer(response.content);
            self.sync_transcript(ctx);
            if calls.is_empty() {
                // An empty answer to the end of a turn is an answer; an
                // empty one cut off (output limit, full context window,
                // refusal, a reason this version does not know) is not.
                let answered = !final_text.is_empty()
                    || matches!(
                        response.stop_reason,
                        StopReason::EndTurn | StopReason::StopSequence
                    );
                if answered {
                    // The Stop stage: a hook may keep the agent working.
                    if stops.keep_going(&mut self, ctx, &final_text).await {
                        continue;
                    }
                    if let Some(output) = self.meta.output.clone() {
                        return self.structured_answer(ctx, turn, final_text, &output).await;
                    }
                    return self.outcome(TaskStatus::Completed, final_text, None);
                }
                let mut outcome = self.outcome(TaskStatus::Failed, final_text, None);
                outcome.no_answer = Some(response.stop_reason);
                return outcome;
            }
            let spent = if self.over_token_budget() {
                Some("not run: the agent's token budget is exhausted")
            } else if ctx.budget_ended().is_some() {
                Some("not run: the session's budget is exhausted")
            } else {
                None
            };
            if let Some(why) = spent {
                let content = calls
                    .iter()
                    .map(|call| report::refused(&ctx.sink, &self.meta, call, why))
                    .collect();
                self.history_mut().push(Message {
                    role: MessageRole::User,
                    content,
                });
                return self.summarise(ctx, turn, TaskStatus::BudgetExhausted).await;
            }
            // A call the output limit cut short is answered, not run: the
            // model may try again (it is always the answer's last).
            let (calls, cut) = cut_off(calls, &response.stop_reason);
            let allowed = self.calls_within_budget(calls.len());
            let mut run_now = calls;
            let refused = run_now.split_off(allowed);
            let mut results = exec::run_calls(ctx, &mut self, run_now, &Recorded::default()).await;
            let limit = ctx.session.runtime.max_tokens();
            for call in &cut {
                results.push(report::refused(
                    &ctx.sink,
                    &self.meta,
                    call,
                    &format!(
                        "not run: your answer reached the output limit ({limit} tokens) inside this call's input, so the call was cut off. Call it again with a shorter input; write long content in several smaller calls."
                    ),
                ));
            }
            for call in &refused {
                results.push(report::refused(
                    &ctx.sink,
                    &self.meta,
                    call,
                    "not run: the agent's tool-call budget is exhausted",
                ));
            }
            self.history_mut().push(Message {
                role: MessageRole::User,
                content: results,
            });
            if self.denials.stopped().is_some() {
                let output = self.written();
                return self.outcome(TaskStatus::Denied, output, None);
            }
            if self.halt.reason().is_some() {
                return self.halted(ctx);
            }
            if !refused.is_empty() || self.over_token_budget() {
                return self.summarise(ctx, turn, TaskStatus::BudgetExhausted).await;
            }
        }
    }

    /// Goes on from a transcript (see [`Resumption`]): finishes the turn a
    /// kill left open, then adds the prompt; without a prompt, a history
    /// that ends with the model's answer is that answer's outcome (`Some`:
    /// the run is over without a request).
    async fn resume(
        &mut self,
        ctx: &QueryCtx,
        resumed: Resumption,
    ) -> Option<(TaskStatus, String)> {
        if let Some(open) = open_turn(&self.history) {
            let recorded = Recorded {
                results: open.results,
                started: resumed.started,
            };
            let results = exec::run_calls(ctx, self, open.calls, &recorded).await;
            self.history_mut().truncate(open.answer + 1);
            self.history_mut().push(Message {
                role: MessageRole::User,
                content: results,
            });
        } else if resumed.opening.prompt.is_none()
            && let Some(answered) = self.answered()
        {
            return Some(answered);
        }
        resumed.opening.open(self.history_mut());
        None
    }

    /// The outcome a history that ends with the model's answer (no tool
    /// calls, some text) had reached: `completed`, or `max_turns` when the
    /// answer is the summary asked for at the turn limit.
    fn answered(&self) -> Option<(TaskStatus, String)> {
        let (last, before) = match self.history.as_slice() {
            [.., before, last] => (last, Some(before)),
            [last] => (last, None),
            [] => return None,
        };
        let calls = last
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse { .. }));
        let text = text_of(&last.content);
        if last.role != MessageRole::Assistant || calls || text.is_empty() {
            return None;
        }
        let asked = before.map(|m| text_of(&m.content)).unwrap_or_default();
        let status = if asked.ends_with(SUMMARY_REQUEST) {
            TaskStatus::MaxTurns
        } else if asked.ends_with(BUDGET_SUMMARY_REQUEST) {
            TaskStatus::BudgetExhausted
        } else {
            TaskStatus::Completed
        };
        Some((status, text))
    }

    /// How many of `n` calls the tool-call budget still allows; counts them.
    fn calls_within_budget(&self, n: usize) -> usize {
        let mut progress = lock(&self.progress);
        let allowed = match self.budget.tool_calls {
            None => n,
            Some(limit) => {
                let left = limit.saturating_sub(progress.tool_calls);
                n.min(usize::try_from(left).unwrap_or(usize::MAX))
            }
        };
        progress.tool_calls = progress
            .tool_calls
            .saturating_add(u32::try_from(allowed).unwrap_or(u32::MAX));
        allowed
    }

    /// Appends the model's answer to the history without what a provider
    /// rejects: empty text blocks, and an answer left empty by them (the
    /// model may end its turn with no content at all).
    fn push_answer(&mut self, mut content: Vec<ContentBlock>) {
        content.retain(|b| !matches!(b, ContentBlock::Text { text } if text.is_empty()));
        if !content.is_empty() {
            self.history_mut().push(Message {
                role: MessageRole::Assistant,
                content,
            });
        }
    }

    /// At the turn limit (`status` `max_turns`) or a spent budget
    /// (`budget_exhausted`: its own or the query's): one more request,
    /// tools disabled, asking for a summary of the work (a side request
    /// that streams as a turn). Its output is the summary; a request that
    /// fails leaves what the agent wrote so far.
    async fn summarise(mut self, ctx: &QueryCtx, turns: u32, status: TaskStatus) -> RunOutcome {
        let request = if status == TaskStatus::MaxTurns {
            SUMMARY_REQUEST
        } else {
            BUDGET_SUMMARY_REQUEST
        };
        push_user_text(self.history_mut(), request);
        let turn = turns + 1;
        self.sync_transcript(ctx);
        let asked = model::side_request(ctx, self.ask(ctx, turn), Some(&self.progress)).await;
        match asked.and_then(|r| r.ok_or_else(stream_ended)) {
            Ok(response) => {
                self.record(ctx, turn, &response);
                let output = text_of(&response.content);
                self.push_answer(response.content);
                self.outcome(status, output, None)
            }
            Err(error) => {
                let output = self.written();
                self.outcome(status, output, Some(error))
            }
        }
    }
}

/// The error of a stream that ended before its response was complete.
fn stream_ended() -> ProviderError {
    ProviderError::Protocol {
        provider: "engine",
        message: "the model's stream ended before the message was complete".to_owned(),
    }
}

/// `calls` split into those to run and those the output limit cut short
/// (their input is the provider's [`zr_providers::CUT_OFF_INPUT`] marker;
/// only in an answer that stopped at the limit).
fn cut_off(
    calls: Vec<zr_types::ToolCall>,
    stop_reason: &StopReason,
) -> (Vec<zr_types::ToolCall>, Vec<zr_types::ToolCall>) {
    if *stop_reason != StopReason::MaxTokens {
        return (calls, Vec::new());
    }
    calls
        .into_iter()
        .partition(|call| call.input.get(zr_providers::CUT_OFF_INPUT).is_none())
}
