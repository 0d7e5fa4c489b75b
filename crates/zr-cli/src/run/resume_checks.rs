//! What `zr resume` checks before it starts anything (MCP servers, the
//! provider): the session and agent ids exist, and there is something to
//! continue. Each error lists what exists instead.

use std::path::Path;

use zr_types::{AgentId, SessionId};

use crate::cli::ResumeArgs;
use crate::error::CliError;
use crate::sessions;

/// A session (and agent) that `zr resume` can continue.
#[derive(Debug)]
pub(crate) struct Target {
    /// The session.
    pub(crate) id: SessionId,
    /// `--agent`, when given.
    pub(crate) agent: Option<AgentId>,
}

/// Checks `args` against the sessions of the project at `root`.
///
/// # Errors
///
/// [`CliError::Usage`] for a malformed or unknown session id, a session
/// another `zr` process runs now, a malformed or unknown agent id, or a
/// finished session without a prompt (a session whose root finished but
/// whose background agents were cut short is not finished).
pub(crate) fn check(root: &Path, args: &ResumeArgs) -> Result<Target, CliError> {
    let (id, folder) = sessions::find(root, &args.session)?;
    if let Some(held) = sessions::running(&folder) {
        return Err(running_now(&id, &held));
    }
    let agent = match &args.agent {
        None => None,
        Some(text) => {
            let agents = sessions::view::agent_ids(&folder).join(", ");
            let agent: AgentId = text.parse().map_err(|e| {
                CliError::usage(
                    format!("'{text}' is not an agent id: {e}"),
                    format!("the agents of session {id}: {agents}"),
                )
            })?;
            if !folder.join(format!("{agent}.jsonl")).is_file() {
                return Err(CliError::usage(
                    format!("session {id} has no agent {agent}"),
                    format!("the agents of session {id}: {agents}"),
                ));
            }
            Some(agent)
        }
    };
    if agent.is_none() && args.prompt.is_none() {
        // Only this session's transcripts are read (warnings about them
        // are for `zr sessions`).
        let view = sessions::view::SessionView::load(id.as_str(), &folder, root, &mut Vec::new());
        let status = view.status();
        if status != "interrupted" && view.background_cut_short().is_empty() {
            return Err(nothing_to_continue(&id, &status));
        }
    }
    Ok(Target { id, agent })
}

/// The error for a session another process holds the lock of.
pub(crate) fn running_now(id: &SessionId, held: &sessions::Held) -> CliError {
    match held.pid {
        Some(pid) => CliError::usage(
            format!("session {id} is running now, in zr process {pid}"),
            format!(
                "wait for it to end, or stop it (Ctrl-C in its terminal, or kill -INT {pid}), then resume it"
            ),
        ),
        None => CliError::usage(
            format!(
                "session {id} is running now, in another zr process (it holds the session's lock)"
            ),
            "wait for it to end, or stop it (Ctrl-C in its terminal), then resume it",
        ),
    }
}

/// The error for a session whose last run ended (`status`): without a new
/// prompt there is nothing to continue.
pub(crate) fn nothing_to_continue(id: &SessionId, status: &str) -> CliError {
    CliError::usage(
        format!("session {id} ended ({status}): there is no interrupted run to continue"),
        format!("give it a new prompt: zr resume {id} \"PROMPT\""),
    )
}
