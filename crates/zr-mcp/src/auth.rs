//! OAuth for HTTP servers: settings, the token store, the connection's authorization and the login flow.
//!
//! Built on rmcp's `auth` support (discovery, registration, PKCE, token
//! exchange, refresh, client credentials with a secret or a signed JWT);
//! this module decides where tokens live, how a person logs in, and how
//! a 401 or 403 reaches the host.

pub(crate) mod callback;
pub(crate) mod connect;
pub(crate) mod discovery;
pub(crate) mod login;
pub(crate) mod settings;
pub(crate) mod store;
