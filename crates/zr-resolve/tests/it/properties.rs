//! The resolver's laws (DESIGN.md section 4), as proptest properties over
//! generated sessions (`world.rs`). `cargo xtask ci` runs each with 10,000
//! cases (`PROPTEST_CASES`); failures are kept in `proptest-regressions/`.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::select;
use zr_caps::{AgentCapabilities, ToolPattern, derive, merge_root};
use zr_resolve::{
    DerivedKind, ResolveError, ResolveInput, ResolvedPool, Role, Scenario, Step, resolve,
};
use zr_types::{ToolDefinition, ToolOrigin};

use crate::world::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn prop_resolution_is_deterministic(w in world()) {
        let a = pools(&w);
        let b = pools(&w.clone());
        prop_assert_eq!(&a, &b);
        if let Some((root, subs)) = a {
            let text = |p: &ResolvedPool| (p.to_string(), serde_json::to_string(p).unwrap());
            prop_assert_eq!(text(&root), text(&b.as_ref().unwrap().0));
            for (x, y) in subs.iter().zip(&b.unwrap().1) {
                prop_assert_eq!(text(x), text(y));
            }
        }
    }

    #[test]
    fn prop_no_duplicate_names(w in world()) {
        for (_, pool) in every_pool(&w) {
            let all: Vec<&str> = names(pool.advertised()).into_iter().chain(names(pool.deferred())).collect();
            let unique: BTreeSet<&str> = all.iter().copied().collect();
            prop_assert_eq!(all.len(), unique.len(), "{}", pool);
            let adv: BTreeSet<&str> = names(pool.advertised()).into_iter().collect();
            prop_assert!(names(pool.executable()).iter().all(|n| adv.contains(n)));
        }
    }

    #[test]
    fn prop_derived_pool_never_delegates(w in world()) {
        for (role, pool) in every_pool(&w) {
            let runnable: Vec<&str> = names(pool.executable()).into_iter().chain(names(pool.deferred())).collect();
            if !matches!(role, Role::Root) {
                prop_assert!(!runnable.contains(&"Task") && !runnable.contains(&"MultiTask"), "{:?}\n{}", role, pool);
            }
            if matches!(role, Role::Derived { .. }) {
                prop_assert!(!names(pool.advertised()).contains(&"Task"));
                prop_assert!(!names(pool.advertised()).contains(&"MultiTask"));
            }
        }
    }

    #[test]
    fn prop_explore_and_plan_hold_only_read_only_tools_and_builtin_bash(w in world()) {
        for (role, pool) in every_pool(&w) {
            if let Role::Derived { kind: DerivedKind::Explore | DerivedKind::Plan, .. } = role {
                for t in pool.advertised().iter().chain(pool.deferred()) {
                    let builtin_bash = t.origin == ToolOrigin::Builtin && t.name.as_str() == "Bash";
                    prop_assert!(t.is_read_only() || builtin_bash, "{} in\n{}", t.name, pool);
                }
            }
        }
    }

    #[test]
    fn prop_denied_name_never_survives(w in world()) {
        let Some((root, subs)) = pools(&w) else { return Ok(()) };
        let session = w.options.disallowed_tools.clone().unwrap_or_default();
        let root_caps = merge_root(&w.options, &w.root, w.query_override.as_ref());
        let mut checks: Vec<(&ResolvedPool, Vec<ToolPattern>)> = vec![(&root, root_caps.disallowed_tools.iter().chain(&session).cloned().collect())];
        for ((role, caps), pool) in w.subagents.iter().zip(&subs) {
            let own = caps.disallowed_tools.clone().unwrap_or_default();
            let denies = if matches!(role, Role::Fork { .. }) { session.clone() } else { own.into_iter().chain(session.iter().cloned()).collect() };
            checks.push((pool, denies));
        }
        for (pool, denies) in checks {
            for t in pool.executable().iter().chain(pool.deferred()) {
                let hit = denies.iter().find(|p| reference_match(p.as_str(), t));
                prop_assert!(hit.is_none(), "{} survived {:?}\n{}", t.name, hit, pool);
            }
        }
    }

    #[test]
    fn prop_sibling_tools_never_appear(w in world()) {
        let Some((_, subs)) = pools(&w) else { return Ok(()) };
        for ((role, caps), pool) in w.subagents.iter().zip(&subs) {
            if matches!(role, Role::Fork { .. }) {
                continue;
            }
            let own: Vec<&Arc<ToolDefinition>> = caps.custom_tools.iter().flatten().chain(caps.connection_tools.iter().flatten()).collect();
            for t in pool.advertised().iter().chain(pool.deferred()) {
                if t.origin != ToolOrigin::Builtin {
                    prop_assert!(own.iter().any(|o| Arc::ptr_eq(o, t)), "{} is not this agent's own", t.name);
                }
            }
        }
    }

    #[test]
    fn prop_allow_list_never_touches_custom_or_connection_tools(w in world(), allow in prop::option::of(patterns())) {
        let Some((root, subs)) = pools(&w) else { return Ok(()) };
        let mut changed = w.clone();
        changed.root.allowed_tools = allow.clone();
        if let Some(o) = &mut changed.query_override {
            o.allowed_tools = None;
        }
        changed.options.allowed_tools = None;
        for (_, caps) in &mut changed.subagents {
            caps.allowed_tools = allow.clone();
        }
        let non_builtin = |p: &ResolvedPool| reachable(p).into_iter().filter(|(_, o)| *o != ToolOrigin::Builtin).collect::<BTreeSet<_>>();
        let (root2, subs2) = pools(&changed).expect("same tools, same reserved-name outcome");
        prop_assert_eq!(non_builtin(&root), non_builtin(&root2));
        for ((a, b), (role, _)) in subs.iter().zip(&subs2).zip(&w.subagents) {
            if !matches!(role, Role::Fork { .. }) {
                prop_assert_eq!(non_builtin(a), non_builtin(b));
            }
        }
        for (_, pool) in every_pool(&w) {
            for r in pool.removed() {
                prop_assert!(r.step != Step::R2 || r.tool.origin == ToolOrigin::Builtin);
            }
        }
    }

    /// The root's capabilities and query override vary; the top-level
    /// options stay fixed, since `options.disallowed_tools` is session-wide
    /// by design and reaches every agent.
    #[test]
    fn prop_subagent_pool_never_depends_on_parent_capabilities(w in world(), other_root in caps(), other_override in prop::option::of(caps())) {
        let Some((_, subs)) = pools(&w) else { return Ok(()) };
        let mut changed = w.clone();
        changed.root = other_root;
        changed.query_override = other_override;
        let Some((_, subs2)) = pools(&changed) else { return Ok(()) };
        for ((role, _), (a, b)) in w.subagents.iter().zip(subs.iter().zip(&subs2)) {
            if !matches!(role, Role::Fork { .. }) {
                prop_assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn prop_advertised_and_executable_differ_only_for_fork(w in world()) {
        for (role, pool) in every_pool(&w) {
            if !matches!(role, Role::Fork { .. }) {
                prop_assert_eq!(pool.advertised(), pool.executable());
            }
        }
    }

    /// A builtin whose service is not configured is in no pool, and each
    /// pool that assembled it records it at R1 with "no service configured".
    #[test]
    fn prop_builtin_without_service_is_never_offered(w in world()) {
        for (_, pool) in every_pool(&w) {
            let offered = pool.advertised().iter().chain(pool.executable()).chain(pool.deferred());
            for t in offered {
                prop_assert!(
                    !(t.origin == ToolOrigin::Builtin && w.no_service.contains(&t.name)),
                    "{} has no service but is offered:\n{}", t.name, pool
                );
            }
            for r in pool.removed() {
                let unserviced = r.tool.origin == ToolOrigin::Builtin && w.no_service.contains(&r.tool.name);
                prop_assert_eq!(unserviced, r.step == Step::R1, "{} at {}:\n{}", r.tool.name, r.step, pool);
                prop_assert_eq!(unserviced, r.reason.to_string() == "no service configured");
            }
        }
    }

    #[test]
    fn prop_every_removed_tool_has_exactly_one_step(w in world()) {
        let pools = every_pool(&w);
        let mut caps_of = vec![Some(merge_root(&w.options, &w.root, w.query_override.as_ref()))];
        caps_of.extend(w.subagents.iter().map(|(role, c)| (!matches!(role, Role::Fork { .. })).then(|| derive(&w.options, c))));
        for ((_, pool), assembled) in pools.into_iter().zip(caps_of) {
            let removed: Vec<&str> = pool.removed().map(|r| r.tool.name.as_str()).collect();
            let unique: BTreeSet<&str> = removed.iter().copied().collect();
            prop_assert_eq!(removed.len(), unique.len(), "a tool removed twice:\n{}", pool);
            let kept: BTreeSet<&str> = names(pool.executable()).into_iter().chain(names(pool.deferred())).collect();
            prop_assert!(unique.is_disjoint(&kept), "removed and kept:\n{}", pool);
            // Nothing vanishes without a record: every tool of the parent's
            // or the assembled pool is kept or removed (replaced losers are
            // recorded as replaced instead).
            if let Some(caps) = &assembled {
                let accounted: BTreeSet<&str> = kept.union(&unique).copied().collect();
                let sources = w.builtins.iter().chain(caps.custom_tools.iter()).chain(caps.connection_tools.iter());
                for t in sources {
                    prop_assert!(accounted.contains(t.name.as_str()), "{} unaccounted for\n{}", t.name, pool);
                }
                // A replaced definition is recorded as replaced, never as removed.
                for r in pool.removed() {
                    let winner = sources_named(caps, &w.builtins, r.tool.name.as_str());
                    prop_assert!(Arc::ptr_eq(r.tool, &winner), "a replaced definition was recorded as removed");
                }
            } else {
                let all: BTreeSet<&str> = names(pool.advertised()).into_iter().chain(names(pool.deferred())).collect();
                for n in all {
                    prop_assert!(kept.contains(n) || unique.contains(n));
                }
            }
        }
    }

    /// Dropping one entry of a tool list, a skill or an allow pattern, or
    /// unsetting a whole tool list, of the root or of any subagent, never
    /// makes a tool reachable that was not. (Unsetting an allow list or the
    /// root's skills widens by definition and is not a removal.)
    #[test]
    fn prop_removing_a_capability_never_adds_a_tool(w in world(), which in 0..6usize, index in any::<prop::sample::Index>()) {
        let Some((root, subs)) = pools(&w) else { return Ok(()) };
        // The root: its constructor capabilities.
        if let Some((smaller, dropped)) = drop_entry(&w.root, which, index) {
            let top_level: Vec<&Arc<ToolDefinition>> = w.options.custom_tools.iter().chain(&w.options.mcp_tools).collect();
            if !uncovers(&dropped, &w, &smaller, &top_level) {
                let mut after = w.clone();
                after.root = smaller;
                let (root_after, _) = pools(&after).expect("fewer tools cannot add a reserved name");
                let before = reachable(&root);
                for tool in reachable(&root_after) {
                    prop_assert!(before.contains(&tool), "dropping {:?} from the root added {:?}", dropped, tool);
                }
            }
        }
        for (i, (role, caps)) in w.subagents.iter().enumerate() {
            if matches!(role, Role::Fork { .. }) {
                continue;
            }
            let Some((smaller, dropped)) = drop_entry(caps, which, index) else { continue };
            if uncovers(&dropped, &w, &smaller, &[]) {
                continue;
            }
            let after = sub_pool(&w, *role, &smaller, &root).expect("fewer tools cannot add a reserved name");
            let before = reachable(&subs[i]);
            for tool in reachable(&after) {
                prop_assert!(before.contains(&tool), "dropping {:?} added {:?}", dropped, tool);
            }
        }
    }

    #[test]
    fn prop_order_of_unrelated_subagents_never_changes_a_pool(w in world(), seed in any::<u64>()) {
        let json = scenario_json(&w, (0..w.subagents.len()).collect());
        let mut order: Vec<usize> = (0..w.subagents.len()).collect();
        // A deterministic shuffle from the seed.
        let mut s = seed | 1;
        for i in (1..order.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            order.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let shuffled = scenario_json(&w, order);
        let a = Scenario::from_json(&json).unwrap().resolve();
        let b = Scenario::from_json(&shuffled).unwrap().resolve();
        match (a, b) {
            (Ok(a), Ok(b)) => {
                for agent in &a.agents {
                    let other = b.agents.iter().find(|x| x.agent == agent.agent).unwrap();
                    prop_assert_eq!(&agent.pool, &other.pool);
                    prop_assert_eq!(agent.pool.to_string(), other.pool.to_string());
                }
            }
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "one order failed: {:?} vs {:?}", a.err(), b.err()),
        }
    }

    #[test]
    fn prop_reserved_names_are_refused(name in select(&["Task", "MultiTask", "FindTool", "Skill", "mcp__a__b"][..]), w in world()) {
        let mut w = w;
        w.options.custom_tools.push(Arc::new(ToolDefinition::new(name.parse().unwrap(), "", ToolOrigin::Custom)));
        // Every other generated name is valid, so the root fails on this
        // one, with the rule that forbids it.
        let root_caps = merge_root(&w.options, &w.root, w.query_override.as_ref());
        let err = resolve(&ResolveInput::new(Role::Root, &w.builtins, &root_caps, &w.skills, &w.policy)).unwrap_err();
        match err {
            ResolveError::ReservedName { name: n, .. } => prop_assert!(n.as_str() == name && name != "mcp__a__b"),
            ResolveError::ReservedPrefix { name: n, .. } => prop_assert!(n.as_str() == name && name == "mcp__a__b"),
            other => prop_assert!(false, "{} refused for another reason: {}", name, other),
        }
        prop_assert!(pools(&w).is_none());
    }
}

/// `caps` with one entry dropped (or one tool list unset), and the names
/// of the tools it held.
fn drop_entry(
    caps: &AgentCapabilities,
    which: usize,
    index: prop::sample::Index,
) -> Option<(AgentCapabilities, Vec<String>)> {
    let mut smaller = caps.clone();
    let names =
        |v: &[Arc<ToolDefinition>]| v.iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
    let dropped = match which {
        0 => smaller
            .custom_tools
            .as_mut()
            .filter(|v| !v.is_empty())
            .map(|v| vec![v.remove(index.index(v.len())).name.to_string()]),
        1 => smaller
            .connection_tools
            .as_mut()
            .filter(|v| !v.is_empty())
            .map(|v| vec![v.remove(index.index(v.len())).name.to_string()]),
        2 => smaller
            .skills
            .as_mut()
            .filter(|v| !v.is_empty())
            .map(|v| vec![v.remove(index.index(v.len())).to_string()]),
        3 => smaller
            .allowed_tools
            .as_mut()
            .filter(|v| !v.is_empty())
            .map(|v| vec![v.remove(index.index(v.len())).to_string()]),
        4 => smaller.custom_tools.take().map(|v| names(&v)),
        _ => smaller.connection_tools.take().map(|v| names(&v)),
    }?;
    Some((smaller, dropped))
}

/// Whether a dropped entry shadowed another definition of the same name (a
/// builtin, a top-level tool, or another entry), which dropping uncovers:
/// a replacement, not a removed capability.
fn uncovers(
    dropped: &[String],
    w: &World,
    smaller: &AgentCapabilities,
    top_level: &[&Arc<ToolDefinition>],
) -> bool {
    let mut others = w
        .builtins
        .iter()
        .chain(top_level.iter().copied())
        .chain(smaller.custom_tools.iter().flatten())
        .chain(smaller.connection_tools.iter().flatten());
    others.any(|t| dropped.iter().any(|d| d == t.name.as_str()))
}
