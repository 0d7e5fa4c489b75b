//! An agent's model requests: the one place a request is made, for the
//! loop's turns and for the three tools-disabled side requests (the
//! turn-limit summary, the compaction summary, a background agent's
//! progress summary) alike. Every request goes through the runtime's
//! [`Effects`](crate::effects::Effects).

use std::sync::{Arc, Mutex};

use futures_util::StreamExt as _;
use zr_types::{ContentBlock, Message, ToolDefinition, error_chain};

use crate::event::EventKind;
use crate::meta::AgentMeta;
use crate::outcome::Progress;
use crate::session::QueryCtx;
use crate::sync::lock;
use crate::telemetry::in_span::in_span;
use crate::telemetry::{self, ChatStart};
use zr_providers::ProviderError;
use zr_providers::{ModelEvent, ModelRequest, ModelResponse, RequestOrigin, ToolChoice};

/// One request of an agent: what it sends besides the agent's model and
/// system prompt.
#[derive(Debug)]
pub(crate) struct Ask<'a> {
    pub(crate) meta: &'a AgentMeta,
    /// The tools it advertises (with tools disabled too: the same prefix
    /// keeps a provider's prompt cache warm).
    pub(crate) tools: Vec<Arc<ToolDefinition>>,
    pub(crate) messages: Arc<Vec<Message>>,
    pub(crate) max_tokens: u32,
    /// The agent's turn it counts as (or follows).
    pub(crate) turn: u32,
    /// See `ModelRequest::cache_prefix`.
    pub(crate) cache_prefix: Option<usize>,
}

/// Sends `ask` and waits for the response. With `live` (the agent's
/// progress), the response streams as a turn does: text and thinking
/// deltas and retries become events and the progress's partial text;
/// without, nothing is seen of it but its result. `Ok(None)`: the stream
/// ended before the response was complete.
///
/// # Errors
///
/// The provider's error, as the stream gave it (after the provider's own
/// retries).
pub(crate) async fn request(
    ctx: &QueryCtx,
    ask: Ask<'_>,
    tool_choice: ToolChoice,
    live: Option<&Mutex<Progress>>,
) -> Result<Option<ModelResponse>, ProviderError> {
    let meta = ask.meta;
    let request = ModelRequest {
        model: Arc::clone(&meta.model),
        system: Arc::clone(&meta.system),
        tools: ask.tools,
        messages: ask.messages,
        max_tokens: ask.max_tokens,
        tool_choice,
        origin: RequestOrigin {
            agent: meta.id.clone(),
            agent_type: Arc::clone(&meta.agent_type),
            turn: ask.turn,
        },
        cache_prefix: ask.cache_prefix,
        // A summary (tools disabled) is prose whatever the agent's answer
        // must be.
        output: match tool_choice {
            ToolChoice::None => None,
            _ => meta
                .output
                .as_ref()
                .map(|output| Arc::clone(&output.format)),
        },
        effort: meta.effort,
    };
    let runtime = &ctx.session.runtime;
    let span = telemetry::chat_span(
        runtime.tracer(),
        &ChatStart {
            provider: runtime.provider().name(),
            model: &request.model,
            max_tokens: request.max_tokens,
            turn: ask.turn,
            system: &request.system,
            messages: &request.messages,
        },
    );
    let streamed = in_span(stream_response(ctx, meta, request, live), span.clone());
    match streamed.await {
        Ok(Some(response)) => {
            telemetry::record_response(
                &span,
                &response.stop_reason,
                response.usage,
                &response.content,
            );
            Ok(Some(response))
        }
        Ok(None) => {
            telemetry::record_request_error(&span, "incomplete", "the stream ended early");
            Ok(None)
        }
        Err(error) => {
            telemetry::record_request_error(&span, error_kind(&error), &error_chain(&error));
            Err(error)
        }
    }
}

/// `error.type` of a request that failed for good.
fn error_kind(error: &ProviderError) -> &'static str {
    match error {
        ProviderError::RetriesExhausted { .. } => "retries_exhausted",
        ProviderError::Auth { .. } => "auth",
        ProviderError::Rejected { .. } => "rejected",
        ProviderError::Api { .. } => "api_error",
        ProviderError::Protocol { .. } => "protocol",
        ProviderError::Status { .. } => "http_status",
        ProviderError::Transport { .. } => "transport",
        ProviderError::Timeout { .. } => "timeout",
        _ => "_OTHER",
    }
}

/// Streams `request` through the runtime's effects, as [`request`] says.
async fn stream_response(
    ctx: &QueryCtx,
    meta: &AgentMeta,
    request: ModelRequest,
    live: Option<&Mutex<Progress>>,
) -> Result<Option<ModelResponse>, ProviderError> {
    let runtime = &ctx.session.runtime;
    let mut stream = runtime.effects().model_request(runtime.provider(), request);
    if let Some(progress) = live {
        lock(progress).partial.clear();
    }
    while let Some(item) = stream.next().await {
        match item? {
            ModelEvent::Completed(response) => return Ok(Some(response)),
            ModelEvent::Metadata { model, id } => {
                telemetry::record_response_metadata(&model, id.as_deref());
            }
            ModelEvent::Retrying {
                attempt,
                delay,
                ref reason,
            } if live.is_none() => {
                telemetry::retry_event(attempt, millis(delay), reason);
            }
            _ if live.is_none() => {}
            ModelEvent::TextDelta { text } => {
                if let Some(progress) = live {
                    lock(progress).partial.push_str(&text);
                }
                ctx.sink.emit(meta, EventKind::TextDelta { text });
            }
            ModelEvent::ThinkingDelta { text } => {
                ctx.sink.emit(meta, EventKind::ThinkingDelta { text });
            }
            ModelEvent::Retrying {
                attempt,
                delay,
                reason,
            } => {
                telemetry::retry_event(attempt, millis(delay), &reason);
                if let Some(progress) = live {
                    lock(progress).partial.clear();
                }
                ctx.sink.emit(
                    meta,
                    EventKind::ModelRetry {
                        attempt,
                        delay,
                        reason,
                    },
                );
            }
            // `ToolUseStarted`, and any event a newer provider crate adds
            // (the enum is non-exhaustive): nothing to show.
            _ => {}
        }
    }
    Ok(None)
}

fn millis(delay: std::time::Duration) -> u64 {
    u64::try_from(delay.as_millis()).unwrap_or(u64::MAX)
}

/// The side request: `ask` with tools disabled. A tool use in the answer
/// is dropped, never run and never left unanswered in a history. Serves
/// the turn-limit summary (live: it is the agent's last turn), the
/// compaction summary and the progress summary (quiet).
///
/// # Errors
///
/// As [`request`].
pub(crate) async fn side_request(
    ctx: &QueryCtx,
    ask: Ask<'_>,
    live: Option<&Mutex<Progress>>,
) -> Result<Option<ModelResponse>, ProviderError> {
    without_tools(ctx, ask, ToolChoice::None, live).await
}

/// The answer request of an agent with an output schema: `ask` with
/// tools disabled, asking for the final answer in the agent's format
/// ([`ToolChoice::Answer`]); streams as a turn. A tool use in the answer
/// is dropped, as in [`side_request`].
///
/// # Errors
///
/// As [`request`].
pub(crate) async fn answer_request(
    ctx: &QueryCtx,
    ask: Ask<'_>,
    live: &Mutex<Progress>,
) -> Result<Option<ModelResponse>, ProviderError> {
    without_tools(ctx, ask, ToolChoice::Answer, Some(live)).await
}

async fn without_tools(
    ctx: &QueryCtx,
    ask: Ask<'_>,
    choice: ToolChoice,
    live: Option<&Mutex<Progress>>,
) -> Result<Option<ModelResponse>, ProviderError> {
    let mut response = request(ctx, ask, choice, live).await?;
    if let Some(response) = &mut response {
        response
            .content
            .retain(|b| !matches!(b, ContentBlock::ToolUse { .. }));
    }
    Ok(response)
}
