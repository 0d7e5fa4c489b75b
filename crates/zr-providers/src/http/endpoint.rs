//! What both providers share to send a request: the HTTP settings of their
//! configs and the endpoint that streams a request with them.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::{Decoder, Request, RetryPolicy, attempt, failed, request_span, retrying};
use crate::error::ProviderError;
use crate::provider::{ModelRequest, ModelStream};

/// The `User-Agent` of every request: `zr/VERSION`.
const USER_AGENT: &str = concat!("zr/", env!("CARGO_PKG_VERSION"));

/// The HTTP settings of a provider's config.
///
/// Built with [`HttpSettings::new`]; the fields can be changed afterwards.
/// `Debug` prints the names of the extra headers, never their values.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpSettings {
    /// More headers for every request, e.g. `anthropic-beta` or
    /// `OpenAI-Organization`.
    pub extra_headers: Vec<(String, String)>,
    /// How failed requests are retried.
    pub retry: RetryPolicy,
    /// The longest wait for the connection and the response head. Passing
    /// it is a retryable timeout.
    pub request_timeout: Duration,
    /// The longest silence between two pieces of the stream (default 90 s).
    /// Passing it is a retryable timeout.
    pub idle_timeout: Duration,
}

impl HttpSettings {
    /// Settings with `request_timeout`, no extra header, the default retry
    /// policy and a 90 s idle timeout.
    #[must_use]
    pub fn new(request_timeout: Duration) -> Self {
        Self {
            extra_headers: Vec::new(),
            retry: RetryPolicy::default(),
            request_timeout,
            idle_timeout: Duration::from_secs(90),
        }
    }
}

impl fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&String> = self.extra_headers.iter().map(|(name, _)| name).collect();
        f.debug_struct("HttpSettings")
            .field("extra_headers", &header_names)
            .field("retry", &self.retry)
            .field("request_timeout", &self.request_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .finish()
    }
}

/// Where one provider sends its requests, and the client it sends them with.
/// `Debug` never prints the secret.
#[derive(Clone)]
pub(crate) struct Endpoint {
    /// `anthropic` or `openai`, in errors and spans.
    provider: &'static str,
    /// Where the key comes from, for authentication errors.
    key_hint: &'static str,
    /// The full URL requests are posted to.
    url: String,
    /// The API key, which an error body may echo: every failure's text
    /// has it replaced before it leaves the provider.
    secret: Option<Arc<str>>,
    client: reqwest::Client,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("key_hint", &self.key_hint)
            .field("url", &self.url)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The endpoint at `url`, sending `secret` (the API key; `None` or
    /// empty when there is none).
    ///
    /// # Errors
    ///
    /// [`ProviderError::Transport`] when the HTTP client cannot be built
    /// (its TLS backend failed to initialise).
    pub(crate) fn new(
        provider: &'static str,
        key_hint: &'static str,
        url: String,
        secret: Option<&str>,
    ) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .build()
            .map_err(|source| ProviderError::Transport {
                provider,
                url: url.clone(),
                source,
            })?;
        Ok(Self {
            provider,
            key_hint,
            url,
            secret: secret.filter(|s| !s.is_empty()).map(Arc::from),
            client,
        })
    }

    /// Streams `request`, whose wire form is `body` (or the error that
    /// prevented building it): posts it as JSON asking for server-sent
    /// events (`User-Agent: zr/VERSION`), with the headers `auth` adds and then `settings`' extra
    /// headers, decodes each attempt with a fresh `D`, and retries as
    /// `settings` says.
    pub(crate) fn stream<D, A>(
        &self,
        request: &ModelRequest,
        body: Result<Vec<u8>, ProviderError>,
        settings: &HttpSettings,
        auth: A,
    ) -> ModelStream
    where
        D: Decoder + Default,
        A: Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder + Send + 'static,
    {
        let span = request_span(self.provider, request);
        let body = match body {
            Ok(body) => Bytes::from(body),
            Err(error) => return failed(error),
        };
        let endpoint = self.clone();
        let settings = settings.clone();
        retrying(
            self.provider,
            settings.retry.clone(),
            self.secret.clone(),
            span,
            move |_attempt| {
                let mut builder = auth(endpoint.client.post(&endpoint.url))
                    .header("content-type", "application/json")
                    .header("accept", "text/event-stream");
                for (name, value) in &settings.extra_headers {
                    builder = builder.header(name, value);
                }
                let request = Request {
                    provider: endpoint.provider,
                    key_hint: endpoint.key_hint,
                    url: endpoint.url.clone(),
                    builder: builder.body(body.clone()),
                    request_timeout: settings.request_timeout,
                    idle_timeout: settings.idle_timeout,
                };
                attempt(request, D::default())
            },
        )
    }
}
