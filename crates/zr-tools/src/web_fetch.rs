//! `WebFetch`: HTTP(S) GET with size, time and redirect limits; HTML turned
//! into Markdown; binary and oversized bodies refused with a clear message;
//! non-public addresses refused unless the [`WebFetchPolicy`] allows them.

pub(crate) mod address;
mod policy;

use std::error::Error as _;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use schemars::JsonSchema;
use serde::Deserialize;
use zr_types::{Access, BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::bound::cut_text;
use crate::error::FetchRefused;
use crate::read::looks_binary;
use crate::toolkit::{Builtin, Hints, tool_failed};
use crate::web_fetch::policy::{GuardedResolver, check_url, redirect_policy, without_credentials};

pub use crate::web_fetch::policy::WebFetchPolicy;

/// Limits of `WebFetch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebFetchLimits {
    /// Largest body read, in bytes; reading stops beyond it (default 5 MiB).
    pub max_body_bytes: usize,
    /// Time for the whole request, body included (default 30 s).
    pub timeout: Duration,
    /// Redirects followed at most (default 5).
    pub max_redirects: usize,
    /// Bytes of Markdown or text returned at most (default 100 000).
    pub max_output_bytes: usize,
}

impl Default for WebFetchLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: 5 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_redirects: 5,
            max_output_bytes: 100_000,
        }
    }
}

/// Input of `WebFetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebFetchInput {
    /// The http:// or https:// address to fetch.
    url: String,
    /// What you want from the page; it is echoed above the page (no model summarises the page here).
    prompt: Option<String>,
}

/// The host a `WebFetch` call would fetch from, for per-domain permission
/// rules (`WebFetch(domain:docs.rs)`): the `url` field's host as the URL
/// parser normalises it (lowercase, internationalised names in punycode,
/// IPv4 in dotted decimal, IPv6 in brackets), without a trailing dot, so
/// that `DOCS.rs.` and `docs.rs` are one domain. `None` when the input has
/// no `url` string or it is not an http(s) URL with a host.
///
/// Redirects may lead elsewhere; the check of addresses
/// ([`WebFetchPolicy`]) applies to every hop, this answer to the first.
#[must_use]
pub fn fetch_host(input: &serde_json::Value) -> Option<String> {
    host_of(input.get("url")?.as_str()?)
}

/// [`fetch_host`] of the address `url`.
pub(crate) fn host_of(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// The `WebFetch` tool.
#[derive(Debug)]
pub(crate) struct WebFetchTool {
    limits: WebFetchLimits,
    policy: Arc<WebFetchPolicy>,
    /// Built on first use and shared by every call (connection pool, TLS
    /// roots loaded once).
    client: OnceLock<reqwest::Client>,
}

impl WebFetchTool {
    pub(crate) fn new(limits: WebFetchLimits, policy: WebFetchPolicy) -> Self {
        Self {
            limits,
            policy: Arc::new(policy),
            client: OnceLock::new(),
        }
    }

    fn client(&self) -> Result<reqwest::Client, ToolError> {
        if let Some(client) = self.client.get() {
            return Ok(client.clone());
        }
        let limits = &self.limits;
        let client = reqwest::Client::builder()
            .redirect(redirect_policy(
                Arc::clone(&self.policy),
                limits.max_redirects,
            ))
            .dns_resolver(GuardedResolver::new(Arc::clone(&self.policy)))
            // A proxy would resolve and connect in our place, past the
            // resolver's check: WebFetch connects directly.
            .no_proxy()
            .timeout(limits.timeout)
            .connect_timeout(limits.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("zr-webfetch/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| tool_failed("WebFetch", e))?;
        Ok(self.client.get_or_init(|| client).clone())
    }

    async fn fetch(&self, input: WebFetchInput) -> Result<ToolOutput, ToolError> {
        let limits = &self.limits;
        let url = match reqwest::Url::parse(&input.url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u,
            Ok(u) => {
                return Ok(ToolOutput::error(format!(
                    "WebFetch: scheme '{}' is not supported; give an http:// or https:// address.",
                    u.scheme()
                )));
            }
            Err(e) => {
                return Ok(ToolOutput::error(format!(
                    "WebFetch: {:?} is not a valid address ({e}); give a full http:// or https:// URL.",
                    input.url
                )));
            }
        };
        if let Err(refused) = check_url(&self.policy, &url) {
            return Ok(ToolOutput::error(describe_refusal(&url, &refused)));
        }
        let client = self.client()?;
        let mut resp = match client
            .get(url.clone())
            .header(
                ACCEPT,
                "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.1",
            )
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => return Ok(ToolOutput::error(describe_error(&url, &e, limits))),
        };
        let final_url = resp.url().clone();
        let status = resp.status();
        if !status.is_success() {
            return Ok(ToolOutput::error(format!(
                "WebFetch: {final_url} answered HTTP {status}."
            )));
        }
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let mime = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_owned();
        if !mime.is_empty() && !is_textual(&mime) {
            return Ok(ToolOutput::error(format!(
                "WebFetch: {final_url} is {mime}, not a text or HTML page; WebFetch reads text, HTML, JSON and XML only."
            )));
        }
        if let Some(len) = resp.content_length()
            && len > limits.max_body_bytes as u64
        {
            return Ok(ToolOutput::error(format!(
                "WebFetch: {final_url} is {len} bytes; at most {} bytes are read.",
                limits.max_body_bytes
            )));
        }
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > limits.max_body_bytes {
                        return Ok(ToolOutput::error(format!(
                            "WebFetch: the body of {final_url} is larger than {} bytes; reading stopped there.",
                            limits.max_body_bytes
                        )));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return Ok(ToolOutput::error(describe_error(&final_url, &e, limits))),
            }
        }
        let encoding = charset_of(&content_type);
        let wide = encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE;
        if !wide && looks_binary(&body[..body.len().min(8192)]) {
            return Ok(ToolOutput::error(format!(
                "WebFetch: {final_url} returned binary data{}; WebFetch reads text and HTML pages.",
                if mime.is_empty() {
                    String::new()
                } else {
                    format!(" ({mime})")
                }
            )));
        }
        // A byte order mark wins over the declared charset, as in browsers.
        let (text, _, _) = encoding.decode(&body);
        let html = mime == "text/html"
            || mime == "application/xhtml+xml"
            || (mime.is_empty() && text.trim_start().starts_with('<'));
        let content = if html {
            html_to_markdown(&text)
        } else {
            text.into_owned()
        };
        let mut out = String::new();
        if let Some(prompt) = &input.prompt {
            out.push_str(&format!("Your question: {prompt}\n"));
        }
        out.push_str(&format!("URL: {final_url}"));
        if final_url != url {
            out.push_str(&format!(" (redirected from {url})"));
        }
        out.push_str(&format!(
            "\nContent-Type: {}\n\n",
            if mime.is_empty() { "unknown" } else { &mime }
        ));
        out.push_str(&content);
        Ok(ToolOutput::text(cut_text(
            &out,
            limits.max_output_bytes,
            "the page is longer; fetch a more specific address",
        ))
        .with_display(format!("fetched {final_url} ({} bytes)", body.len())))
    }
}

/// The encoding named by the `charset` parameter of a Content-Type, UTF-8
/// when there is none or it is unknown.
fn charset_of(content_type: &str) -> &'static encoding_rs::Encoding {
    let label = content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        (name.trim() == "charset").then(|| value.trim().trim_matches('"'))
    });
    match label {
        None => encoding_rs::UTF_8,
        Some(label) => encoding_rs::Encoding::for_label(label.as_bytes()).unwrap_or_else(|| {
            tracing::debug!(label, "unknown charset; decoding as UTF-8");
            encoding_rs::UTF_8
        }),
    }
}

fn is_textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime.ends_with("+xml")
        || mime.ends_with("+json")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/x-yaml"
                | "application/yaml"
                | "application/toml"
        )
}

/// HTML to Markdown, without scripts, styles and other non-content tags.
pub(crate) fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "iframe", "svg", "template", "head",
        ])
        .build();
    match converter.convert(html) {
        Ok(md) => md,
        Err(e) => {
            tracing::debug!(%e, "HTML conversion failed; returning the raw HTML");
            html.to_owned()
        }
    }
}

/// The refusal somewhere in the causes of `e` (the resolver's and the
/// redirect policy's errors come back wrapped by reqwest and hyper).
fn refusal_in(e: &reqwest::Error) -> Option<&FetchRefused> {
    let mut cause = e.source();
    while let Some(c) = cause {
        if let Some(refused) = c.downcast_ref::<FetchRefused>() {
            return Some(refused);
        }
        cause = c.source();
    }
    None
}

/// What the model reads when an address is refused: which address, why,
/// and which setting would allow it. Credentials are left out of the URL.
fn describe_refusal(url: &reqwest::Url, refused: &FetchRefused) -> String {
    let shown = without_credentials(url);
    format!("WebFetch refused {shown}: {refused}. {}", refused.remedy())
}

fn describe_error(url: &reqwest::Url, e: &reqwest::Error, limits: &WebFetchLimits) -> String {
    if let Some(refused) = refusal_in(e) {
        describe_refusal(url, refused)
    } else if e.is_redirect() {
        format!(
            "WebFetch: {url} redirected more than {} times; giving up.",
            limits.max_redirects
        )
    } else if e.is_timeout() {
        format!(
            "WebFetch: {url} did not answer within {} s.",
            limits.timeout.as_secs_f64()
        )
    } else if e.is_connect() {
        format!("WebFetch: cannot connect to {url}: {e}.")
    } else {
        format!("WebFetch: fetching {url} failed: {e}.")
    }
}

impl Builtin for WebFetchTool {
    type Input = WebFetchInput;
    const NAME: BuiltinName = BuiltinName::WebFetch;
    const HINTS: Hints = Hints {
        idempotent: Some(true),
        ..Hints::OPEN_WORLD
    };

    fn details(&self) -> String {
        format!(
            "GETs an http(s) address (following up to {} redirects, within {} s, bodies up to {} bytes) and returns HTML as Markdown, and text, JSON or XML as is, at most {} bytes. Binary content (images, PDFs, archives) is refused. {}",
            self.limits.max_redirects,
            self.limits.timeout.as_secs(),
            self.limits.max_body_bytes,
            self.limits.max_output_bytes,
            self.policy.describe()
        )
    }

    fn access(input: &Self::Input, _cwd: &Path) -> Vec<Access> {
        host_of(&input.url)
            .map(|host| Access::Fetch { host })
            .into_iter()
            .collect()
    }

    fn run<'a>(
        &'a self,
        input: WebFetchInput,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.fetch(input))
    }
}
