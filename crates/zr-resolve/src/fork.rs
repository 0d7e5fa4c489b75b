//! The Fork role: the parent's advertised pool, unchanged, minus what a
//! delegated task may not run.

use std::sync::Arc;

use zr_types::{ToolDefinition, ToolOrigin};

use crate::agent::{barred_from_subagents, is_delegation};
use crate::{RemovalReason, Removed, ResolvePolicy, ResolvedPool, Step};

pub(crate) fn resolve_fork(
    parent: &ResolvedPool,
    policy: &ResolvePolicy,
    background: bool,
) -> ResolvedPool {
    let why = |tool: &ToolDefinition| {
        if is_delegation(tool) {
            Some((Step::Fork, RemovalReason::ForkCannotDelegate))
        } else {
            barred_from_subagents(tool, policy, background).map(|b| (b.step(), b.reason()))
        }
    };
    let mut removed = parent.removed.clone();
    let mut keep = |tools: &[Arc<ToolDefinition>]| {
        let mut kept = Vec::with_capacity(tools.len());
        for tool in tools {
            match why(tool) {
                Some((step, reason)) => removed.push(Removed {
                    tool: Arc::clone(tool),
                    step,
                    reason,
                }),
                None => kept.push(Arc::clone(tool)),
            }
        }
        kept
    };
    // The advertised pool stays byte-identical to the parent's (prompt-cache
    // parity); what the fork may not run leaves the executable pool and the
    // FindTool directory.
    let mut executable = keep(&parent.advertised);
    let deferred: Arc<[Arc<ToolDefinition>]> = keep(&parent.deferred).into();
    // FindTool with an emptied directory has nothing to act on (R8).
    if deferred.is_empty() && !parent.deferred.is_empty() {
        executable.retain(|t| {
            let find_tool = t.origin == ToolOrigin::Builtin && t.name.as_str() == "FindTool";
            if find_tool {
                removed.push(Removed {
                    tool: Arc::clone(t),
                    step: Step::R8,
                    reason: RemovalReason::NothingDeferred,
                });
            }
            !find_tool
        });
    }
    let executable: Arc<[Arc<ToolDefinition>]> = executable.into();
    // Report the fork's own removals in step order, like every other pool.
    removed[parent.removed.len()..].sort_by_key(|r| r.step);
    ResolvedPool {
        advertised: Arc::clone(&parent.advertised),
        executable,
        deferred,
        removed,
        replaced: parent.replaced.clone(),
        skills: parent.skills.clone(),
        warnings: Vec::new(),
    }
}
