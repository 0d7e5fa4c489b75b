//! Where an agent stands in its session's delegation tree ([`Depth`]),
//! and whether it may delegate from there (R4).

use serde::Serialize;

/// An agent's level in its delegation tree (the root is 0, its subagents
/// 1, theirs 2; a fork counts as a level) and the deepest level its
/// subtree may reach: the session's `max_depth`, lowered by the
/// `maxDepth` of any agent type on the way down (see [`Depth::child`]).
///
/// R4: an agent delegates (keeps `Task` and `MultiTask`) only while its
/// level is below both its ceiling and the policy's `max_depth`; so no
/// agent is ever created deeper than `max_depth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Depth {
    /// 0 for the root.
    pub level: u32,
    /// The deepest level its subtree may reach.
    pub ceiling: u32,
}

impl Depth {
    /// The root of a session whose limit is `max_depth`.
    #[must_use]
    pub fn root(max_depth: u32) -> Self {
        Self {
            level: 0,
            ceiling: max_depth,
        }
    }

    /// A subagent of an agent at `self`, of a type whose own `maxDepth`
    /// is `own` (`None`: unset; a fork has none): one level deeper, and
    /// its ceiling never higher than its parent's, nor than `own` levels
    /// below itself.
    #[must_use]
    pub fn child(self, own: Option<u32>) -> Self {
        let level = self.level.saturating_add(1);
        let ceiling = match own {
            Some(own) => self.ceiling.min(level.saturating_add(own)),
            None => self.ceiling,
        };
        Self { level, ceiling }
    }

    /// Whether an agent here may delegate under a session limit of
    /// `max_depth` (its children would be at `level + 1`).
    #[must_use]
    pub fn delegates(self, max_depth: u32) -> bool {
        self.level < self.ceiling.min(max_depth)
    }
}
