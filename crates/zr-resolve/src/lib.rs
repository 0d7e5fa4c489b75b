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
//! Definitions are shared as `Arc<ToolDefinition>` in shared lists; a pool
//! holds the lists and positions into them, so resolving, cloning and
//! dropping a pool copies no schema and changes no definition's reference
//! count.
//!
//! # Structure
//!
//! - `resolve.rs`: [`resolve`], [`ResolveInput`] (with `no_service`: the
//!   builtins whose runtime service is missing, removed at R1),
//!   [`default_builtins`]. `policy.rs` and `role.rs`: the other inputs.
//! - `agent.rs`: root and derived agents. R1 assembles with
//!   `name_index.rs` (look-ups by precomputed `stable_hash`, never
//!   iterated) and decides R2-R6 and the R8 class of each definition as it
//!   places it, into a compact `Fate` per position, so that each definition
//!   is read once per pool; R7 and R8 work on the fates, and each output
//!   list is built once, the removals in step order. `ahead.rs` reads a
//!   chunk of definitions ahead of that pass so that the cache misses of a
//!   large pool overlap (it computes nothing). `fork.rs`: the Fork role.
//! - `list.rs`: how a pool holds its tools: the three source lists
//!   (builtins, custom, connection; one reference count each) and a
//!   four-byte `Slot` per tool; [`Tools`] is the public view of a list
//!   (iterates, indexes and compares like a slice of `Arc<ToolDefinition>`).
//! - `memo.rs`: [`PoolMemo`], a bounded least-recently-used memo of pools
//!   keyed by a fingerprint of the input and confirmed by comparing the
//!   whole input (the engine keeps one per catalog: a fan-out of one type
//!   resolves once).
//! - `pool.rs`: [`ResolvedPool`] (fields private: only [`resolve`] builds
//!   one), the trace ([`Step`], [`RemovalReason`], [`Removed`], which
//!   `removed()` yields as views into the pool, [`Replaced`], [`Warning`]),
//!   its text (`Display`) and JSON forms.
//! - `scenario.rs` (+ `scenario/raw.rs`): scenario files and the report
//!   `zr resolve` prints.
//!
//! Tests are data: `tests/scenarios/*.json` with one reviewed snapshot each
//! (`tests/it/snapshots/`); `tests/it/properties.rs` holds DESIGN section
//! 4's laws as proptest properties over `tests/it/world.rs`;
//! `benches/resolve.rs` times the resolver.

mod depth;
mod draft;
mod error;
mod fork;
mod list;
mod memo;
mod policy;
mod pool;
mod resolve;
mod role;
mod scenario;
mod steps;
#[cfg(test)]
mod test_input;

pub use depth::Depth;
pub use error::{ResolveError, ScenarioError};
pub use list::{Tools, ToolsIter};
pub use memo::{DEFAULT_MEMO_CAPACITY, PoolMemo};
pub use policy::{LazyPolicy, ResolvePolicy};
pub use pool::{RemovalReason, Removed, Replaced, ResolvedPool, Step, Warning};
pub use resolve::{ResolveInput, default_builtins, resolve};
pub use role::{DerivedKind, Role};

pub use scenario::{AgentReport, Scenario, ScenarioReport};
