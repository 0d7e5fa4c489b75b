//! The resolver's answers for a session's agents: the root's pool for a
//! query (C1), a subagent's (C2, derived and resolved against its parent's
//! pool), each joined with its handlers as [`AgentTools`]; and what a
//! subagent type's definition says of its role and prompt.
//!
//! Every pool comes through the catalog's [`zr_resolve::PoolMemo`]: the resolver is
//! pure, so subagents with equal inputs (a fan-out of one type) share the
//! first one's pool. The memo's lock is held only to look up and to
//! remember, never while resolving.

use std::sync::Arc;

use zr_caps::{AgentCapabilities, AgentDefinition, AgentType, derive, merge_root};
use zr_resolve::{Depth, DerivedKind, ResolveError, ResolveInput, ResolvedPool, Role, resolve};
use zr_types::{AgentId, ToolName, ToolOrigin};

use crate::error::EngineError;
use crate::session::Session;
use crate::tools::catalog::{Catalog, JOINED, Typed};
use crate::tools::{AgentTools, Joined};

/// The root's pool for a query whose capabilities `overrides` (C1), with
/// the tools it `loaded` through FindTool.
pub(crate) fn root_tools(
    session: &Session,
    catalog: &Catalog,
    overrides: Option<&AgentCapabilities>,
    loaded: &[ToolName],
) -> Result<AgentTools, EngineError> {
    let config = &session.config;
    let root = AgentId::root();
    let capabilities = merge_root(&config.options, &config.capabilities, overrides);
    let input = ResolveInput::new(
        Role::Root,
        &catalog.builtins,
        &capabilities,
        &catalog.skills,
        &config.policy,
    )
    .with_no_service(&catalog.no_service);
    let pool = memoized(catalog, &input).map_err(|source| EngineError::Resolve {
        agent: root.clone(),
        source,
    })?;
    let mut tools = AgentTools::new(joined(catalog, &root, pool, session)?);
    tools.load(loaded);
    Ok(tools)
}

/// The pool of `input` from `catalog`'s memo, resolved (outside the lock)
/// and remembered when it is not there.
fn memoized(
    catalog: &Catalog,
    input: &ResolveInput<'_>,
) -> Result<Arc<ResolvedPool>, ResolveError> {
    if let Some(pool) = crate::sync::lock(&catalog.pools).get(input) {
        return Ok(pool);
    }
    let pool = Arc::new(resolve(input)?);
    crate::sync::lock(&catalog.pools).insert(input, Arc::clone(&pool));
    Ok(pool)
}

/// `pool` joined with its handlers for `agent`: the join of an earlier
/// agent of the same pool (the same `Arc`: the memo's) when `catalog`
/// still has it, else a new one, remembered. The lock is held only to look
/// up and to remember; errors are not remembered.
fn joined(
    catalog: &Catalog,
    agent: &AgentId,
    pool: Arc<ResolvedPool>,
    session: &Session,
) -> Result<Arc<Joined>, EngineError> {
    let found = crate::sync::lock(&catalog.joined)
        .iter()
        .rev()
        .find(|j| Arc::ptr_eq(j.pool(), &pool))
        .cloned();
    if let Some(joined) = found {
        return Ok(joined);
    }
    let joined = Arc::new(Joined::new(
        agent,
        pool,
        &catalog.engine_tools,
        &session.runtime,
    )?);
    let mut kept = crate::sync::lock(&catalog.joined);
    if kept.len() >= JOINED {
        kept.remove(0);
    }
    kept.push(Arc::clone(&joined));
    Ok(joined)
}

/// The resolver's kind of a subagent type.
pub(crate) fn derived_kind(agent_type: &AgentType) -> DerivedKind {
    match agent_type {
        AgentType::Explore => DerivedKind::Explore,
        AgentType::Plan => DerivedKind::Plan,
        AgentType::GeneralPurpose | AgentType::Verification => DerivedKind::GeneralPurpose,
        AgentType::Custom(_) => DerivedKind::Custom,
    }
}

/// The pool of the subagent `id` of the agent with `parent` tools: its
/// type's capabilities (none for a fork) derived (C2) and resolved in
/// `role` at `depth` against the parent's pool; a fork also keeps what
/// the parent loaded.
pub(crate) fn subagent_tools(
    session: &Session,
    id: &AgentId,
    definition: Option<&AgentDefinition>,
    (role, depth): (Role, Depth),
    parent: &AgentTools,
) -> Result<AgentTools, EngineError> {
    let config = &session.config;
    let catalog = session.catalog.current();
    // A type of this catalog (not a copy, as a revived agent's may be)
    // under a parent pool seen before: everything else its resolver input
    // holds is the catalog's or the session's, so its join is the same.
    let typed = definition
        .filter(|d| {
            catalog
                .sub_agents
                .get(&d.name)
                .is_some_and(|own| std::ptr::eq(own, *d))
        })
        .map(|d| Typed {
            name: d.name.clone(),
            role,
            depth,
            parent: Arc::clone(parent.pool()),
        });
    if let Some(typed) = &typed {
        let found = crate::sync::lock(&catalog.typed)
            .iter()
            .rev()
            .find(|(key, _)| key == typed)
            .map(|(_, joined)| Arc::clone(joined));
        if let Some(joined) = found {
            return Ok(AgentTools::new(joined));
        }
    }
    let empty = zr_caps::AgentCapabilities::default();
    let capabilities = derive(
        &config.options,
        definition.map_or(&empty, |d| &d.capabilities),
    );
    let parent_pool = Arc::clone(parent.pool());
    let input = ResolveInput::new(
        role,
        &catalog.builtins,
        &capabilities,
        &catalog.skills,
        &config.policy,
    )
    .with_parent(&parent_pool)
    .with_depth(depth)
    .with_no_service(match role {
        Role::Derived {
            background: true, ..
        } => &catalog.no_service_in_background,
        _ => &catalog.no_service,
    });
    let pool = memoized(&catalog, &input).map_err(|source| EngineError::Resolve {
        agent: id.clone(),
        source,
    })?;
    let joined = joined(&catalog, id, pool, session)?;
    if let Some(typed) = typed {
        let mut kept = crate::sync::lock(&catalog.typed);
        if kept.len() >= JOINED {
            kept.remove(0);
        }
        kept.push((typed, Arc::clone(&joined)));
    }
    let mut tools = AgentTools::new(joined);
    if definition.is_none() {
        tools.inherit_loaded(parent);
    }
    Ok(tools)
}

/// A typed subagent's system prompt: its definition's prompt, then its
/// `append_prompt`, then the project's `instructions`, each after a blank
/// line. Made once per subagent and shared by its requests.
pub(crate) fn system_prompt(definition: &AgentDefinition, instructions: Option<&str>) -> Arc<str> {
    let parts = [definition.append_prompt.as_deref(), instructions];
    if parts.iter().all(Option::is_none) {
        // One allocation: no `String` to copy into the `Arc`.
        return Arc::from(definition.prompt.as_str());
    }
    let mut system = definition.prompt.clone();
    for extra in parts.into_iter().flatten() {
        system.push_str("\n\n");
        system.push_str(extra);
    }
    Arc::from(system)
}

/// The root's system prompt: its configured prompt, then the project's
/// `instructions` after a blank line.
pub(crate) fn root_system_prompt(prompt: &str, instructions: Option<&str>) -> Arc<str> {
    match instructions {
        None => Arc::from(prompt),
        Some(extra) => Arc::from(format!("{prompt}\n\n{extra}")),
    }
}

/// Whether a pool holds a builtin that writes files (`Write`, `Edit`): an
/// agent without one only reads, and its commands get a read-only sandbox.
/// A tool its type grants only for its memory folder
/// ([`AgentDefinition::writes_only_memory`]) does not count: the folder
/// is for the file tools, and the agent's commands stay read-only.
pub(crate) fn writes_files(tools: &AgentTools, definition: Option<&AgentDefinition>) -> bool {
    ["Write", "Edit"].into_iter().any(|name| {
        tools
            .get(name)
            .is_some_and(|c| c.definition.origin == ToolOrigin::Builtin)
            && !definition.is_some_and(AgentDefinition::writes_only_memory)
    })
}

/// The definition to check an agent's calls against, when its type
/// narrows its tools with rules or denies some of their uses.
pub(crate) fn narrowing(definition: &AgentDefinition) -> Option<Arc<AgentDefinition>> {
    (!definition.tool_rules.is_empty() || !definition.denied_rules.is_empty())
        .then(|| Arc::new(definition.clone()))
}
