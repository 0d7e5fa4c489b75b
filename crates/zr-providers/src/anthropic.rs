//! The Anthropic Messages API provider: `POST {base}/v1/messages` with
//! `stream: true`, prompt caching and retries.

mod decode;
mod wire;

use std::fmt;
use std::time::Duration;

use futures_util::StreamExt as _;
use zr_types::{ContentBlock, StopReason};

use crate::error::ProviderError;
use crate::http::{Endpoint, HttpSettings, RetryPolicy};
use crate::provider::{
    ModelEvent, ModelProvider, ModelRequest, ModelStream, StructuredOutput, ToolChoice,
};

/// The provider's name in errors and spans.
const PROVIDER: &str = "anthropic";
/// The variable [`AnthropicConfig::from_env`] reads the key from.
const KEY_VAR: &str = "ANTHROPIC_API_KEY";
/// The variable [`AnthropicConfig::from_env`] reads a bearer token from
/// when there is no key (a gateway's token, as Claude Code reads it).
const TOKEN_VAR: &str = "ANTHROPIC_AUTH_TOKEN";
/// The variable [`AnthropicConfig::from_env`] reads the base URL from.
const BASE_URL_VAR: &str = "ANTHROPIC_BASE_URL";

/// Settings of the [`AnthropicProvider`].
///
/// Built with [`AnthropicConfig::new`] (an API key),
/// [`AnthropicConfig::bearer`] (a token for `Authorization: Bearer`, as
/// gateways take it) or [`AnthropicConfig::from_env`]; the other fields
/// have defaults and can be changed afterwards. `Debug` never prints the
/// key or the token.
#[derive(Clone)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The API's base URL, without `/v1` (default
    /// [`AnthropicConfig::DEFAULT_BASE_URL`]).
    pub base_url: String,
    /// The API key, sent as `x-api-key` (not sent when empty).
    pub api_key: String,
    /// A bearer token, sent as `Authorization: Bearer TOKEN` (Claude
    /// Code's `ANTHROPIC_AUTH_TOKEN`); `None` sends no such header.
    pub auth_token: Option<String>,
    /// The `anthropic-version` header (default `2023-06-01`).
    pub anthropic_version: String,
    /// Extra headers (e.g. `anthropic-beta`), retries and timeouts. The
    /// request timeout defaults to 120 s; the idle timeout to 90 s (the API
    /// sends `ping` events meanwhile).
    pub http: HttpSettings,
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
            auth_token: None,
            anthropic_version: "2023-06-01".to_owned(),
            http: HttpSettings::new(Duration::from_secs(120)),
        }
    }

    /// Settings for a bearer `token` (sent as `Authorization: Bearer`,
    /// no `x-api-key`) with every default.
    #[must_use]
    pub fn bearer(token: impl Into<String>) -> Self {
        Self {
            auth_token: Some(token.into()),
            ..Self::new("")
        }
    }

    /// Settings from `ANTHROPIC_API_KEY`, else `ANTHROPIC_AUTH_TOKEN` (a
    /// bearer token), and `ANTHROPIC_BASE_URL` (optional).
    ///
    /// # Errors
    ///
    /// [`ProviderError::MissingEnv`] when neither the key nor the token is
    /// set (or both are empty).
    pub fn from_env() -> Result<Self, ProviderError> {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let mut config = match (var(KEY_VAR), var(TOKEN_VAR)) {
            (Some(key), _) => Self::new(key),
            (None, Some(token)) => Self::bearer(token),
            (None, None) => {
                return Err(ProviderError::MissingEnv {
                    provider: PROVIDER,
                    var: KEY_VAR,
                });
            }
        };
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
        self.http.retry = retry;
        self
    }
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field(
                "auth_token",
                &self.auth_token.as_ref().map(|_| "<redacted>"),
            )
            .field("anthropic_version", &self.anthropic_version)
            .field("http", &self.http)
            .finish()
    }
}

/// The Anthropic Messages API provider.
///
/// Sends the system prompt as one text block, the tools in order and the
/// conversation, with prompt-cache breakpoints (`cache_control:
/// ephemeral`) on the system block, the last tool and the last content block
/// of the last message, and, for a request with a
/// [`ModelRequest::cache_prefix`] (a fork's), the last block of the shared
/// prefix: at most four, the API's limit. The body's fields come in the
/// order model, `max_tokens`, `stream`, system, tools, messages,
/// `tool_choice`, so a fork's body starts with its parent's last body byte
/// for byte up to the end of the shared messages. A tool result's
/// `display` is never sent, nor what
/// the API rejects: blank text blocks, thinking blocks without a signature,
/// and messages left without content.
///
/// Reading the stream, unknown event types and block kinds are skipped; a
/// block out of order or a delta of the wrong kind is a
/// [`ProviderError::Protocol`]. The error events `overloaded_error`,
/// `api_error`, `rate_limit_error` and `timeout_error` are retried, and so
/// is one whose `code` is 429 or 5xx (a number, or a numeric string as
/// proxies send it). A 2xx answer that is not an event stream is read as a
/// whole Messages API message (or error object) when it is one.
///
/// Structured answers ([`ModelRequest::output`]) come from a forced tool
/// ([`StructuredOutput::FinalRequest`]): a [`ToolChoice::Answer`]
/// request adds the answer tool (named [`OutputFormat::name`](crate::OutputFormat::name), its input
/// schema the format's; a schema that is not an object's is wrapped in
/// `{"value": ...}`) after the pool's tools and sends `tool_choice:
/// {type: tool, name}`; the call's input comes back as the answer's text
/// (JSON), stop reason `end_turn`. Other requests do not send the format.
///
/// [`ModelRequest::effort`] is sent as extended thinking, `thinking:
/// {type: enabled, budget_tokens}` with [`Effort::thinking_budget`](crate::Effort::thinking_budget)
/// (low 2,048, medium 8,192, high 16,384, max 32,000 tokens, within the
/// request's `max_tokens`), except on a forced answer, where the API
/// refuses thinking.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    endpoint: Endpoint,
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
        // The secret an error body may echo, and where it came from.
        let (hint, secret) = match &config.auth_token {
            Some(token) if config.api_key.is_empty() => (TOKEN_VAR, token.as_str()),
            _ => (KEY_VAR, config.api_key.as_str()),
        };
        let endpoint = Endpoint::new(PROVIDER, hint, url, Some(secret))?;
        Ok(Self { config, endpoint })
    }
}

impl ModelProvider for AnthropicProvider {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let key = self.config.api_key.clone();
        let bearer = self
            .config
            .auth_token
            .as_ref()
            .map(|t| format!("Bearer {t}"));
        let version = self.config.anthropic_version.clone();
        let stream = self.endpoint.stream::<decode::MessageDecoder, _>(
            &request,
            wire::body(&request),
            &self.config.http,
            move |builder| {
                let builder = match &bearer {
                    Some(bearer) => builder.header("authorization", bearer),
                    None => builder,
                };
                let builder = if key.is_empty() {
                    builder
                } else {
                    builder.header("x-api-key", &key)
                };
                builder.header("anthropic-version", &version)
            },
        );
        match (&request.output, request.tool_choice) {
            (Some(format), ToolChoice::Answer) => {
                let name = format.name.clone();
                let wrapped = wire::answer_schema(format).1;
                Box::pin(
                    stream.filter_map(move |item| {
                        std::future::ready(answer_event(item, &name, wrapped))
                    }),
                )
            }
            _ => stream,
        }
    }

    fn structured_output(&self) -> StructuredOutput {
        StructuredOutput::FinalRequest
    }

    fn request_body(&self, request: &ModelRequest) -> Option<Vec<u8>> {
        wire::body(request).ok()
    }
}

/// An event of a forced answer's stream as the engine sees it: the answer
/// tool's call becomes the answer's text (its input, unwrapped from
/// `value` if `wrapped`), and is not announced as a tool call.
fn answer_event(
    item: Result<ModelEvent, ProviderError>,
    name: &str,
    wrapped: bool,
) -> Option<Result<ModelEvent, ProviderError>> {
    match item {
        Ok(ModelEvent::ToolUseStarted { name: called, .. }) if called == name => None,
        Ok(ModelEvent::Completed(mut response)) => {
            let mut answered = false;
            for block in &mut response.content {
                if let ContentBlock::ToolUse {
                    name: called,
                    input,
                    ..
                } = block
                    && called == name
                {
                    let value = match input {
                        serde_json::Value::Object(map) if wrapped => {
                            map.remove(wire::WRAPPED).unwrap_or_default()
                        }
                        other => std::mem::take(other),
                    };
                    *block = ContentBlock::Text {
                        text: value.to_string(),
                    };
                    answered = true;
                }
            }
            if answered && response.stop_reason == StopReason::ToolUse {
                response.stop_reason = StopReason::EndTurn;
            }
            Some(Ok(ModelEvent::Completed(response)))
        }
        other => Some(other),
    }
}

#[cfg(test)]
mod tests;
