//! Nested delegation (R4 with `max_depth`), as proptest properties over
//! generated delegation trees: a generated session (`world.rs`), a
//! session limit, each type's own `maxDepth`, and a walk in which an
//! agent whose pool can run `Task` starts a subagent of some type.
//! `cargo xtask ci` runs each with 10,000 cases.

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::sample::Index;
use zr_caps::{PermissionMode, derive, merge_root};
use zr_resolve::{Depth, ResolveInput, ResolvedPool, Role, resolve};
use zr_types::ToolOrigin;

use crate::world::{World, reachable, world};

/// One agent of a generated tree.
struct Node {
    role: Role,
    depth: Depth,
    pool: ResolvedPool,
    /// Its parent's index in the tree (`None`: the root).
    parent: Option<usize>,
    /// The custom and connection tools its own type brings (C2).
    own: BTreeSet<(String, ToolOrigin)>,
}

/// Whether `pool` can run Task or MultiTask.
fn delegates(pool: &ResolvedPool) -> bool {
    reachable(pool).iter().any(|(name, origin)| {
        *origin == ToolOrigin::Builtin && (name == "Task" || name == "MultiTask")
    })
}

/// The tree a walk grows: at each step, the `pick`-th agent that can run
/// Task starts a subagent of the `kind`-th type of the world (whose own
/// `maxDepth` is `own_depth[kind]`). `None` when the root does not
/// resolve (a reserved name: checked elsewhere).
fn grow(w: &World, own_depth: &[Option<u32>], walk: &[(Index, Index)]) -> Option<Vec<Node>> {
    let root_caps = merge_root(&w.options, &w.root, w.query_override.as_ref());
    let input = ResolveInput::new(Role::Root, &w.builtins, &root_caps, &w.skills, &w.policy)
        .with_no_service(&w.no_service);
    let root = resolve(&input).ok()?;
    let mut tree = vec![Node {
        role: Role::Root,
        depth: input.depth,
        pool: root,
        parent: None,
        own: BTreeSet::new(),
    }];
    if w.subagents.is_empty() {
        return Some(tree);
    }
    for (pick, kind) in walk {
        let able: Vec<usize> = (0..tree.len())
            .filter(|&i| delegates(&tree[i].pool))
            .collect();
        if able.is_empty() {
            break;
        }
        let at = able[pick.index(able.len())];
        let k = kind.index(w.subagents.len());
        let (role, caps) = &w.subagents[k];
        let caps = derive(&w.options, caps);
        let own = match role {
            Role::Fork { .. } => None,
            _ => own_depth[k],
        };
        let depth = tree[at].depth.child(own);
        let input = ResolveInput::new(*role, &w.builtins, &caps, &w.skills, &w.policy)
            .with_parent(&tree[at].pool)
            .with_no_service(&w.no_service)
            .with_depth(depth);
        let pool = resolve(&input).ok()?;
        let own = match role {
            Role::Fork { .. } => BTreeSet::new(),
            _ => caps
                .custom_tools
                .iter()
                .chain(caps.connection_tools.iter())
                .map(|t| (t.name.to_string(), t.origin.clone()))
                .collect(),
        };
        tree.push(Node {
            role: *role,
            depth,
            pool,
            parent: Some(at),
            own,
        });
    }
    Some(tree)
}

/// A session limit of 1 to 4, each type's own `maxDepth` (unset, or 0 to
/// 3), and a walk of up to 12 steps.
fn limits() -> impl Strategy<Value = (u32, Vec<Option<u32>>, Vec<(Index, Index)>)> {
    (
        1..=4_u32,
        prop::collection::vec(prop::option::of(0..=3_u32), 4),
        prop::collection::vec((any::<Index>(), any::<Index>()), 0..12),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// No agent is ever created deeper than the session's `max_depth`, nor
    /// deeper than the ceiling its ancestors' types set; an agent that can
    /// run Task or MultiTask is below both.
    #[test]
    fn prop_no_agent_is_created_deeper_than_the_limit(mut w in world(), (max, own, walk) in limits()) {
        w.policy.max_depth = max;
        let Some(tree) = grow(&w, &own, &walk) else { return Ok(()) };
        for node in &tree {
            prop_assert!(node.depth.level <= max, "level {} > max_depth {}", node.depth.level, max);
            prop_assert!(node.depth.ceiling <= max);
            if let Some(p) = node.parent {
                let parent = tree[p].depth;
                prop_assert_eq!(node.depth.level, parent.level + 1);
                prop_assert!(node.depth.level <= parent.ceiling, "deeper than an ancestor's type allows");
                prop_assert!(node.depth.ceiling <= parent.ceiling, "a ceiling never rises");
            }
            if node.parent.is_some() && delegates(&node.pool) {
                prop_assert!(node.depth.delegates(max), "{:?} at {:?} can delegate\n{}", node.role, node.depth, node.pool);
            }
        }
    }

    /// The law of a child's pool at any depth: every tool a subagent can
    /// run or load (executable and deferred) is one its parent can run or
    /// load, or one its own type brings within the session's bounds: a
    /// builtin of the session's registry, or a custom or connection tool
    /// its type declares (C2); and Task or MultiTask only below the depth
    /// limit. A fork brings nothing: its tools are a subset of its
    /// parent's.
    #[test]
    fn prop_a_childs_pool_holds_only_its_parents_tools_or_what_its_type_adds(mut w in world(), (max, own, walk) in limits()) {
        w.policy.max_depth = max;
        let Some(tree) = grow(&w, &own, &walk) else { return Ok(()) };
        let registry: BTreeSet<String> = w.builtins.iter().map(|t| t.name.to_string()).collect();
        for node in &tree {
            let Some(p) = node.parent else { continue };
            let parent = reachable(&tree[p].pool);
            for tool in reachable(&node.pool) {
                if parent.contains(&tool) {
                    continue;
                }
                let (name, origin) = &tool;
                prop_assert!(!matches!(node.role, Role::Fork { .. }), "a fork got {name} ({origin:?}), which its parent lacks\n{}", node.pool);
                let from_type = node.own.contains(&tool)
                    || (*origin == ToolOrigin::Builtin && registry.contains(name));
                prop_assert!(from_type, "{name} ({origin:?}) is neither its parent's nor its type's\n{}", node.pool);
            }
            if delegates(&node.pool) {
                prop_assert!(node.depth.delegates(max));
            }
        }
    }

    /// Permission modes never widen at any depth (C4): each agent's
    /// effective mode is at most its parent's and at most its declared one.
    #[test]
    fn prop_permission_modes_never_widen_at_any_depth(
        root in prop::sample::select(&PermissionMode::ALL[..]),
        declared in prop::collection::vec(prop::option::of(prop::sample::select(&PermissionMode::ALL[..])), 1..6),
    ) {
        let mut parent = root;
        for d in declared {
            let mode = parent.clamp(d);
            prop_assert!(mode <= parent);
            if let Some(d) = d {
                prop_assert!(mode <= d);
            }
            parent = mode;
        }
    }
}

#[test]
fn a_child_of_a_child_at_the_limit_is_never_created() {
    // The smallest tree: max_depth 2, a general-purpose chain.
    let depth = Depth::root(2);
    assert!(depth.delegates(2));
    let one = depth.child(None);
    assert!(one.delegates(2));
    let two = one.child(None);
    assert!(!two.delegates(2));
    // A type with maxDepth 0 at depth 1 stops there.
    assert!(!depth.child(Some(0)).delegates(2));
}
