//! `zr sessions show SESSION`: the agent tree of one session, each agent
//! with its type, status, turns, tokens (all of them, then those read from
//! and written to the prompt cache), cost, start, wait and duration,
//! its tool calls and its conclusion; `--agent ID` prints one agent's
//! conversation instead, and `--html FILE` also writes the page of
//! [`super::timeline`].
//!
//! Times are offsets from the session's start, so that two views of one
//! session line up. Transcripts written before records carried their time
//! show `-` for durations (their header time is still the start).

use std::fmt::Write as _;
use std::path::Path;

use zr_types::SessionId;

use super::conversation;
use super::timeline;
use super::units::{first_line, format_cost, format_ms, format_started};
use super::view::{AgentView, SessionView, Timing, agent_cost};
use crate::cli::ShowArgs;
use crate::error::CliError;

/// How much of a conclusion the tree shows.
const CONCLUSION_CHARS: usize = 160;

/// Runs `zr sessions show` on session `id` in `folder`.
///
/// # Errors
///
/// [`CliError::Usage`] for an unknown `--agent`; [`CliError::Io`] when
/// the page cannot be written.
pub(crate) fn command(
    root: &Path,
    id: &SessionId,
    folder: &Path,
    args: &ShowArgs,
) -> Result<(String, Vec<String>), CliError> {
    let mut warnings = Vec::new();
    let view = SessionView::load(id.as_str(), folder, root, &mut warnings);
    let out = match &args.agent {
        Some(agent) => {
            let Some(found) = view.agent(agent) else {
                let ids: Vec<&str> = view.agents.iter().map(|a| a.id.as_str()).collect();
                return Err(CliError::usage(
                    format!("session {id} has no agent {agent}"),
                    format!("the agents of session {id}: {}", ids.join(", ")),
                ));
            };
            conversation::render(&view, found)
        }
        None => tree(&view),
    };
    // Transcripts hold what models and servers wrote: never a control
    // sequence on the screen, piped or not.
    let mut out = crate::render::plain::printable(&out);
    if let Some(path) = &args.html {
        std::fs::write(path, timeline::page(&view)).map_err(|source| CliError::Io {
            action: "write the page",
            path: path.clone(),
            source,
        })?;
        let _ = writeln!(out, "\nwrote {}", path.display());
    }
    Ok((out, warnings))
}

/// `+1.234 s` from the session's start, `-` when unknown.
fn offset(origin: u64, ms: Option<u64>) -> String {
    ms.map_or_else(
        || "-".to_owned(),
        |ms| format!("+{}", format_ms(ms.saturating_sub(origin))),
    )
}

/// The tree's prefix for an agent at `depth`: its ancestors' guides, then
/// its own branch.
fn prefixes(rows: &[(usize, &AgentView)]) -> Vec<String> {
    let mut out = Vec::with_capacity(rows.len());
    for (index, &(depth, _)) in rows.iter().enumerate() {
        if depth == 0 {
            out.push(String::new());
            continue;
        }
        // Whether the agent at `level` on this row's path has a later
        // sibling: a guide goes down past this row then.
        let later_sibling = |level: usize| {
            rows.iter()
                .skip(index + 1)
                .map(|&(d, _)| d)
                .take_while(|&d| d >= level)
                .any(|d| d == level)
        };
        let mut prefix = String::new();
        for level in 1..depth {
            prefix.push_str(if later_sibling(level) { "│  " } else { "   " });
        }
        prefix.push_str(if later_sibling(depth) {
            "├─ "
        } else {
            "└─ "
        });
        out.push(prefix);
    }
    out
}

/// The tree and the conclusions, as `zr sessions show` prints them.
fn tree(view: &SessionView) -> String {
    let origin = view.origin();
    let mut out = String::new();
    let usage = view.usage();
    let _ = writeln!(out, "Session {}: {}", view.id, view.status());
    if let Some(prompt) = view.root().and_then(|r| r.first_prompt.as_deref()) {
        let _ = writeln!(out, "Prompt: {}", first_line(prompt, 100));
    }
    let end = view
        .agents
        .iter()
        .filter_map(|a| view.timing(&a.file))
        .map(|t| t.end_ms)
        .max();
    let _ = writeln!(
        out,
        "Started {} UTC, ran {}; {} agents, {} turns, {} tokens, cost {} (estimate)",
        format_started(Some(origin)),
        end.map_or_else(
            || "-".to_owned(),
            |end| format_ms(end.saturating_sub(origin))
        ),
        view.agents.len(),
        view.agents.iter().map(|a| a.file.turns).sum::<u64>(),
        usage.total(),
        format_cost(view.cost()),
    );
    out.push('\n');
    let rows = view.tree();
    let header = [
        "AGENT",
        "TYPE",
        "STATUS",
        "TURNS",
        "TOKENS",
        "CACHE READ",
        "CACHE WRITE",
        "COST",
        "START",
        "WAITED",
        "RAN",
        "TOOLS",
    ];
    let table: Vec<Vec<String>> = rows
        .iter()
        .zip(prefixes(&rows))
        .map(|(&(_, agent), prefix)| {
            let file = &agent.file;
            let timing = view.timing(file);
            let waited = timing.and_then(Timing::waited_ms);
            vec![
                format!("{prefix}{}", agent.id),
                file.agent_type.clone().unwrap_or_else(|| "-".to_owned()),
                view.agent_status(file),
                file.turns.to_string(),
                file.usage.total().to_string(),
                file.usage.cache_read_input_tokens.to_string(),
                file.usage.cache_creation_input_tokens.to_string(),
                format_cost(agent_cost(file)),
                offset(origin, timing.map(|t| t.start_ms)),
                waited.map_or_else(|| "-".to_owned(), format_ms),
                timing.map_or_else(|| "-".to_owned(), |t| format_ms(t.ran_ms())),
                agent.tool_summary(),
            ]
        })
        .collect();
    out.push_str(&crate::inspect::table(&header, &table));
    out.push_str("\nConclusions:\n");
    for &(_, agent) in &rows {
        let conclusion = agent
            .file
            .output
            .as_deref()
            .filter(|o| !o.trim().is_empty())
            .map_or_else(
                || "(none)".to_owned(),
                |o| crate::render::plain::one_line(o, CONCLUSION_CHARS),
            );
        let _ = writeln!(out, "  {}: {conclusion}", agent.id);
    }
    let _ = writeln!(
        out,
        "\n`zr sessions show {} --agent ID` prints one agent's conversation.",
        view.id
    );
    out
}
