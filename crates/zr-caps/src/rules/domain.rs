//! `WebFetch(domain:...)` specifiers: which hosts a rule matches.

use std::fmt;

/// What a `WebFetch(domain:...)` rule matches.
///
/// `domain:docs.rs` matches the host `docs.rs` only; `domain:*.example.com`
/// matches its subdomains at any depth (`api.example.com`,
/// `a.b.example.com`), not `example.com` itself; `domain:*` matches every
/// host. Hosts compare without case and without a trailing `.`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct DomainPattern {
    text: String,
    /// The host, lowercase; for `*.x`, the `.x` every subdomain ends with.
    host: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Exact,
    Subdomains,
    Any,
}

impl DomainPattern {
    /// Reads the inside of `WebFetch(...)`; `Err` says what is wrong.
    pub(crate) fn parse(spec: &str) -> Result<Self, &'static str> {
        let Some(host) = spec.strip_prefix("domain:") else {
            return Err("WebFetch rules name a host after 'domain:'");
        };
        let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
        let (kind, name) = if host == "*" {
            (Kind::Any, "")
        } else if let Some(rest) = host.strip_prefix("*.") {
            (Kind::Subdomains, rest)
        } else {
            (Kind::Exact, host.as_str())
        };
        if kind != Kind::Any {
            if name.is_empty() {
                return Err("the host is empty");
            }
            let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
            if !name.chars().all(ok) || name.split('.').any(str::is_empty) {
                return Err(
                    "a host is letters, digits, '-' and dots, with at most a leading '*.' (no scheme, port or path)",
                );
            }
        }
        let host = match kind {
            Kind::Subdomains => format!(".{name}"),
            Kind::Exact | Kind::Any => name.to_owned(),
        };
        Ok(Self {
            text: spec.to_owned(),
            host,
            kind,
        })
    }

    /// The specifier as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern matches `host`.
    #[must_use]
    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match self.kind {
            Kind::Any => true,
            Kind::Exact => host == self.host,
            Kind::Subdomains => host.len() > self.host.len() && host.ends_with(&self.host),
        }
    }
}

impl fmt::Debug for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DomainPattern({:?})", self.text)
    }
}
