//! The OpenAI Chat Completions provider: `POST {base}/chat/completions`
//! with `stream: true`; also serves local servers that speak the API.

mod decode;
mod responses;
mod wire;

use std::fmt;
use std::time::Duration;

use crate::error::ProviderError;
use crate::http::{Endpoint, HttpSettings, RetryPolicy};
use crate::provider::{ModelProvider, ModelRequest, ModelStream};

pub use responses::ResponsesProvider;

/// The provider's name in errors and spans.
const PROVIDER: &str = "openai";
/// The variable [`OpenAiConfig::from_env`] reads the key from.
const KEY_VAR: &str = "OPENAI_API_KEY";
/// The variable [`OpenAiConfig::from_env`] reads the base URL from.
const BASE_URL_VAR: &str = "OPENAI_BASE_URL";

/// Settings of the [`OpenAiProvider`].
///
/// Built with [`OpenAiConfig::new`] (a base URL; local servers need no key)
/// or [`OpenAiConfig::from_env`]; the other fields have defaults and can be
/// changed afterwards. `Debug` never prints the key.
#[derive(Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// The API's base URL, `/v1` included: [`OpenAiConfig::DEFAULT_BASE_URL`]
    /// or, for a local server, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The API key, sent as `Authorization: Bearer`; `None` sends no
    /// authorization (local servers).
    pub api_key: Option<String>,
    /// The field that carries [`ModelRequest::max_tokens`].
    pub max_tokens_field: MaxTokensField,
    /// Extra headers (e.g. `OpenAI-Organization`), retries and timeouts.
    /// The request timeout defaults to 300 s (a local server may read a long
    /// prompt before it answers); the idle timeout to 90 s.
    pub http: HttpSettings,
}

/// The request field that carries the output-token limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaxTokensField {
    /// `max_completion_tokens`, the current name (reasoning models refuse
    /// the old one).
    #[default]
    MaxCompletionTokens,
    /// `max_tokens`, the older name some local servers still expect.
    MaxTokens,
}

impl OpenAiConfig {
    /// The public API's base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// Settings for the server at `base_url`, without a key, with every
    /// default.
    #[must_use]
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            max_tokens_field: MaxTokensField::default(),
            http: HttpSettings::new(Duration::from_secs(300)),
        }
    }

    /// Settings from `OPENAI_BASE_URL` (default
    /// [`OpenAiConfig::DEFAULT_BASE_URL`]) and `OPENAI_API_KEY`.
    ///
    /// # Errors
    ///
    /// [`ProviderError::MissingEnv`] when neither variable is set: the public
    /// API needs a key, so only a custom base URL may go without one.
    pub fn from_env() -> Result<Self, ProviderError> {
        let var = |name| {
            std::env::var(name)
                .ok()
                .filter(|value: &String| !value.is_empty())
        };
        let key = var(KEY_VAR);
        let url = var(BASE_URL_VAR);
        if key.is_none() && url.is_none() {
            return Err(ProviderError::MissingEnv {
                provider: PROVIDER,
                var: KEY_VAR,
            });
        }
        let mut config = Self::new(url.unwrap_or_else(|| Self::DEFAULT_BASE_URL.to_owned()));
        config.api_key = key;
        Ok(config)
    }

    /// The same settings with an API key.
    #[must_use]
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// The same settings with another retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.http.retry = retry;
        self
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("max_tokens_field", &self.max_tokens_field)
            .field("http", &self.http)
            .finish()
    }
}

/// The OpenAI Chat Completions provider, for the public API and local
/// servers that speak it.
///
/// Sends the system prompt as a leading `system` message, the tools as
/// `function` tools in order, and the conversation: each tool result as its
/// own `tool` message right after the assistant's `tool_calls` (an image of a
/// result goes in a `user` message after them), thinking blocks dropped.
/// Asks for usage in the stream (`stream_options.include_usage`); the token
/// limit goes in [`OpenAiConfig::max_tokens_field`]. A tool result's
/// `display` is never sent.
///
/// Reading the stream, streamed tool calls are told apart by id when a
/// server reuses or omits their `index`, `reasoning_content` (local servers)
/// becomes thinking, and input tokens are `prompt_tokens` minus the cached
/// ones. An error object of a server-error kind, or with code 429 or 5xx
/// (a number, or a numeric string as proxies send it), is retried. A 2xx
/// answer that is not an event stream is read as a whole (non-streamed)
/// chat completion, or error object, when it is one.
///
/// [`ModelRequest::output`] is sent as `response_format: {type:
/// json_schema, json_schema: {name, schema, strict}}` on every request;
/// [`ModelRequest::effort`] as `reasoning_effort`.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    endpoint: Endpoint,
}

impl OpenAiProvider {
    /// A provider with `config`.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Transport`] when the HTTP client cannot be built
    /// (its TLS backend failed to initialise).
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        let endpoint = Endpoint::new(PROVIDER, KEY_VAR, url, config.api_key.as_deref())?;
        Ok(Self { config, endpoint })
    }
}

impl ModelProvider for OpenAiProvider {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.endpoint.stream::<decode::ChunkDecoder, _>(
            &request,
            wire::body(&request, self.config.max_tokens_field),
            &self.config.http,
            bearer(self.config.api_key.clone()),
        )
    }

    fn request_body(&self, request: &ModelRequest) -> Option<Vec<u8>> {
        wire::body(request, self.config.max_tokens_field).ok()
    }
}

/// Adds `Authorization: Bearer KEY` when there is a key (local servers
/// need none).
fn bearer(
    key: Option<String>,
) -> impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder + Send + 'static {
    move |builder| match &key {
        Some(key) => builder.bearer_auth(key),
        None => builder,
    }
}

#[cfg(test)]
mod tests;
