//! Scenario files: one self-contained resolver input, every agent's pool out.
//!
//! The format is DESIGN.md's "Scenario files" section. A scenario is parsed
//! from text (no I/O here) with unknown keys and wrong types refused with
//! the JSON path of the problem, then resolved root first and subagents in
//! file order.

use std::fmt;
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;
use zr_caps::{AgentCapabilities, AgentOptions, ToolList, derive, merge_root};
use zr_types::{AgentName, BuiltinName, SkillDefinition, ToolName};

use crate::depth::Depth;
use crate::error::ScenarioError;
use crate::input::ResolveInput;
use crate::policy::ResolvePolicy;
use crate::pool::ResolvedPool;
use crate::resolve::resolve;
use crate::role::Role;

mod raw;

use raw::{RawScenario, objects_only};

/// A parsed scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    builtins: ToolList,
    options: AgentOptions,
    capabilities: AgentCapabilities,
    query_override: Option<AgentCapabilities>,
    skills: Vec<Arc<SkillDefinition>>,
    policy: ResolvePolicy,
    /// The builtins whose runtime service is not configured.
    no_service: Vec<ToolName>,
    subagents: Vec<Subagent>,
}

/// One subagent of a scenario.
#[derive(Debug, Clone)]
struct Subagent {
    name: AgentName,
    role: Role,
    capabilities: AgentCapabilities,
    /// The subagent above it that delegates to it; `None`: the root.
    parent: Option<usize>,
    /// Its type's own `maxDepth`.
    max_depth: Option<u32>,
}

/// One agent's resolved pool in a [`ScenarioReport`].
#[derive(Debug, Clone, PartialEq)]
pub struct AgentReport {
    /// `root` or the subagent's name.
    pub agent: String,
    /// The role it resolved under.
    pub role: Role,
    /// Its pool.
    pub pool: ResolvedPool,
    /// Where it stands in the delegation tree.
    pub depth: Depth,
}

/// Every agent of a scenario, root first, then subagents in file order.
///
/// `Display` is the table `zr resolve` prints and the snapshot tests record;
/// `Serialize` is the JSON of `zr resolve --format json`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioReport {
    /// The agents.
    pub agents: Vec<AgentReport>,
}

impl ScenarioReport {
    /// The report restricted to one agent, if it exists.
    #[must_use]
    pub fn only(&self, agent: &str) -> Option<Self> {
        let found = self.agents.iter().find(|a| a.agent == agent)?;
        Some(Self {
            agents: vec![found.clone()],
        })
    }
}

impl fmt::Display for ScenarioReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.agents.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            // The level is shown once agents may be below depth 1.
            if a.depth.level > 1 || a.depth.ceiling > 1 {
                writeln!(
                    f,
                    "== {} ({}, depth {} of {}) ==",
                    a.agent, a.role, a.depth.level, a.depth.ceiling
                )?;
            } else {
                writeln!(f, "== {} ({}) ==", a.agent, a.role)?;
            }
            write!(f, "{}", a.pool)?;
        }
        Ok(())
    }
}

impl Serialize for AgentReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(10))?;
        m.serialize_entry("agent", &self.agent)?;
        m.serialize_entry("role", self.role.label())?;
        m.serialize_entry("background", &self.role.is_background())?;
        self.pool.serialize_fields(&mut m)?;
        m.end()
    }
}

impl Serialize for ScenarioReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("agents", &self.agents)?;
        m.end()
    }
}

impl Scenario {
    /// Parses a scenario from JSON text.
    ///
    /// # Errors
    ///
    /// [`ScenarioError`] naming the JSON path of a syntax error, unknown
    /// key, wrong type or invalid name.
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        // serde's derived structs also accept a JSON array (fields by
        // position); a scenario is objects only, so refuse arrays where an
        // object belongs before reading the typed form.
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            objects_only(&value)?;
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let raw: RawScenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            ScenarioError::Json {
                path,
                source: e.into_inner(),
            }
        })?;
        de.end().map_err(|source| ScenarioError::Json {
            path: ".".to_owned(),
            source,
        })?;
        raw.build()
    }

    /// Resolves every agent: the root, then each subagent in file order.
    ///
    /// # Errors
    ///
    /// [`ScenarioError::Resolve`] naming the agent whose pool failed.
    pub fn resolve(&self) -> Result<ScenarioReport, ScenarioError> {
        let root_caps = merge_root(
            &self.options,
            &self.capabilities,
            self.query_override.as_ref(),
        );
        let input = ResolveInput::new(
            Role::Root,
            &self.builtins,
            &root_caps,
            &self.skills,
            &self.policy,
        )
        .with_no_service(&self.no_service);
        let root = resolve(&input).map_err(|source| ScenarioError::Resolve {
            agent: "root".to_owned(),
            source: Box::new(source),
        })?;
        let mut agents = Vec::with_capacity(1 + self.subagents.len());
        agents.push(AgentReport {
            agent: "root".to_owned(),
            role: Role::Root,
            pool: root,
            depth: input.depth,
        });
        for sub in &self.subagents {
            // The root is agents[0]; subagent i is agents[i + 1].
            let parent = &agents[sub.parent.map_or(0, |at| at + 1)];
            let can_delegate = parent
                .pool
                .executable()
                .iter()
                .any(|t| t.name.is(BuiltinName::Task.as_str()))
                && parent.depth.delegates(self.policy.max_depth);
            if sub.parent.is_some() && !can_delegate {
                return Err(ScenarioError::ParentCannotDelegate {
                    agent: sub.name.to_string(),
                    parent: parent.agent.clone(),
                });
            }
            let caps = derive(&self.options, &sub.capabilities);
            let depth = parent.depth.child(sub.max_depth);
            let input =
                ResolveInput::new(sub.role, &self.builtins, &caps, &self.skills, &self.policy)
                    .with_parent(&parent.pool)
                    .with_no_service(&self.no_service)
                    .with_depth(depth);
            let pool = resolve(&input).map_err(|source| ScenarioError::Resolve {
                agent: sub.name.to_string(),
                source: Box::new(source),
            })?;
            agents.push(AgentReport {
                agent: sub.name.to_string(),
                role: sub.role,
                pool,
                depth,
            });
        }
        Ok(ScenarioReport { agents })
    }
}
