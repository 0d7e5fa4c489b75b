//! The crate's errors.

use std::time::Duration;

use thiserror::Error;

/// An HTTP call to a Restate server that brought no answer.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HttpError {
    /// No whole answer within the time limit.
    #[error("{url} did not answer within {timeout:?}")]
    Timeout {
        /// The URL called.
        url: String,
        /// The limit.
        timeout: Duration,
    },
    /// The call failed otherwise (no connection, a broken answer).
    #[error("cannot call {url}")]
    Request {
        /// The URL called.
        url: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },
}

/// What can go wrong serving or registering a worker.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RestateError {
    /// The endpoint's address could not be bound.
    #[error("could not listen on {addr}")]
    Listen {
        /// The address asked for.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The admin API could not be asked to register the deployment.
    #[error("could not register {endpoint} with the Restate admin API at {admin}")]
    RegisterCall {
        /// The admin URL.
        admin: String,
        /// The endpoint's URL.
        endpoint: String,
        /// Why no answer came.
        #[source]
        source: HttpError,
    },
    /// The admin API refused the deployment.
    #[error("could not register {endpoint} with the Restate admin API at {admin}: {message}")]
    Register {
        /// The admin URL.
        admin: String,
        /// The endpoint's URL.
        endpoint: String,
        /// What the API answered, or why it could not be asked.
        message: String,
    },
    /// A turn could not be submitted, or its answer not awaited.
    #[error("the turn of session {session} through {ingress} failed")]
    TurnCall {
        /// The ingress URL.
        ingress: String,
        /// The session.
        session: String,
        /// Why no answer came.
        #[source]
        source: HttpError,
    },
    /// The ingress refused a turn, or the turn failed.
    #[error("the turn of session {session} through {ingress} failed: {message}")]
    Turn {
        /// The ingress URL.
        ingress: String,
        /// The session.
        session: String,
        /// What the ingress answered, or why it could not be asked.
        message: String,
    },
    /// The admin API's SQL introspection could not be asked.
    #[error("the Restate admin API at {admin} could not be queried")]
    AdminCall {
        /// The admin URL.
        admin: String,
        /// Why no answer came.
        #[source]
        source: HttpError,
    },
    /// The admin API's SQL introspection answered something else than
    /// rows.
    #[error("the Restate admin API at {admin} could not be queried: {message}")]
    Admin {
        /// The admin URL.
        admin: String,
        /// What the API answered, or why it could not be asked.
        message: String,
    },
    /// A URL is not `http://HOST:PORT`.
    #[error("'{url}' is not an http://HOST:PORT URL")]
    Url {
        /// The URL as given.
        url: String,
    },
}
