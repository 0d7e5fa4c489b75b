//! Real search services behind `WebSearch`: a SearXNG instance's JSON API
//! and the Brave Search API, over one HTTP request function.
//!
//! Both run one GET per search, bounded by a timeout, and decode only the
//! fields zr uses (extra fields are ignored, missing ones are an error that
//! names the backend). Domain filters are sent to the backend as `site:`
//! operators and enforced again on the answer, so `allowed_domains` and
//! `blocked_domains` hold whatever the backend does with them.
//!
//! Why Brave as the hosted API: it is an independent web index (not a
//! reseller of another engine's results), answers one GET with one header
//! (`X-Subscription-Token`), has a free tier, and its `count` limit (20)
//! is `WebSearch`'s own result limit.

use std::fmt;
use std::time::Duration;

use reqwest::header::ACCEPT;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use zr_types::BoxFuture;

use super::{MAX_RESULTS, SearchQuery, SearchResult, WebSearchService};
use crate::error::{SearchBackendError, ServiceError};

/// The Brave Search API's address.
pub const BRAVE_DEFAULT_URL: &str = "https://api.search.brave.com/res/v1/web/search";

/// Which backend a [`HttpSearch`] speaks.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SearchBackend {
    /// A SearXNG instance (`GET {url}/search?q=..&format=json`); its
    /// settings must list `json` in `search.formats`.
    Searxng {
        /// The instance's base address, e.g. `http://localhost:8888`.
        url: String,
    },
    /// The Brave Search API (`GET {url}?q=..&count=..` with
    /// `X-Subscription-Token`).
    Brave {
        /// The endpoint, normally [`BRAVE_DEFAULT_URL`].
        url: String,
        /// The subscription token.
        api_key: String,
    },
}

impl fmt::Debug for SearchBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the key.
        match self {
            Self::Searxng { url } => f.debug_struct("Searxng").field("url", url).finish(),
            Self::Brave { url, .. } => f
                .debug_struct("Brave")
                .field("url", url)
                .finish_non_exhaustive(),
        }
    }
}

impl SearchBackend {
    /// `SearXNG` or `Brave Search`.
    #[must_use]
    pub fn label(&self) -> &'static str {
        match self {
            Self::Searxng { .. } => "SearXNG",
            Self::Brave { .. } => "Brave Search",
        }
    }
}

/// A [`WebSearchService`] over HTTP.
#[derive(Debug)]
pub struct HttpSearch {
    backend: SearchBackend,
    /// The endpoint without its query.
    endpoint: reqwest::Url,
    client: reqwest::Client,
    max_results: usize,
}

impl HttpSearch {
    /// A service asking `backend`, each search bounded by `timeout`, at most
    /// `max_results` results (1 to 20) per search.
    ///
    /// # Errors
    ///
    /// [`SearchBackendError::Url`] when the backend's address is not an
    /// `http` or `https` URL; [`SearchBackendError::Client`] when the HTTP
    /// client cannot be built.
    pub fn new(
        backend: SearchBackend,
        timeout: Duration,
        max_results: usize,
    ) -> Result<Self, SearchBackendError> {
        let address = match &backend {
            SearchBackend::Searxng { url } => format!("{}/search", url.trim_end_matches('/')),
            SearchBackend::Brave { url, .. } => url.clone(),
        };
        let endpoint = reqwest::Url::parse(&address)
            .map_err(|e| SearchBackendError::Url {
                url: address.clone(),
                source: Box::new(e),
            })
            .and_then(|u| match u.scheme() {
                "http" | "https" => Ok(u),
                other => Err(SearchBackendError::Url {
                    url: address.clone(),
                    source: format!("the scheme is {other}, not http or https").into(),
                }),
            })?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("zr-websearch/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|source| SearchBackendError::Client { source })?;
        Ok(Self {
            backend,
            endpoint,
            client,
            max_results: max_results.clamp(1, MAX_RESULTS),
        })
    }

    /// The endpoint with `pairs` as its query.
    fn url(&self, pairs: &[(&str, &str)]) -> reqwest::Url {
        let mut url = self.endpoint.clone();
        url.query_pairs_mut().extend_pairs(pairs);
        url
    }

    async fn run(&self, query: &SearchQuery) -> Result<Vec<SearchResult>, SearchBackendError> {
        let q = with_sites(query);
        let count = self.max_results.to_string();
        let backend = self.backend.label();
        let results = match &self.backend {
            SearchBackend::Searxng { .. } => {
                let request = self.client.get(self.url(&[("q", &q), ("format", "json")]));
                let answer: SearxngAnswer = get(backend, request).await?;
                answer
                    .results
                    .into_iter()
                    .map(|r| SearchResult {
                        title: r.title,
                        url: r.url,
                        snippet: r.content.unwrap_or_default(),
                    })
                    .collect::<Vec<_>>()
            }
            SearchBackend::Brave { api_key, .. } => {
                let request = self
                    .client
                    .get(self.url(&[("q", &q), ("count", &count)]))
                    .header("X-Subscription-Token", api_key);
                let answer: BraveAnswer = get(backend, request).await?;
                answer
                    .web
                    .map(|w| w.results)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|r| SearchResult {
                        title: strip_tags(&r.title),
                        url: r.url,
                        snippet: strip_tags(&r.description.unwrap_or_default()),
                    })
                    .collect()
            }
        };
        Ok(results
            .into_iter()
            .filter(|r| domain_ok(query, &r.url))
            .take(self.max_results)
            .collect())
    }
}

impl WebSearchService for HttpSearch {
    fn search<'a>(
        &'a self,
        query: SearchQuery,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, ServiceError>> {
        Box::pin(async move {
            self.run(&query)
                .await
                .map_err(|source| ServiceError::Failed {
                    service: "web search",
                    source: Box::new(source),
                })
        })
    }
}

/// The one request of a search: sends it, refuses a status other than
/// 2xx (with the start of the body, which says why), decodes the JSON.
async fn get<T: DeserializeOwned>(
    backend: &'static str,
    request: reqwest::RequestBuilder,
) -> Result<T, SearchBackendError> {
    /// Bytes of an error body kept for the message.
    const DETAIL_BYTES: usize = 300;
    let response = request
        .header(ACCEPT, "application/json")
        .send()
        .await
        .map_err(|source| SearchBackendError::Request { backend, source })?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|source| SearchBackendError::Request { backend, source })?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let detail = error_detail(&text).unwrap_or_else(|| {
            let mut cut: String = text.chars().take(DETAIL_BYTES).collect();
            cut = cut.split_whitespace().collect::<Vec<_>>().join(" ");
            cut
        });
        return Err(SearchBackendError::Status {
            backend,
            status: status.as_u16(),
            detail,
        });
    }
    serde_json::from_slice(&body)
        .map_err(|source| SearchBackendError::Malformed { backend, source })
}

/// Brave's `{"error": {"detail": ...}}`, when the error body has one.
fn error_detail(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    value
        .pointer("/error/detail")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

/// The query with `site:` operators for the domain filters (both
/// backends understand them; the answer is filtered again anyway).
fn with_sites(query: &SearchQuery) -> String {
    let mut q = query.query.trim().to_owned();
    match query.allowed_domains.as_slice() {
        [] => {}
        [one] => q.push_str(&format!(" site:{one}")),
        many => {
            let sites: Vec<String> = many.iter().map(|d| format!("site:{d}")).collect();
            q.push_str(&format!(" ({})", sites.join(" OR ")));
        }
    }
    for d in &query.blocked_domains {
        q.push_str(&format!(" -site:{d}"));
    }
    q
}

/// Whether `url`'s host passes the filters: a domain matches itself and
/// its subdomains.
fn domain_ok(query: &SearchQuery, url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return false;
    };
    let under = |domain: &String| {
        let d = domain.trim().trim_start_matches('.').to_ascii_lowercase();
        host == d || host.ends_with(&format!(".{d}"))
    };
    (query.allowed_domains.is_empty() || query.allowed_domains.iter().any(under))
        && !query.blocked_domains.iter().any(under)
}

/// Brave marks query words with `<strong>`; the model gets plain text.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

/// SearXNG's answer (the fields zr uses).
#[derive(Deserialize)]
struct SearxngAnswer {
    results: Vec<SearxngResult>,
}

#[derive(Deserialize)]
struct SearxngResult {
    url: String,
    title: String,
    #[serde(default)]
    content: Option<String>,
}

/// Brave's `WebSearchApiResponse` (the fields zr uses); `web` is absent
/// when nothing was found.
#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveResult>,
}

#[derive(Deserialize)]
struct BraveResult {
    title: String,
    url: String,
    #[serde(default)]
    description: Option<String>,
}

#[cfg(test)]
mod tests;
