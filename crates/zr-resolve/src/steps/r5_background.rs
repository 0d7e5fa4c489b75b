//! R5 Background derived roles: builtins outside the policy's background
//! allow list are removed (default: Bash, Read, Write, Edit, Glob, Grep,
//! WebFetch, WebSearch, TodoWrite, Skill, FindTool); custom and connection
//! tools pass.

use zr_types::{ToolDefinition, ToolOrigin};

use crate::draft::Draft;
use crate::policy::ResolvePolicy;
use crate::pool::{RemovalReason, Step};

pub(crate) fn background_roles(policy: &ResolvePolicy, pool: &mut Draft) {
    pool.remove(Step::R5, |tool| {
        not_for_background(tool, policy).then_some(RemovalReason::NotForBackground)
    });
}

/// A builtin outside the background allow list (background forks share
/// the rule).
pub(crate) fn not_for_background(tool: &ToolDefinition, policy: &ResolvePolicy) -> bool {
    tool.origin == ToolOrigin::Builtin && !policy.background_allowlist.contains(&tool.name)
}
