//! Resolution of a root or derived agent: R1-R8.
//!
//! R1 assembles the pool through a name index, leaving out the builtins
//! whose service is not configured (recorded as removed at R1); R2-R6 are decided for each
//! tool in one pass (each depends only on the tool and the input), with the
//! removals sorted back into step order; R7 and R8 then work on what
//! survived. Large pools do not fit in cache, so each definition is read as
//! few times as possible.

use std::collections::BTreeSet;
use std::sync::Arc;

use zr_caps::{SkillView, ToolPattern};
use zr_types::{RESERVED_TOOL_NAMES, SkillDefinition, ToolDefinition, ToolOrigin};

use crate::name_index::NameIndex;
use crate::{
    DerivedKind, LazyPolicy, RemovalReason, Removed, Replaced, ResolveError, ResolveInput,
    ResolvePolicy, ResolvedPool, Role, Step, Warning,
};

/// The list a definition was given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Builtins,
    Custom,
    Connection,
}

impl Source {
    fn label(self) -> &'static str {
        match self {
            Self::Builtins => "builtin registry",
            Self::Custom => "custom_tools",
            Self::Connection => "connection_tools",
        }
    }
}

/// R1's checks of one entry: it carries the origin of the list it came in
/// (a definition cannot claim to be builtin to get the builtin rules),
/// only the runtime defines the reserved names, and `mcp__` names belong to
/// connection tools and only to them.
fn check_entry(tool: &ToolDefinition, source: Source) -> Result<(), ResolveError> {
    let origin_ok = match source {
        Source::Builtins => tool.origin == ToolOrigin::Builtin,
        Source::Custom => tool.origin == ToolOrigin::Custom,
        Source::Connection => matches!(tool.origin, ToolOrigin::Connection { .. }),
    };
    if !origin_ok {
        return Err(ResolveError::WrongOrigin {
            name: tool.name.clone(),
            list: source.label(),
            origin: tool.origin.clone(),
        });
    }
    // By the inline head (`ToolName::is`, `starts_with`): in large pools
    // the name's own bytes are a cache miss for every tool.
    if source != Source::Builtins && RESERVED_TOOL_NAMES.iter().any(|r| tool.name.is(r)) {
        return Err(ResolveError::ReservedName {
            name: tool.name.clone(),
            origin: tool.origin.clone(),
        });
    }
    match (source, tool.name.starts_with("mcp__")) {
        (Source::Connection, false) => Err(ResolveError::ConnectionName {
            name: tool.name.clone(),
            origin: tool.origin.clone(),
        }),
        (Source::Builtins | Source::Custom, true) => Err(ResolveError::ReservedPrefix {
            name: tool.name.clone(),
            origin: tool.origin.clone(),
        }),
        _ => Ok(()),
    }
}

/// What R1 gives: the pool, the definitions replaced in it, and the
/// builtins left out because their service is not configured.
struct Assembled {
    pool: Vec<Arc<ToolDefinition>>,
    replaced: Vec<Replaced>,
    no_service: Vec<Arc<ToolDefinition>>,
}

/// R1: builtins, then custom, then connection tools; same name replaces in
/// place; then the builtins whose service is not configured leave.
fn assemble<'a>(input: &ResolveInput<'a>) -> Result<Assembled, ResolveError> {
    let caps = input.capabilities;
    let total = input.builtins.len() + caps.custom_tools.len() + caps.connection_tools.len();
    let mut pool: Vec<Arc<ToolDefinition>> = Vec::with_capacity(total);
    let mut replaced = Vec::new();
    let mut no_service = Vec::new();
    let mut index = NameIndex::with_capacity(total);
    let tagged = |list: &'a [Arc<ToolDefinition>], source| list.iter().map(move |t| (t, source));
    let sources = tagged(input.builtins, Source::Builtins)
        .chain(tagged(&caps.custom_tools, Source::Custom))
        .chain(tagged(&caps.connection_tools, Source::Connection));
    for (tool, source) in sources {
        check_entry(tool, source)?;
        let position = pool.len();
        let existing = {
            let pool = &pool;
            index.find_or_insert(&tool.name, position, |at| &pool[at].name)
        };
        match existing {
            Some(at) => {
                replaced.push(Replaced {
                    name: tool.name.clone(),
                    previous: pool[at].origin.clone(),
                    by: tool.origin.clone(),
                });
                pool[at] = Arc::clone(tool);
            }
            None => pool.push(Arc::clone(tool)),
        }
    }
    // After replacement: a custom or connection tool that took a builtin's
    // name is the host's own implementation and stays.
    if !input.no_service.is_empty() {
        pool.retain(|tool| {
            let unserviced =
                tool.origin == ToolOrigin::Builtin && input.no_service.contains(&tool.name);
            if unserviced {
                no_service.push(Arc::clone(tool));
            }
            !unserviced
        });
    }
    Ok(Assembled {
        pool,
        replaced,
        no_service,
    })
}

fn first_match<'p>(patterns: &'p [ToolPattern], tool: &ToolDefinition) -> Option<&'p ToolPattern> {
    patterns.iter().find(|p| p.matches(tool))
}

/// Marks every not-yet-hit pattern of `patterns` that matches `tool`.
fn mark_hits(patterns: &[ToolPattern], hits: &mut [bool], tool: &ToolDefinition) {
    for (pattern, hit) in patterns.iter().zip(hits.iter_mut()) {
        if !*hit && pattern.matches(tool) {
            *hit = true;
        }
    }
}

/// The steps R2-R6 for one tool: the first step that removes it, if any.
/// Each step depends only on the tool and the input, so they run in one
/// pass; the removals are put back in step order afterwards.
fn first_removal(input: &ResolveInput<'_>, tool: &ToolDefinition) -> Option<(Step, RemovalReason)> {
    let caps = input.capabilities;
    let policy = input.policy;
    let builtin = tool.origin == ToolOrigin::Builtin;
    // R2
    if let Some(allowed) = &caps.allowed_tools
        && builtin
        && first_match(allowed, tool).is_none()
    {
        return Some((Step::R2, RemovalReason::NotAllowed));
    }
    // R3
    if let Some(p) = first_match(&caps.session_disallowed_tools, tool) {
        let reason = RemovalReason::Denied {
            pattern: p.clone(),
            // At the root the session-wide list is simply the top-level
            // deny list (DESIGN's "denied by 'Write'"); a subagent is told
            // where the pattern came from.
            session: input.role != Role::Root,
        };
        return Some((Step::R3, reason));
    }
    if let Some(p) = first_match(&caps.disallowed_tools, tool) {
        let reason = RemovalReason::Denied {
            pattern: p.clone(),
            session: false,
        };
        return Some((Step::R3, reason));
    }
    let Role::Derived { kind, background } = input.role else {
        return None;
    };
    // R4, R5
    if is_delegation(tool) {
        return Some((Step::R4, RemovalReason::NoDelegation));
    }
    if let Some(removal) = barred_from_subagents(tool, policy, background) {
        return Some(removal);
    }
    // R6
    let read_only_kind = match kind {
        DerivedKind::Explore => "explore",
        DerivedKind::Plan => "plan",
        DerivedKind::GeneralPurpose | DerivedKind::Custom => return None,
    };
    let builtin_bash = builtin && tool.name.is("Bash");
    if !tool.is_read_only() && !builtin_bash {
        return Some((
            Step::R6,
            RemovalReason::NotReadOnly {
                kind: read_only_kind,
            },
        ));
    }
    None
}

/// The runtime's own tools in a pool, found during the main pass so later
/// steps need not search by name (only builtins can carry these names).
#[derive(Default)]
struct Specials {
    skill: Option<Arc<ToolDefinition>>,
    find_tool: Option<Arc<ToolDefinition>>,
    delegation: Vec<Arc<ToolDefinition>>,
}

pub(crate) fn resolve_agent(input: &ResolveInput<'_>) -> Result<ResolvedPool, ResolveError> {
    let caps = input.capabilities;
    let policy = input.policy;
    let Assembled {
        pool: assembled,
        replaced,
        no_service,
    } = assemble(input)?;

    // Warnings are judged against the assembled pool, so a pattern aimed at
    // a tool that an earlier step removed is not reported as a typo.
    // Session-wide patterns are judged at the root only.
    let no_patterns: &[ToolPattern] = &[];
    let allowed = caps.allowed_tools.as_deref().unwrap_or(no_patterns);
    let session = if input.role == Role::Root {
        caps.session_disallowed_tools.as_slice()
    } else {
        no_patterns
    };
    let mut allow_hits = vec![false; allowed.len()];
    let mut session_hits = vec![false; session.len()];
    let mut deny_hits = vec![false; caps.disallowed_tools.len()];

    let mut pool = Vec::with_capacity(assembled.len());
    let mut removed = Vec::with_capacity(no_service.len());
    // A builtin without its service still counts as matched by the
    // patterns: `allowed_tools = ["WebSearch"]` is not a typo on a host
    // without a search service.
    for tool in no_service {
        mark_hits(allowed, &mut allow_hits, &tool);
        mark_hits(session, &mut session_hits, &tool);
        mark_hits(&caps.disallowed_tools, &mut deny_hits, &tool);
        removed.push(Removed {
            tool,
            step: Step::R1,
            reason: RemovalReason::NoService,
        });
    }
    let mut specials = Specials::default();
    for tool in assembled {
        if tool.origin == ToolOrigin::Builtin {
            mark_hits(allowed, &mut allow_hits, &tool);
        }
        mark_hits(session, &mut session_hits, &tool);
        mark_hits(&caps.disallowed_tools, &mut deny_hits, &tool);
        if let Some((step, reason)) = first_removal(input, &tool) {
            removed.push(Removed { tool, step, reason });
            continue;
        }
        if tool.origin == ToolOrigin::Builtin {
            match tool.name.as_str() {
                "Skill" => specials.skill = Some(Arc::clone(&tool)),
                "FindTool" => specials.find_tool = Some(Arc::clone(&tool)),
                "Task" | "MultiTask" => specials.delegation.push(Arc::clone(&tool)),
                _ => {}
            }
        }
        // R8's class is read now, while the definition is in cache: large
        // pools do not fit in cache, and every later pass would miss again.
        let class = defer_class(&tool);
        pool.push((tool, class));
    }
    // Stable: within a step, removals stay in pool order.
    removed.sort_by_key(|r| r.step);

    let mut warnings = Vec::new();
    for (pattern, _) in allowed.iter().zip(&allow_hits).filter(|(_, hit)| !**hit) {
        warnings.push(Warning::AllowUnmatched {
            pattern: pattern.clone(),
        });
    }
    let mut seen = BTreeSet::new();
    let deny = (session.iter().zip(&session_hits).map(|(p, h)| (p, h, true))).chain(
        caps.disallowed_tools
            .iter()
            .zip(&deny_hits)
            .map(|(p, h)| (p, h, false)),
    );
    for (pattern, hit, session) in deny {
        if seen.insert(pattern) && !*hit {
            warnings.push(Warning::DenyUnmatched {
                pattern: pattern.clone(),
                session,
            });
        }
    }

    // R7
    let mut skills = select_skills(&caps.skills, input.skills, &mut warnings);
    if specials.skill.is_none() && !skills.is_empty() {
        warnings.push(Warning::SkillsWithoutSkillTool {
            skills: skills.iter().map(|s| s.name.clone()).collect(),
        });
        skills.clear();
    }
    let mut gone: Vec<(Arc<ToolDefinition>, RemovalReason)> = Vec::new();
    if skills.is_empty()
        && let Some(skill) = specials.skill.take()
    {
        gone.push((skill, RemovalReason::NoSkills));
    }
    if !policy.delegation {
        gone.extend(
            specials
                .delegation
                .drain(..)
                .map(|t| (t, RemovalReason::DelegationOff)),
        );
    }
    remove_known(&mut pool, &mut removed, Step::R7, &gone);

    // R8
    let mut deferred = Vec::new();
    let mut advertised = Vec::with_capacity(pool.len());
    match specials.find_tool {
        Some(find_tool) => {
            let defer_mcp = defer_connection_tools(&pool, policy.lazy);
            for (tool, class) in pool {
                match class {
                    Defer::Yes => deferred.push(tool),
                    Defer::Policy if defer_mcp => deferred.push(tool),
                    Defer::Policy | Defer::No => advertised.push(tool),
                }
            }
            if deferred.is_empty() {
                advertised.retain(|t| !Arc::ptr_eq(t, &find_tool));
                removed.push(Removed {
                    tool: find_tool,
                    step: Step::R8,
                    reason: RemovalReason::NothingDeferred,
                });
            }
        }
        None => advertised.extend(pool.into_iter().map(|(tool, _)| tool)),
    }

    let advertised: Arc<[Arc<ToolDefinition>]> = advertised.into();
    Ok(ResolvedPool {
        executable: Arc::clone(&advertised),
        advertised,
        deferred: deferred.into(),
        removed,
        replaced,
        skills,
        warnings,
    })
}

/// Removes the given tools (by identity) and records them in pool order.
fn remove_known(
    pool: &mut Vec<(Arc<ToolDefinition>, Defer)>,
    removed: &mut Vec<Removed>,
    step: Step,
    gone: &[(Arc<ToolDefinition>, RemovalReason)],
) {
    pool.retain(
        |(tool, _)| match gone.iter().find(|(g, _)| Arc::ptr_eq(g, tool)) {
            Some((_, reason)) => {
                removed.push(Removed {
                    tool: Arc::clone(tool),
                    step,
                    reason: reason.clone(),
                });
                false
            }
            None => true,
        },
    );
}

pub(crate) fn is_delegation(tool: &ToolDefinition) -> bool {
    tool.name.is("Task") || tool.name.is("MultiTask")
}

/// R4's block list and R5, which derived agents and forks share. (Task and
/// MultiTask are each role's own business: a fork keeps them advertised.)
pub(crate) fn barred_from_subagents(
    tool: &ToolDefinition,
    policy: &ResolvePolicy,
    background: bool,
) -> Option<(Step, RemovalReason)> {
    if policy.derived_blocklist.contains(&tool.name) {
        Some((Step::R4, RemovalReason::DerivedBlocklist))
    } else if background
        && tool.origin == ToolOrigin::Builtin
        && !policy.background_allowlist.contains(&tool.name)
    {
        Some((Step::R5, RemovalReason::NotForBackground))
    } else {
        None
    }
}

/// How a surviving tool takes part in the lazy split (R8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Defer {
    /// Stays advertised.
    No,
    /// Deferred by its own flag (builtin registry, custom `defer: true`, an
    /// explicit connection setting).
    Yes,
    /// A connection tool without its own setting: the lazy policy decides.
    Policy,
}

fn defer_class(tool: &ToolDefinition) -> Defer {
    if tool.origin == ToolOrigin::Builtin && tool.name.is("FindTool") {
        return Defer::No;
    }
    match (&tool.origin, tool.defer) {
        (ToolOrigin::Connection { .. }, None) => Defer::Policy,
        (_, Some(true)) => Defer::Yes,
        (_, Some(false) | None) => Defer::No,
    }
}

/// Whether connection tools without their own setting are deferred.
fn defer_connection_tools(pool: &[(Arc<ToolDefinition>, Defer)], lazy: LazyPolicy) -> bool {
    match lazy {
        LazyPolicy::Always => true,
        LazyPolicy::Never => false,
        LazyPolicy::Auto { bytes } => {
            // Stop counting once the limit is passed: the answer is known,
            // and serialising the rest would cost time for nothing.
            let mut total = 0usize;
            pool.iter()
                .filter(|(_, class)| *class == Defer::Policy)
                .any(|(t, _)| {
                    total = total.saturating_add(t.wire_size());
                    total > bytes
                })
        }
    }
}

fn select_skills(
    view: &SkillView,
    registry: &[Arc<SkillDefinition>],
    warnings: &mut Vec<Warning>,
) -> Vec<Arc<SkillDefinition>> {
    let mut seen = BTreeSet::new();
    match view {
        SkillView::All => registry
            .iter()
            .filter(|s| seen.insert(s.name.clone()))
            .cloned()
            .collect(),
        SkillView::Only(names) => {
            let mut out = Vec::with_capacity(names.len());
            for name in names {
                if !seen.insert(name.clone()) {
                    continue;
                }
                match registry.iter().find(|s| &s.name == name) {
                    Some(skill) => out.push(Arc::clone(skill)),
                    None => warnings.push(Warning::UnknownSkill { name: name.clone() }),
                }
            }
            out
        }
    }
}
