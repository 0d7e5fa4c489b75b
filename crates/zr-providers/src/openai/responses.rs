//! The OpenAI Responses API provider: `POST {base}/responses` with
//! `stream: true`, stateless (`store: false`), reasoning items carried
//! between turns as encrypted content.

mod decode;
mod wire;

use super::{KEY_VAR, OpenAiConfig, PROVIDER, bearer};
use crate::error::ProviderError;
use crate::http::Endpoint;
use crate::provider::{ModelProvider, ModelRequest, ModelStream};

/// The OpenAI Responses API provider, the API OpenAI recommends for
/// agents. It takes the same [`OpenAiConfig`] as the Chat Completions
/// provider (its `max_tokens_field` is not used: the limit is
/// `max_output_tokens`).
///
/// The request is stateless: `store: false`, the whole conversation in
/// `input`, and `include: ["reasoning.encrypted_content"]`, so that the
/// model's reasoning items come back encrypted and are fed back in the
/// next request of the same agent (a zr thinking block holds the item's
/// id and encrypted content as its signature; a thinking block without
/// one, from another provider, is not sent). The system prompt is
/// `instructions`; tools are `function` tools with `strict: false`, in
/// pool order; each tool result is a `function_call_output` item (an
/// image of a result goes in a `user` message after them, as with Chat
/// Completions); a tool result's `display` is never sent.
/// [`ModelRequest::effort`] is `reasoning.effort`;
/// [`ModelRequest::output`] is `text.format` (`json_schema`) on every
/// request; [`ToolChoice::None`](crate::ToolChoice::None) and
/// [`ToolChoice::Answer`](crate::ToolChoice::Answer) are `tool_choice:
/// "none"`.
///
/// Reading the stream: text deltas (`response.output_text.delta`, and
/// refusals) and reasoning-summary deltas are streamed, a
/// `function_call` item is announced when it is added, and the answer is
/// assembled from the finished items (`response.output_item.done`) when
/// `response.completed` (or `response.incomplete`: stop reason
/// `max_tokens` or `refusal`) arrives. Input tokens are `input_tokens`
/// minus `input_tokens_details.cached_tokens`. A `response.failed` or
/// `error` event of a server-error or rate-limit kind is retried, like
/// the Chat Completions provider's error objects.
#[derive(Debug, Clone)]
pub struct ResponsesProvider {
    config: OpenAiConfig,
    endpoint: Endpoint,
}

impl ResponsesProvider {
    /// A provider with `config`.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Transport`] when the HTTP client cannot be built
    /// (its TLS backend failed to initialise).
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let url = format!("{}/responses", config.base_url.trim_end_matches('/'));
        let endpoint = Endpoint::new(PROVIDER, KEY_VAR, url, config.api_key.as_deref())?;
        Ok(Self { config, endpoint })
    }
}

impl ModelProvider for ResponsesProvider {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.endpoint.stream::<decode::EventDecoder, _>(
            &request,
            wire::body(&request),
            &self.config.http,
            bearer(self.config.api_key.clone()),
        )
    }

    fn request_body(&self, request: &ModelRequest) -> Option<Vec<u8>> {
        wire::body(request).ok()
    }
}

/// A reasoning item as zr keeps it: the signature of a thinking block.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Reasoning {
    /// The item's id (`rs_...`).
    id: String,
    /// Its encrypted content, which only the API can read.
    encrypted_content: String,
}

impl Reasoning {
    /// The signature that carries this item.
    fn signature(&self) -> String {
        serde_json::json!({"id": self.id, "encrypted_content": self.encrypted_content}).to_string()
    }

    /// The item a signature carries; `None` for another provider's.
    fn from_signature(signature: &str) -> Option<Self> {
        serde_json::from_str(signature).ok()
    }
}

#[cfg(test)]
mod tests;
