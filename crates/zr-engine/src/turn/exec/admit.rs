//! The stages that admit a call to its tool: the PreToolUse hooks (which
//! may block it, rewrite its input, ask about it or allow it), then the
//! permission gate (`policy/permission.rs`: the rules, the mode, the
//! effects boundary, the host), whose refusals count as the agent's
//! denials.

use std::borrow::Cow;

use zr_types::{Confinement, ToolCall};

use super::{Answer, Flow};
use crate::event::EventSink;
use crate::policy::hooks::{AgentHooks, ToolPermission};
use crate::policy::permission::{self, Gate};
use crate::telemetry::ToolStatus;
use crate::tools::Callable;
use crate::turn::agent_run::AgentRun;

/// The PreToolUse hooks' word on `call` of `tool`: the call to go on
/// with and how they want it permitted. A blocked call is kept as the
/// reason, which the gate counts as a denial. An answered call passes
/// by, untouched.
pub(super) async fn pre_tool_use<'a>(
    hooks: &AgentHooks<'_>,
    call: &'a ToolCall,
    screened: Result<&'a Callable, Answer>,
) -> Flow<'a, (&'a Callable, Result<Option<ToolPermission>, String>)> {
    let tool = match screened {
        Ok(tool) => tool,
        Err(answer) => return Flow::answered(call, answer),
    };
    match hooks.pre_tool_use(call).await {
        Ok(admitted) => Flow {
            call: admitted.call,
            next: Ok((tool, Ok(admitted.permission))),
        },
        Err(reason) => Flow {
            call: Cow::Borrowed(call),
            next: Ok((tool, Err(reason))),
        },
    }
}

/// The permission gate: `Ok` holds the confinement of the processes the
/// call starts. A refusal (a hook's block, the rules, the mode, the host,
/// the user) is counted in the agent's denials, told to the host as
/// [`crate::event::EventKind::PermissionDenied`] and answered with the
/// reason; a call let through ends the agent's streak of denials.
pub(super) async fn permit<'a>(
    gate: &Gate<'_>,
    sink: &EventSink,
    hooks: &AgentHooks<'_>,
    agent: &AgentRun,
    flow: Flow<'a, (&'a Callable, Result<Option<ToolPermission>, String>)>,
) -> Flow<'a, (&'a Callable, Option<Confinement>)> {
    let Flow { call, next } = flow;
    let (tool, hooked) = match next {
        Ok(next) => next,
        Err(answer) => {
            return Flow {
                call,
                next: Err(answer),
            };
        }
    };
    let checked = match hooked {
        Ok(wanted) => {
            permission::check(gate, &agent.meta, tool, &call, wanted.as_ref(), hooks).await
        }
        Err(reason) => Err(reason),
    };
    let next = match checked {
        Ok(confinement) => {
            agent.denials.allowed();
            Ok((tool, confinement))
        }
        Err(reason) => {
            let output = permission::refuse(gate, sink, &agent.meta, &agent.denials, &call, reason);
            Err(Answer::new(output, ToolStatus::Denied))
        }
    };
    Flow { call, next }
}
