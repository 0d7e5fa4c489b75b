//! The resolver's entry point and the default builtin definitions (its
//! input is `input.rs`); the steps are in `steps/` (root and derived, one module
//! per step) and `fork.rs`.

use std::sync::Arc;

use zr_caps::ToolList;
use zr_types::{Annotations, DEFAULT_BUILTINS, ToolDefinition, ToolOrigin};

use crate::error::ResolveError;
use crate::fork::resolve_fork;
use crate::input::ResolveInput;
use crate::pool::ResolvedPool;
use crate::role::Role;
use crate::steps::resolve_agent;

/// The default builtin registry as definitions (empty object schemas; the
/// real schemas belong to the tool implementations).
#[must_use]
pub fn default_builtins() -> ToolList {
    DEFAULT_BUILTINS
        .iter()
        .map(|b| {
            let name = b
                .name
                .parse()
                .expect("DEFAULT_BUILTINS holds valid tool names");
            let annotations = Annotations {
                read_only: b.read_only,
                ..Annotations::default()
            };
            Arc::new(
                ToolDefinition::new(name, b.description, ToolOrigin::Builtin)
                    .with_annotations(annotations)
                    .with_defer(b.deferred.then_some(true)),
            )
        })
        .collect()
}

/// Resolves one agent's tool pool.
///
/// Steps, in order, each recorded in the output:
///
/// - R1 assemble builtins (less those in [`ResolveInput::no_service`],
///   recorded as removed at R1), custom tools, connection tools; a later
///   entry with an earlier name replaces it in place;
/// - R2 the allow list constrains builtins only;
/// - R3 the deny lists (session-wide, then the agent's) apply to everything;
/// - R4 derived roles lose the policy's block list, and Task and
///   MultiTask at the depth limit ([`ResolveInput::depth`], the policy's
///   `max_depth`);
/// - R5 background derived roles keep only allow-listed builtins;
/// - R6 Explore and Plan keep read-only tools and the builtin Bash;
/// - R7 Skill goes without skills, Task and MultiTask without delegation;
/// - R8 deferred tools move to the FindTool directory when FindTool is
///   present; FindTool goes when nothing is deferred.
///
/// A fork's advertised pool is its parent's, unchanged; its executable pool
/// is its parent's executable pool minus Task and MultiTask (at the depth
/// limit), the derived block list, and for a background fork the builtins
/// outside the background allow list.
///
/// # Errors
///
/// [`ResolveError::ReservedName`] when a custom or connection tool is named
/// Task, MultiTask, FindTool or Skill; [`ResolveError::ReservedPrefix`] when
/// a builtin or custom tool's name starts with `mcp__`;
/// [`ResolveError::ConnectionName`] when a connection tool's does not;
/// [`ResolveError::WrongOrigin`] when a definition's origin is not that of
/// the list it is in; [`ResolveError::ForkWithoutParent`] for a fork without
/// a parent pool.
pub fn resolve(input: &ResolveInput<'_>) -> Result<ResolvedPool, ResolveError> {
    match input.role {
        Role::Fork { background } => {
            let parent = input.parent.ok_or(ResolveError::ForkWithoutParent)?;
            Ok(resolve_fork(parent, input.policy, background, input.depth))
        }
        Role::Root | Role::Derived { .. } => resolve_agent(input),
    }
}
