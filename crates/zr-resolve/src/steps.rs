//! The resolver's steps for a root or derived agent, as DESIGN.md section 4
//! writes them: one module per step, applied in order by
//! [`resolve_agent`], each removing tools from a [`Draft`] and recording
//! why. (The Fork role is `fork.rs`.)
//!
//! - `r1_assemble`: builtins, custom tools, connection tools; a later name
//!   replaces an earlier one in place; builtins without a service leave.
//! - `r2_allow`: the allow list constrains builtins only.
//! - `r3_deny`: the deny lists apply to the whole pool.
//! - `r4_derived`: derived roles lose Task and MultiTask (at the depth
//!   limit) and the derived block list.
//! - `r5_background`: background derived roles keep only allow-listed
//!   builtins.
//! - `r6_explore_plan`: Explore and Plan keep read-only tools and the
//!   builtin Bash.
//! - `r7_nothing_to_act_on`: Skill without skills, Task and MultiTask
//!   without delegation.
//! - `r8_lazy_split`: deferred tools move to the FindTool directory.
//!
//! Adding a rule is adding a module and one line below: each step sees the
//! pool the steps before it left, and removes in pool order, so the trace
//! lists removals in step order.

pub(crate) mod r1_assemble;
pub(crate) mod r2_allow;
pub(crate) mod r3_deny;
pub(crate) mod r4_derived;
pub(crate) mod r5_background;
pub(crate) mod r6_explore_plan;
pub(crate) mod r7_nothing_to_act_on;
pub(crate) mod r8_lazy_split;

use crate::draft::Draft;
use crate::error::ResolveError;
use crate::input::ResolveInput;
use crate::pool::ResolvedPool;
use crate::role::{DerivedKind, Role};

/// Resolves a root or derived agent: R1 to R8 in order.
pub(crate) fn resolve_agent(input: &ResolveInput<'_>) -> Result<ResolvedPool, ResolveError> {
    let mut pool: Draft = r1_assemble::assemble(input)?;
    r1_assemble::remove_without_service(input.no_service, &mut pool);
    r2_allow::allow_list(input.capabilities, &mut pool);
    r3_deny::deny_list(input, &mut pool);
    if let Role::Derived { kind, background } = input.role {
        r4_derived::derived_roles(input, &mut pool);
        if background {
            r5_background::background_roles(input.policy, &mut pool);
        }
        match kind {
            DerivedKind::Explore => r6_explore_plan::explore_and_plan("explore", &mut pool),
            DerivedKind::Plan => r6_explore_plan::explore_and_plan("plan", &mut pool),
            DerivedKind::GeneralPurpose | DerivedKind::Custom => {}
        }
    }
    let skills = r7_nothing_to_act_on::nothing_to_act_on(input, &mut pool);
    r8_lazy_split::lazy_split(input.policy.lazy, &mut pool);
    Ok(pool.finish(skills))
}
