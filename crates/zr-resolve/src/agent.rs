//! Resolution of a root or derived agent: R1-R8.
//!
//! Large pools do not fit in cache, so each definition is read once per
//! pool. One pass assembles the pool (R1, through a name index) and, as
//! each definition is placed, decides the steps R1 (service) to R6 for it
//! (each depends only on the definition and the input) and its R8 class,
//! recording an eight-byte [`Fate`] per position and counting the patterns
//! that match. A definition replaced at R1 is taken off the counts and its
//! replacement judged again. R7 and R8 then work on the fates alone, and
//! every list of the output is built once, in its final allocation, with
//! the removals in step order (a stable counting sort: within a step, in
//! pool order).

use std::collections::BTreeSet;
use std::sync::Arc;

use zr_caps::{SkillView, ToolPattern};
use zr_types::{RESERVED_TOOL_NAMES, SkillDefinition, ToolDefinition, ToolOrigin};

use crate::ahead;
use crate::list::{Slot, Sources};
use crate::name_index::NameIndex;
use crate::pool::Removal;
use crate::{
    DerivedKind, LazyPolicy, RemovalReason, Replaced, ResolveError, ResolveInput, ResolvePolicy,
    ResolvedPool, Role, Step, Warning,
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

/// What becomes of the definition at one position of the assembled pool:
/// kept (with its R8 class), or removed at a step. Eight bytes, so that the
/// verdicts of a 20,000-tool pool stay in cache while the definitions
/// themselves are read once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Keep(Defer),
    /// R1: a builtin without its service.
    NoService,
    /// R2.
    NotAllowed,
    /// R3, by the session-wide pattern at this index.
    SessionDenied(u32),
    /// R3, by the agent's own pattern at this index.
    Denied(u32),
    /// R4.
    NoDelegation,
    /// R4.
    DerivedBlocklist,
    /// R5.
    NotForBackground,
    /// R6.
    NotReadOnly,
    /// R7.
    NoSkills,
    /// R7.
    DelegationOff,
    /// R8: FindTool with an empty directory.
    NothingDeferred,
}

impl Fate {
    /// The step that removed the tool; `None` while it is kept.
    fn step(self) -> Option<Step> {
        Some(match self {
            Self::Keep(_) => return None,
            Self::NoService => Step::R1,
            Self::NotAllowed => Step::R2,
            Self::SessionDenied(_) | Self::Denied(_) => Step::R3,
            Self::NoDelegation | Self::DerivedBlocklist => Step::R4,
            Self::NotForBackground => Step::R5,
            Self::NotReadOnly => Step::R6,
            Self::NoSkills | Self::DelegationOff => Step::R7,
            Self::NothingDeferred => Step::R8,
        })
    }

    fn from_barred(barred: Barred) -> Self {
        match barred {
            Barred::Blocklist => Self::DerivedBlocklist,
            Barred::Background => Self::NotForBackground,
        }
    }
}

/// An agent's pattern lists, and how many definitions of the assembled
/// pool each pattern matches (for the warnings). Counts rather than flags:
/// a definition replaced at R1 is taken off again.
struct Patterns<'c> {
    allowed: &'c [ToolPattern],
    /// The session-wide list as counted: at the root only.
    session: &'c [ToolPattern],
    deny: &'c [ToolPattern],
    allow_hits: Vec<u32>,
    session_hits: Vec<u32>,
    deny_hits: Vec<u32>,
}

impl<'c> Patterns<'c> {
    fn new(input: &ResolveInput<'c>) -> Self {
        let caps = input.capabilities;
        // Session-wide patterns are judged at the root only.
        let no_patterns: &[ToolPattern] = &[];
        let allowed = caps.allowed_tools.as_deref().unwrap_or(no_patterns);
        let session = if input.role == Role::Root {
            caps.session_disallowed_tools.as_slice()
        } else {
            no_patterns
        };
        Self {
            allowed,
            session,
            deny: &caps.disallowed_tools,
            allow_hits: vec![0; allowed.len()],
            session_hits: vec![0; session.len()],
            deny_hits: vec![0; caps.disallowed_tools.len()],
        }
    }

    /// Counts every pattern that matches `tool`; returns the first matching
    /// pattern of the allow list (builtins only), the counted session list
    /// and the agent's deny list.
    fn count(&mut self, tool: &ToolDefinition) -> [Option<u32>; 3] {
        let allowed = if tool.origin == ToolOrigin::Builtin {
            count_matches(self.allowed, &mut self.allow_hits, tool)
        } else {
            None
        };
        [
            allowed,
            count_matches(self.session, &mut self.session_hits, tool),
            count_matches(self.deny, &mut self.deny_hits, tool),
        ]
    }

    /// Takes back what [`Patterns::count`] counted for a definition that a
    /// later one of the same name replaced.
    fn uncount(&mut self, tool: &ToolDefinition) {
        if tool.origin == ToolOrigin::Builtin {
            uncount_matches(self.allowed, &mut self.allow_hits, tool);
        }
        uncount_matches(self.session, &mut self.session_hits, tool);
        uncount_matches(self.deny, &mut self.deny_hits, tool);
    }
}

/// Adds one to the count of every pattern that matches `tool`; returns the
/// index of the first.
fn count_matches(patterns: &[ToolPattern], hits: &mut [u32], tool: &ToolDefinition) -> Option<u32> {
    let mut first = None;
    for (at, (pattern, hit)) in patterns.iter().zip(hits.iter_mut()).enumerate() {
        if pattern.matches(tool) {
            *hit += 1;
            first = first.or(Some(at));
        }
    }
    first.map(|at| u32::try_from(at).expect("a pattern list never holds 4 billion patterns"))
}

fn uncount_matches(patterns: &[ToolPattern], hits: &mut [u32], tool: &ToolDefinition) {
    for (pattern, hit) in patterns.iter().zip(hits.iter_mut()) {
        if pattern.matches(tool) {
            *hit -= 1;
        }
    }
}

fn first_match(patterns: &[ToolPattern], tool: &ToolDefinition) -> Option<u32> {
    let at = patterns.iter().position(|p| p.matches(tool))?;
    Some(u32::try_from(at).expect("a pattern list never holds 4 billion patterns"))
}

/// The steps R1 (service) to R6 for one definition: the first step that
/// removes it, else its R8 class. Each step depends only on the definition
/// and the input, so they are decided as the definition is placed, while
/// it is in cache; every pattern that matches it is counted.
fn judge(input: &ResolveInput<'_>, patterns: &mut Patterns<'_>, tool: &ToolDefinition) -> Fate {
    let caps = input.capabilities;
    let builtin = tool.origin == ToolOrigin::Builtin;
    let [allowed, session, denied] = patterns.count(tool);
    // R1: after replacement, so that a custom or connection tool that took
    // a builtin's name (the host's own implementation) stays. Such a
    // builtin still counts as matched by the patterns:
    // `allowed_tools = ["WebSearch"]` is not a typo on a host without a
    // search service.
    if builtin && input.no_service.contains(&tool.name) {
        return Fate::NoService;
    }
    // R2
    if caps.allowed_tools.is_some() && builtin && allowed.is_none() {
        return Fate::NotAllowed;
    }
    // R3: the session-wide list is counted at the root only, and applies
    // to every agent.
    let session = if input.role == Role::Root {
        session
    } else {
        first_match(&caps.session_disallowed_tools, tool)
    };
    if let Some(at) = session {
        return Fate::SessionDenied(at);
    }
    if let Some(at) = denied {
        return Fate::Denied(at);
    }
    let Role::Derived { kind, background } = input.role else {
        return Fate::Keep(defer_class(tool));
    };
    // R4, R5
    if is_delegation(tool) && !input.depth.delegates(input.policy.max_depth) {
        return Fate::NoDelegation;
    }
    if let Some(barred) = barred_from_subagents(tool, input.policy, background) {
        return Fate::from_barred(barred);
    }
    // R6
    if matches!(kind, DerivedKind::Explore | DerivedKind::Plan)
        && !tool.is_read_only()
        && !(builtin && tool.name.is("Bash"))
    {
        return Fate::NotReadOnly;
    }
    // R8's class is read now too: every later pass would miss again.
    Fate::Keep(defer_class(tool))
}

/// The reason recorded for a removed tool.
fn reason(input: &ResolveInput<'_>, fate: Fate) -> RemovalReason {
    let caps = input.capabilities;
    match fate {
        Fate::Keep(_) => unreachable!("kept tools are not recorded as removed"),
        Fate::NoService => RemovalReason::NoService,
        Fate::NotAllowed => RemovalReason::NotAllowed,
        Fate::SessionDenied(at) => RemovalReason::Denied {
            pattern: caps.session_disallowed_tools[at as usize].clone(),
            // At the root the session-wide list is simply the top-level
            // deny list (DESIGN's "denied by 'Write'"); a subagent is told
            // where the pattern came from.
            session: input.role != Role::Root,
        },
        Fate::Denied(at) => RemovalReason::Denied {
            pattern: caps.disallowed_tools[at as usize].clone(),
            session: false,
        },
        Fate::NoDelegation => RemovalReason::NoDelegation {
            level: input.depth.level,
            limit: input.depth.ceiling.min(input.policy.max_depth),
        },
        Fate::DerivedBlocklist => RemovalReason::DerivedBlocklist,
        Fate::NotForBackground => RemovalReason::NotForBackground,
        Fate::NotReadOnly => RemovalReason::NotReadOnly {
            kind: match input.role {
                Role::Derived {
                    kind: DerivedKind::Plan,
                    ..
                } => "plan",
                _ => "explore",
            },
        },
        Fate::NoSkills => RemovalReason::NoSkills,
        Fate::DelegationOff => RemovalReason::DelegationOff,
        Fate::NothingDeferred => RemovalReason::NothingDeferred,
    }
}

/// Positions of the runtime's own tools, noted as they are placed so that
/// later steps need not search by name. Only builtins can carry these
/// names, and only a builtin of the same name can replace one.
#[derive(Default)]
struct Specials {
    skill: Option<usize>,
    find_tool: Option<usize>,
    task: Option<usize>,
    multi_task: Option<usize>,
}

impl Specials {
    fn note(&mut self, tool: &ToolDefinition, at: usize) {
        if tool.origin != ToolOrigin::Builtin {
            return;
        }
        let slot = if tool.name.is("Skill") {
            &mut self.skill
        } else if tool.name.is("FindTool") {
            &mut self.find_tool
        } else if tool.name.is("Task") {
            &mut self.task
        } else if tool.name.is("MultiTask") {
            &mut self.multi_task
        } else {
            return;
        };
        *slot = Some(at);
    }
}

/// R1 with R2-R6 decided on the way: the pool (every position filled), the
/// fate of each position, the definitions replaced, the pattern counts and
/// the runtime's own tools.
struct Assembled<'c> {
    pool: Vec<Slot>,
    fates: Vec<Fate>,
    replaced: Vec<Replaced>,
    patterns: Patterns<'c>,
    specials: Specials,
}

/// [`ahead::read_ahead`] for a chunk of the input, with the name index's
/// slot for each name: the index is as large as the pool, and its probes
/// miss too.
fn read_ahead(chunk: &[Arc<ToolDefinition>], index: &NameIndex) {
    ahead::read_ahead(chunk);
    let slots = chunk
        .iter()
        .fold(0, |folded, tool| folded ^ index.first_slot(&tool.name));
    std::hint::black_box(slots);
}

/// R1: builtins, then custom, then connection tools; same name replaces in
/// place. Each definition is judged (R1's service check, R2-R6) as it is
/// placed, and judged again if a later one replaces it.
fn assemble<'a>(
    input: &ResolveInput<'a>,
    sources: &Sources,
) -> Result<Assembled<'a>, ResolveError> {
    let caps = input.capabilities;
    let total = input.builtins.len() + caps.custom_tools.len() + caps.connection_tools.len();
    let mut pool: Vec<Slot> = Vec::with_capacity(total);
    let mut fates = Vec::with_capacity(total);
    let mut replaced = Vec::new();
    let mut patterns = Patterns::new(input);
    let mut specials = Specials::default();
    let mut index = NameIndex::with_capacity(total);
    let lists = [
        (Slot::BUILTINS, Source::Builtins),
        (Slot::CUSTOM, Source::Custom),
        (Slot::CONNECTION, Source::Connection),
    ];
    let chunks = lists.into_iter().flat_map(|(list, source)| {
        sources
            .list(list)
            .chunks(ahead::READ_AHEAD)
            .enumerate()
            .map(move |(n, chunk)| (chunk, list, n * ahead::READ_AHEAD, source))
    });
    for (chunk, list, first, source) in chunks {
        read_ahead(chunk, &index);
        for (offset, tool) in chunk.iter().enumerate() {
            check_entry(tool, source)?;
            let slot = Slot::new(list, first + offset);
            let position = pool.len();
            let existing = {
                let pool = &pool;
                index.find_or_insert(&tool.name, position, |at| &sources.get(pool[at]).name)
            };
            match existing {
                Some(at) => {
                    let previous = sources.get(pool[at]);
                    replaced.push(Replaced {
                        name: tool.name.clone(),
                        previous: previous.origin.clone(),
                        by: tool.origin.clone(),
                    });
                    patterns.uncount(previous);
                    fates[at] = judge(input, &mut patterns, tool);
                    pool[at] = slot;
                }
                None => {
                    fates.push(judge(input, &mut patterns, tool));
                    specials.note(tool, position);
                    pool.push(slot);
                }
            }
        }
    }
    Ok(Assembled {
        pool,
        fates,
        replaced,
        patterns,
        specials,
    })
}

/// The position of a special tool if it is still kept.
fn kept(fates: &[Fate], at: Option<usize>) -> Option<usize> {
    at.filter(|&at| matches!(fates[at], Fate::Keep(_)))
}

/// Where a position ends up in the output.
#[derive(Clone, Copy)]
enum Place {
    Advertised,
    Deferred,
    Removed(Step),
}

impl Place {
    /// The place's rank in the output order: advertised, deferred, then
    /// the removals in step order.
    fn rank(self) -> usize {
        match self {
            Self::Advertised => 0,
            Self::Deferred => 1,
            Self::Removed(step) => 2 + step as usize,
        }
    }
}

/// How many ranks [`Place::rank`] has (advertised, deferred, R1..R8, Fork).
const RANKS: usize = 2 + Step::Fork as usize + 1;

pub(crate) fn resolve_agent(input: &ResolveInput<'_>) -> Result<ResolvedPool, ResolveError> {
    let caps = input.capabilities;
    let policy = input.policy;
    let sources = Sources::new(
        Arc::clone(input.builtins),
        Arc::clone(&caps.custom_tools),
        Arc::clone(&caps.connection_tools),
    );
    let Assembled {
        pool,
        mut fates,
        replaced,
        patterns,
        specials,
    } = assemble(input, &sources)?;

    // Warnings are judged against the assembled pool, so a pattern aimed at
    // a tool that an earlier step removed is not reported as a typo.
    let mut warnings = Vec::new();
    for (pattern, _) in
        (patterns.allowed.iter().zip(&patterns.allow_hits)).filter(|(_, h)| **h == 0)
    {
        warnings.push(Warning::AllowUnmatched {
            pattern: pattern.clone(),
        });
    }
    let mut seen = BTreeSet::new();
    let session = (patterns.session.iter().zip(&patterns.session_hits)).map(|(p, h)| (p, h, true));
    let own = (patterns.deny.iter().zip(&patterns.deny_hits)).map(|(p, h)| (p, h, false));
    for (pattern, hits, session) in session.chain(own) {
        if seen.insert(pattern) && *hits == 0 {
            warnings.push(Warning::DenyUnmatched {
                pattern: pattern.clone(),
                session,
            });
        }
    }

    // R7
    let mut skills = select_skills(&caps.skills, input.skills, &mut warnings);
    let skill = kept(&fates, specials.skill);
    if skill.is_none() && !skills.is_empty() {
        warnings.push(Warning::SkillsWithoutSkillTool {
            skills: skills.iter().map(|s| s.name.clone()).collect(),
        });
        skills.clear();
    }
    if skills.is_empty()
        && let Some(at) = skill
    {
        fates[at] = Fate::NoSkills;
    }
    if !policy.delegation {
        for at in [specials.task, specials.multi_task] {
            if let Some(at) = kept(&fates, at) {
                fates[at] = Fate::DelegationOff;
            }
        }
    }

    // R8: without FindTool every kept tool stays advertised.
    let find_tool = kept(&fates, specials.find_tool);
    let defer_mcp =
        find_tool.is_some() && defer_connection_tools(&sources, &pool, &fates, policy.lazy);
    let place = |fate: Fate| match fate {
        Fate::Keep(Defer::Yes) if find_tool.is_some() => Place::Deferred,
        Fate::Keep(Defer::Policy) if defer_mcp => Place::Deferred,
        Fate::Keep(_) => Place::Advertised,
        removed => Place::Removed(removed.step().expect("a fate other than Keep has a step")),
    };
    let mut counts = [0usize; RANKS];
    for &fate in &fates {
        counts[place(fate).rank()] += 1;
    }
    if let Some(at) = find_tool
        && counts[Place::Deferred.rank()] == 0
    {
        fates[at] = Fate::NothingDeferred;
        counts[Place::Advertised.rank()] -= 1;
        counts[Place::Removed(Step::R8).rank()] += 1;
    }

    // Every position in its output order (a stable counting sort: within
    // a step, removals stay in pool order), then each list is built once,
    // in its final allocation.
    let mut next = [0usize; RANKS];
    for rank in 1..RANKS {
        next[rank] = next[rank - 1] + counts[rank - 1];
    }
    let mut order = vec![0u32; fates.len()];
    for (at, &fate) in fates.iter().enumerate() {
        let slot = &mut next[place(fate).rank()];
        order[*slot] = u32::try_from(at).expect("a pool never holds 4 billion tools");
        *slot += 1;
    }
    let (advertised, rest) = order.split_at(counts[0]);
    let (deferred, removed) = rest.split_at(counts[1]);
    let slot = |at: &u32| pool[*at as usize];
    let advertised: Arc<[Slot]> = advertised.iter().map(slot).collect();
    let deferred: Arc<[Slot]> = deferred.iter().map(slot).collect();
    let removed: Vec<Removal> = removed
        .iter()
        .map(|at| {
            let fate = fates[*at as usize];
            Removal {
                at: slot(at),
                step: fate.step().expect("only removed positions are here"),
                reason: reason(input, fate),
            }
        })
        .collect();

    Ok(ResolvedPool {
        sources,
        executable: Arc::clone(&advertised),
        advertised,
        deferred,
        removed,
        replaced,
        skills,
        warnings,
    })
}

pub(crate) fn is_delegation(tool: &ToolDefinition) -> bool {
    tool.name.is("Task") || tool.name.is("MultiTask")
}

/// Why R4's block list or R5 bars a tool from a subagent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Barred {
    /// R4: on the policy's derived block list.
    Blocklist,
    /// R5: a builtin outside the background allow list.
    Background,
}

impl Barred {
    pub(crate) fn step(self) -> Step {
        match self {
            Self::Blocklist => Step::R4,
            Self::Background => Step::R5,
        }
    }

    pub(crate) fn reason(self) -> RemovalReason {
        match self {
            Self::Blocklist => RemovalReason::DerivedBlocklist,
            Self::Background => RemovalReason::NotForBackground,
        }
    }
}

/// R4's block list and R5, which derived agents and forks share. (Task and
/// MultiTask are each role's own business: a fork keeps them advertised.)
pub(crate) fn barred_from_subagents(
    tool: &ToolDefinition,
    policy: &ResolvePolicy,
    background: bool,
) -> Option<Barred> {
    if policy.derived_blocklist.contains(&tool.name) {
        Some(Barred::Blocklist)
    } else if background
        && tool.origin == ToolOrigin::Builtin
        && !policy.background_allowlist.contains(&tool.name)
    {
        Some(Barred::Background)
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
fn defer_connection_tools(
    sources: &Sources,
    pool: &[Slot],
    fates: &[Fate],
    lazy: LazyPolicy,
) -> bool {
    match lazy {
        LazyPolicy::Always => true,
        LazyPolicy::Never => false,
        LazyPolicy::Auto { bytes } => {
            // Stop counting once the limit is passed: the answer is known,
            // and serialising the rest would cost time for nothing.
            let mut total = 0usize;
            pool.iter()
                .zip(fates)
                .filter(|(_, fate)| **fate == Fate::Keep(Defer::Policy))
                .any(|(t, _)| {
                    total = total.saturating_add(sources.get(*t).wire_size());
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
