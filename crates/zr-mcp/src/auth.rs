//! OAuth for HTTP servers: settings, the token store, the connection's authorization and the login flow.
//!
//! Built on rmcp's `auth` support (discovery, registration, PKCE, token
//! exchange, refresh, client credentials with a secret or a signed JWT);
//! this module decides where tokens live, how a person logs in, and how
//! a 401 or 403 reaches the host.

/// The logging target whose debug lines carry OAuth secrets: rmcp's
/// `auth` module logs the authorization code it exchanges and the token
/// responses it receives. A host's log filter should keep this target at
/// `info` or above, whatever the user asks for (`zr` does).
pub const SECRET_LOG_TARGET: &str = "rmcp::transport::auth";

pub(crate) mod callback;
pub(crate) mod connect;
pub(crate) mod discovery;
pub(crate) mod login;
pub(crate) mod settings;
pub(crate) mod store;
