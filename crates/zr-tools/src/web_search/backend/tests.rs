//! Unit tests of the query rewriting, the domain filter and tag stripping.

use super::{domain_ok, strip_tags, with_sites};
use crate::web_search::SearchQuery;

fn query(allowed: &[&str], blocked: &[&str]) -> SearchQuery {
    SearchQuery {
        query: " tokio runtime ".to_owned(),
        allowed_domains: allowed.iter().map(|d| (*d).to_owned()).collect(),
        blocked_domains: blocked.iter().map(|d| (*d).to_owned()).collect(),
    }
}

#[test]
fn domain_filters_become_site_operators() {
    assert_eq!(with_sites(&query(&[], &[])), "tokio runtime");
    assert_eq!(
        with_sites(&query(&["docs.rs"], &[])),
        "tokio runtime site:docs.rs"
    );
    assert_eq!(
        with_sites(&query(&["docs.rs", "tokio.rs"], &["reddit.com"])),
        "tokio runtime (site:docs.rs OR site:tokio.rs) -site:reddit.com"
    );
}

#[test]
fn a_domain_covers_its_subdomains_only() {
    let q = query(&["rs"], &[]);
    assert!(domain_ok(&q, "https://docs.rs/tokio"));
    let q = query(&["docs.rs"], &["bad.docs.rs"]);
    assert!(domain_ok(&q, "https://docs.rs/tokio"));
    assert!(domain_ok(&q, "https://www.DOCS.rs/x"));
    assert!(!domain_ok(&q, "https://notdocs.rs/x"));
    assert!(!domain_ok(&q, "https://bad.docs.rs/x"));
    assert!(!domain_ok(&q, "not a url"));
}

#[test]
fn tags_and_entities_are_stripped() {
    assert_eq!(
        strip_tags("The <strong>Tokio</strong> runtime &amp; you"),
        "The Tokio runtime & you"
    );
}
