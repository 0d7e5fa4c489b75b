//! Hot reload before a root request: the host's [`AgentTypesSource`]
//! asked whether the agent types, skills or instructions changed, the
//! session's catalog replaced, the root's pool resolved again and its
//! system prompt rebuilt with the new instructions.
//!
//! [`AgentTypesSource`]: crate::AgentTypesSource

use std::sync::Arc;

use zr_types::AgentId;

use crate::session::QueryCtx;
use crate::session::pools::{root_system_prompt, root_tools};
use crate::tools::catalog::Catalog;
use crate::turn::agent_run::AgentRun;

/// Before a root request: asks the host's source; when the types or skills
/// changed, the session's catalog is rebuilt and the root's pool resolved
/// again (keeping what it loaded), and the observer hears the root's new
/// pool. A catalog the resolver refuses is logged and the root goes on
/// with the one it had.
pub(super) fn refresh_root(ctx: &QueryCtx, run: &mut AgentRun) {
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
    let config = &session.config;
    let catalog = Catalog::new(
        types,
        &session.runtime,
        config.subagent.max_concurrent,
        (config.skill_listing_chars, config.type_listing_chars),
    );
    let catalog = Arc::new(catalog);
    let loaded = run.tools.loaded_names();
    match root_tools(session, &catalog, reload.capabilities.as_ref(), &loaded) {
        Ok(tools) => {
            tracing::info!(
                types = catalog.sub_agents.len(),
                skills = catalog.skills.len(),
                "agent types or skills changed; the root's next request uses them"
            );
            if catalog.instructions != session.catalog.current().instructions {
                tracing::info!(
                    "the project's instructions changed; the root's next request and new subagents use them"
                );
                run.meta.system =
                    root_system_prompt(&config.system_prompt, catalog.instructions.as_deref());
            }
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
