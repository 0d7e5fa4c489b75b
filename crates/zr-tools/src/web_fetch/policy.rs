//! Where `WebFetch` may connect: [`WebFetchPolicy`], the check of an
//! address before the request and at every redirect, and the DNS resolver
//! that refuses names resolving to non-public addresses.
//!
//! IP literals (`http://127.0.0.1/`, `http://[::1]/`, and the decimal and
//! hex forms `http://2130706433/`, `http://0x7f.1/`, which the URL parser
//! turns into `127.0.0.1`) never reach a resolver, so [`check_url`] judges
//! them before the request and again at every redirect hop. Names go
//! through [`GuardedResolver`]: the addresses it hands to the connector
//! are the ones it checked, so a name cannot answer one address to the
//! check and another to the connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect::Policy;

use crate::error::FetchRefused;
use crate::web_fetch::address::classify;

/// Which addresses `WebFetch` may reach beyond the public internet.
///
/// The default refuses every address that is not public unicast: loopback,
/// unspecified, private, link-local (cloud metadata), unique-local,
/// carrier-grade NAT, multicast, broadcast, documentation, benchmarking and
/// reserved ranges, IPv6 forms carrying one of them included, whether the
/// URL names the address or a name resolves to it. Addresses with a user
/// name or password (`http://user:pass@host/`) are refused whatever the
/// policy says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebFetchPolicy {
    /// Reach every non-public address (a trusted intranet). Default: no.
    pub allow_private: bool,
    /// Hosts that may be, or resolve to, non-public addresses, on any
    /// port: names (`localhost`, `wiki.corp.example`; compared without
    /// case and without a trailing dot, subdomains not included) and IP
    /// addresses (`127.0.0.1`, `::1` or `[::1]`). A name allows what it
    /// resolves to, not the same address written as an IP literal.
    pub private_hosts: Vec<String>,
}

impl WebFetchPolicy {
    /// What the model is told about the addresses it may fetch.
    pub(crate) fn describe(&self) -> String {
        const REFUSED: &str = "Only public internet addresses are reached: loopback (localhost), private, link-local and other non-public addresses are refused, whatever the spelling of the address or the name that resolves to them, and so are addresses with a user name or password.";
        match (self.allow_private, self.private_hosts.as_slice()) {
            (true, _) => {
                "Private and loopback addresses are allowed; addresses with a user name or password are refused.".to_owned()
            }
            (false, []) => REFUSED.to_owned(),
            (false, hosts) => format!(
                "{REFUSED} Allowed beyond them: {}.",
                hosts.join(", ")
            ),
        }
    }

    /// Whether `host` (a URL's host or a name being resolved) may reach
    /// non-public addresses.
    fn allows_private(&self, host: &str) -> bool {
        self.allow_private || self.private_hosts.iter().any(|h| same_host(h, host))
    }
}

/// Whether two spellings name the same host: names without case and
/// trailing dot, IP addresses as addresses (brackets optional).
fn same_host(a: &str, b: &str) -> bool {
    fn bare(h: &str) -> &str {
        let h = h.trim();
        let h = h
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(h);
        h.strip_suffix('.').unwrap_or(h)
    }
    let (a, b) = (bare(a), bare(b));
    match (a.parse::<IpAddr>(), b.parse::<IpAddr>()) {
        (Ok(x), Ok(y)) => x == y,
        (Err(_), Err(_)) => a.eq_ignore_ascii_case(b),
        _ => false,
    }
}

/// Checks what can be checked of `url` without resolving it: no user name
/// or password, and an IP-literal host that is public or allowed. Named
/// hosts pass here; [`GuardedResolver`] judges what they resolve to.
pub(crate) fn check_url(policy: &WebFetchPolicy, url: &Url) -> Result<(), FetchRefused> {
    if !url.username().is_empty() || url.password().is_some() {
        return Err(FetchRefused::Credentials {
            host: url.host_str().unwrap_or("").to_owned(),
        });
    }
    // The URL parser has already turned every IPv4 spelling of an http(s)
    // host into dotted decimal, and writes IPv6 hosts in brackets; a name
    // never parses as an address.
    let host = url.host_str().unwrap_or("");
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let Ok(address) = bare.parse::<IpAddr>() else {
        return Ok(());
    };
    match classify(address) {
        Some(class) if !policy.allows_private(&address.to_string()) => {
            Err(FetchRefused::Address { address, class })
        }
        _ => Ok(()),
    }
}

/// `url` without user name and password, to be shown.
pub(crate) fn without_credentials(url: &Url) -> Url {
    let mut shown = url.clone();
    // Fails only for URLs that cannot have credentials: nothing to remove.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown
}

/// The redirect policy of `WebFetch`: every hop's address goes through
/// [`check_url`], then at most `max_redirects` hops are followed.
pub(crate) fn redirect_policy(policy: Arc<WebFetchPolicy>, max_redirects: usize) -> Policy {
    let limit = Policy::limited(max_redirects);
    Policy::custom(move |attempt| match check_url(&policy, attempt.url()) {
        Ok(()) => limit.redirect(attempt),
        Err(refused) => {
            let to = without_credentials(attempt.url()).to_string();
            attempt.error(FetchRefused::Redirect {
                to,
                source: Box::new(refused),
            })
        }
    })
}

/// The system resolver (`getaddrinfo` through `tokio::net::lookup_host`),
/// refusing a name when any address it resolves to is not public, unless
/// the policy allows the name. Refusing on any, rather than dropping the
/// non-public answers, leaves nothing to a name that answers a public and
/// a private address in turn (DNS rebinding).
#[derive(Debug)]
pub(crate) struct GuardedResolver {
    policy: Arc<WebFetchPolicy>,
}

impl GuardedResolver {
    pub(crate) fn new(policy: Arc<WebFetchPolicy>) -> Self {
        Self { policy }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        Box::pin(async move {
            let host = name.as_str();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
            if !policy.allows_private(host)
                && let Some((address, class)) = addrs
                    .iter()
                    .find_map(|a| classify(a.ip()).map(|class| (a.ip(), class)))
            {
                return Err(FetchRefused::Resolved {
                    host: host.to_owned(),
                    address,
                    class,
                }
                .into());
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests;
