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
//! seeded hashing (R1's one `IndexMap` hashes each name by its precomputed
//! `stable_hash` and is read in insertion order). The same input gives
//! byte-identical output on every run and machine; `cargo xtask tidy`
//! checks the source for the forbidden items.
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
//! - `steps.rs`: root and derived agents, as DESIGN writes the steps:
//!   `resolve_agent` calls them in order, one module each, whose doc is the
//!   step's text from DESIGN.md section 4. To read (or change) a rule, open
//!   its step:
//!   - `steps/r1_assemble.rs`: builtins, custom, connection tools; same name
//!     replaces in place (an `indexmap::IndexMap` by name); reserved names
//!     and origins checked; builtins without a service leave;
//!   - `steps/r2_allow.rs`: the allow list, builtins only;
//!   - `steps/r3_deny.rs`: the deny lists, session-wide then the agent's;
//!   - `steps/r4_derived.rs`: Task and MultiTask at the depth limit, the
//!     derived block list;
//!   - `steps/r5_background.rs`: the background allow list;
//!   - `steps/r6_explore_plan.rs`: read-only tools and builtin Bash;
//!   - `steps/r7_nothing_to_act_on.rs`: Skill without skills, Task and
//!     MultiTask without delegation; the agent's skills;
//!   - `steps/r8_lazy_split.rs`: the FindTool directory.
//!
//!   `draft.rs`: the pool between steps (the tools still in it, the trace
//!   so far); a step removes with `Draft::remove(step, why)`, in pool
//!   order, so removals come out in step order. `fork.rs`: the Fork role
//!   (it shares R4's and R5's rules).
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
mod input;
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
pub use input::ResolveInput;
pub use list::{Tools, ToolsIter};
pub use memo::{DEFAULT_MEMO_CAPACITY, PoolMemo};
pub use policy::{LazyPolicy, ResolvePolicy};
pub use pool::{RemovalReason, Removed, Replaced, ResolvedPool, Step, Warning};
pub use resolve::{default_builtins, resolve};
pub use role::{DerivedKind, Role};

pub use scenario::{AgentReport, Scenario, ScenarioReport};
