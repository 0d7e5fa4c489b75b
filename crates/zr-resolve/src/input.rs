//! The resolver's input: everything [`crate::resolve::resolve`] needs,
//! borrowed. The steps read it; none of them imports the entry point.

use std::sync::Arc;

use zr_caps::{EffectiveCapabilities, ToolList};
use zr_types::{SkillDefinition, ToolName};

use crate::depth::Depth;
use crate::policy::ResolvePolicy;
use crate::pool::ResolvedPool;
use crate::role::Role;

/// Everything [`resolve`](crate::resolve::resolve) needs, borrowed.
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
