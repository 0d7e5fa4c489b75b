//! `zr sessions`: the sessions saved in `.zr/sessions`, newest first, with
//! their status, prompt, agents, turns, tokens and estimated cost; and the
//! look-ups `zr resume` needs to explain a wrong session or agent id.
//!
//! Transcripts are read tolerantly, independently of the engine (which
//! has no public reader): a torn last line is ignored, and a line that is
//! not a record stops the reading of that file with a warning naming the
//! file and line.

mod conversation;
mod read;
mod running;
pub(crate) mod show;
mod timeline;
mod units;
pub(crate) mod view;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use zr_types::{SessionId, Usage};

use crate::cli::{Format, SessionsArgs, SessionsCommand};
use crate::error::CliError;
use crate::inspect::json_text;

pub(crate) use running::{Held, RunningMark, describe, left_behind, running};
use units::{first_line, format_cost, format_started};
use view::SessionView;

/// Where the sessions of the project at `root` are.
pub(crate) fn sessions_dir(root: &Path) -> PathBuf {
    root.join(".zr").join("sessions")
}

/// One session, summed over its agents' transcripts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SessionSummary {
    /// The session id (its folder's name).
    pub(crate) id: String,
    /// Start time in milliseconds since the Unix epoch, from the id (else
    /// the root's header).
    pub(crate) started_ms: Option<u64>,
    /// `completed`, `failed`, `max_turns`, ... (the root's last `finished`
    /// record), `running` (a live `zr` process runs it), `interrupted`
    /// (cut short: Ctrl-C, a kill, a crash) or `empty` (no root
    /// transcript with a message).
    pub(crate) status: String,
    /// The first line of the root's first prompt.
    pub(crate) prompt: String,
    /// The agent ids with a transcript, sorted (`root` first).
    pub(crate) agents: Vec<String>,
    /// Model replies, over all agents.
    pub(crate) turns: u64,
    /// Tokens of the runs that wrote a `finished` record, over all agents.
    pub(crate) usage: Usage,
    /// Estimated cost in US dollars; `None` when an agent used a model
    /// without a known price.
    pub(crate) cost_usd: Option<f64>,
    /// Models the agents ran with, sorted, without repeats.
    pub(crate) models: Vec<String>,
    /// The status of its last turn on the Restate server (`running`,
    /// `completed`, ...) for a durable session; `None` for a local one.
    pub(crate) durable: Option<String>,
}

/// The sessions under `dir`, newest first, and a warning for each file
/// that could not be read whole.
pub(crate) fn list(dir: &Path, shown_root: &Path) -> (Vec<SessionSummary>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut sessions = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (sessions, warnings);
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let Some(id) = folder.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        // Only the engine's folders: a session id names each.
        if id.parse::<zr_types::SessionId>().is_err() {
            continue;
        }
        sessions.push(summarise(id, &folder, shown_root, &mut warnings));
        let left = left_behind(&folder);
        if !left.is_empty() {
            warnings.push(format!(
                "session {id}: a zr that was killed left {} running; `zr resume {id}` kills them",
                describe(&left)
            ));
        }
    }
    sessions.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| b.id.cmp(&a.id))
    });
    (sessions, warnings)
}

/// The session `id` in `folder`; `shown_root`: what the paths in
/// `warnings` are relative to.
pub(crate) fn summarise(
    id: &str,
    folder: &Path,
    shown_root: &Path,
    warnings: &mut Vec<String>,
) -> SessionSummary {
    let view = SessionView::load(id, folder, shown_root, warnings);
    let mut models: Vec<String> = view
        .agents
        .iter()
        .filter_map(|a| a.file.model.clone())
        .filter(|m| !m.is_empty())
        .collect();
    models.sort();
    models.dedup();
    SessionSummary {
        id: id.to_owned(),
        started_ms: view.started_ms(),
        status: view.status(),
        prompt: view
            .root()
            .and_then(|r| r.first_prompt.clone())
            .unwrap_or_default(),
        agents: view.agents.iter().map(|a| a.id.clone()).collect(),
        turns: view.agents.iter().map(|a| a.file.turns).sum(),
        usage: view.usage(),
        cost_usd: view.cost(),
        models,
        durable: None,
    }
}

/// Adds what the Restate server knows to `sessions`: a session it holds
/// is marked durable with its last turn's status (a turn still on the
/// server is `running`, whatever the transcripts say), and one whose
/// transcripts are not here (written on another machine's worker) is
/// listed with what the server knows.
fn merge_durable(sessions: &mut Vec<SessionSummary>, durable: &[zr_restate::DurableTurn]) {
    for turn in durable {
        if turn.session.parse::<SessionId>().is_err() {
            continue;
        }
        let status = if turn.ended() {
            None
        } else {
            Some("running".to_owned())
        };
        match sessions.iter_mut().find(|s| s.id == turn.session) {
            Some(local) => {
                local.durable = Some(turn.status.clone());
                if let Some(status) = status {
                    local.status = status;
                }
            }
            None => sessions.push(SessionSummary {
                id: turn.session.clone(),
                started_ms: view::started_from_id(&turn.session),
                status: status.unwrap_or_else(|| "elsewhere".to_owned()),
                prompt: String::new(),
                agents: Vec::new(),
                turns: 0,
                usage: Usage::default(),
                cost_usd: None,
                models: Vec::new(),
                durable: Some(turn.status.clone()),
            }),
        }
    }
    sessions.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| b.id.cmp(&a.id))
    });
}

/// The folder of the session the user typed as `typed`.
///
/// # Errors
///
/// [`CliError::Usage`] for a malformed id or one without a root
/// transcript, with the sessions it may have meant.
pub(crate) fn find(root: &Path, typed: &str) -> Result<(SessionId, PathBuf), CliError> {
    let id: SessionId = typed.parse().map_err(|e| {
        CliError::usage(
            format!("'{typed}' is not a session id: {e}"),
            format!(
                "session ids look like s-0199c0ffee123-0a1b2c3d; {}",
                unknown_session_help(root, typed)
            ),
        )
    })?;
    let folder = sessions_dir(root).join(id.as_str());
    let transcript = folder.join("root.jsonl");
    match zr_tools::open_regular(&transcript) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(CliError::usage(
                format!("cannot read {}: {e}", transcript.display()),
                "a session's transcripts are regular files zr writes; move aside what is in its place",
            ));
        }
    }
    if !transcript.is_file() {
        return Err(CliError::usage(
            format!(
                "no session {id} in {}",
                Path::new(".zr").join("sessions").display()
            ),
            unknown_session_help(root, typed),
        ));
    }
    Ok((id, folder))
}

/// `zr sessions`: the table or JSON, or `zr sessions show`'s text, and
/// warnings for standard error.
///
/// # Errors
///
/// For `show`: [`CliError::Usage`] for an unknown session or agent,
/// [`CliError::Io`] when the HTML page cannot be written. A missing
/// sessions folder is an empty list.
pub(crate) fn command(
    root: &Path,
    args: &SessionsArgs,
    durable: &[zr_restate::DurableTurn],
) -> Result<(String, Vec<String>), CliError> {
    if let Some(SessionsCommand::Show(show)) = &args.command {
        let (id, folder) = find(root, &show.session)?;
        return show::command(root, &id, &folder, show);
    }
    let (mut sessions, warnings) = list(&sessions_dir(root), root);
    merge_durable(&mut sessions, durable);
    let out = match args.format {
        Format::Json => json_text(&Value::Array(sessions.iter().map(json_row).collect())),
        Format::Table => table(&sessions),
    };
    Ok((out, warnings))
}

fn json_row(s: &SessionSummary) -> Value {
    serde_json::json!({
        "id": s.id,
        "started": format_started(s.started_ms),
        "started_ms": s.started_ms,
        "status": s.status,
        "prompt": s.prompt,
        "agents": s.agents,
        "turns": s.turns,
        "usage": s.usage,
        "tokens": s.usage.total(),
        "models": s.models,
        "cost_usd": s.cost_usd,
        "durable": s.durable,
    })
}

const PROMPT_WIDTH: usize = 50;

fn table(sessions: &[SessionSummary]) -> String {
    if sessions.is_empty() {
        return "no sessions yet (`zr run PROMPT` saves one in .zr/sessions)\n".to_owned();
    }
    let header = [
        "SESSION",
        "STARTED (UTC)",
        "STATUS",
        "AGENTS",
        "TURNS",
        "TOKENS",
        "COST",
        "PROMPT",
    ];
    let rows: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| {
            vec![
                s.id.clone(),
                format_started(s.started_ms),
                match &s.durable {
                    Some(_) => format!("{} (durable)", s.status),
                    None => s.status.clone(),
                },
                s.agents.len().to_string(),
                s.turns.to_string(),
                s.usage.total().to_string(),
                format_cost(s.cost_usd),
                first_line(&s.prompt, PROMPT_WIDTH),
            ]
        })
        .collect();
    let mut out = crate::inspect::table(&header, &rows);
    out.push_str(
        "Tokens and cost count runs that finished; cost is an estimate from list prices.\n",
    );
    out
}

/// The help for a session id that has no folder: the sessions it is the
/// start of, else the most recent sessions, or that there are none.
/// `typed` is what the user wrote: sessions whose id starts with it come
/// first, as "did you mean".
pub(crate) fn unknown_session_help(root: &Path, typed: &str) -> String {
    let (sessions, _) = list(&sessions_dir(root), root);
    if sessions.is_empty() {
        return "this project has no sessions yet; `zr run PROMPT` starts one".to_owned();
    }
    let typed = typed.trim();
    let matching: Vec<&str> = sessions
        .iter()
        .map(|s| s.id.as_str())
        .filter(|id| typed.len() >= 3 && id.starts_with(typed))
        .collect();
    if !matching.is_empty() {
        return format!(
            "did you mean {}? `zr sessions` lists them all",
            matching.join(" or ")
        );
    }
    let recent: Vec<String> = sessions
        .iter()
        .take(5)
        .map(|s| format!("{} ({})", s.id, s.status))
        .collect();
    format!(
        "recent sessions: {}; `zr sessions` lists them all",
        recent.join(", ")
    )
}

#[cfg(test)]
mod tests;
