//! Hot reload before a root request: the host's [`AgentTypesSource`]
//! asked whether the agent types or skills changed, the session's catalog
//! replaced and the root's pool resolved again.
//!
//! [`AgentTypesSource`]: crate::AgentTypesSource

use std::sync::Arc;

use zr_types::AgentId;

use crate::agent_run::AgentRun;
use crate::catalog::Catalog;
use crate::pools::root_tools;
use crate::session::QueryCtx;

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
