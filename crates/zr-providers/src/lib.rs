//! zr's model providers: the [`ModelProvider`] contract through which the
//! engine talks to a model, and the providers that implement it.
//!
//! # Providers
//!
//! - [`ScriptedProvider`]: deterministic replies from a [`Script`] (JSON,
//!   per agent type), for tests, benchmarks and the offline demo.
//! - [`AnthropicProvider`] ([`AnthropicConfig`]): the Messages API over
//!   SSE, with prompt-cache breakpoints.
//! - [`OpenAiProvider`] ([`OpenAiConfig`]): Chat Completions over SSE, for
//!   OpenAI and local servers that speak it.
//! - [`ResponsesProvider`] (the same [`OpenAiConfig`]): OpenAI's
//!   Responses API over SSE, stateless, with reasoning items carried
//!   between turns.
//!
//! Both HTTP providers retry 408, 409, 429, 5xx and overloaded errors with
//! [`RetryPolicy`] (full jitter, honouring `retry-after`) and fail for good
//! on 401/403 ([`ProviderError::Auth`]) and 400/404/413/422
//! ([`ProviderError::Rejected`]); their timeouts and extra headers are
//! [`HttpSettings`]. Implement [`ModelProvider`] for any other model.
//!
//! # One request
//!
//! A [`ModelRequest`] is everything the model sees, in order: model id,
//! system prompt, the advertised tools, the conversation, the output limit,
//! a [`ToolChoice`] and, for a fork, the length of the prefix it shares with
//! its parent's last request. Its [`RequestOrigin`] (agent, type, turn) is
//! never sent: it labels spans and picks the scripted provider's reply.
//! [`ModelProvider::stream`] answers with a [`ModelStream`]: deltas
//! ([`ModelEvent`]) for live display, then one [`ModelEvent::Completed`]
//! holding the whole [`ModelResponse`], or an `Err(`[`ProviderError`]`)`
//! that ends the request for good.
//!
//! A request may carry an [`OutputFormat`] (a structured answer's schema)
//! and an [`Effort`]; each provider maps them onto its API and says
//! through [`ModelProvider::structured_output`] whether the answer needs a
//! request of its own (Anthropic's forced tool).
//!
//! # Structure
//!
//! `provider.rs` is the contract, written like `tower::Service`. `http.rs`
//! with `http/` is the layer the HTTP providers share: `status.rs` (status
//! classification, error objects, `retry-after`), `attempt.rs` (one SSE
//! attempt with an idle timeout), `body.rs` (a body read whole: an error,
//! or a 2xx answer that is not an event stream), `failure.rs` (whether
//! another attempt may help), `endpoint.rs`, and the retry driver in
//! `http.rs` itself; a provider supplies only its wire body, its decoder and
//! its auth headers: `anthropic.rs` (+ `anthropic/wire.rs`,
//! `anthropic/decode.rs`), `openai.rs` (+ `openai/wire.rs`,
//! `openai/decode.rs`) and `openai/responses.rs` (+ its `wire.rs` and
//! `decode.rs`: stateless, reasoning items carried in thinking blocks'
//! signatures). `scripted.rs` is the deterministic provider.
//!
//! # Invariants
//!
//! - zr-providers depends on zr-types and on no other zr crate: it knows
//!   nothing of agents' loops, tool pools, permissions or transcripts. The
//!   engine reaches it only through [`ModelProvider::stream`].
//! - A provider sends the request's tools unchanged and in pool order, and
//!   never sends a tool result's `display`.
//! - A provider keeps no conversation: everything a request needs is in the
//!   [`ModelRequest`]. (The scripted provider counts each agent's requests,
//!   which is how a script advances.)
//! - No bytes from the network make a provider panic: its stream ends with
//!   [`ProviderError::Protocol`] instead.

mod anthropic;
mod error;
mod http;
mod openai;
mod provider;
mod router;
mod scripted;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use error::ProviderError;
pub use http::{CUT_OFF_INPUT, HttpSettings, RetryPolicy};
pub use openai::{MaxTokensField, OpenAiConfig, OpenAiProvider, ResponsesProvider};
pub use provider::{
    Effort, ModelEvent, ModelProvider, ModelRequest, ModelResponse, ModelStream, OutputFormat,
    RequestOrigin, StructuredOutput, ToolChoice,
};
pub use router::Router;
pub use scripted::{AgentScript, Script, ScriptCall, ScriptTurn, ScriptedProvider, TurnsFrom};
