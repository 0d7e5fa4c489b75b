//! Hot reload: the agent types and skills a session's agents are built
//! from, asked again of the host's [`AgentTypesSource`] before each model
//! request of the root, so that a type or skill added, edited or removed
//! while the session runs takes effect at the root's next request.
//!
//! The session keeps one current [`Catalog`]: the types (which `Task` and
//! `MultiTask` can start, and which their descriptions list), the skills
//! registry the resolver reads, and the builtin definitions that depend on
//! them. Only the root's turn replaces it, so what the root was shown in a
//! request is what its Task calls of that turn start. Subagents keep the
//! pool they started with (DESIGN: a subagent's pool comes from the
//! resolver once).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use zr_caps::{AgentCapabilities, AgentDefinition};
use zr_types::{AgentId, AgentName, SkillDefinition, ToolDefinition};

use crate::run::AgentRun;
use crate::runtime::RuntimeEnvironment;
use crate::session::{AgentConfig, QueryCtx};
use crate::tools::EngineTools;

/// A session's agent types and skills at one moment.
#[derive(Debug, Clone, Default)]
pub struct AgentTypes {
    /// The subagent types, by name (as [`AgentConfig::sub_agents`]).
    pub sub_agents: BTreeMap<AgentName, AgentDefinition>,
    /// The skills registry's view (as [`AgentConfig::skills`]).
    pub skills: Vec<Arc<SkillDefinition>>,
}

/// Where a running session's agent types and skills come from: the host
/// (the `zr` command wires zr-skills' registries in) answers whether they
/// changed.
///
/// # Contract
///
/// [`AgentTypesSource::changed`] is called before each model request of
/// the root (set it with [`AgentConfig::types_source`]). It returns the
/// whole current set when anything changed since the previous call (the
/// first call compares with what the session was built from), and `None`
/// otherwise. It is called from async code: it must be cheap when nothing
/// changed (a stat of each file, not a parse) and must not block for long.
/// A panic is not caught.
///
/// ```
/// # use std::sync::Mutex;
/// # use zr_engine::{AgentTypes, AgentTypesSource};
/// /// Types pushed by the host; taken once.
/// #[derive(Debug, Default)]
/// struct Pushed(Mutex<Option<AgentTypes>>);
///
/// impl AgentTypesSource for Pushed {
///     fn changed(&self) -> Option<AgentTypes> {
///         self.0.lock().unwrap().take()
///     }
/// }
/// # assert!(Pushed::default().changed().is_none());
/// ```
pub trait AgentTypesSource: Send + Sync + fmt::Debug {
    /// The current types and skills if they changed since the last call;
    /// `None` when they did not.
    fn changed(&self) -> Option<AgentTypes>;
}

/// What the session's agents are built from now.
#[derive(Debug)]
pub(crate) struct Catalog {
    pub(crate) sub_agents: BTreeMap<AgentName, AgentDefinition>,
    pub(crate) skills: Vec<Arc<SkillDefinition>>,
    /// Task and MultiTask (their descriptions list the types), FindTool.
    pub(crate) engine_tools: EngineTools,
    /// Every builtin definition in registry order.
    pub(crate) builtins: Vec<Arc<ToolDefinition>>,
}

impl Catalog {
    pub(crate) fn new(
        types: AgentTypes,
        runtime: &RuntimeEnvironment,
        config: &AgentConfig,
    ) -> Self {
        let engine_tools = EngineTools::new(
            &types.sub_agents,
            config.subagent.max_concurrent,
            config.skill_listing_chars,
        );
        let builtins = engine_tools.builtins(runtime);
        Self {
            sub_agents: types.sub_agents,
            skills: types.skills,
            engine_tools,
            builtins,
        }
    }
}

/// The session's current catalog.
#[derive(Debug)]
pub(crate) struct Catalogs {
    current: Mutex<Arc<Catalog>>,
}

impl Catalogs {
    pub(crate) fn new(catalog: Catalog) -> Self {
        Self {
            current: Mutex::new(Arc::new(catalog)),
        }
    }

    pub(crate) fn current(&self) -> Arc<Catalog> {
        Arc::clone(&crate::sync::lock(&self.current))
    }

    fn replace(&self, catalog: Arc<Catalog>) {
        *crate::sync::lock(&self.current) = catalog;
    }
}

/// What the root's tools are rebuilt from when the catalog changes: the
/// query's capability overrides (C1).
#[derive(Debug, Clone, Default)]
pub(crate) struct RootReload {
    pub(crate) capabilities: Option<AgentCapabilities>,
}

/// Before a root request: asks the host's source; when the types or skills
/// changed, the session's catalog is rebuilt and the root's pool resolved
/// again (keeping what it loaded), and the observer hears the root's new
/// pool. A catalog the resolver refuses is logged and the root goes on
/// with the one it had.
pub(crate) fn refresh_root(ctx: &QueryCtx, run: &mut AgentRun) {
    let Some(reload) = &run.reload else {
        return;
    };
    let session = &ctx.session;
    let Some(source) = &session.config.types_source else {
        return;
    };
    let Some(types) = source.changed() else {
        return;
    };
    let catalog = Arc::new(Catalog::new(types, &session.runtime, &session.config));
    let loaded = run.tools.loaded_names();
    match crate::agent::root_tools(session, &catalog, reload.capabilities.as_ref(), &loaded) {
        Ok(tools) => {
            tracing::info!(
                types = catalog.sub_agents.len(),
                skills = catalog.skills.len(),
                "agent types or skills changed; the root's next request uses them"
            );
            session.catalog.replace(catalog);
            if let Some(observer) = session.runtime.observer() {
                observer.agent_started(&session.id, &AgentId::root(), tools.pool());
            }
            run.tools = tools;
        }
        Err(error) => tracing::warn!(
            error = %zr_types::error_chain(&error),
            "the changed agent types or skills are refused; the root keeps the ones it had"
        ),
    }
}
