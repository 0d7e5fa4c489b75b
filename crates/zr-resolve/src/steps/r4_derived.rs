//! R4 Derived roles: remove `Task` and `MultiTask`, then the policy's
//! derived block list, by name whatever the origin (default:
//! AskUserQuestion, Config, CronCreate, CronDelete, CronList: asking the
//! user, changing configuration and scheduling work are beyond one
//! delegated task).
//!
//! With `max_depth` above 1, `Task` and `MultiTask` stay for an agent whose
//! level is below the limit ([`crate::Depth::delegates`]) and go at the
//! last level.

use zr_types::ToolDefinition;

use crate::draft::Draft;
use crate::input::ResolveInput;
use crate::policy::ResolvePolicy;
use crate::pool::{RemovalReason, Step};

pub(crate) fn derived_roles(input: &ResolveInput<'_>, pool: &mut Draft) {
    let policy = input.policy;
    let depth = input.depth;
    let delegates = depth.delegates(policy.max_depth);
    pool.remove(Step::R4, |tool| {
        if is_delegation(tool) && !delegates {
            Some(RemovalReason::NoDelegation {
                level: depth.level,
                limit: depth.ceiling.min(policy.max_depth),
            })
        } else if blocked(tool, policy) {
            Some(RemovalReason::DerivedBlocklist)
        } else {
            None
        }
    });
}

/// `Task` or `MultiTask`.
pub(crate) fn is_delegation(tool: &ToolDefinition) -> bool {
    tool.name.is("Task") || tool.name.is("MultiTask")
}

/// On the policy's derived block list (forks share the rule).
pub(crate) fn blocked(tool: &ToolDefinition, policy: &ResolvePolicy) -> bool {
    policy.derived_blocklist.contains(&tool.name)
}
