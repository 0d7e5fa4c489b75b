//! The WebSearch backends against loopback servers that answer with the
//! documented wire formats byte for byte: SearXNG's JSON API and the Brave
//! Search API; and their bad answers (HTTP errors, malformed JSON, no
//! results, no server).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use zr_tools::{BuiltinTools, HttpSearch, SearchBackend, SearchQuery, WebSearchService};
use zr_types::error_chain;

use crate::support::{Kit, text};

/// SearXNG's answer to `format=json` (fields as an instance sends them).
const SEARXNG_BODY: &str = r#"{"query": "tokio runtime site:docs.rs", "number_of_results": 0, "results": [{"url": "https://docs.rs/tokio/latest/tokio/runtime/index.html", "title": "tokio::runtime - Rust", "content": "The Tokio runtime.\nUnlike other Rust programs, asynchronous applications require runtime support.", "publishedDate": null, "thumbnail": "", "engine": "duckduckgo", "template": "default.html", "parsed_url": ["https", "docs.rs", "/tokio/latest/tokio/runtime/index.html", "", "", ""], "img_src": "", "priority": "", "engines": ["duckduckgo", "brave"], "positions": [1, 2], "score": 3.0, "category": "general"}, {"url": "https://spam.docs.rs/tokio", "title": "Mirror", "content": "A blocked mirror", "engine": "brave", "template": "default.html", "parsed_url": ["https", "spam.docs.rs", "/tokio", "", "", ""], "engines": ["brave"], "positions": [3], "score": 0.3, "category": "general"}, {"url": "https://docs.rs/tokio/latest/tokio/runtime/struct.Runtime.html", "title": "Runtime in tokio::runtime - Rust", "engine": "duckduckgo", "template": "default.html", "parsed_url": ["https", "docs.rs", "/tokio/latest/tokio/runtime/struct.Runtime.html", "", "", ""], "engines": ["duckduckgo"], "positions": [2], "score": 0.5, "category": "general"}], "answers": [], "corrections": [], "infoboxes": [], "suggestions": ["tokio runtime builder"], "unresponsive_engines": [["google", "timeout"]]}"#;

/// Brave's `WebSearchApiResponse` (abridged to the parts a web search
/// returns; every documented field the result objects carry is kept).
const BRAVE_BODY: &str = r#"{"query": {"original": "tokio runtime", "show_strict_warning": false, "is_navigational": false, "is_news_breaking": false, "spellcheck_off": true, "country": "us", "bad_results": false, "should_fallback": false, "postal_code": "", "city": "", "header_country": "", "more_results_available": true, "state": ""}, "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}, {"type": "web", "index": 1, "all": false}], "top": [], "side": []}, "type": "search", "web": {"type": "search", "results": [{"title": "<strong>Tokio</strong> - An asynchronous Rust runtime", "url": "https://tokio.rs/", "is_source_local": false, "is_source_both": false, "description": "<strong>Tokio</strong> is an asynchronous <strong>runtime</strong> for the Rust programming language &amp; more.", "page_age": "2025-11-02T10:11:12", "profile": {"name": "Tokio", "url": "https://tokio.rs/", "long_name": "tokio.rs", "img": "https://imgs.search.brave.com/x"}, "language": "en", "family_friendly": true, "type": "search_result", "subtype": "generic", "is_live": false, "meta_url": {"scheme": "https", "netloc": "tokio.rs", "hostname": "tokio.rs", "favicon": "https://imgs.search.brave.com/y", "path": ""}, "age": "November 2, 2025"}, {"title": "tokio::<strong>runtime</strong> - Rust", "url": "https://docs.rs/tokio/latest/tokio/runtime/", "is_source_local": false, "is_source_both": false, "description": "The <strong>Tokio runtime</strong>.", "profile": {"name": "Docs.rs", "url": "https://docs.rs/", "long_name": "docs.rs", "img": "https://imgs.search.brave.com/z"}, "language": "en", "family_friendly": true, "type": "search_result", "subtype": "generic", "is_live": false, "meta_url": {"scheme": "https", "netloc": "docs.rs", "hostname": "docs.rs", "favicon": "https://imgs.search.brave.com/w", "path": " › tokio › latest › tokio › runtime"}}], "family_friendly": true}}"#;

/// A server that answers every request with `status` and `body` (as
/// `content_type`), and records each request's head.
async fn server(status: &str, content_type: &str, body: &str) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let _ = sock.write_all(response.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    (format!("http://{addr}"), seen)
}

fn searxng(url: &str) -> HttpSearch {
    HttpSearch::new(
        SearchBackend::Searxng {
            url: url.to_owned(),
        },
        Duration::from_secs(5),
        10,
    )
    .unwrap()
}

fn brave(url: &str) -> HttpSearch {
    let backend = SearchBackend::Brave {
        url: format!("{url}/res/v1/web/search"),
        api_key: "BSA-test-key".to_owned(),
    };
    HttpSearch::new(backend, Duration::from_secs(5), 5).unwrap()
}

fn query(q: &str, allowed: &[&str], blocked: &[&str]) -> SearchQuery {
    SearchQuery {
        query: q.to_owned(),
        allowed_domains: allowed.iter().map(|d| (*d).to_owned()).collect(),
        blocked_domains: blocked.iter().map(|d| (*d).to_owned()).collect(),
    }
}

fn kit(service: HttpSearch) -> Kit {
    let dir = tempfile::tempdir().unwrap();
    let tools = BuiltinTools::new(dir.path().join("cron.json")).with_web_search(Arc::new(service));
    Kit::with(tools, dir)
}

#[tokio::test]
async fn searxng_json_api() {
    let (url, seen) = server("200 OK", "application/json", SEARXNG_BODY).await;
    let kit = kit(searxng(&url));
    let out = kit
        .call("WebSearch", json!({"query": "tokio runtime", "allowed_domains": ["docs.rs"], "blocked_domains": ["spam.docs.rs"]}))
        .await;
    assert!(!out.is_error);
    assert_eq!(
        text(&out),
        "Results for \"tokio runtime\":\n\
         1. tokio::runtime - Rust\n   https://docs.rs/tokio/latest/tokio/runtime/index.html\n   The Tokio runtime. Unlike other Rust programs, asynchronous applications require runtime support.\n\
         2. Runtime in tokio::runtime - Rust\n   https://docs.rs/tokio/latest/tokio/runtime/struct.Runtime.html\n   \n"
    );
    let head = seen.lock().unwrap()[0].clone();
    assert!(
        head.starts_with("GET /search?q=tokio+runtime+site%3Adocs.rs+-site%3Aspam.docs.rs&format=json HTTP/1.1\r\n"),
        "{head}"
    );
    assert!(
        head.to_lowercase()
            .contains("\r\naccept: application/json\r\n"),
        "{head}"
    );
}

#[tokio::test]
async fn brave_search_api() {
    let (url, seen) = server("200 OK", "application/json", BRAVE_BODY).await;
    let results = brave(&url)
        .search(query("tokio runtime", &[], &[]))
        .await
        .unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].title, "Tokio - An asynchronous Rust runtime");
    assert_eq!(results[0].url, "https://tokio.rs/");
    assert_eq!(
        results[0].snippet,
        "Tokio is an asynchronous runtime for the Rust programming language & more."
    );
    assert_eq!(results[1].snippet, "The Tokio runtime.");
    let head = seen.lock().unwrap()[0].clone();
    assert!(
        head.starts_with("GET /res/v1/web/search?q=tokio+runtime&count=5 HTTP/1.1\r\n"),
        "{head}"
    );
    let lower = head.to_lowercase();
    assert!(
        lower.contains("\r\nx-subscription-token: bsa-test-key\r\n"),
        "{head}"
    );
    assert!(lower.contains("\r\naccept: application/json\r\n"), "{head}");
}

#[tokio::test]
async fn no_results_is_an_answer_not_an_error() {
    let (url, _) = server("200 OK", "application/json", r#"{"query": "zzqx", "number_of_results": 0, "results": [], "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}"#).await;
    let out = kit(searxng(&url))
        .call("WebSearch", json!({"query": "zzqx"}))
        .await;
    assert!(!out.is_error);
    assert_eq!(text(&out), "No results for \"zzqx\".");
    // Brave leaves `web` out when nothing was found.
    let (url, _) = server("200 OK", "application/json", r#"{"query": {"original": "zzqx"}, "mixed": {"type": "mixed", "main": [], "top": [], "side": []}, "type": "search"}"#).await;
    assert!(
        brave(&url)
            .search(query("zzqx", &[], &[]))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn http_errors_say_what_the_backend_said() {
    let (url, _) = server("403 Forbidden", "text/html; charset=utf-8", "<!DOCTYPE html>\n<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1></body></html>").await;
    let e = searxng(&url)
        .search(query("x", &[], &[]))
        .await
        .unwrap_err();
    let chain = error_chain(&e);
    assert!(
        chain.contains(
            "SearXNG answered HTTP 403: <!DOCTYPE html> <html><head><title>403 Forbidden</title>"
        ),
        "{chain}"
    );
    assert!(
        chain.contains("unless its settings.yml lists json under search.formats"),
        "{chain}"
    );

    let (url, _) = server("422 Unprocessable Entity", "application/json", r#"{"type": "ErrorResponse", "error": {"id": "c3bd9d5b-1b4a-4c4e-8a4b-2d0f1a0b9e77", "status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid.", "meta": {"component": "authentication"}}, "time": 1733000000}"#).await;
    let e = brave(&url).search(query("x", &[], &[])).await.unwrap_err();
    assert!(
        error_chain(&e).contains(
            "Brave Search answered HTTP 422: The provided subscription token is invalid."
        ),
        "{}",
        error_chain(&e)
    );

    let (url, _) = server("429 Too Many Requests", "application/json", r#"{"type": "ErrorResponse", "error": {"id": "x", "status": 429, "code": "RATE_LIMITED", "detail": "Request rate limit exceeded for plan.", "meta": {"plan": "Free", "rate_limit": 1, "rate_current": 2}}, "time": 1733000000}"#).await;
    let e = brave(&url).search(query("x", &[], &[])).await.unwrap_err();
    assert!(
        error_chain(&e).contains(
            "HTTP 429: Request rate limit exceeded for plan. (rate limited: try again later)"
        ),
        "{}",
        error_chain(&e)
    );
}

#[tokio::test]
async fn malformed_json_is_refused_by_name() {
    let (url, _) = server(
        "200 OK",
        "application/json",
        r#"{"results": [{"title": "no url"}]}"#,
    )
    .await;
    let e = searxng(&url)
        .search(query("x", &[], &[]))
        .await
        .unwrap_err();
    let chain = error_chain(&e);
    assert!(
        chain.contains("SearXNG answered with JSON of an unexpected shape: missing field `url`"),
        "{chain}"
    );
    let (url, _) = server("200 OK", "application/json", "{\"web\": {\"results\": [").await;
    let e = brave(&url).search(query("x", &[], &[])).await.unwrap_err();
    assert!(
        error_chain(&e).contains("Brave Search answered with JSON of an unexpected shape: EOF"),
        "{}",
        error_chain(&e)
    );
}

#[tokio::test]
async fn no_server_and_bad_addresses() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let e = searxng(&url)
        .search(query("x", &[], &[]))
        .await
        .unwrap_err();
    assert!(
        error_chain(&e).starts_with("the web search service failed: SearXNG could not be reached"),
        "{}",
        error_chain(&e)
    );
    let e = HttpSearch::new(
        SearchBackend::Searxng {
            url: "ftp://x".to_owned(),
        },
        Duration::from_secs(1),
        5,
    )
    .unwrap_err();
    assert_eq!(
        error_chain(&e),
        "the web search address 'ftp://x/search' is not an http or https URL: the scheme is ftp, not http or https"
    );
}
