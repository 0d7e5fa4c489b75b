//! The tool pools a session's agents would get, resolved without running
//! anything (`zr resolve` on a project), what their calls may touch and
//! what their requests cost ([`request_cost`]).

pub(crate) mod request_cost;

use std::path::PathBuf;

use zr_caps::{AgentDefinition, Isolation, PermissionMode};
use zr_resolve::{AgentReport, Depth, DerivedKind, Role, ScenarioReport};
use zr_types::AgentId;

use crate::agent::Agent;
use crate::error::EngineError;
use crate::meta::AgentMeta;
use crate::policy::boundary::{Places, confinement};
use crate::policy::permission::effective_mode;
use crate::session::Session;
use crate::session::pools::{derived_kind, root_tools, subagent_tools, writes_files};
use crate::tools::AgentTools;

/// What one agent's calls may touch, as the effects boundary will hold
/// them ([`Agent::preview_boundaries`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoundaryPreview {
    /// `root`, a subagent type's name, or `fork`.
    pub agent: String,
    /// Its effective permission mode (under the root's).
    pub mode: PermissionMode,
    /// The folders its file tools write beneath; empty for an isolated
    /// agent, whose worktree is made when it starts.
    pub writable: Vec<PathBuf>,
    /// Whether it works in a worktree of its own.
    pub isolated: bool,
    /// The sandbox of its commands, in words.
    pub sandbox: String,
}

impl Agent {
    /// The pools its agents get, exactly as a query resolves them: the
    /// root's (with what it loaded through FindTool so far), then one per
    /// subagent type of [`AgentConfig::sub_agents`](crate::AgentConfig)
    /// by name, in its role (`Derived` of its kind, in the background when
    /// the type always runs there), then `fork` (a foreground fork). Each
    /// subagent is resolved against the root's pool, as when the root
    /// delegates. Nothing is sent to the model and nothing runs.
    ///
    /// # Errors
    ///
    /// [`EngineError::Resolve`] when the resolver refuses an agent's tool
    /// sources, [`EngineError::MissingHandler`] when a tool has no handler
    /// registered with the runtime: what the first query would fail with.
    pub fn preview_pools(&self) -> Result<ScenarioReport, EngineError> {
        let mut agents = Vec::new();
        self.each_agent(|agent, (role, depth), _, tools| {
            agents.push(AgentReport {
                agent: agent.to_owned(),
                role,
                pool: (**tools.pool()).clone(),
                depth,
            });
        })?;
        Ok(ScenarioReport { agents })
    }

    /// What each agent's calls may touch, in the order of
    /// [`Agent::preview_pools`]: its mode, its writable roots and the
    /// sandbox of its commands. Nothing runs.
    ///
    /// # Errors
    ///
    /// As [`Agent::preview_pools`].
    pub fn preview_boundaries(&self) -> Result<Vec<BoundaryPreview>, EngineError> {
        let session = self.session();
        let root_mode = session.config.permission_mode;
        let mut out = Vec::new();
        self.each_agent(|agent, (role, _), definition, tools| {
            let (mode, reads_only) = match role {
                Role::Root => (root_mode, false),
                Role::Derived { kind, .. } => (
                    effective_mode(root_mode, definition.and_then(|d| d.permission_mode)),
                    matches!(kind, DerivedKind::Explore | DerivedKind::Plan),
                ),
                Role::Fork { .. } => (root_mode, false),
            };
            let writes = matches!(role, Role::Root) || writes_files(tools, definition);
            out.push(preview(
                session, agent, mode, reads_only, writes, definition,
            ));
        })?;
        Ok(out)
    }

    /// Calls `visit` with each agent of the session as a query would
    /// resolve it: the root (with what it loaded through FindTool so far),
    /// each subagent type by name in its role (`Derived` of its kind, in
    /// the background when the type always runs there), then a foreground
    /// `fork`; subagents against the root's pool.
    fn each_agent(
        &self,
        mut visit: impl FnMut(&str, (Role, Depth), Option<&AgentDefinition>, &AgentTools),
    ) -> Result<(), EngineError> {
        let session = self.session();
        let catalog = session.catalog.current();
        let root = root_tools(session, &catalog, None, &self.loaded())?;
        let top = Depth::root(session.config.policy.max_depth);
        visit("root", (Role::Root, top), None, &root);
        let mut seq = 0;
        for (name, definition) in &catalog.sub_agents {
            seq += 1;
            let role = Role::Derived {
                kind: derived_kind(&definition.agent_type),
                background: definition.background,
            };
            let id = AgentId::root().child(seq, name.as_str());
            let at = (role, top.child(definition.max_depth));
            let tools = subagent_tools(session, &id, Some(definition), at, &root)?;
            visit(name.as_str(), at, Some(definition), &tools);
        }
        let role = Role::Fork { background: false };
        let id = AgentId::root().child(seq + 1, "fork");
        let at = (role, top.child(None));
        let fork = subagent_tools(session, &id, None, at, &root)?;
        visit("fork", at, None, &fork);
        Ok(())
    }
}

fn preview(
    session: &Session,
    agent: &str,
    mode: PermissionMode,
    reads_only: bool,
    writes: bool,
    definition: Option<&AgentDefinition>,
) -> BoundaryPreview {
    let boundary = &session.config.permissions.boundary;
    let settings = session.runtime.settings();
    let isolated = definition.is_some_and(|d| d.isolation == Isolation::Worktree);
    let meta = AgentMeta::preview(agent, mode, &settings.cwd);
    let places = Places::of(boundary, &meta, &settings.cwd);
    let read_only = reads_only || mode == PermissionMode::Plan || !writes;
    let sandbox = if mode == PermissionMode::BypassPermissions {
        "none: bypassPermissions runs everything unconfined".to_owned()
    } else {
        match confinement(boundary, &places, read_only) {
            None => {
                "off ([sandbox] enabled = false): commands write wherever the user can".to_owned()
            }
            Some(c) => {
                let network = if c.network {
                    "network on"
                } else {
                    "no network"
                };
                match (read_only, zr_tools::sandbox_missing()) {
                    (true, Some(missing)) => {
                        format!("commands refused: this agent only reads and {missing}")
                    }
                    (true, None) => format!("read-only file system, {network}"),
                    (false, Some(missing)) => format!("unconfined ({missing})"),
                    (false, None) if isolated => {
                        format!("writes only in its worktree and the temporary folder, {network}")
                    }
                    (false, None) => format!(
                        "writes beneath its writable roots and the temporary folder, {network}"
                    ),
                }
            }
        }
    };
    BoundaryPreview {
        agent: agent.to_owned(),
        mode,
        writable: if isolated {
            Vec::new()
        } else {
            places.writable().to_vec()
        },
        isolated,
        sandbox,
    }
}
