//! Hot reload: the agent types, skills and project instructions a
//! session's agents are built from, asked again of the host's
//! [`AgentTypesSource`] before each model request of the root, so that a
//! type, skill or instruction file added, edited or removed while the
//! session runs takes effect at the root's next request.
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

use zr_caps::{AgentCapabilities, AgentDefinition, Isolation, ToolList};
use zr_resolve::{PoolMemo, ResolvedPool, Role};
use zr_types::{AgentName, SkillDefinition, SkillName, ToolName};

use crate::runtime::RuntimeEnvironment;
use crate::tools::skill_listing::SkillListing;
use crate::tools::{EngineTools, Joined};

/// A session's agent types and skills at one moment.
#[derive(Debug, Clone, Default)]
pub struct AgentTypes {
    /// The subagent types, by name (as [`AgentConfig::sub_agents`](crate::AgentConfig::sub_agents)).
    pub sub_agents: BTreeMap<AgentName, AgentDefinition>,
    /// The skills registry's view (as [`AgentConfig::skills`](crate::AgentConfig::skills)).
    pub skills: Vec<Arc<SkillDefinition>>,
    /// The types the listing names first, in this order (as
    /// [`AgentConfig::listed_first`](crate::AgentConfig::listed_first)).
    pub listed_first: Vec<AgentName>,
    /// The project's instructions (as
    /// [`AgentConfig::instructions`](crate::AgentConfig::instructions)):
    /// the root's next request and the subagents started after it get
    /// these.
    pub instructions: Option<Arc<str>>,
    /// The skills the `Skill` listing names first, in this order (as
    /// [`AgentConfig::skills_listed_first`](crate::AgentConfig::skills_listed_first)).
    pub skills_listed_first: Vec<SkillName>,
}

/// Where a running session's agent types and skills come from: the host
/// (the `zr` command wires zr-skills' registries in) answers whether they
/// changed.
///
/// # Contract
///
/// [`AgentTypesSource::changed`] is called before each model request of
/// the root (set it with [`AgentConfig::types_source`](crate::AgentConfig::types_source)). It returns the
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
    /// The project's instructions, ending the root's and every typed
    /// subagent's system prompt.
    pub(crate) instructions: Option<Arc<str>>,
    /// Task and MultiTask (their descriptions list the types), FindTool.
    pub(crate) engine_tools: EngineTools,
    /// Every builtin definition in registry order (shared with every pool
    /// resolved from it).
    pub(crate) builtins: ToolList,
    /// The builtins whose runtime service is not configured
    /// (`BuiltinTools::no_service`): the resolver leaves them out.
    pub(crate) no_service: Vec<ToolName>,
    /// The same for background subagents, which nobody can be asked for
    /// (`BuiltinTools::no_service_in_background`).
    pub(crate) no_service_in_background: Vec<ToolName>,
    /// The pools resolved from this catalog, by resolver input: the
    /// subagents of a fan-out that share a type share one pool
    /// ([`crate::session::pools`]). A replaced catalog starts with none.
    pub(crate) pools: Mutex<PoolMemo>,
    /// The pools of `pools` joined with their handlers, at most
    /// [`JOINED`], the latest last: the agents of one pool share one join
    /// ([`crate::session::pools`]).
    pub(crate) joined: Mutex<Vec<Arc<Joined>>>,
    /// The joins of this catalog's subagent types by [`Typed`] key, at
    /// most [`JOINED`], the latest last: a fan-out of one type derives and
    /// looks up its pool once, not once per subagent ([`crate::session::pools`]).
    pub(crate) typed: Mutex<Vec<(Typed, Arc<Joined>)>>,
}

/// What a typed subagent's pool depends on beyond its catalog and its
/// session: its type, its role and its parent's pool (kept, so that the
/// pointer compared is never a later pool's).
#[derive(Debug)]
pub(crate) struct Typed {
    pub(crate) name: AgentName,
    pub(crate) role: Role,
    /// Where it stands in the delegation tree (R4 reads it).
    pub(crate) depth: zr_resolve::Depth,
    pub(crate) parent: Arc<ResolvedPool>,
}

impl PartialEq for Typed {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.role == other.role
            && self.depth == other.depth
            && Arc::ptr_eq(&self.parent, &other.parent)
    }
}

/// How many joins a catalog keeps.
pub(crate) const JOINED: usize = 16;

impl Catalog {
    /// The catalog of `types`, whose Task and MultiTask run at most
    /// `max_concurrent` subagents at once and whose skill and type
    /// listings hold at most `listing_chars` characters (skills, types).
    pub(crate) fn new(
        types: AgentTypes,
        runtime: &RuntimeEnvironment,
        max_concurrent: usize,
        listing_chars: (usize, usize),
    ) -> Self {
        let (skill_listing_chars, type_listing_chars) = listing_chars;
        let engine_tools = EngineTools::new(
            &types.sub_agents,
            &types.listed_first,
            max_concurrent,
            SkillListing {
                budget: skill_listing_chars,
                first: types.skills_listed_first,
            },
            type_listing_chars,
        );
        let builtins = engine_tools.builtins(runtime).into();
        Self {
            sub_agents: types.sub_agents,
            skills: types.skills,
            instructions: types.instructions,
            engine_tools,
            builtins,
            no_service: runtime.builtin_tools().no_service(),
            no_service_in_background: runtime.builtin_tools().no_service_in_background(),
            pools: Mutex::new(PoolMemo::default()),
            joined: Mutex::default(),
            typed: Mutex::default(),
        }
    }
}

impl Catalog {
    /// The isolation of the subagent type `name` (forks are never
    /// isolated).
    pub(crate) fn isolation_of(&self, name: Option<&AgentName>) -> Isolation {
        name.and_then(|n| self.sub_agents.get(n))
            .map_or(Isolation::None, |d| d.isolation)
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

    pub(crate) fn replace(&self, catalog: Arc<Catalog>) {
        *crate::sync::lock(&self.current) = catalog;
    }
}

/// What the root's tools are rebuilt from when the catalog changes: the
/// query's capability overrides (C1).
#[derive(Debug, Clone, Default)]
pub(crate) struct RootReload {
    pub(crate) capabilities: Option<AgentCapabilities>,
}
