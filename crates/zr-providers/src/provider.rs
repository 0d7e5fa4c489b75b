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
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must answer in text. The tools are still sent, so that
    /// the request's prefix (and the provider's prompt cache) stays the
    /// same and earlier `tool_use` blocks stay valid.
    None,
    /// The model must give its final answer now, in the request's
    /// [`ModelRequest::output`] format, and call no tool: OpenAI's APIs
    /// get `tool_choice: "none"` with the format; Anthropic's gets the
    /// answer tool forced (`tool_choice: {type: tool, name}`), whose input
    /// the provider returns as the answer's text. Without an `output`
    /// format it is [`ToolChoice::None`].
    Answer,
}

/// The shape a model's final answer must have: a JSON Schema.
///
/// Set on every request of an agent that must answer with a value
/// ([`ModelRequest::output`]; not on its summaries). Providers whose API
/// constrains answers natively send it with each request (OpenAI Chat
/// Completions `response_format: {type: json_schema}`, the Responses API
/// `text.format`); the Anthropic provider uses it only when the request
/// says [`ToolChoice::Answer`], as a forced tool (see
/// [`ModelProvider::structured_output`]). Serialised, it is OpenAI's
/// `json_schema` object: `{name, schema, strict}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OutputFormat {
    /// The schema's name (`^[A-Za-z0-9_-]{1,64}$`): OpenAI's
    /// `json_schema.name`, the name of Anthropic's answer tool.
    pub name: String,
    /// The JSON Schema the answer must match.
    pub schema: serde_json::Value,
    /// Whether the API is asked to enforce the schema exactly (OpenAI's
    /// `strict: true`). [`OutputFormat::new`] sets it when the schema fits
    /// OpenAI's strict subset: every object lists all its properties in
    /// `required` and says `additionalProperties: false`.
    pub strict: bool,
}

impl OutputFormat {
    /// The name zr gives an answer's schema (and Anthropic's answer tool).
    pub const DEFAULT_NAME: &'static str = "StructuredOutput";

    /// The format of `schema`, named [`OutputFormat::DEFAULT_NAME`],
    /// strict when the schema allows it.
    ///
    /// ```
    /// use serde_json::json;
    /// use zr_providers::OutputFormat;
    /// let strict = json!({"type": "object", "properties": {"n": {"type": "integer"}},
    ///                     "required": ["n"], "additionalProperties": false});
    /// assert!(OutputFormat::new(strict).strict);
    /// let loose = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    /// assert!(!OutputFormat::new(loose).strict);
    /// ```
    #[must_use]
    pub fn new(schema: serde_json::Value) -> Self {
        Self {
            name: Self::DEFAULT_NAME.to_owned(),
            strict: strict_subset(&schema),
            schema,
        }
    }
}

/// Whether every object schema inside `schema` requires all its properties
/// and forbids others (OpenAI's strict mode accepts nothing less).
fn strict_subset(schema: &serde_json::Value) -> bool {
    use serde_json::Value;
    match schema {
        Value::Object(map) => {
            let is_object = match map.get("type") {
                Some(Value::String(kind)) => kind == "object",
                Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "object"),
                _ => map.contains_key("properties"),
            };
            if is_object {
                let properties = map.get("properties").and_then(Value::as_object);
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let all_required =
                    properties.is_none_or(|p| p.keys().all(|key| required.contains(&key.as_str())));
                if !all_required || map.get("additionalProperties") != Some(&Value::Bool(false)) {
                    return false;
                }
            }
            map.values().all(strict_subset)
        }
        Value::Array(items) => items.iter().all(strict_subset),
        _ => true,
    }
}

/// How much the model should reason before it answers.
///
/// Sent where the API takes it: OpenAI Chat Completions
/// `reasoning_effort` and the Responses API `reasoning.effort` (`low`,
/// `medium`, `high`; [`Effort::Max`] is sent as `high`); Anthropic as an
/// extended-thinking budget (`thinking: {type: enabled, budget_tokens}`,
/// see [`Effort::thinking_budget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Effort {
    /// Quick answers.
    Low,
    /// The default.
    Medium,
    /// Careful work.
    High,
    /// As much as the model allows.
    Max,
}

impl Effort {
    /// The effort's name in OpenAI's APIs: `low`, `medium` or `high`
    /// (`max` is `high`, the most every reasoning model accepts).
    #[must_use]
    pub fn openai(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High | Self::Max => "high",
        }
    }

    /// Anthropic's thinking budget for this effort within a request whose
    /// output limit is `max_tokens`: 2,048 (low), 8,192 (medium), 16,384
    /// (high) or 32,000 (max) tokens, lowered to leave at least 1,024
    /// tokens of the limit for the answer; `None` (no thinking) when that
    /// leaves less than the API's minimum budget of 1,024.
    ///
    /// ```
    /// use zr_providers::Effort;
    /// assert_eq!(Effort::Medium.thinking_budget(32_000), Some(8_192));
    /// assert_eq!(Effort::Max.thinking_budget(16_000), Some(14_976));
    /// assert_eq!(Effort::Low.thinking_budget(1_500), None);
    /// ```
    #[must_use]
    pub fn thinking_budget(self, max_tokens: u32) -> Option<u32> {
        let wanted: u32 = match self {
            Self::Low => 2_048,
            Self::Medium => 8_192,
            Self::High => 16_384,
            Self::Max => 32_000,
        };
        let budget = wanted.min(max_tokens.saturating_sub(1_024));
        (budget >= 1_024).then_some(budget)
    }
}

/// How a provider meets a request's [`ModelRequest::output`] format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StructuredOutput {
    /// Every request carries the format and the model's text answer is the
    /// JSON value (OpenAI's APIs; the scripted provider, whose text is
    /// the value).
    Native,
    /// The answer is asked for in one more request, with
    /// [`ToolChoice::Answer`], once the model has ended its turn
    /// (Anthropic: a forced tool whose input is the answer).
    FinalRequest,
}

/// Who is asking: lets the scripted provider answer per agent type and
/// lets real providers label their tracing spans. Never sent to a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestOrigin {
    /// The asking agent.
    pub agent: AgentId,
    /// Its type: `root`, `fork`, or the subagent type's name. Shared
    /// with the agent (every request of every agent carries it).
    pub agent_type: Arc<str>,
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
///
/// The model id and the system prompt are shared (`Arc<str>`) with the
/// agent that asks, as the messages are with its history: an agent's
/// requests do not copy them.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The model id.
    pub model: Arc<str>,
    /// The system prompt.
    pub system: Arc<str>,
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
    /// The shape the final answer must have, for an agent that answers
    /// with a value; `None`: free text.
    pub output: Option<Arc<OutputFormat>>,
    /// How much the model should reason; `None`: the API's default.
    pub effort: Option<Effort>,
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

    /// How this provider meets a request's [`ModelRequest::output`]
    /// format; by default [`StructuredOutput::Native`] (the answer's text
    /// is the value).
    fn structured_output(&self) -> StructuredOutput {
        StructuredOutput::Native
    }

    /// The body this provider would send for `request`, byte for byte,
    /// without sending it: what a request costs on the wire (`zr resolve`
    /// reports each agent's fixed part from it). `None` for a provider
    /// that sends no body (the default, and the scripted provider's), or a
    /// request it cannot encode.
    fn request_body(&self, request: &ModelRequest) -> Option<Vec<u8>> {
        let _ = request;
        None
    }
}
