//! Resolver benchmarks: one session (the root plus 50 subagents) over 50,
//! 200, 2,000 and 20,000 tools (50 and 200: pools as sessions have them;
//! 2,000 and 20,000: the large cases).
//!
//! The input is deterministic (plain arithmetic, no randomness) and built
//! outside the timed loop:
//!
//! - N tools in all: the default builtins, N/4 custom tools and the rest
//!   MCP (connection) tools over 20 servers, each server a contiguous block;
//! - every 10th custom and connection tool is read-only; server `srv05`
//!   sets `defer: false` on all its tools, server `srv06` `defer: true`,
//!   every 40th custom tool and every 50th other connection tool
//!   `defer: true`;
//! - schemas are small JSON objects (two to four properties, one of four
//!   shapes); every definition is one `Arc<ToolDefinition>` shared by the
//!   options, the root and every subagent, as in a real session;
//! - the policy is `LazyPolicy::Auto { bytes: 64_000 }` for every agent, so
//!   R8 sums `wire_size` over the pool (the connection tools far exceed the
//!   limit, hence they are deferred);
//! - the session-wide deny list holds an exact name, a server pattern and a
//!   prefix pattern; the root adds an exact name, a prefix pattern and a
//!   pattern that matches nothing (a warning);
//! - the 50 subagents: 15 general-purpose, 5 general-purpose in the
//!   background, 10 explore, 5 plan, 5 custom, 5 forks and 5 background
//!   forks of the root. Every derived subagent's capabilities hold **all**
//!   N - builtins custom and connection tools (the worst case: each pool
//!   is resolved over the whole N), a deny list of a server pattern, an
//!   exact name and a prefix pattern (every fifth also an unmatched
//!   pattern), every third an allow list for builtins, every fourth two
//!   skills.
//!
//! Groups:
//!
//! - `resolve/session/N`: resolve the root, then the 50 subagents (forks
//!   against the root's pool); capabilities are already derived. The
//!   throughput is N x 51 elements, i.e. tool-pool pairs.
//! - `resolve/root/N`: the root alone (N elements).
//! - `resolve/session_with_caps/N`: the session including `merge_root` and
//!   `derive` for every agent, which a real session also pays.
//!
//! - `breakdown/*`, only with `ZR_BENCH_BREAKDOWN=1`: where the time goes
//!   (the session with `LazyPolicy::Always`, without allow and deny lists,
//!   and replicas of R1 assembly, the `wire_size` sum and deny matching);
//!   for diagnosis, not a target.
//!
//! Dropping the resolved pools happens inside the timed loop; it is part of
//! the cost of a session.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group};
use serde_json::{Value, json};
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

const SERVERS: usize = 20;
const SUBAGENTS: usize = 50;
const SIZES: [usize; 4] = [50, 200, 2_000, 20_000];
/// The lazy `auto` limit: a fixed budget, as a host would set it. At
/// N = 50 and 200 the connection tools stay under it; at 2,000 and 20,000
/// they exceed it and are deferred.
const AUTO_BYTES: usize = 64_000;

/// One benchmark session: registries, policy and every agent's input.
struct Session {
    total_tools: usize,
    builtins: ToolList,
    skills: Vec<Arc<SkillDefinition>>,
    policy: ResolvePolicy,
    options: AgentOptions,
    root_definition: AgentCapabilities,
    root_caps: EffectiveCapabilities,
    /// Role, raw definition and derived capabilities of each subagent.
    subagents: Vec<(Role, AgentCapabilities, EffectiveCapabilities)>,
}

fn schemas() -> [Value; 4] {
    [
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The object's id."},
                "fields": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["id"]
        }),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Free-text query."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "cursor": {"type": "string"}
            },
            "required": ["query"]
        }),
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "title": {"type": "string", "maxLength": 200},
                "body": {"type": "string", "description": "Markdown body."},
                "labels": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["id", "title"]
        }),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the project root."},
                "recursive": {"type": "boolean", "default": false}
            },
            "required": ["path"]
        }),
    ]
}

const VERBS: [&str; 5] = ["create", "update", "delete", "admin", "sync"];

fn verb(i: usize) -> &'static str {
    if i.is_multiple_of(10) {
        "get"
    } else {
        VERBS[i % VERBS.len()]
    }
}

fn annotations(i: usize) -> Annotations {
    if i.is_multiple_of(10) {
        Annotations::read_only()
    } else {
        Annotations::default()
    }
}

fn pattern(s: &str) -> ToolPattern {
    s.parse().expect("benchmark patterns are valid")
}

fn custom_name(i: usize) -> String {
    format!("custom_{i:05}_{}", verb(i))
}

impl Session {
    fn new(total_tools: usize) -> Self {
        let builtins = default_builtins();
        let custom_count = total_tools / 4;
        let connection_count = total_tools - builtins.len() - custom_count;
        let schemas = schemas();

        let custom: Vec<Arc<ToolDefinition>> = (0..custom_count)
            .map(|i| {
                let name: ToolName = custom_name(i).parse().expect("custom names are valid");
                let def = ToolDefinition::new(
                    name,
                    format!(
                        "{} record {i} of the host application. Returns the record as JSON.",
                        verb(i)
                    ),
                    ToolOrigin::Custom,
                )
                .with_schema(schemas[i % schemas.len()].clone())
                .with_annotations(annotations(i))
                .with_defer(i.is_multiple_of(40).then_some(true));
                Arc::new(def)
            })
            .collect();

        let servers: Vec<ServerName> = (0..SERVERS)
            .map(|s| {
                format!("srv{s:02}")
                    .parse()
                    .expect("server names are valid")
            })
            .collect();
        let connection: Vec<Arc<ToolDefinition>> = (0..connection_count)
            .map(|i| {
                let s = i * SERVERS / connection_count;
                let server = &servers[s];
                let name = ToolName::mcp(server, &format!("{}_item_{i:05}", verb(i)))
                    .expect("MCP tool names are non-empty");
                let defer = match s {
                    5 => Some(false),
                    6 => Some(true),
                    _ => i.is_multiple_of(50).then_some(true),
                };
                let def = ToolDefinition::new(
                    name,
                    format!(
                        "{} item {i} on {server}. Pages with `cursor`; errors are returned as text.",
                        verb(i)
                    ),
                    ToolOrigin::Connection {
                        server: server.clone(),
                    },
                )
                .with_schema(schemas[(i / 3) % schemas.len()].clone())
                .with_annotations(annotations(i))
                .with_defer(defer);
                Arc::new(def)
            })
            .collect();

        let skills: Vec<Arc<SkillDefinition>> =
            ["review-code", "write-tests", "release-notes", "triage"]
                .iter()
                .map(|n| {
                    let name: SkillName = n.parse().expect("skill names are valid");
                    Arc::new(SkillDefinition::inline(
                        name,
                        format!("The {n} skill."),
                        "Do it.",
                    ))
                })
                .collect();

        let policy = ResolvePolicy {
            lazy: LazyPolicy::Auto { bytes: AUTO_BYTES },
            ..ResolvePolicy::default()
        };

        let options = AgentOptions {
            custom_tools: custom.clone(),
            mcp_tools: connection.clone(),
            allowed_tools: None,
            disallowed_tools: Some(vec![
                pattern(&custom_name(7)),
                pattern("mcp__srv13"),
                pattern("mcp__srv02__delete_*"),
            ]),
        };
        let root_definition = AgentCapabilities {
            disallowed_tools: Some(vec![
                pattern("CronCreate"),
                pattern("mcp__srv19__admin_*"),
                pattern("NoSuchTool"),
            ]),
            ..AgentCapabilities::default()
        };
        let root_caps = merge_root(&options, &root_definition, None);

        let subagents = (0..SUBAGENTS)
            .map(|k| {
                let role = match k % 10 {
                    0..=2 => Role::Derived {
                        kind: DerivedKind::GeneralPurpose,
                        background: false,
                    },
                    3 => Role::Derived {
                        kind: DerivedKind::GeneralPurpose,
                        background: true,
                    },
                    4 | 5 => Role::Derived {
                        kind: DerivedKind::Explore,
                        background: false,
                    },
                    6 => Role::Derived {
                        kind: DerivedKind::Plan,
                        background: false,
                    },
                    7 => Role::Derived {
                        kind: DerivedKind::Custom,
                        background: false,
                    },
                    8 => Role::Fork { background: false },
                    _ => Role::Fork { background: true },
                };
                let mut deny = vec![
                    pattern(&format!("mcp__srv{:02}", k % SERVERS)),
                    pattern(&custom_name((k * 37) % custom_count)),
                    pattern(&format!("mcp__srv{:02}__update_*", (k + 7) % SERVERS)),
                ];
                if k.is_multiple_of(5) {
                    deny.push(pattern("mcp__nosuch"));
                }
                let definition = AgentCapabilities {
                    connection_tools: Some(connection.clone()),
                    custom_tools: Some(custom.clone()),
                    skills: k.is_multiple_of(4).then(|| {
                        vec![
                            "review-code".parse().expect("valid skill name"),
                            "write-tests".parse().expect("valid skill name"),
                        ]
                    }),
                    allowed_tools: k.is_multiple_of(3).then(|| {
                        ["Read", "Grep", "Glob", "Bash", "Web*", "Skill", "FindTool"]
                            .iter()
                            .map(|p| pattern(p))
                            .collect()
                    }),
                    disallowed_tools: Some(deny),
                };
                let caps = derive(&options, &definition);
                (role, definition, caps)
            })
            .collect();

        Self {
            total_tools,
            builtins,
            skills,
            policy,
            options,
            root_definition,
            root_caps,
            subagents,
        }
    }

    fn resolve_root(&self, caps: &EffectiveCapabilities) -> ResolvedPool {
        let input = ResolveInput::new(Role::Root, &self.builtins, caps, &self.skills, &self.policy);
        resolve(&input).expect("the benchmark root resolves")
    }

    fn resolve_subagent(
        &self,
        role: Role,
        caps: &EffectiveCapabilities,
        root: &ResolvedPool,
    ) -> ResolvedPool {
        let input = ResolveInput::new(role, &self.builtins, caps, &self.skills, &self.policy)
            .with_parent(root);
        resolve(&input).expect("the benchmark subagents resolve")
    }

    /// Root plus every subagent, capabilities already derived.
    fn resolve_session(&self) -> usize {
        let root = black_box(self.resolve_root(black_box(&self.root_caps)));
        let mut tools = root.executable().len();
        for (role, _, caps) in &self.subagents {
            let pool = black_box(self.resolve_subagent(*role, black_box(caps), &root));
            tools += pool.executable().len();
        }
        tools
    }

    /// Root plus every subagent, including `merge_root` and `derive`.
    fn resolve_session_with_caps(&self) -> usize {
        let root_caps = merge_root(
            black_box(&self.options),
            black_box(&self.root_definition),
            None,
        );
        let root = black_box(self.resolve_root(&root_caps));
        let mut tools = root.executable().len();
        for (role, definition, _) in &self.subagents {
            let caps = derive(&self.options, black_box(definition));
            let pool = black_box(self.resolve_subagent(*role, &caps, &root));
            tools += pool.executable().len();
        }
        tools
    }

    /// Checks outside the timed loop that the input exercises what it is
    /// meant to: deferral, deny patterns, warnings, every role.
    fn sanity_check(&self) {
        let root = self.resolve_root(&self.root_caps);
        let total = root.advertised().len() + root.deferred().len() + root.removed().len();
        assert_eq!(total, self.total_tools, "every tool is accounted for");
        assert!(
            self.total_tools < 2_000 || root.deferred().len() > self.total_tools / 2,
            "Auto defers the connection tools"
        );
        assert!(
            root.removed().len() > self.total_tools / SERVERS,
            "the deny list removes a server"
        );
        assert!(
            root.warnings()
                .iter()
                .any(|w| w.to_string().contains("'NoSuchTool'")),
            "NoSuchTool is reported"
        );
        for (role, _, caps) in &self.subagents {
            let pool = self.resolve_subagent(*role, caps, &root);
            assert!(!pool.executable().is_empty(), "{role} has tools");
        }
    }
}

fn bench_resolve(c: &mut Criterion) {
    for n in SIZES {
        let session = Session::new(n);
        session.sanity_check();
        let elements = u64::try_from(n).expect("N fits in u64");
        let pools = u64::try_from(1 + SUBAGENTS).expect("fits");

        let mut group = c.benchmark_group("resolve");
        if n >= 20_000 {
            group.sampling_mode(SamplingMode::Flat);
            group.sample_size(10);
        } else {
            group.sample_size(30);
        }
        group.warm_up_time(Duration::from_secs(2));

        group.throughput(Throughput::Elements(elements));
        group.bench_function(format!("root/{n}"), |b| {
            b.iter(|| black_box(session.resolve_root(black_box(&session.root_caps))));
        });

        group.throughput(Throughput::Elements(elements * pools));
        group.bench_function(format!("session/{n}"), |b| {
            b.iter(|| black_box(session.resolve_session()));
        });
        group.bench_function(format!("session_with_caps/{n}"), |b| {
            b.iter(|| black_box(session.resolve_session_with_caps()));
        });
        group.finish();
    }
}

/// Where the time goes: variants of the session input and replicas of single
/// steps. Only with `ZR_BENCH_BREAKDOWN=1` (diagnosis, not a target).
fn bench_breakdown(c: &mut Criterion) {
    if std::env::var_os("ZR_BENCH_BREAKDOWN").is_none() {
        return;
    }
    for n in SIZES {
        let auto = Session::new(n);
        let mut always = Session::new(n);
        always.policy.lazy = LazyPolicy::Always;
        let mut bare = Session::new(n);
        bare.policy.lazy = LazyPolicy::Always;
        bare.root_caps.disallowed_tools.clear();
        bare.root_caps.session_disallowed_tools.clear();
        for (_, _, caps) in &mut bare.subagents {
            caps.disallowed_tools.clear();
            caps.session_disallowed_tools.clear();
            caps.allowed_tools = None;
        }
        let elements = u64::try_from(n).expect("N fits in u64");
        let mut group = c.benchmark_group("breakdown");
        group.sampling_mode(SamplingMode::Flat);
        group.sample_size(10);
        group.warm_up_time(Duration::from_secs(1));
        group.throughput(Throughput::Elements(elements * 51));
        group.bench_function(format!("session_always/{n}"), |b| {
            b.iter(|| black_box(always.resolve_session()));
        });
        group.bench_function(format!("session_always_no_lists/{n}"), |b| {
            b.iter(|| black_box(bare.resolve_session()));
        });
        group.throughput(Throughput::Elements(elements));
        let caps = &auto.root_caps;
        group.bench_function(format!("r1_btreemap_replica/{n}"), |b| {
            b.iter(|| {
                let mut pool: Vec<Arc<ToolDefinition>> = Vec::with_capacity(n);
                let mut index: std::collections::BTreeMap<&str, usize> =
                    std::collections::BTreeMap::new();
                for tool in auto
                    .builtins
                    .iter()
                    .chain(caps.custom_tools.iter())
                    .chain(caps.connection_tools.iter())
                {
                    if let Some(&at) = index.get(tool.name.as_str()) {
                        pool[at] = Arc::clone(tool);
                    } else {
                        index.insert(tool.name.as_str(), pool.len());
                        pool.push(Arc::clone(tool));
                    }
                }
                black_box(pool)
            });
        });
        group.bench_function(format!("r1_builtin_index_replica/{n}"), |b| {
            b.iter(|| {
                let mut pool: Vec<Arc<ToolDefinition>> = Vec::with_capacity(n);
                pool.extend(auto.builtins.iter().cloned());
                let builtins = pool.len();
                for tool in caps.custom_tools.iter() {
                    match pool[..builtins].iter().position(|t| t.name == tool.name) {
                        Some(at) => pool[at] = Arc::clone(tool),
                        None => pool.push(Arc::clone(tool)),
                    }
                }
                pool.extend(caps.connection_tools.iter().cloned());
                black_box(pool)
            });
        });
        group.bench_function(format!("wire_size_sum/{n}"), |b| {
            b.iter(|| {
                let total: usize = caps
                    .connection_tools
                    .iter()
                    .filter(|t| t.defer.is_none())
                    .map(|t| t.wire_size())
                    .sum();
                black_box(total)
            });
        });
        group.bench_function(format!("deny_match_6_patterns/{n}"), |b| {
            let pats: Vec<ToolPattern> = caps
                .session_disallowed_tools
                .iter()
                .chain(&caps.disallowed_tools)
                .cloned()
                .collect();
            b.iter(|| {
                let hits = auto
                    .builtins
                    .iter()
                    .chain(caps.custom_tools.iter())
                    .chain(caps.connection_tools.iter())
                    .filter(|t| pats.iter().any(|p| p.matches(t)))
                    .count();
                black_box(hits)
            });
        });
        group.finish();
    }
}

criterion_group!(benches, bench_resolve, bench_breakdown);

/// `ZR_BENCH_INTERLEAVED=SMALL,LARGE`: the session at SMALL and at LARGE
/// tools in alternating blocks of about the same time (LARGE / SMALL
/// sessions of SMALL, then one of LARGE; the first of each block not
/// counted, it warms the cache for its input), for `ROUNDS` rounds; prints
/// the median time of each and their ratio as one JSON line. Criterion
/// measures one size for seconds and then the other, so a shared
/// machine's slow spell lands on one of them; here both meet it.
// The clock and the printed line are the benchmark's own, around the pure
// resolver, as criterion's are.
#[allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout
)]
fn interleaved(spec: &str) {
    const ROUNDS: usize = 30;
    let (small, large) = spec
        .split_once(',')
        .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
        .expect("ZR_BENCH_INTERLEAVED is SMALL,LARGE (numbers of tools)");
    let (a, b) = (Session::new(small), Session::new(large));
    a.sanity_check();
    b.sanity_check();
    let per_block = (large / small).max(1);
    let (mut times_a, mut times_b) = (Vec::new(), Vec::new());
    let time = |session: &Session| {
        let start = std::time::Instant::now();
        black_box(session.resolve_session());
        start.elapsed().as_secs_f64() * 1e3
    };
    for _ in 0..ROUNDS {
        time(&a);
        for _ in 0..per_block {
            times_a.push(time(&a));
        }
        time(&b);
        times_b.push(time(&b));
    }
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let (ma, mb) = (median(&mut times_a), median(&mut times_b));
    println!(
        "{}",
        json!({
            "small_tools": small,
            "large_tools": large,
            "small_ms": ma,
            "large_ms": mb,
            "ratio": mb / ma,
            "rounds": ROUNDS,
        })
    );
}

/// With `ZR_BENCH_ONCE=N`, resolves one session of N tools exactly once and
/// exits, without criterion: a fixed amount of work for instruction and
/// cache-miss counts (`valgrind --tool=callgrind --cache-sim=yes
/// --toggle-collect='*resolve_session*'`), which do not depend on what
/// else the machine is doing. With `ZR_BENCH_INTERLEAVED=SMALL,LARGE`,
/// see [`interleaved`]. See BENCHMARKS.md.
fn main() {
    if let Some(spec) = std::env::var_os("ZR_BENCH_INTERLEAVED") {
        interleaved(spec.to_str().expect("ZR_BENCH_INTERLEAVED is ASCII"));
        return;
    }
    if let Some(n) = std::env::var_os("ZR_BENCH_ONCE") {
        let n: usize = n
            .to_str()
            .and_then(|n| n.parse().ok())
            .expect("ZR_BENCH_ONCE is a number of tools");
        let session = Session::new(n);
        session.sanity_check();
        black_box(session.resolve_session());
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
