//! The Anthropic Messages API provider: `POST {base}/v1/messages` with
//! `stream: true`, prompt caching and retries.

mod decode;
mod wire;

use std::fmt;
use std::time::Duration;

use bytes::Bytes;

use crate::http::{self, Request, RetryPolicy};
use crate::{ModelProvider, ModelRequest, ModelStream, ProviderError};

/// The provider's name in errors and spans.
const PROVIDER: &str = "anthropic";
/// The variable [`AnthropicConfig::from_env`] reads the key from.
const KEY_VAR: &str = "ANTHROPIC_API_KEY";
/// The variable [`AnthropicConfig::from_env`] reads the base URL from.
const BASE_URL_VAR: &str = "ANTHROPIC_BASE_URL";

/// Settings of the [`AnthropicProvider`].
///
/// Built with [`AnthropicConfig::new`] (the key is required) or
/// [`AnthropicConfig::from_env`]; the other fields have defaults and can be
/// changed afterwards. `Debug` never prints the key.
#[derive(Clone)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The API's base URL, without `/v1` (default
    /// [`AnthropicConfig::DEFAULT_BASE_URL`]).
    pub base_url: String,
    /// The API key, sent as `x-api-key`.
    pub api_key: String,
    /// The `anthropic-version` header (default `2023-06-01`).
    pub anthropic_version: String,
    /// More headers for every request, e.g. `anthropic-beta`.
    pub extra_headers: Vec<(String, String)>,
    /// How failed requests are retried.
    pub retry: RetryPolicy,
    /// The longest wait for the connection and the response head (default
    /// 120 s). Passing it is a retryable timeout.
    pub request_timeout: Duration,
    /// The longest silence between two pieces of the stream (default 90 s;
    /// the API sends `ping` events meanwhile). Passing it is a retryable
    /// timeout.
    pub idle_timeout: Duration,
}

impl AnthropicConfig {
    /// The public API's base URL.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";

    /// Settings for `api_key` with every default.
    #[must_use]
    pub fn new(api_key: impl Into<String>) -> Self {
        Self {
            base_url: Self::DEFAULT_BASE_URL.to_owned(),
            api_key: api_key.into(),
            anthropic_version: "2023-06-01".to_owned(),
            extra_headers: Vec::new(),
            retry: RetryPolicy::default(),
            request_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(90),
        }
    }

    /// Settings from `ANTHROPIC_API_KEY` (required) and
    /// `ANTHROPIC_BASE_URL` (optional).
    ///
    /// # Errors
    ///
    /// [`ProviderError::MissingEnv`] when the key is unset or empty.
    pub fn from_env() -> Result<Self, ProviderError> {
        let key = std::env::var(KEY_VAR)
            .ok()
            .filter(|key| !key.is_empty())
            .ok_or(ProviderError::MissingEnv {
                provider: PROVIDER,
                var: KEY_VAR,
            })?;
        let mut config = Self::new(key);
        if let Some(url) = std::env::var(BASE_URL_VAR)
            .ok()
            .filter(|url| !url.is_empty())
        {
            config.base_url = url;
        }
        Ok(config)
    }

    /// The same settings with another base URL.
    #[must_use]
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// The same settings with another retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("anthropic_version", &self.anthropic_version)
            .field(
                "extra_headers",
                &self
                    .extra_headers
                    .iter()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>(),
            )
            .field("retry", &self.retry)
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish()
    }
}

/// The Anthropic Messages API provider.
///
/// Sends the system prompt as one text block, the tools in order and the
/// conversation, with three prompt-cache breakpoints (`cache_control:
/// ephemeral`): the system block, the last tool, and the last content block
/// of the last message. A tool result's `display` is never sent, nor what
/// the API rejects: blank text blocks, thinking blocks without a signature,
/// and messages left without content.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    url: String,
    client: reqwest::Client,
}

impl AnthropicProvider {
    /// A provider with `config`.
    ///
    /// # Errors
    ///
    /// [`ProviderError::Transport`] when the HTTP client cannot be built
    /// (its TLS backend failed to initialise).
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let url = format!("{}/v1/messages", config.base_url.trim_end_matches('/'));
        let client = http::client(PROVIDER, &url)?;
        Ok(Self {
            config,
            url,
            client,
        })
    }
}

impl ModelProvider for AnthropicProvider {
    fn stream(&self, request: ModelRequest) -> ModelStream {
        let span = http::request_span(PROVIDER, &request);
        let body = match wire::body(&request) {
            Ok(body) => Bytes::from(body),
            Err(error) => return http::failed(error),
        };
        let config = self.config.clone();
        let client = self.client.clone();
        let url = self.url.clone();
        http::retrying(PROVIDER, config.retry.clone(), span, move |_attempt| {
            let mut builder = client
                .post(&url)
                .header("x-api-key", &config.api_key)
                .header("anthropic-version", &config.anthropic_version)
                .header("content-type", "application/json")
                .header("accept", "text/event-stream");
            for (name, value) in &config.extra_headers {
                builder = builder.header(name, value);
            }
            let request = Request {
                provider: PROVIDER,
                key_hint: KEY_VAR,
                url: url.clone(),
                builder: builder.body(body.clone()),
                request_timeout: config.request_timeout,
                idle_timeout: config.idle_timeout,
            };
            http::attempt(request, decode::MessageDecoder::default())
        })
    }
}

#[cfg(test)]
mod tests;
