//! The resolver's entry point, its input, and the default builtin
//! definitions; the steps are in `steps/` (root and derived, one module
//! per step) and `fork.rs`.

use std::sync::Arc;

use zr_caps::{EffectiveCapabilities, ToolList};
use zr_types::{
    Annotations, DEFAULT_BUILTINS, SkillDefinition, ToolDefinition, ToolName, ToolOrigin,
};

use crate::depth::Depth;
use crate::error::ResolveError;
use crate::fork::resolve_fork;
use crate::policy::ResolvePolicy;
use crate::pool::ResolvedPool;
use crate::role::Role;
use crate::steps::resolve_agent;

/// Everything [`resolve`] needs, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct ResolveInput<'a> {
    /// The role the agent resolves under.
    pub role: Role,
    /// The builtin registry, in registry order (shared: the pool keeps
    /// it with one reference count).
    pub builtins: &'a ToolList,
    /// The agent's effective capabilities (from `zr_caps::merge_root` for
    /// the root, `zr_caps::derive` for a subagent).
    pub capabilities: &'a EffectiveCapabilities,
    /// The skill registry, in registry order.
    pub skills: &'a [Arc<SkillDefinition>],
    /// The policy.
    pub policy: &'a ResolvePolicy,
    /// The parent's resolved pool; required for [`Role::Fork`], ignored
    /// otherwise.
    pub parent: Option<&'a ResolvedPool>,
    /// Service availability: the builtins whose runtime service (web
    /// search, ask-user, configuration) the host did not configure. R1
    /// leaves them out of the pool and records each as removed with the
    /// reason "no service configured": a tool that can only fail is never
    /// offered. Only builtins are affected: a custom or connection tool of
    /// the same name replaces the builtin in place as usual, and stays.
    /// Empty by default.
    pub no_service: &'a [ToolName],
    /// Where the agent stands in its delegation tree (R4): by default the
    /// root at level 0, any other role at level 1, under the policy's
    /// `max_depth`.
    pub depth: Depth,
}

impl<'a> ResolveInput<'a> {
    /// An input without a parent pool.
    #[must_use]
    pub fn new(
        role: Role,
        builtins: &'a ToolList,
        capabilities: &'a EffectiveCapabilities,
        skills: &'a [Arc<SkillDefinition>],
        policy: &'a ResolvePolicy,
    ) -> Self {
        Self {
            role,
            builtins,
            capabilities,
            skills,
            policy,
            parent: None,
            no_service: &[],
            depth: match role {
                Role::Root => Depth::root(policy.max_depth),
                _ => Depth::root(policy.max_depth).child(None),
            },
        }
    }

    /// Sets where the agent stands in its delegation tree.
    #[must_use]
    pub fn with_depth(mut self, depth: Depth) -> Self {
        self.depth = depth;
        self
    }

    /// Sets the builtins whose runtime service is not configured (see
    /// [`ResolveInput::no_service`]).
    #[must_use]
    pub fn with_no_service(mut self, names: &'a [ToolName]) -> Self {
        self.no_service = names;
        self
    }

    /// Sets the parent's pool (for [`Role::Fork`]).
    #[must_use]
    pub fn with_parent(mut self, parent: &'a ResolvedPool) -> Self {
        self.parent = Some(parent);
        self
    }
}

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
