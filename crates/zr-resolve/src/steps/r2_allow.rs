//! R2 Allow list (if set) constrains builtins only: a builtin-namespace
//! name not matched is removed; custom and connection tools are untouched.
//!
//! Patterns (R2, R3): an exact name; `mcp__server` (every tool of that
//! server, and only that server); a trailing `*` is a prefix match (a `*`
//! anywhere else is literal); a bare `*` matches everything. A pattern that
//! matches nothing is kept as a warning in the output, never an error.
//! (The patterns are `zr_caps::ToolPattern`; an allow pattern is judged
//! against the builtins of the pool R1 assembled.)

use zr_caps::EffectiveCapabilities;
use zr_types::ToolOrigin;

use crate::draft::Draft;
use crate::pool::{RemovalReason, Step, Warning};

pub(crate) fn allow_list(caps: &EffectiveCapabilities, pool: &mut Draft) {
    let Some(allowed) = &caps.allowed_tools else {
        return;
    };
    for pattern in allowed {
        let matched = pool
            .assembled_tools()
            .any(|tool| tool.origin == ToolOrigin::Builtin && pattern.matches(tool));
        if !matched {
            pool.warn(Warning::AllowUnmatched {
                pattern: pattern.clone(),
            });
        }
    }
    pool.remove(Step::R2, |tool| {
        let builtin = tool.origin == ToolOrigin::Builtin;
        (builtin && !allowed.iter().any(|pattern| pattern.matches(tool)))
            .then_some(RemovalReason::NotAllowed)
    });
}
