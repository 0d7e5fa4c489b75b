//! Generated sessions for the property tests: strategies, the helpers that
//! resolve a whole session, and the session as a scenario file.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use zr_caps::{
    AgentCapabilities, AgentOptions, EffectiveCapabilities, ToolList, ToolPattern, derive,
    merge_root,
};
use zr_resolve::{
    DerivedKind, LazyPolicy, ResolveInput, ResolvePolicy, ResolvedPool, Role, default_builtins,
    resolve,
};
use zr_types::{
    Annotations, ServerName, SkillDefinition, SkillName, ToolDefinition, ToolName, ToolOrigin,
};

pub(crate) const CUSTOM_NAMES: &[&str] = &[
    "search", "deploy", "lint", "fetch", "Bash", "Read", "Write", "x1", "x2",
];
pub(crate) const SERVERS: &[&str] = &["gh", "ghx", "db"];
/// MCP tool names as servers list them; `read.file` and the 70-character
/// name do not fit the tool-name rules and are shortened by `ToolName::mcp`.
pub(crate) const MCP_TOOLS: &[&str] = &[
    "create",
    "list",
    "read",
    "delete",
    "read.file",
    "llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll",
];
pub(crate) const PATTERNS: &[&str] = &[
    "*",
    "mcp__db__read.file",
    "mcp__gh__llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllll",
    "mcp__gh__read_file",
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
pub(crate) const SKILLS: &[&str] = &["review", "release", "pdf"];

/// One generated session: everything the resolver sees for a root and its
/// subagents.
#[derive(Debug, Clone)]
pub(crate) struct World {
    pub(crate) builtins: ToolList,
    pub(crate) options: AgentOptions,
    pub(crate) root: AgentCapabilities,
    pub(crate) query_override: Option<AgentCapabilities>,
    pub(crate) skills: Vec<Arc<SkillDefinition>>,
    pub(crate) policy: ResolvePolicy,
    pub(crate) subagents: Vec<(Role, AgentCapabilities)>,
    /// Builtins whose runtime service is not configured.
    pub(crate) no_service: Vec<ToolName>,
}

pub(crate) fn custom_tool() -> impl Strategy<Value = Arc<ToolDefinition>> {
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

pub(crate) fn mcp_tool() -> impl Strategy<Value = Arc<ToolDefinition>> {
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

pub(crate) fn patterns() -> impl Strategy<Value = Vec<ToolPattern>> {
    prop::collection::vec(select(PATTERNS).prop_map(|p| p.parse().unwrap()), 0..4)
}

pub(crate) fn skill_names() -> impl Strategy<Value = Vec<SkillName>> {
    prop::collection::vec(
        select(&["review", "release", "pdf", "ghost"][..]).prop_map(|s| s.parse().unwrap()),
        0..3,
    )
}

pub(crate) fn caps() -> impl Strategy<Value = AgentCapabilities> {
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

pub(crate) fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        4 => (select(&[DerivedKind::GeneralPurpose, DerivedKind::Explore, DerivedKind::Plan, DerivedKind::Custom][..]), any::<bool>())
            .prop_map(|(kind, background)| Role::Derived { kind, background }),
        1 => any::<bool>().prop_map(|background| Role::Fork { background }),
    ]
}

pub(crate) fn tool_names(names: Vec<&'static str>) -> Vec<ToolName> {
    names.into_iter().map(|n| n.parse().unwrap()).collect()
}

pub(crate) fn policy() -> impl Strategy<Value = ResolvePolicy> {
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
            max_depth: 1,
        })
}

pub(crate) fn builtins() -> impl Strategy<Value = ToolList> {
    let all = default_builtins();
    let n = all.len();
    prop_oneof![
        3 => Just(all.clone()),
        1 => subsequence(all.to_vec(), 0..=n).prop_map(ToolList::from)
    ]
}

pub(crate) fn world() -> impl Strategy<Value = World> {
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
        (
            policy(),
            subsequence(
                vec!["WebSearch", "AskUserQuestion", "Config", "Read"],
                0..=4,
            ),
        ),
        prop::collection::vec((role(), caps()), 0..4),
    )
        .prop_map(
            |(
                builtins,
                (custom, mcp, allow, deny),
                root,
                query_override,
                skills,
                (policy, no_service),
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
                no_service: tool_names(no_service),
            },
        )
}

/// The pools of a world: root first, then each subagent. `None` when the
/// input holds a reserved name (checked separately).
pub(crate) fn pools(w: &World) -> Option<(ResolvedPool, Vec<ResolvedPool>)> {
    let root_caps = merge_root(&w.options, &w.root, w.query_override.as_ref());
    let root = resolve(
        &ResolveInput::new(Role::Root, &w.builtins, &root_caps, &w.skills, &w.policy)
            .with_no_service(&w.no_service),
    )
    .ok()?;
    let mut subs = Vec::new();
    for (role, caps) in &w.subagents {
        subs.push(sub_pool(w, *role, caps, &root)?);
    }
    Some((root, subs))
}

pub(crate) fn sub_pool(
    w: &World,
    role: Role,
    caps: &AgentCapabilities,
    root: &ResolvedPool,
) -> Option<ResolvedPool> {
    let caps = derive(&w.options, caps);
    resolve(
        &ResolveInput::new(role, &w.builtins, &caps, &w.skills, &w.policy)
            .with_parent(root)
            .with_no_service(&w.no_service),
    )
    .ok()
}

pub(crate) fn names<'a>(tools: impl IntoIterator<Item = &'a Arc<ToolDefinition>>) -> Vec<&'a str> {
    tools.into_iter().map(|t| t.name.as_str()).collect()
}

/// Everything the agent can reach: advertised plus deferred, by name and origin.
pub(crate) fn reachable(pool: &ResolvedPool) -> BTreeSet<(String, ToolOrigin)> {
    pool.executable()
        .iter()
        .chain(pool.deferred())
        .map(|t| (t.name.to_string(), t.origin.clone()))
        .collect()
}

pub(crate) fn every_pool(w: &World) -> Vec<(Role, ResolvedPool)> {
    let Some((root, subs)) = pools(w) else {
        return Vec::new();
    };
    let mut out = vec![(Role::Root, root)];
    out.extend(w.subagents.iter().map(|(r, _)| *r).zip(subs));
    out
}

/// The definition that wins R1 for `name`: the last one in assembly order.
pub(crate) fn sources_named(
    caps: &EffectiveCapabilities,
    builtins: &[Arc<ToolDefinition>],
    name: &str,
) -> Arc<ToolDefinition> {
    builtins
        .iter()
        .chain(caps.custom_tools.iter())
        .chain(caps.connection_tools.iter())
        .rfind(|t| t.name.as_str() == name)
        .cloned()
        .expect("a removed tool came from some source")
}

/// The world as a scenario file with its subagents in `order`.
pub(crate) fn scenario_json(w: &World, order: Vec<usize>) -> String {
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

/// The meaning of a pattern, written independently of `ToolPattern` (from
/// DESIGN.md and the pattern docs), so the deny law does not check the
/// implementation against itself.
pub(crate) fn reference_match(pattern: &str, tool: &ToolDefinition) -> bool {
    if pattern == "*" {
        return true;
    }
    if let Some(prefix) = pattern.strip_suffix('*') {
        return tool.name.as_str().starts_with(prefix);
    }
    if let Some(rest) = pattern.strip_prefix("mcp__") {
        if !rest.is_empty() && !rest.contains("__") {
            return tool.server().is_some_and(|s| s.as_str() == rest);
        }
        // An MCP tool named as its server lists it.
        if let Some((server, name)) = rest.split_once("__")
            && tool.server().is_some_and(|s| s.as_str() == server)
            && let Ok(server) = server.parse::<ServerName>()
            && ToolName::mcp(&server, name).is_ok_and(|n| n == tool.name)
        {
            return true;
        }
    }
    tool.name.as_str() == pattern
}
