//! The `ModelProvider` contract: how the engine talks to a model.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use zr_types::{AgentId, ContentBlock, Message, StopReason, ToolDefinition, Usage};

use crate::error::ProviderError;

/// A boxed stream of model events, owned (`'static`) so that the engine can
/// drive it from any task.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ProviderError>> + Send>>;

/// Whether the model may call tools in this request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must answer in text. The tools are still sent, so that
    /// the request's prefix (and the provider's prompt cache) stays the
    /// same and earlier `tool_use` blocks stay valid.
    None,
}

/// Who is asking: lets the scripted provider answer per agent type and
/// lets real providers label their tracing spans. Never sent to a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestOrigin {
    /// The asking agent.
    pub agent: AgentId,
    /// Its type: `root`, `fork`, or the subagent type's name.
    pub agent_type: String,
    /// The 1-based number of this request within the agent's run.
    pub turn: u32,
}

/// One request to a model: everything the model sees, in order.
///
/// `tools` is exactly what the agent advertises (its resolved pool's
/// `advertised` plus the tools it loaded through `FindTool`); providers send
/// it unchanged and in order. Messages are zr's own vocabulary: a provider
/// translates them into its wire format and never sends a tool result's
/// `display`.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The model id.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The advertised tools, in pool order.
    pub tools: Vec<Arc<ToolDefinition>>,
    /// The conversation so far, oldest first; never empty, and the last
    /// message is the user's. Shared with the agent's history (the engine
    /// appends to it with `Arc::make_mut` once the request is done), so that
    /// making a request does not copy a conversation that grows every turn.
    pub messages: Arc<Vec<Message>>,
    /// The output-token limit of this request.
    pub max_tokens: u32,
    /// Whether the model may call tools.
    pub tool_choice: ToolChoice,
    /// Who is asking.
    pub origin: RequestOrigin,
    /// The first `n` messages are, byte for byte, the whole conversation
    /// of an earlier request of another agent: a fork's requests carry the
    /// length of its parent's last request. A provider with explicit
    /// prompt caching marks a breakpoint at their end too, so that the
    /// prefix the other request cached is read from cache (Anthropic);
    /// one with automatic prefix caching ignores it (OpenAI). `None`: no
    /// such prefix.
    pub cache_prefix: Option<usize>,
}

/// The model's complete answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// Its content in order: text, thinking and tool-use blocks, each
    /// assembled from the stream (a tool call's input is parsed JSON).
    pub content: Vec<ContentBlock>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// Tokens used by this request (the final attempt's).
    pub usage: Usage,
}

/// What a provider's stream yields, in order: deltas for live display, then
/// exactly one [`ModelEvent::Completed`] as the last item.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// A piece of text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of the model's reasoning.
    ThinkingDelta {
        /// The new text.
        text: String,
    },
    /// The model started a tool call; its input follows in the final
    /// response.
    ToolUseStarted {
        /// The provider's call id.
        id: String,
        /// The tool's name as the model wrote it.
        name: String,
    },
    /// The attempt failed in a way worth retrying (overloaded, rate limited,
    /// connection cut) and the provider starts again after `delay`.
    /// Consumers discard every delta received since the request began or
    /// since the previous `Retrying`.
    Retrying {
        /// The attempt that failed (1-based).
        attempt: u32,
        /// How long the provider waits before the next attempt.
        delay: Duration,
        /// What went wrong, for logs and status lines.
        reason: String,
    },
    /// What the API said about the response before its content: the
    /// model that answers (an alias resolved, a dated version) and the
    /// response's id. At most once per attempt; providers that do not say
    /// send none. For telemetry and logs.
    Metadata {
        /// The model that generated the response.
        model: String,
        /// The API's id of the response, if it gave one.
        id: Option<String>,
    },
    /// The whole answer. Always the last item of a successful stream.
    Completed(ModelResponse),
}

/// Streams a model's answer to a request.
///
/// One provider is shared (`Arc<dyn ModelProvider>`) by every agent of a
/// runtime and is called concurrently: by parallel subagents, and by the
/// same agent across queries. It keeps no per-conversation state; all of
/// it is in the [`ModelRequest`].
///
/// A stream yields any number of deltas ([`ModelEvent::TextDelta`],
/// [`ModelEvent::ThinkingDelta`], [`ModelEvent::ToolUseStarted`],
/// [`ModelEvent::Retrying`]) and then exactly one
/// [`ModelEvent::Completed`]; after that, or after an `Err`, it ends.
///
/// # Errors
///
/// A stream item `Err(ProviderError)` ends the request. Providers retry by
/// themselves what is worth retrying (429, 5xx, `overloaded_error`, a cut
/// connection: exponential back-off with jitter, honouring `retry-after`)
/// and report each retry as [`ModelEvent::Retrying`]; the error that ends
/// the stream is final: authentication (401, 403), a request the API
/// rejects (400, 404, 413), retries exhausted, or a stream that cannot be
/// parsed. The engine ends the agent with status `failed` and the error's
/// text.
///
/// # Retries
///
/// Inside one stream the provider has done all the retrying that is safe,
/// so a caller needs no retry loop of its own; an error that ends a stream
/// is one the provider chose not to retry. A model request changes nothing
/// but the bill, so calling `stream` again with the same request is always
/// allowed (a durable host replaying a step may do so). Whether that can
/// help:
///
/// - perhaps, later: [`ProviderError::RetriesExhausted`] (every attempt
///   failed in a retryable way: 408, 409, 429, 5xx, an overload, a timeout,
///   a cut connection; the last one's error is inside);
/// - no, the same request fails the same way: [`ProviderError::Auth`],
///   [`ProviderError::Rejected`], [`ProviderError::Api`] (an error event
///   of a kind that is not retried), [`ProviderError::Protocol`] (a request
///   that cannot be encoded, or a response outside the API's format),
///   [`ProviderError::MissingEnv`], [`ProviderError::Script`], and
///   [`ProviderError::Transport`] when the HTTP client itself cannot be
///   built (a bad URL or header).
///
/// Deltas received before a [`ModelEvent::Retrying`] belong to an attempt
/// that was abandoned: discard them. The scripted provider serves an
/// agent's next turn on every call, so for it a second call is not a
/// repeat of the first.
///
/// # Cancellation
///
/// Dropping the stream cancels the request: the HTTP connection is closed,
/// a pending back-off sleep ends. Nothing keeps running after the drop.
///
/// # Panics
///
/// A provider must not panic on any input or any bytes from the network.
///
/// # Example
///
/// ```
/// use futures_util::stream;
/// use zr_providers::{ModelEvent, ModelProvider, ModelRequest, ModelResponse, ModelStream};
/// use zr_types::{ContentBlock, StopReason, Usage};
///
/// /// Answers every request with "ok".
/// #[derive(Debug)]
/// struct Ok;
///
/// impl ModelProvider for Ok {
///     fn stream(&self, _request: ModelRequest) -> ModelStream {
///         // Right: the answer is one `Completed` event (after any deltas).
///         let response = ModelResponse {
///             content: vec![ContentBlock::Text { text: "ok".into() }],
///             stop_reason: StopReason::EndTurn,
///             usage: Usage::default(),
///         };
///         Box::pin(stream::iter([Result::Ok(ModelEvent::Completed(response))]))
///         // Wrong: a stream that ends without `Completed`. The engine
///         // reports it as a provider error ("stream ended early").
///     }
/// }
/// ```
pub trait ModelProvider: Send + Sync + fmt::Debug {
    /// Starts `request` and returns its event stream. The request is only
    /// sent when the stream is first polled.
    fn stream(&self, request: ModelRequest) -> ModelStream;

    /// The provider's name as the OpenTelemetry GenAI conventions spell it
    /// (`gen_ai.provider.name`: `anthropic`, `openai`), for telemetry.
    /// A provider that does not say is `unknown`.
    fn name(&self) -> &'static str {
        "unknown"
    }
}
