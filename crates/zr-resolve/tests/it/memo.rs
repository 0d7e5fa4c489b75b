//! The pool memo's law: a memoized pool equals a fresh one, for generated
//! sessions resolved in any order through a memo of any small capacity,
//! with equal inputs made of the same or of other allocations, and with
//! inputs that differ only where the memo's fingerprint does not look (a
//! definition's description), which only the memo's full comparison tells
//! apart, or only in the builtins without a service.

use std::sync::Arc;

use proptest::prelude::*;
use zr_caps::{EffectiveCapabilities, derive, merge_root};
use zr_resolve::{PoolMemo, ResolveInput, ResolvedPool, Role, resolve};
use zr_types::{ToolDefinition, ToolName};

use crate::world::*;

/// How a step builds its input from its world.
#[derive(Debug, Clone, Copy)]
enum Build {
    /// The world's own definitions.
    Shared,
    /// The same definitions in new allocations: equal by value, never by
    /// pointer.
    Deep,
    /// New allocations whose descriptions differ: the same fingerprint, a
    /// different input.
    Edited,
}

fn deep(list: &[Arc<ToolDefinition>], copy: Build) -> Vec<Arc<ToolDefinition>> {
    list.iter()
        .map(|t| {
            let mut t = ToolDefinition::clone(t);
            if let Build::Edited = copy {
                t.description.push_str(" (edited)");
            }
            Arc::new(t)
        })
        .collect()
}

fn deep_caps(caps: &EffectiveCapabilities, copy: Build) -> EffectiveCapabilities {
    EffectiveCapabilities {
        custom_tools: deep(&caps.custom_tools, copy).into(),
        connection_tools: deep(&caps.connection_tools, copy).into(),
        ..caps.clone()
    }
}

/// Agent `agent` of `w` (0 the root, then its subagents): role and
/// effective capabilities.
fn agent_of(w: &World, agent: usize) -> (Role, EffectiveCapabilities) {
    match agent.checked_sub(1).and_then(|i| w.subagents.get(i)) {
        Some((role, caps)) => (*role, derive(&w.options, caps)),
        None => (
            Role::Root,
            merge_root(&w.options, &w.root, w.query_override.as_ref()),
        ),
    }
}

/// The builtins a step may leave without a service (`Read` is one the
/// default registry holds that no host leaves out, to show any name works).
const SERVICES: [&str; 4] = ["WebSearch", "AskUserQuestion", "Config", "Read"];

/// The names of `SERVICES` whose bit is set in `mask`.
fn unserviced(mask: u8) -> Vec<ToolName> {
    SERVICES
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| n.parse().expect("the names above are valid tool names"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn prop_a_memoized_pool_equals_a_fresh_one(
        worlds in prop::collection::vec(world(), 1..4),
        steps in prop::collection::vec((0..4usize, 0..5usize, prop_oneof![Just(Build::Shared), Just(Build::Deep), Just(Build::Edited)], 0..16u8), 1..24),
        capacity in 0..4usize,
    ) {
        let mut memo = PoolMemo::new(capacity);
        for (world, agent, copy, mask) in steps {
            let w = &worlds[world % worlds.len()];
            let (role, caps) = agent_of(w, agent);
            let root_caps = merge_root(&w.options, &w.root, w.query_override.as_ref());
            let Ok(parent) = resolve(&ResolveInput::new(Role::Root, &w.builtins, &root_caps, &w.skills, &w.policy)) else {
                continue;
            };
            let (builtins, caps) = match copy {
                Build::Shared => (w.builtins.clone(), caps),
                Build::Deep | Build::Edited => (deep(&w.builtins, copy).into(), deep_caps(&caps, copy)),
            };
            let no_service = unserviced(mask);
            let input = ResolveInput::new(role, &builtins, &caps, &w.skills, &w.policy)
                .with_parent(&parent)
                .with_no_service(&no_service);
            let fresh = resolve(&input);
            let memoized = memo.resolve(&input);
            match (&fresh, &memoized) {
                (Ok(fresh), Ok(memoized)) => {
                    let memoized: &ResolvedPool = memoized;
                    prop_assert_eq!(fresh, memoized);
                    prop_assert_eq!(fresh.to_string(), memoized.to_string());
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                _ => prop_assert!(false, "fresh {:?}, memoized {:?}", fresh, memoized),
            }
            prop_assert!(memo.len() <= capacity);
        }
    }
}
