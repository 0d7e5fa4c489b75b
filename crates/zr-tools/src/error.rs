//! Errors of the builtin tools: the cron store, host services and the
//! addresses `WebFetch` refuses.

use std::net::IpAddr;
use std::path::PathBuf;

use thiserror::Error;

use crate::web_fetch::address::AddressClass;

/// The durable cron store could not be read or written.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CronStoreError {
    /// The store file exists but could not be read.
    #[error("cannot read the cron store {path}")]
    Read {
        /// The store file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The store file is not a valid store.
    #[error("the cron store {path} is not valid JSON of the expected shape")]
    Parse {
        /// The store file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The new store could not be written and moved into place.
    #[error("cannot write the cron store {path}")]
    Write {
        /// The store file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A cron expression does not have five fields.
    #[error(
        "cron expression '{expression}' has {fields} fields; a cron expression has 5: minute hour day-of-month month day-of-week (e.g. \"*/15 9-17 * * 1-5\")"
    )]
    FieldCount {
        /// The expression as given.
        expression: String,
        /// How many fields it has.
        fields: usize,
    },
    /// A field of a cron expression is invalid.
    #[error("invalid cron expression '{expression}'")]
    Expression {
        /// The expression as given.
        expression: String,
        /// The parser's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A valid expression that has no occurrence (e.g. `0 0 30 2 *`, the
    /// 30th of February).
    #[error(
        "cron expression '{expression}' never fires (no date matches it, e.g. a day that month does not have)"
    )]
    NeverFires {
        /// The expression as given.
        expression: String,
    },
    /// A lock file next to the store could not be opened or locked.
    #[error("cannot lock the cron store through {path}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Another scheduler holds the store's scheduler lock.
    #[error("{}", scheduler_running(path, *pid))]
    SchedulerRunning {
        /// The lock file.
        path: PathBuf,
        /// The holder's process id, when it could be read.
        pid: Option<u32>,
    },
    /// No job has this id.
    #[error("no scheduled job with id '{id}'")]
    UnknownJob {
        /// The id that was asked for.
        id: String,
    },
}

fn scheduler_running(path: &std::path::Path, pid: Option<u32>) -> String {
    let who = pid.map_or_else(
        || "another process".to_owned(),
        |pid| format!("another process (pid {pid})"),
    );
    format!(
        "{who} is already running the scheduler of this cron store (it holds the lock {})",
        path.display()
    )
}

/// A host service (web search, asking the user, configuration) failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The key is not a settable configuration key.
    #[error("unknown configuration key '{key}'")]
    UnknownKey {
        /// The key.
        key: String,
    },
    /// The value has the wrong type for the key.
    #[error("configuration key '{key}' takes {expected}")]
    WrongType {
        /// The key.
        key: String,
        /// What the key takes.
        expected: String,
    },
    /// The user declined to answer, or the host has no user to ask.
    #[error("the user did not answer")]
    NoAnswer,
    /// The service failed.
    #[error("the {service} service failed")]
    Failed {
        /// Which service ("web search", "ask user", "config").
        service: &'static str,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

/// A search backend (`HttpSearch`) could not answer.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SearchBackendError {
    /// The backend's address is not an http or https URL.
    #[error("the web search address '{url}' is not an http or https URL")]
    Url {
        /// The address.
        url: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client for web search")]
    Client {
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The request failed: no connection, a timeout, a broken answer.
    #[error("{backend} could not be reached")]
    Request {
        /// `SearXNG` or `Brave Search`.
        backend: &'static str,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The backend answered with an HTTP error.
    #[error("{backend} answered HTTP {status}: {detail}{}", status_help(*status, backend))]
    Status {
        /// `SearXNG` or `Brave Search`.
        backend: &'static str,
        /// The HTTP status.
        status: u16,
        /// What its body said (its `error.detail`, or its first bytes).
        detail: String,
    },
    /// The answer is not the JSON the backend documents.
    #[error("{backend} answered with JSON of an unexpected shape")]
    Malformed {
        /// `SearXNG` or `Brave Search`.
        backend: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
}

fn status_help(status: u16, backend: &str) -> &'static str {
    match (status, backend) {
        (403, "SearXNG") => {
            " (a SearXNG instance answers 403 to format=json unless its settings.yml lists json under search.formats)"
        }
        (401 | 403, _) => " (check the API key)",
        (429, _) => " (rate limited: try again later)",
        _ => "",
    }
}

/// `WebFetch` refused an address before connecting to it. Each one comes
/// back to the model as an error result, with the setting that allows it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub(crate) enum FetchRefused {
    /// The address carries a user name or password (`user:pass@host`).
    #[error(
        "the address of {host} carries a user name or password (user:password@), which WebFetch never sends"
    )]
    Credentials {
        /// The host the address names.
        host: String,
    },
    /// The host is an IP address that is not public.
    #[error("{address} is not a public internet address: it is {class}")]
    Address {
        /// The address, as the URL normalises it (`0x7f.1` is `127.0.0.1`).
        address: IpAddr,
        /// Why it is not public.
        class: AddressClass,
    },
    /// The host name resolves to an address that is not public.
    #[error("{host} resolves to {address}, which is not a public internet address: it is {class}")]
    Resolved {
        /// The host name.
        host: String,
        /// The first non-public address it resolves to.
        address: IpAddr,
        /// Why that address is not public.
        class: AddressClass,
    },
    /// A redirect leads to an address refused for `source`.
    #[error("it redirects to {to}, and {source}")]
    Redirect {
        /// Where the redirect leads, without user name or password.
        to: String,
        /// Why that address is refused.
        #[source]
        source: Box<FetchRefused>,
    },
}

impl FetchRefused {
    /// What the model is told beyond the refusal: which setting allows it,
    /// or that none does.
    pub(crate) fn remedy(&self) -> &'static str {
        match self {
            Self::Credentials { .. } => {
                "No setting allows credentials in an address; fetch the address without them."
            }
            Self::Redirect { source, .. } => source.remedy(),
            Self::Address { .. } | Self::Resolved { .. } => {
                "WebFetch reaches only public internet addresses. Whoever runs zr can allow this host (the WebFetch policy's private_hosts) or every private address (allow_private); other spellings of the same address (decimal or hex numbers, IPv6-mapped forms, names that resolve to it) are refused the same way."
            }
        }
    }
}
