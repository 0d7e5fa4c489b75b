//! R3 Deny list applies to the whole merged pool.
//!
//! Two lists apply, the session-wide one first (the top-level
//! `disallowed_tools`, which reach every agent), then the agent's own; a
//! tool is recorded with the first pattern that matched it. At the root the
//! session-wide list is simply its own top-level list ("denied by 'X'");
//! a subagent is told the pattern came from the session. A pattern that
//! matches nothing in the pool R1 assembled is a warning, each pattern
//! once; the session-wide list is judged at the root only.

use std::collections::BTreeSet;

use zr_caps::ToolPattern;

use crate::draft::Draft;
use crate::input::ResolveInput;
use crate::pool::{RemovalReason, Step, Warning};
use crate::role::Role;

pub(crate) fn deny_list(input: &ResolveInput<'_>, pool: &mut Draft) {
    let caps = input.capabilities;
    let root = input.role == Role::Root;
    let session_warned: &[ToolPattern] = if root {
        &caps.session_disallowed_tools
    } else {
        &[]
    };
    let mut seen = BTreeSet::new();
    let warned = (session_warned.iter().map(|p| (p, true)))
        .chain(caps.disallowed_tools.iter().map(|p| (p, false)));
    for (pattern, session) in warned {
        if seen.insert(pattern) && !pool.assembled_tools().any(|tool| pattern.matches(tool)) {
            pool.warn(Warning::DenyUnmatched {
                pattern: pattern.clone(),
                session,
            });
        }
    }
    pool.remove(Step::R3, |tool| {
        let first = |list: &[ToolPattern]| list.iter().find(|p| p.matches(tool)).cloned();
        if let Some(pattern) = first(&caps.session_disallowed_tools) {
            return Some(RemovalReason::Denied {
                pattern,
                session: !root,
            });
        }
        first(&caps.disallowed_tools).map(|pattern| RemovalReason::Denied {
            pattern,
            session: false,
        })
    });
}
