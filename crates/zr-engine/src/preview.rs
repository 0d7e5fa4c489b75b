//! The tool pools a session's agents would get, resolved without running
//! anything (`zr resolve` on a project).

use zr_resolve::{AgentReport, Role, ScenarioReport};
use zr_types::AgentId;

use crate::agent::Agent;
use crate::error::EngineError;
use crate::pools::{derived_kind, root_tools, subagent_tools};

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
        let session = self.session();
        let catalog = session.catalog.current();
        let root = root_tools(session, &catalog, None, &self.loaded())?;
        let mut agents = vec![AgentReport {
            agent: "root".to_owned(),
            role: Role::Root,
            pool: (**root.pool()).clone(),
        }];
        let mut seq = 0;
        for (name, definition) in &catalog.sub_agents {
            seq += 1;
            let role = Role::Derived {
                kind: derived_kind(&definition.agent_type),
                background: definition.background,
            };
            let id = AgentId::root().child(seq, name.as_str());
            let tools = subagent_tools(session, &id, Some(definition), role, &root)?;
            agents.push(AgentReport {
                agent: name.to_string(),
                role,
                pool: (**tools.pool()).clone(),
            });
        }
        let role = Role::Fork { background: false };
        let id = AgentId::root().child(seq + 1, "fork");
        let fork = subagent_tools(session, &id, None, role, &root)?;
        agents.push(AgentReport {
            agent: "fork".to_owned(),
            role,
            pool: (**fork.pool()).clone(),
        });
        Ok(ScenarioReport { agents })
    }
}
