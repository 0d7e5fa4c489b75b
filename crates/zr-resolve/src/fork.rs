//! The Fork role: the parent's advertised pool, unchanged; its executable
//! pool is the parent's, minus what a delegated task may not run.

use std::sync::Arc;

use zr_types::{BuiltinName, ToolDefinition, ToolOrigin};

use crate::depth::Depth;
use crate::list::Slot;
use crate::policy::ResolvePolicy;
use crate::pool::{Removal, RemovalReason, ResolvedPool, Step};
use crate::steps::r4_derived::{blocked, is_delegation};
use crate::steps::r5_background::not_for_background;

pub(crate) fn resolve_fork(
    parent: &ResolvedPool,
    policy: &ResolvePolicy,
    background: bool,
    depth: Depth,
) -> ResolvedPool {
    let delegates = depth.delegates(policy.max_depth);
    let why = |tool: &ToolDefinition| {
        if is_delegation(tool) && !delegates {
            let reason = RemovalReason::ForkCannotDelegate {
                level: depth.level,
                limit: depth.ceiling.min(policy.max_depth),
            };
            Some((Step::Fork, reason))
        } else if blocked(tool, policy) {
            Some((Step::R4, RemovalReason::DerivedBlocklist))
        } else if background && not_for_background(tool, policy) {
            Some((Step::R5, RemovalReason::NotForBackground))
        } else {
            None
        }
    };
    let sources = &parent.sources;
    let mut removed = parent.removed.clone();
    let mut keep = |slots: &[Slot]| {
        let mut kept = Vec::with_capacity(slots.len());
        for &at in slots {
            match why(sources.get(at)) {
                Some((step, reason)) => removed.push(Removal { at, step, reason }),
                None => kept.push(at),
            }
        }
        kept
    };
    // The advertised pool stays byte-identical to the parent's (prompt-cache
    // parity); what the fork may not run leaves the executable pool and the
    // FindTool directory. It runs only what its parent may run: the
    // parent's executable pool, not its advertised one (a fork of a fork,
    // at depth 2 and more, never regains what its parent could not run).
    let mut executable = keep(&parent.executable);
    let deferred: Arc<[Slot]> = keep(&parent.deferred).into();
    // FindTool with an emptied directory has nothing to act on (R8).
    if deferred.is_empty() && !parent.deferred.is_empty() {
        executable.retain(|&at| {
            let t = sources.get(at);
            let find_tool =
                t.origin == ToolOrigin::Builtin && BuiltinName::FindTool.is(t.name.as_str());
            if find_tool {
                removed.push(Removal {
                    at,
                    step: Step::R8,
                    reason: RemovalReason::NothingDeferred,
                });
            }
            !find_tool
        });
    }
    let executable: Arc<[Slot]> = executable.into();
    // Report the fork's own removals in step order, like every other pool.
    removed[parent.removed.len()..].sort_by_key(|r| r.step);
    ResolvedPool {
        sources: sources.clone(),
        advertised: Arc::clone(&parent.advertised),
        executable,
        deferred,
        removed,
        replaced: parent.replaced.clone(),
        skills: parent.skills.clone(),
        warnings: Vec::new(),
    }
}
