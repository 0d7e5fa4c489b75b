//! `WebSearch`: delegates to a host search service (the SearXNG and Brave
//! Search backends of `backend.rs`, or the host's own); without one it
//! says so and never invents results.

mod backend;

pub use backend::{BRAVE_DEFAULT_URL, HttpSearch, SearchBackend};

use std::fmt::{self, Write as _};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zr_types::{BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::bound::{cut_line, cut_text};
use crate::error::ServiceError;
use crate::toolkit::{Builtin, Hints, tool_failed};

/// Results shown at most.
pub(crate) const MAX_RESULTS: usize = 20;
/// Characters kept of a title or an address.
const MAX_TITLE_CHARS: usize = 300;
/// Characters kept of one excerpt.
const MAX_SNIPPET_CHARS: usize = 1_000;
/// Bytes of output at most.
pub(crate) const MAX_OUTPUT_BYTES: usize = 32 * 1024;

/// A web search request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchQuery {
    /// What to search for.
    pub query: String,
    /// Only return results from these domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_domains: Vec<String>,
    /// Never return results from these domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_domains: Vec<String>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResult {
    /// The page title.
    pub title: String,
    /// Its address.
    pub url: String,
    /// A short excerpt.
    pub snippet: String,
}

/// The host's web search.
pub trait WebSearchService: Send + Sync + fmt::Debug {
    /// Runs one search.
    ///
    /// # Errors
    ///
    /// [`ServiceError`] when the search could not be made.
    fn search<'a>(
        &'a self,
        query: SearchQuery,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, ServiceError>>;
}

/// The `WebSearch` tool.
#[derive(Debug)]
pub(crate) struct WebSearchTool {
    service: Option<Arc<dyn WebSearchService>>,
}

impl WebSearchTool {
    pub(crate) fn new(service: Option<Arc<dyn WebSearchService>>) -> Self {
        Self { service }
    }
}

impl Builtin for WebSearchTool {
    type Input = SearchQuery;
    const NAME: BuiltinName = BuiltinName::WebSearch;
    const HINTS: Hints = Hints::OPEN_WORLD;

    fn details(&self) -> String {
        format!(
            "Returns titles, addresses and excerpts from the host's search service; filter with allowed_domains or blocked_domains. Use WebFetch to read a result, and cite the address of each result you use. At most {MAX_RESULTS} results and {} KiB are returned, saying how much was cut.",
            MAX_OUTPUT_BYTES / 1024
        )
    }

    fn run<'a>(
        &'a self,
        input: SearchQuery,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let Some(service) = &self.service else {
                return Ok(ToolOutput::error(
                    "WebSearch: no web search service is configured on this host, so no search was made. Use WebFetch on a known address, or ask the user.",
                ));
            };
            if input.query.trim().is_empty() {
                return Ok(ToolOutput::error("WebSearch: `query` is empty."));
            }
            let query = input.query.clone();
            let results = service
                .search(input)
                .await
                .map_err(|e| tool_failed(Self::NAME.as_str(), e))?;
            if results.is_empty() {
                return Ok(ToolOutput::text(format!("No results for {query:?}.")));
            }
            Ok(ToolOutput::text(render(&query, &results)))
        })
    }
}

/// The results as text: at most [`MAX_RESULTS`] of them, each field cut to
/// a line, whole results only up to [`MAX_OUTPUT_BYTES`], and a last line
/// saying how many were left out.
fn render(query: &str, results: &[SearchResult]) -> String {
    /// Room kept for the closing note.
    const NOTE_ROOM: usize = 200;
    let one_line = |s: &str, max: usize| cut_line(&s.replace(['\n', '\r'], " "), max);
    let mut text = format!("Results for {query:?}:\n");
    let mut shown = 0;
    for (i, r) in results.iter().take(MAX_RESULTS).enumerate() {
        let entry = format!(
            "{}. {}\n   {}\n   {}\n",
            i + 1,
            one_line(&r.title, MAX_TITLE_CHARS),
            one_line(&r.url, MAX_TITLE_CHARS),
            one_line(&r.snippet, MAX_SNIPPET_CHARS)
        );
        if shown > 0 && text.len() + entry.len() > MAX_OUTPUT_BYTES - NOTE_ROOM {
            break;
        }
        text.push_str(&entry);
        shown += 1;
    }
    if shown < results.len() {
        let _ = writeln!(
            text,
            "[showing {shown} of {} results (at most {MAX_RESULTS} and {} KiB); refine the query or filter by domain]",
            results.len(),
            MAX_OUTPUT_BYTES / 1024
        );
    }
    // A safety net only: one result is far below the byte limit.
    cut_text(
        &text,
        MAX_OUTPUT_BYTES,
        "refine the query or filter by domain",
    )
}
