//! The resolver proper: steps R1-R8 and the Fork role.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use zr_caps::{EffectiveCapabilities, SkillView, ToolPattern};
use zr_types::{
    Annotations, DEFAULT_BUILTINS, RESERVED_TOOL_NAMES, SkillDefinition, ToolDefinition, ToolOrigin,
};

use crate::{
    DerivedKind, LazyPolicy, RemovalReason, Removed, Replaced, ResolveError, ResolvePolicy,
    ResolvedPool, Role, Step, Warning,
};

/// Everything [`resolve`] needs, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct ResolveInput<'a> {
    /// The role the agent resolves under.
    pub role: Role,
    /// The builtin registry, in registry order.
    pub builtins: &'a [Arc<ToolDefinition>],
    /// The agent's effective capabilities (from `zr_caps::merge_root` for
    /// the root, `zr_caps::derive` for a subagent).
    pub capabilities: &'a EffectiveCapabilities,
    /// The skill registry, in registry order.
    pub skills: &'a [Arc<SkillDefinition>],
    /// The policy.
    pub policy: &'a ResolvePolicy,
    /// The parent's resolved pool; required for [`Role::Fork`], ignored
    /// otherwise.
    pub parent: Option<&'a ResolvedPool>,
}

impl<'a> ResolveInput<'a> {
    /// An input without a parent pool.
    #[must_use]
    pub fn new(
        role: Role,
        builtins: &'a [Arc<ToolDefinition>],
        capabilities: &'a EffectiveCapabilities,
        skills: &'a [Arc<SkillDefinition>],
        policy: &'a ResolvePolicy,
    ) -> Self {
        Self {
            role,
            builtins,
            capabilities,
            skills,
            policy,
            parent: None,
        }
    }

    /// Sets the parent's pool (for [`Role::Fork`]).
    #[must_use]
    pub fn with_parent(mut self, parent: &'a ResolvedPool) -> Self {
        self.parent = Some(parent);
        self
    }
}

/// The default builtin registry as definitions (empty object schemas; the
/// real schemas belong to the tool implementations).
#[must_use]
pub fn default_builtins() -> Vec<Arc<ToolDefinition>> {
    DEFAULT_BUILTINS
        .iter()
        .map(|b| {
            let name = b
                .name
                .parse()
                .expect("DEFAULT_BUILTINS holds valid tool names");
            let annotations = Annotations {
                read_only: b.read_only,
                ..Annotations::default()
            };
            Arc::new(
                ToolDefinition::new(name, b.description, ToolOrigin::Builtin)
                    .with_annotations(annotations)
                    .with_defer(b.deferred.then_some(true)),
            )
        })
        .collect()
}

/// Resolves one agent's tool pool.
///
/// Steps, in order, each recorded in the output:
///
/// - R1 assemble builtins, custom tools, connection tools; a later entry
///   with an earlier name replaces it in place;
/// - R2 the allow list constrains builtins only;
/// - R3 the deny lists (session-wide, then the agent's) apply to everything;
/// - R4 derived roles lose Task, MultiTask and the policy's block list;
/// - R5 background derived roles keep only allow-listed builtins;
/// - R6 Explore and Plan keep read-only tools and the builtin Bash;
/// - R7 Skill goes without skills, Task and MultiTask without delegation;
/// - R8 deferred tools move to the FindTool directory when FindTool is
///   present; FindTool goes when nothing is deferred.
///
/// A fork's advertised pool is its parent's, unchanged; its executable pool
/// is that minus Task and MultiTask, the derived block list, and for a
/// background fork the builtins outside the background allow list.
///
/// # Errors
///
/// [`ResolveError::ReservedName`] when a custom or connection tool is named
/// Task, MultiTask, FindTool or Skill; [`ResolveError::ReservedPrefix`] when
/// a builtin or custom tool's name starts with `mcp__`;
/// [`ResolveError::ForkWithoutParent`] for a fork without a parent pool.
pub fn resolve(input: &ResolveInput<'_>) -> Result<ResolvedPool, ResolveError> {
    match input.role {
        Role::Fork { background } => {
            let parent = input.parent.ok_or(ResolveError::ForkWithoutParent)?;
            Ok(resolve_fork(parent, input.policy, background))
        }
        Role::Root | Role::Derived { .. } => resolve_agent(input),
    }
}

struct Work {
    pool: Vec<Arc<ToolDefinition>>,
    removed: Vec<Removed>,
    warnings: Vec<Warning>,
}

impl Work {
    fn remove_where(
        &mut self,
        step: Step,
        mut why: impl FnMut(&ToolDefinition) -> Option<RemovalReason>,
    ) {
        let removed = &mut self.removed;
        self.pool.retain(|tool| match why(tool) {
            Some(reason) => {
                removed.push(Removed {
                    tool: Arc::clone(tool),
                    step,
                    reason,
                });
                false
            }
            None => true,
        });
    }

    fn has(&self, name: &str) -> bool {
        self.pool.iter().any(|t| t.name.as_str() == name)
    }
}

fn check_name(tool: &ToolDefinition) -> Result<(), ResolveError> {
    let name = tool.name.as_str();
    let is_connection = matches!(tool.origin, ToolOrigin::Connection { .. });
    if tool.origin != ToolOrigin::Builtin && RESERVED_TOOL_NAMES.contains(&name) {
        return Err(ResolveError::ReservedName {
            name: tool.name.clone(),
            origin: tool.origin.clone(),
        });
    }
    if !is_connection && name.starts_with("mcp__") {
        return Err(ResolveError::ReservedPrefix {
            name: tool.name.clone(),
            origin: tool.origin.clone(),
        });
    }
    Ok(())
}

/// R1: builtins, then custom, then connection tools; same name replaces in
/// place.
fn assemble(
    input: &ResolveInput<'_>,
) -> Result<(Vec<Arc<ToolDefinition>>, Vec<Replaced>), ResolveError> {
    let caps = input.capabilities;
    let total = input.builtins.len() + caps.custom_tools.len() + caps.connection_tools.len();
    let mut pool: Vec<Arc<ToolDefinition>> = Vec::with_capacity(total);
    let mut replaced = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let sources = input
        .builtins
        .iter()
        .chain(&caps.custom_tools)
        .chain(&caps.connection_tools);
    for tool in sources {
        check_name(tool)?;
        match index.get(tool.name.as_str()) {
            Some(&at) => {
                replaced.push(Replaced {
                    name: tool.name.clone(),
                    previous: pool[at].origin.clone(),
                    by: tool.origin.clone(),
                });
                pool[at] = Arc::clone(tool);
            }
            None => {
                index.insert(tool.name.as_str(), pool.len());
                pool.push(Arc::clone(tool));
            }
        }
    }
    Ok((pool, replaced))
}

fn first_match<'p>(patterns: &'p [ToolPattern], tool: &ToolDefinition) -> Option<&'p ToolPattern> {
    patterns.iter().find(|p| p.matches(tool))
}

fn resolve_agent(input: &ResolveInput<'_>) -> Result<ResolvedPool, ResolveError> {
    let caps = input.capabilities;
    let policy = input.policy;
    let (pool, replaced) = assemble(input)?;
    let mut work = Work {
        pool,
        removed: Vec::new(),
        warnings: Vec::new(),
    };

    // Warnings are judged against the assembled pool, so a pattern aimed at
    // a tool that an earlier step removed is not reported as a typo.
    if let Some(allowed) = &caps.allowed_tools {
        for pattern in allowed {
            let hit = work
                .pool
                .iter()
                .any(|t| t.origin == ToolOrigin::Builtin && pattern.matches(t));
            if !hit {
                work.warnings.push(Warning::AllowUnmatched {
                    pattern: pattern.clone(),
                });
            }
        }
    }
    let session_warns = matches!(input.role, Role::Root);
    let deny_lists = session_warns
        .then_some(caps.session_disallowed_tools.as_slice())
        .into_iter()
        .chain([caps.disallowed_tools.as_slice()]);
    let mut seen = BTreeSet::new();
    for pattern in deny_lists.flatten() {
        if seen.insert(pattern) && !work.pool.iter().any(|t| pattern.matches(t)) {
            work.warnings.push(Warning::DenyUnmatched {
                pattern: pattern.clone(),
            });
        }
    }

    // R2
    if let Some(allowed) = &caps.allowed_tools {
        work.remove_where(Step::R2, |t| {
            (t.origin == ToolOrigin::Builtin && first_match(allowed, t).is_none())
                .then_some(RemovalReason::NotAllowed)
        });
    }

    // R3
    work.remove_where(Step::R3, |t| {
        if let Some(p) = first_match(&caps.session_disallowed_tools, t) {
            return Some(RemovalReason::Denied {
                pattern: p.clone(),
                session: true,
            });
        }
        first_match(&caps.disallowed_tools, t).map(|p| RemovalReason::Denied {
            pattern: p.clone(),
            session: false,
        })
    });

    if let Role::Derived { kind, background } = input.role {
        // R4
        work.remove_where(Step::R4, |t| {
            if is_delegation(t) {
                Some(RemovalReason::NoDelegation)
            } else if policy.derived_blocklist.contains(&t.name) {
                Some(RemovalReason::DerivedBlocklist)
            } else {
                None
            }
        });
        // R5
        if background {
            work.remove_where(Step::R5, |t| {
                (t.origin == ToolOrigin::Builtin && !policy.background_allowlist.contains(&t.name))
                    .then_some(RemovalReason::NotForBackground)
            });
        }
        // R6
        let read_only_kind = match kind {
            DerivedKind::Explore => Some("explore"),
            DerivedKind::Plan => Some("plan"),
            DerivedKind::GeneralPurpose | DerivedKind::Custom => None,
        };
        if let Some(kind) = read_only_kind {
            work.remove_where(Step::R6, |t| {
                let builtin_bash = t.origin == ToolOrigin::Builtin && t.name.as_str() == "Bash";
                (!t.is_read_only() && !builtin_bash).then_some(RemovalReason::NotReadOnly { kind })
            });
        }
    }

    // R7
    let mut skills = select_skills(&caps.skills, input.skills, &mut work.warnings);
    let has_skill_tool = work.has("Skill");
    if !has_skill_tool && !skills.is_empty() {
        work.warnings.push(Warning::SkillsWithoutSkillTool {
            skills: skills.iter().map(|s| s.name.clone()).collect(),
        });
        skills.clear();
    }
    let no_skills = skills.is_empty();
    let delegation_off = !policy.delegation;
    work.remove_where(Step::R7, |t| {
        if no_skills && t.name.as_str() == "Skill" {
            Some(RemovalReason::NoSkills)
        } else if delegation_off && is_delegation(t) {
            Some(RemovalReason::DelegationOff)
        } else {
            None
        }
    });

    // R8
    let mut deferred = Vec::new();
    if work.has("FindTool") {
        let defer_mcp = defer_connection_tools(&work.pool, policy.lazy);
        let mut advertised = Vec::with_capacity(work.pool.len());
        for tool in work.pool.drain(..) {
            if is_deferred(&tool, defer_mcp) {
                deferred.push(tool);
            } else {
                advertised.push(tool);
            }
        }
        work.pool = advertised;
        if deferred.is_empty() {
            work.remove_where(Step::R8, |t| {
                (t.name.as_str() == "FindTool").then_some(RemovalReason::NothingDeferred)
            });
        }
    }

    Ok(ResolvedPool {
        executable: work.pool.clone(),
        advertised: work.pool,
        deferred,
        removed: work.removed,
        replaced,
        skills,
        warnings: work.warnings,
    })
}

fn is_delegation(tool: &ToolDefinition) -> bool {
    matches!(tool.name.as_str(), "Task" | "MultiTask")
}

/// Whether connection tools without their own setting are deferred.
fn defer_connection_tools(pool: &[Arc<ToolDefinition>], lazy: LazyPolicy) -> bool {
    match lazy {
        LazyPolicy::Always => true,
        LazyPolicy::Never => false,
        LazyPolicy::Auto { bytes } => {
            let total: usize = pool
                .iter()
                .filter(|t| t.server().is_some() && t.defer.is_none())
                .map(|t| t.wire_size())
                .sum();
            total > bytes
        }
    }
}

fn is_deferred(tool: &ToolDefinition, defer_mcp: bool) -> bool {
    if tool.name.as_str() == "FindTool" {
        return false;
    }
    match (&tool.origin, tool.defer) {
        (ToolOrigin::Connection { .. }, None) => defer_mcp,
        (_, Some(explicit)) => explicit,
        (_, None) => false,
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

fn resolve_fork(parent: &ResolvedPool, policy: &ResolvePolicy, background: bool) -> ResolvedPool {
    let why = |tool: &ToolDefinition| {
        if is_delegation(tool) {
            Some((Step::Fork, RemovalReason::ForkCannotDelegate))
        } else if policy.derived_blocklist.contains(&tool.name) {
            Some((Step::R4, RemovalReason::DerivedBlocklist))
        } else if background
            && tool.origin == ToolOrigin::Builtin
            && !policy.background_allowlist.contains(&tool.name)
        {
            Some((Step::R5, RemovalReason::NotForBackground))
        } else {
            None
        }
    };
    let mut removed = parent.removed.clone();
    let mut keep = |tools: &[Arc<ToolDefinition>]| {
        let mut kept = Vec::with_capacity(tools.len());
        for tool in tools {
            match why(tool) {
                Some((step, reason)) => removed.push(Removed {
                    tool: Arc::clone(tool),
                    step,
                    reason,
                }),
                None => kept.push(Arc::clone(tool)),
            }
        }
        kept
    };
    // The advertised pool stays byte-identical to the parent's (prompt-cache
    // parity); what the fork may not run leaves the executable pool and the
    // FindTool directory.
    let executable = keep(&parent.advertised);
    let deferred = keep(&parent.deferred);
    // Report the fork's own removals in step order, like every other pool.
    removed[parent.removed.len()..].sort_by_key(|r| r.step);
    ResolvedPool {
        advertised: parent.advertised.clone(),
        executable,
        deferred,
        removed,
        replaced: parent.replaced.clone(),
        skills: parent.skills.clone(),
        warnings: Vec::new(),
    }
}
