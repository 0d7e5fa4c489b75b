//! The zr tool-pool resolver: which tools each agent can see and run.
//!
//! [`resolve`] is a pure function from a [`ResolveInput`] to a
//! [`ResolvedPool`]. It applies the steps R1-R8 of DESIGN.md section 4 in
//! order and records each removal, replacement and warning, so that every
//! answer to "why does this agent (not) have tool X" is in the output.
//!
//! ```
//! use zr_caps::{derive, AgentCapabilities, AgentOptions};
//! use zr_resolve::{default_builtins, resolve, DerivedKind, ResolveInput, ResolvePolicy, Role};
//!
//! let builtins = default_builtins();
//! let caps = derive(&AgentOptions::default(), &AgentCapabilities::default());
//! let policy = ResolvePolicy::default();
//! let input = ResolveInput::new(Role::Derived { kind: DerivedKind::Explore, background: false }, &builtins, &caps, &[], &policy);
//! let pool = resolve(&input).unwrap();
//! assert!(pool.advertised().iter().all(|t| t.is_read_only() || t.name.as_str() == "Bash"));
//! ```
//!
//! Architecture invariants: no I/O, no async, no clocks, no randomness, no
//! hash maps. The same input gives byte-identical output on every run and
//! machine; `cargo xtask tidy` checks the source for the forbidden items.

mod agent;
mod ahead;
mod error;
mod fork;
mod list;
mod memo;
mod name_index;
mod policy;
mod pool;
mod resolve;
mod role;
mod scenario;
#[cfg(test)]
mod test_input;

pub use error::{ResolveError, ScenarioError};
pub use list::{Tools, ToolsIter};
pub use memo::{DEFAULT_MEMO_CAPACITY, PoolMemo};
pub use policy::{LazyPolicy, ResolvePolicy};
pub use pool::{RemovalReason, Removed, Replaced, ResolvedPool, Step, Warning};
pub use resolve::{ResolveInput, default_builtins, resolve};
pub use role::{DerivedKind, Role};

pub use scenario::{AgentReport, Scenario, ScenarioReport};
