//! The runtime services behind `WebSearch` (from `zr.toml`) and the word
//! `CronCreate` adds about `zr cron`.
//! A tool whose service is not built here is in no pool (the resolver
//! removes it with "no service configured"), so `zr resolve` shows why.

use std::sync::Arc;
use std::time::Duration;

use zr_tools::{BRAVE_DEFAULT_URL, HttpSearch, SearchBackend, WebSearchService};

use crate::config::SearchBackendKind;
use crate::config_key::config_key_error;
use crate::error::CliError;
use crate::project::Project;

/// What `CronCreate` adds to its answer in zr: when the prompt will fire
/// (`zr cron`, in `cron.rs`, fires it).
pub(crate) const FIRES_UNDER: &str = "It fires while `zr cron` runs in this project (each firing a new session, one at a time); `zr cron list` shows the scheduled prompts.";

/// The environment variable of the Brave Search API's token when
/// `[web_search] api_key_env` says nothing.
pub(crate) const BRAVE_KEY_ENV: &str = "BRAVE_SEARCH_API_KEY";
/// Results per search when `[web_search] max_results` says nothing.
pub(crate) const DEFAULT_MAX_RESULTS: usize = 10;
/// Seconds per search when `[web_search] timeout_secs` says nothing.
const DEFAULT_TIMEOUT_SECS: u64 = 20;

/// The web search service `[web_search]` asks for, if any. A Brave backend
/// whose key variable is not set is no service: `WebSearch` is left out,
/// with a warning (the run goes on without searching).
///
/// # Errors
///
/// A [`CliError::Config`] naming the key: a SearXNG backend without `url`,
/// an address that is not http(s), `max_results` above 20.
pub(crate) fn web_search(
    project: &Project,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Arc<dyn WebSearchService>>, CliError> {
    let settings = &project.config.web_search;
    let Some(kind) = settings.backend else {
        return Ok(None);
    };
    let max_results = settings.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
    if max_results > 20 {
        return Err(config_key_error(
            project,
            "web_search.max_results",
            format!("{max_results} is more than WebSearch shows"),
            "write a number from 1 to 20",
        ));
    }
    let backend = match kind {
        SearchBackendKind::Searxng => {
            let Some(url) = settings.url.clone() else {
                return Err(config_key_error(
                    project,
                    "web_search.backend",
                    "backend = \"searxng\" needs the instance's address".to_owned(),
                    "add url = \"http://localhost:8888\" (your SearXNG instance) under [web_search]",
                ));
            };
            SearchBackend::Searxng { url }
        }
        SearchBackendKind::Brave => {
            let var = settings.api_key_env.as_deref().unwrap_or(BRAVE_KEY_ENV);
            let Some(api_key) = env(var).filter(|k| !k.trim().is_empty()) else {
                eprintln!(
                    "warning: [web_search] backend = \"brave\" needs the API key in {var}, which is not set; WebSearch is left out\n  help: export {var}=... (a Brave Search API subscription token), or remove [web_search]"
                );
                return Ok(None);
            };
            SearchBackend::Brave {
                url: settings
                    .url
                    .clone()
                    .unwrap_or_else(|| BRAVE_DEFAULT_URL.to_owned()),
                api_key,
            }
        }
    };
    let timeout = Duration::from_secs(settings.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS));
    let service = HttpSearch::new(backend, timeout, max_results).map_err(|e| {
        config_key_error(
            project,
            "web_search.url",
            zr_types::error_chain(&e),
            "write the address with http:// or https://",
        )
    })?;
    Ok(Some(Arc::new(service)))
}
