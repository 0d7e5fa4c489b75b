//! The resolver's laws (DESIGN.md section 4), as proptest properties over
//! generated sessions. `cargo xtask ci` runs each with 10,000 cases
//! (`PROPTEST_CASES`); failures are kept in `proptest-regressions/`.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use zr_caps::{
    AgentCapabilities, AgentOptions, EffectiveCapabilities, ToolPattern, derive, merge_root,
};
use zr_resolve::{
    DerivedKind, LazyPolicy, ResolveInput, ResolvePolicy, ResolvedPool, Role, Scenario, Step,
    default_builtins, resolve,
};
use zr_types::{
    Annotations, ServerName, SkillDefinition, SkillName, ToolDefinition, ToolName, ToolOrigin,
};

const CUSTOM_NAMES: &[&str] = &[
    "search", "deploy", "lint", "fetch", "Bash", "Read", "Write", "x1", "x2",
];
const SERVERS: &[&str] = &["gh", "ghx", "db"];
const MCP_TOOLS: &[&str] = &["create", "list", "read", "delete"];
const PATTERNS: &[&str] = &[
    "*",
    "Read",
    "Bash",
    "Write",
    "Edit",
    "Glob",
    "Grep",
    "Task",
    "Skill",
    "FindTool",
    "search",
    "deploy",
    "mcp__gh",
    "mcp__db",
    "mcp__gh*",
    "Cron*",
    "Web*",
    "x*",
    "Wr*te",
    "mcp__ghx__list",
    "Nope",
];
const SKILLS: &[&str] = &["review", "release", "pdf"];

/// One generated session: everything the resolver sees for a root and its
/// subagents.
#[derive(Debug, Clone)]
struct World {
    builtins: Vec<Arc<ToolDefinition>>,
    options: AgentOptions,
    root: AgentCapabilities,
    query_override: Option<AgentCapabilities>,
    skills: Vec<Arc<SkillDefinition>>,
    policy: ResolvePolicy,
    subagents: Vec<(Role, AgentCapabilities)>,
}

fn custom_tool() -> impl Strategy<Value = Arc<ToolDefinition>> {
    (
        select(CUSTOM_NAMES),
        any::<bool>(),
        any::<bool>(),
        0..3usize,
    )
        .prop_map(|(name, ro, defer, desc)| {
            Arc::new(
                ToolDefinition::new(
                    name.parse().unwrap(),
                    "d".repeat(desc * 40),
                    ToolOrigin::Custom,
                )
                .with_annotations(Annotations {
                    read_only: ro,
                    ..Annotations::default()
                })
                .with_defer(defer.then_some(true)),
            )
        })
}

fn mcp_tool() -> impl Strategy<Value = Arc<ToolDefinition>> {
    (
        select(SERVERS),
        select(MCP_TOOLS),
        any::<bool>(),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(server, tool, ro, defer)| {
            let server: ServerName = server.parse().unwrap();
            Arc::new(
                ToolDefinition::new(
                    ToolName::mcp(&server, tool).unwrap(),
                    "an MCP tool",
                    ToolOrigin::Connection { server },
                )
                .with_annotations(Annotations {
                    read_only: ro,
                    ..Annotations::default()
                })
                .with_defer(defer),
            )
        })
}

fn patterns() -> impl Strategy<Value = Vec<ToolPattern>> {
    prop::collection::vec(select(PATTERNS).prop_map(|p| p.parse().unwrap()), 0..4)
}

fn skill_names() -> impl Strategy<Value = Vec<SkillName>> {
    prop::collection::vec(
        select(&["review", "release", "pdf", "ghost"][..]).prop_map(|s| s.parse().unwrap()),
        0..3,
    )
}

fn caps() -> impl Strategy<Value = AgentCapabilities> {
    (
        prop::option::of(prop::collection::vec(mcp_tool(), 0..5)),
        prop::option::of(prop::collection::vec(custom_tool(), 0..5)),
        prop::option::of(skill_names()),
        prop::option::of(patterns()),
        prop::option::of(patterns()),
    )
        .prop_map(
            |(connection_tools, custom_tools, skills, allowed_tools, disallowed_tools)| {
                AgentCapabilities {
                    connection_tools,
                    custom_tools,
                    skills,
                    allowed_tools,
                    disallowed_tools,
                }
            },
        )
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        4 => (select(&[DerivedKind::GeneralPurpose, DerivedKind::Explore, DerivedKind::Plan, DerivedKind::Custom][..]), any::<bool>())
            .prop_map(|(kind, background)| Role::Derived { kind, background }),
        1 => any::<bool>().prop_map(|background| Role::Fork { background }),
    ]
}

fn tool_names(names: Vec<&'static str>) -> Vec<ToolName> {
    names.into_iter().map(|n| n.parse().unwrap()).collect()
}

fn policy() -> impl Strategy<Value = ResolvePolicy> {
    let all: Vec<&'static str> = zr_types::DEFAULT_BUILTINS
        .iter()
        .map(|b| b.name)
        .chain(["search", "deploy"])
        .collect();
    (
        select(
            &[
                LazyPolicy::Always,
                LazyPolicy::Never,
                LazyPolicy::Auto { bytes: 0 },
                LazyPolicy::Auto { bytes: 150 },
                LazyPolicy::Auto { bytes: 100_000 },
            ][..],
        ),
        prop::option::of(subsequence(all.clone(), 0..6)),
        prop::option::of(subsequence(all, 0..12)),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(lazy, block, allow, delegation)| ResolvePolicy {
            lazy,
            derived_blocklist: block
                .map_or_else(ResolvePolicy::default_derived_blocklist, tool_names),
            background_allowlist: allow
                .map_or_else(ResolvePolicy::default_background_allowlist, tool_names),
            delegation,
        })
}

fn builtins() -> impl Strategy<Value = Vec<Arc<ToolDefinition>>> {
    let all = default_builtins();
    let n = all.len();
    prop_oneof![3 => Just(all.clone()), 1 => subsequence(all, 0..=n)]
}

fn world() -> impl Strategy<Value = World> {
    (
        builtins(),
        (
            prop::collection::vec(custom_tool(), 0..4),
            prop::collection::vec(mcp_tool(), 0..6),
            prop::option::of(patterns()),
            prop::option::of(patterns()),
        ),
        caps(),
        prop::option::of(caps()),
        subsequence(SKILLS.to_vec(), 0..=SKILLS.len()),
        policy(),
        prop::collection::vec((role(), caps()), 0..4),
    )
        .prop_map(
            |(
                builtins,
                (custom, mcp, allow, deny),
                root,
                query_override,
                skills,
                policy,
                subagents,
            )| World {
                builtins,
                options: AgentOptions {
                    custom_tools: custom,
                    mcp_tools: mcp,
                    allowed_tools: allow,
                    disallowed_tools: deny,
                },
                root,
                query_override,
                skills: skills
                    .into_iter()
                    .map(|s| {
                        Arc::new(SkillDefinition::inline(
                            s.parse().unwrap(),
                            format!("the {s} skill"),
                            "",
                        ))
                    })
                    .collect(),
                policy,
                subagents,
            },
        )
}

/// The pools of a world: root first, then each subagent. `None` when the
/// input holds a reserved name (checked separately).
fn pools(w: &World) -> Option<(ResolvedPool, Vec<ResolvedPool>)> {
    let root_caps = merge_root(&w.options, &w.root, w.query_override.as_ref());
    let root = resolve(&ResolveInput::new(
        Role::Root,
        &w.builtins,
        &root_caps,
        &w.skills,
        &w.policy,
    ))
    .ok()?;
    let mut subs = Vec::new();
    for (role, caps) in &w.subagents {
        subs.push(sub_pool(w, *role, caps, &root)?);
    }
    Some((root, subs))
}

fn sub_pool(
    w: &World,
    role: Role,
    caps: &AgentCapabilities,
    root: &ResolvedPool,
) -> Option<ResolvedPool> {
    let caps = derive(&w.options, caps);
    resolve(&ResolveInput::new(role, &w.builtins, &caps, &w.skills, &w.policy).with_parent(root))
        .ok()
}

fn names(tools: &[Arc<ToolDefinition>]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

/// Everything the agent can reach: advertised plus deferred, by name and origin.
fn reachable(pool: &ResolvedPool) -> BTreeSet<(String, ToolOrigin)> {
    pool.executable()
        .iter()
        .chain(pool.deferred())
        .map(|t| (t.name.to_string(), t.origin.clone()))
        .collect()
}

fn every_pool(w: &World) -> Vec<(Role, ResolvedPool)> {
    let Some((root, subs)) = pools(w) else {
        return Vec::new();
    };
    let mut out = vec![(Role::Root, root)];
    out.extend(w.subagents.iter().map(|(r, _)| *r).zip(subs));
    out
}

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
                prop_assert!(!denies.iter().any(|p| p.matches(t)), "{} survived {:?}\n{}", t.name, denies, pool);
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
        let mut orig = w.clone();
        orig.root.allowed_tools = orig.query_override.as_ref().and_then(|o| o.allowed_tools.clone()).or(orig.root.allowed_tools).or(orig.options.allowed_tools.clone());
        if let Some(o) = &mut orig.query_override { o.allowed_tools = None; }
        orig.options.allowed_tools = None;
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

    #[test]
    fn prop_every_removed_tool_has_exactly_one_step(w in world()) {
        let pools = every_pool(&w);
        let mut caps_of = vec![Some(merge_root(&w.options, &w.root, w.query_override.as_ref()))];
        caps_of.extend(w.subagents.iter().map(|(role, c)| (!matches!(role, Role::Fork { .. })).then(|| derive(&w.options, c))));
        for ((_, pool), assembled) in pools.into_iter().zip(caps_of) {
            let removed: Vec<&str> = pool.removed().iter().map(|r| r.tool.name.as_str()).collect();
            let unique: BTreeSet<&str> = removed.iter().copied().collect();
            prop_assert_eq!(removed.len(), unique.len(), "a tool removed twice:\n{}", pool);
            let kept: BTreeSet<&str> = names(pool.executable()).into_iter().chain(names(pool.deferred())).collect();
            prop_assert!(unique.is_disjoint(&kept), "removed and kept:\n{}", pool);
            // Nothing vanishes without a record: every tool of the parent's
            // or the assembled pool is kept or removed (replaced losers are
            // recorded as replaced instead).
            if let Some(caps) = &assembled {
                let accounted: BTreeSet<&str> = kept.union(&unique).copied().collect();
                let sources = w.builtins.iter().chain(&caps.custom_tools).chain(&caps.connection_tools);
                for t in sources {
                    prop_assert!(accounted.contains(t.name.as_str()), "{} unaccounted for\n{}", t.name, pool);
                }
                // A replaced definition is recorded as replaced, never as removed.
                for r in pool.removed() {
                    let winner = sources_named(caps, &w.builtins, r.tool.name.as_str());
                    prop_assert!(Arc::ptr_eq(&r.tool, &winner), "a replaced definition was recorded as removed");
                }
            } else {
                let all: BTreeSet<&str> = names(pool.advertised()).into_iter().chain(names(pool.deferred())).collect();
                for n in all {
                    prop_assert!(kept.contains(n) || unique.contains(n));
                }
            }
        }
    }

    #[test]
    fn prop_removing_a_capability_never_adds_a_tool(w in world(), which in 0..4usize, index in any::<prop::sample::Index>()) {
        let Some((_, subs)) = pools(&w) else { return Ok(()) };
        for (i, (role, caps)) in w.subagents.iter().enumerate() {
            if matches!(role, Role::Fork { .. }) {
                continue;
            }
            let mut smaller = caps.clone();
            let dropped: Option<String> = match which {
                0 => smaller.custom_tools.as_mut().filter(|v| !v.is_empty()).map(|v| v.remove(index.index(v.len())).name.to_string()),
                1 => smaller.connection_tools.as_mut().filter(|v| !v.is_empty()).map(|v| v.remove(index.index(v.len())).name.to_string()),
                2 => smaller.skills.as_mut().filter(|v| !v.is_empty()).map(|v| v.remove(index.index(v.len())).to_string()),
                _ => smaller.allowed_tools.as_mut().filter(|v| !v.is_empty()).map(|v| v.remove(index.index(v.len())).to_string()),
            };
            let Some(dropped) = dropped else { continue };
            // Dropping an entry that shadows another definition of the same
            // name (a builtin, or an earlier entry) uncovers that definition:
            // a replacement, not a removed capability.
            let shadows = w.builtins.iter().chain(smaller.custom_tools.iter().flatten()).chain(smaller.connection_tools.iter().flatten()).any(|t| t.name.as_str() == dropped);
            if shadows {
                continue;
            }
            let root = pools(&w).unwrap().0;
            let after = sub_pool(&w, *role, &smaller, &root).expect("fewer tools cannot add a reserved name");
            let before = reachable(&subs[i]);
            for (name, origin) in reachable(&after) {
                prop_assert!(before.contains(&(name.clone(), origin.clone())), "dropping {} added {}", dropped, name);
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
        prop_assert!(pools(&w).is_none());
    }
}

/// The definition that wins R1 for `name`: the last one in assembly order.
fn sources_named(
    caps: &EffectiveCapabilities,
    builtins: &[Arc<ToolDefinition>],
    name: &str,
) -> Arc<ToolDefinition> {
    builtins
        .iter()
        .chain(&caps.custom_tools)
        .chain(&caps.connection_tools)
        .rfind(|t| t.name.as_str() == name)
        .cloned()
        .expect("a removed tool came from some source")
}

/// The world as a scenario file with its subagents in `order`.
fn scenario_json(w: &World, order: Vec<usize>) -> String {
    use serde_json::{Value, json};
    fn tool(t: &ToolDefinition) -> Value {
        let mut v = json!({"name": t.name.as_str(), "description": t.description, "read_only": t.is_read_only()});
        match &t.origin {
            ToolOrigin::Connection { server } => {
                let short = t
                    .name
                    .as_str()
                    .strip_prefix(&format!("mcp__{server}__"))
                    .unwrap();
                v["name"] = json!(short);
                v["server"] = json!(server.as_str());
                if let Some(d) = t.defer {
                    v["defer"] = json!(d);
                }
            }
            _ => {
                v["defer"] = json!(t.defer == Some(true));
            }
        }
        v
    }
    fn list(tools: &[Arc<ToolDefinition>]) -> Value {
        Value::Array(tools.iter().map(|t| tool(t)).collect())
    }
    fn caps(c: &AgentCapabilities) -> Value {
        json!({
            "custom_tools": c.custom_tools.as_deref().map(list),
            "connection_tools": c.connection_tools.as_deref().map(list),
            "skills": c.skills,
            "allowed_tools": c.allowed_tools,
            "disallowed_tools": c.disallowed_tools,
        })
    }
    let lazy = match w.policy.lazy {
        LazyPolicy::Always => json!("always"),
        LazyPolicy::Never => json!("never"),
        LazyPolicy::Auto { bytes } => json!({"auto": bytes}),
    };
    let head = json!({
        "builtins": list(&w.builtins).as_array().unwrap().iter().map(|b| json!({"name": b["name"], "read_only": b["read_only"], "defer": b["defer"]})).collect::<Vec<_>>(),
        "options": {"custom_tools": list(&w.options.custom_tools), "mcp_tools": list(&w.options.mcp_tools),
                    "allowed_tools": w.options.allowed_tools, "disallowed_tools": w.options.disallowed_tools},
        "capabilities": caps(&w.root),
        "query_override": w.query_override.as_ref().map(caps),
        "skills": w.skills.iter().map(|s| json!({"name": s.name, "description": s.description})).collect::<Vec<_>>(),
        "policy": {"lazy": lazy, "derived_blocklist": w.policy.derived_blocklist, "background_allowlist": w.policy.background_allowlist, "delegation": w.policy.delegation},
    });
    let mut text = head.to_string();
    text.pop(); // reopen the object to append subagents in the chosen order
    text.push_str(",\"subagents\":{");
    for (k, i) in order.iter().enumerate() {
        let (role, c) = &w.subagents[*i];
        if k > 0 {
            text.push(',');
        }
        let (kind, background) = match role {
            Role::Derived { kind, background } => (
                match kind {
                    DerivedKind::GeneralPurpose => "general-purpose",
                    DerivedKind::Explore => "explore",
                    DerivedKind::Plan => "plan",
                    DerivedKind::Custom => "custom",
                },
                *background,
            ),
            Role::Fork { background } => ("fork", *background),
            Role::Root => unreachable!("subagents are never root"),
        };
        let mut v = json!({"kind": kind, "background": background});
        if kind != "fork" {
            v["capabilities"] = caps(c);
        }
        text.push_str(&format!("\"agent{i}\":{v}"));
    }
    text.push_str("}}");
    text
}
