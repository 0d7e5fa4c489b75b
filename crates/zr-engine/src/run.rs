//! The agent loop: request, stream, run tool calls, append results, repeat.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt as _;
use tracing::Instrument as _;
use zr_caps::{Budget, PermissionMode};
use zr_providers::{
    ModelEvent, ModelRequest, ModelResponse, ProviderError, RequestOrigin, ToolChoice,
};
use zr_types::{
    AgentId, ContentBlock, Message, MessageRole, StopReason, ToolCall, ToolDefinition, Usage, texts,
};

use crate::TaskStatus;
use crate::catalog::RootReload;
use crate::event::EventKind;
use crate::exec;
use crate::permission::Denials;
use crate::session::QueryCtx;
use crate::sync::lock;
use crate::tools::AgentTools;

/// The message that asks an agent at its turn limit for a summary.
const SUMMARY_REQUEST: &str = "You have used all your turns. Do not call any tools. Summarise what you finished, what you found, and what is left undone.";

/// Adds `text` for the model as the user: into the last message when that
/// is the user's already (tool results, say), so that roles alternate as
/// strict APIs require; else as a new message.
pub(crate) fn push_user_text(history: &mut Vec<Message>, text: &str) {
    let block = ContentBlock::Text {
        text: text.to_owned(),
    };
    match history.last_mut() {
        Some(last) if last.role == MessageRole::User => last.content.push(block),
        _ => history.push(Message {
            role: MessageRole::User,
            content: vec![block],
        }),
    }
}

/// One agent, ready to run.
#[derive(Debug)]
pub(crate) struct AgentRun {
    pub(crate) id: AgentId,
    pub(crate) agent_type: Arc<str>,
    pub(crate) model: String,
    pub(crate) system: String,
    pub(crate) tools: AgentTools,
    pub(crate) history: Vec<Message>,
    pub(crate) max_turns: u32,
    pub(crate) budget: Budget,
    pub(crate) progress: Arc<Mutex<Progress>>,
    /// The delegating agent; `None` for the root.
    pub(crate) parent: Option<AgentId>,
    /// The folder the agent's tools work in (a worktree for isolated
    /// subagents, else the runtime's).
    pub(crate) cwd: PathBuf,
    /// The agent's effective permission mode (C4: never wider than its
    /// parent's).
    pub(crate) mode: PermissionMode,
    /// Whether the agent runs in the background (nobody can be asked).
    pub(crate) background: bool,
    /// Its permission denials so far.
    pub(crate) denials: Denials,
    /// For a fork: how many first messages of its history were its
    /// parent's last request ([`ModelRequest::cache_prefix`]).
    pub(crate) cache_prefix: Option<usize>,
    /// The root's: how its tools are rebuilt when the session's agent
    /// types or skills change (hot reload). `None` for subagents.
    pub(crate) reload: Option<RootReload>,
}

/// What an agent did so far; read when it is stopped from outside (timed
/// out, cancelled) to report its partial work.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    pub(crate) turns: u32,
    pub(crate) usage: Usage,
    pub(crate) tool_calls: u32,
    /// The text of finished model turns.
    pub(crate) text: Vec<String>,
    /// The text of the turn being streamed.
    pub(crate) partial: String,
    /// A background agent's conversation and advertised tools as of its
    /// latest request, for progress summaries; `None` for the others.
    pub(crate) snapshot: Option<(Vec<Message>, Vec<Arc<ToolDefinition>>)>,
}

impl Progress {
    /// Everything the agent wrote, the unfinished turn included.
    pub(crate) fn written(&self) -> String {
        let mut parts: Vec<&str> = self.text.iter().map(String::as_str).collect();
        if !self.partial.is_empty() {
            parts.push(&self.partial);
        }
        parts.join("\n\n")
    }
}

/// How an agent's run ended.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    pub(crate) status: TaskStatus,
    pub(crate) output: String,
    pub(crate) turns: u32,
    pub(crate) usage: Usage,
    pub(crate) error: Option<ProviderError>,
    /// Why the model stopped, when it stopped with no answer and no tool
    /// call for a reason other than ending its turn (status `failed`).
    pub(crate) no_answer: Option<StopReason>,
    pub(crate) history: Vec<Message>,
    pub(crate) tools: AgentTools,
    /// Why the agent was stopped for too many permission denials (status
    /// `denied`).
    pub(crate) denied: Option<String>,
}

/// The text blocks of `content`, joined.
fn text_of(content: &[ContentBlock]) -> String {
    texts(content).collect()
}

impl AgentRun {
    fn emit(&self, ctx: &QueryCtx, kind: EventKind) {
        ctx.sink.send(&self.id, &self.agent_type, kind);
    }

    fn request(&self, turn: u32, tool_choice: ToolChoice, ctx: &QueryCtx) -> ModelRequest {
        ModelRequest {
            model: self.model.clone(),
            system: self.system.clone(),
            tools: self.tools.advertised(),
            messages: self.history.clone(),
            max_tokens: ctx.session.runtime.max_tokens(),
            tool_choice,
            origin: RequestOrigin {
                agent: self.id.clone(),
                agent_type: self.agent_type.to_string(),
                turn,
            },
            cache_prefix: self.cache_prefix,
        }
    }

    /// Streams one model request, forwarding deltas as events.
    async fn call_model(
        &self,
        ctx: &QueryCtx,
        turn: u32,
        tool_choice: ToolChoice,
    ) -> Result<ModelResponse, ProviderError> {
        crate::transcript::sync(ctx, self);
        let request = self.request(turn, tool_choice, ctx);
        let mut stream = ctx.session.runtime.provider().stream(request);
        lock(&self.progress).partial.clear();
        while let Some(item) = stream.next().await {
            match item? {
                ModelEvent::TextDelta { text } => {
                    lock(&self.progress).partial.push_str(&text);
                    self.emit(ctx, EventKind::TextDelta { text });
                }
                ModelEvent::ThinkingDelta { text } => {
                    self.emit(ctx, EventKind::ThinkingDelta { text });
                }
                ModelEvent::Retrying {
                    attempt,
                    delay,
                    reason,
                } => {
                    lock(&self.progress).partial.clear();
                    self.emit(
                        ctx,
                        EventKind::ModelRetry {
                            attempt,
                            delay,
                            reason,
                        },
                    );
                }
                ModelEvent::Completed(response) => return Ok(response),
                // `ToolUseStarted`, and any event a newer provider crate
                // adds (the enum is non-exhaustive): nothing to show.
                _ => {}
            }
        }
        Err(ProviderError::Protocol {
            provider: "engine",
            message: "the model's stream ended before the message was complete".to_owned(),
        })
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
        let total = ctx.add_usage(response.usage);
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

    fn over_token_budget(&self) -> bool {
        let used = lock(&self.progress).usage;
        self.budget
            .tokens
            .is_some_and(|limit| used.total() >= limit)
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
            history: self.history,
            tools: self.tools,
        }
    }

    fn written(&self) -> String {
        lock(&self.progress).written()
    }

    /// Runs the agent until the model ends its turn, the turn limit or a
    /// budget is reached, or the provider fails.
    pub(crate) async fn run(self, ctx: &QueryCtx) -> RunOutcome {
        let span = tracing::info_span!("agent", agent = %self.id, agent_type = %self.agent_type);
        crate::transcript::begin(ctx, &self);
        let (id, agent_type) = (self.id.clone(), Arc::clone(&self.agent_type));
        let outcome = self.run_inner(ctx).instrument(span).await;
        crate::transcript::finish(ctx, &id, &agent_type, &outcome);
        outcome
    }

    async fn run_inner(mut self, ctx: &QueryCtx) -> RunOutcome {
        let mut turn = 0;
        let mut context = crate::compact::ContextUse::default();
        loop {
            for text in ctx.notifications_for(&self.id) {
                push_user_text(&mut self.history, &text);
            }
            crate::catalog::refresh_root(ctx, &mut self);
            // The summary's usage may spend the token budget: no request then.
            if crate::compact::before_request(&mut self, ctx, &mut context).await
                && self.over_token_budget()
            {
                let output = self.written();
                return self.outcome(TaskStatus::BudgetExhausted, output, None);
            }
            if self.background {
                lock(&self.progress).snapshot =
                    Some((self.history.clone(), self.tools.advertised()));
            }
            if turn >= self.max_turns {
                return self.summarise(ctx, turn).await;
            }
            turn += 1;
            let response = match self.call_model(ctx, turn, ToolChoice::Auto).await {
                Ok(response) => response,
                Err(error) => {
                    let output = self.written();
                    return self.outcome(TaskStatus::Failed, output, Some(error));
                }
            };
            self.record(ctx, turn, &response);
            context.observe(response.usage);
            let calls: Vec<ToolCall> = response
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => Some(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                    }),
                    _ => None,
                })
                .collect();
            let final_text = text_of(&response.content);
            self.push_answer(response.content);
            crate::transcript::sync(ctx, &self);
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
                    return self.outcome(TaskStatus::Completed, final_text, None);
                }
                let mut outcome = self.outcome(TaskStatus::Failed, final_text, None);
                outcome.no_answer = Some(response.stop_reason);
                return outcome;
            }
            if self.over_token_budget() {
                let content = calls
                    .iter()
                    .map(|call| {
                        exec::refused(
                            ctx,
                            &self.id,
                            &self.agent_type,
                            call,
                            "not run: the agent's token budget is exhausted",
                        )
                    })
                    .collect();
                self.history.push(Message {
                    role: MessageRole::User,
                    content,
                });
                let output = self.written();
                return self.outcome(TaskStatus::BudgetExhausted, output, None);
            }
            let allowed = self.calls_within_budget(calls.len());
            let (run_now, refused) = calls.split_at(allowed);
            let mut results = exec::run_calls(ctx, &mut self, run_now).await;
            for call in refused {
                results.push(exec::refused(
                    ctx,
                    &self.id,
                    &self.agent_type,
                    call,
                    "not run: the agent's tool-call budget is exhausted",
                ));
            }
            self.history.push(Message {
                role: MessageRole::User,
                content: results,
            });
            if self.denials.stopped().is_some() {
                let output = self.written();
                return self.outcome(TaskStatus::Denied, output, None);
            }
            if !refused.is_empty() || self.over_token_budget() {
                let output = self.written();
                return self.outcome(TaskStatus::BudgetExhausted, output, None);
            }
        }
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
            self.history.push(Message {
                role: MessageRole::Assistant,
                content,
            });
        }
    }

    /// At the turn limit: one more request, tools disabled, asking for a
    /// summary of the work.
    async fn summarise(mut self, ctx: &QueryCtx, turns: u32) -> RunOutcome {
        push_user_text(&mut self.history, SUMMARY_REQUEST);
        let turn = turns + 1;
        match self.call_model(ctx, turn, ToolChoice::None).await {
            Ok(mut response) => {
                self.record(ctx, turn, &response);
                // Tools are disabled: a tool use in the answer is dropped,
                // never run and never left unanswered in the history.
                response
                    .content
                    .retain(|b| !matches!(b, ContentBlock::ToolUse { .. }));
                let output = text_of(&response.content);
                self.push_answer(response.content);
                self.outcome(TaskStatus::MaxTurns, output, None)
            }
            Err(error) => {
                let output = self.written();
                self.outcome(TaskStatus::MaxTurns, output, Some(error))
            }
        }
    }
}
