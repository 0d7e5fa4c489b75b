//! The stages that admit a call to its tool: the PreToolUse hooks (which
//! may block it, rewrite its input, ask about it or allow it), then the
//! permission gate (`policy/permission.rs`: the rules, the mode, the
//! effects boundary, the host), whose refusals count as the agent's
//! denials.

use std::borrow::Cow;

use zr_types::{Confinement, ToolCall};

use super::{Answer, Step};
use crate::event::EventSink;
use crate::policy::hooks::{AgentHooks, ToolPermission};
use crate::policy::permission::{self, Gate};
use crate::telemetry::ToolStatus;
use crate::tools::Callable;
use crate::turn::agent_run::AgentRun;

/// What the PreToolUse hooks said of a call: how they want it permitted
/// (`Ok`), or why one blocked it (`Err`), which the gate counts as a
/// denial.
pub(super) type Hooked<'a> = (&'a Callable, Result<Option<ToolPermission>, String>);

/// The PreToolUse hooks' word on `call` of the screened tool: the call to
/// go on with (its input rewritten or not) and what they said. An
/// answered call passes by, untouched.
pub(super) async fn pre_tool_use<'a>(
    hooks: &AgentHooks<'_>,
    call: &'a ToolCall,
    screened: Step<&'a Callable>,
) -> (Cow<'a, ToolCall>, Step<Hooked<'a>>) {
    let tool = match screened {
        Ok(tool) => tool,
        Err(answer) => return (Cow::Borrowed(call), Err(answer)),
    };
    match hooks.pre_tool_use(call).await {
        Ok(admitted) => (admitted.call, Ok((tool, Ok(admitted.permission)))),
        Err(reason) => (Cow::Borrowed(call), Ok((tool, Err(reason)))),
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
    call: &ToolCall,
    hooked: Step<Hooked<'a>>,
) -> Step<(&'a Callable, Option<Confinement>)> {
    let (tool, said) = hooked?;
    let checked = match said {
        Ok(wanted) => {
            permission::check(gate, &agent.meta, tool, call, wanted.as_ref(), hooks).await
        }
        Err(reason) => Err(reason),
    };
    match checked {
        Ok(confinement) => {
            agent.denials.allowed();
            Ok((tool, confinement))
        }
        Err(reason) => {
            let output = permission::refuse(gate, sink, &agent.meta, &agent.denials, call, reason);
            Err(Answer::new(output, ToolStatus::Denied))
        }
    }
}
