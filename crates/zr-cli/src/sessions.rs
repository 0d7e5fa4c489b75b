//! `zr sessions`: the sessions saved in `.zr/sessions`, newest first, with
//! their status, prompt, agents, turns, tokens and estimated cost; and the
//! look-ups `zr resume` needs to explain a wrong session or agent id.
//!
//! Transcripts are read tolerantly, independently of the engine (which
//! has no public reader): a torn last line is ignored, and a line that is
//! not a record stops the reading of that file with a warning naming the
//! file and line.

mod running;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use zr_engine::price_of;
use zr_types::Usage;

use crate::cli::{Format, SessionsArgs};
use crate::error::CliError;
use crate::inspect::json_text;

pub(crate) use running::{RunningMark, running_pid};

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
}

/// What one transcript file says.
#[derive(Debug, Default)]
struct AgentFile {
    model: Option<String>,
    created_ms: Option<u64>,
    first_prompt: Option<String>,
    turns: u64,
    usage: Usage,
    /// The last run's end: `Some(status)` after a `finished` or
    /// `query_failed` record, `None` when a message followed it.
    ended: Option<String>,
    messages: u64,
    /// How many first message records the agent inherited (a fork's
    /// parent's conversation): not its turns.
    inherited: u64,
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
    }
    sessions.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| b.id.cmp(&a.id))
    });
    (sessions, warnings)
}

/// The agent ids with a transcript in `folder`, sorted.
pub(crate) fn agent_ids(folder: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".jsonl").map(str::to_owned)
        })
        .collect();
    ids.sort();
    ids
}

/// The start time encoded in a session id (`s-` + 13 hex digits of
/// milliseconds + `-` + 8 hex digits).
pub(crate) fn started_from_id(id: &str) -> Option<u64> {
    let (ms, _) = id.strip_prefix("s-")?.split_once('-')?;
    u64::from_str_radix(ms, 16).ok()
}

/// The session `id` in `folder`; `shown_root`: what the paths in
/// `warnings` are relative to.
pub(crate) fn summarise(
    id: &str,
    folder: &Path,
    shown_root: &Path,
    warnings: &mut Vec<String>,
) -> SessionSummary {
    let agents = agent_ids(folder);
    let mut turns = 0;
    let mut usage = Usage::default();
    let mut cost = Some(0.0);
    let mut models = Vec::new();
    let mut root = None;
    for agent in &agents {
        let path = folder.join(format!("{agent}.jsonl"));
        let shown = crate::inspect::shown_path(&path, shown_root);
        let file = read_agent(&path, &shown, warnings);
        turns += file.turns;
        usage = usage.plus(file.usage);
        let model = file.model.clone().unwrap_or_default();
        cost = match (cost, price_of(&model)) {
            (Some(sum), Some(price)) => Some(sum + price.cost(&file.usage)),
            (Some(sum), None) if file.usage.total() == 0 => Some(sum),
            _ => None,
        };
        if !model.is_empty() && !models.contains(&model) {
            models.push(model);
        }
        if agent == "root" {
            root = Some(file);
        }
    }
    models.sort();
    let running = running_pid(folder).is_some();
    let status = match &root {
        Some(r) if r.ended.is_none() && running => "running".to_owned(),
        Some(r) if r.messages == 0 => "empty".to_owned(),
        Some(r) => r.ended.clone().unwrap_or_else(|| "interrupted".to_owned()),
        None if running => "running".to_owned(),
        None => "empty".to_owned(),
    };
    SessionSummary {
        id: id.to_owned(),
        started_ms: started_from_id(id).or_else(|| root.as_ref().and_then(|r| r.created_ms)),
        status,
        prompt: root
            .as_ref()
            .and_then(|r| r.first_prompt.clone())
            .unwrap_or_default(),
        agents,
        turns,
        usage,
        cost_usd: cost,
        models,
    }
}

/// Reads one transcript; `shown` is the path warnings name.
fn read_agent(path: &Path, shown: &str, warnings: &mut Vec<String>) -> AgentFile {
    let mut file = AgentFile::default();
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            warnings.push(format!("cannot read {shown}: {e}"));
            return file;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split('\n').collect();
    let last_nonblank = lines.iter().rposition(|l| !l.trim().is_empty());
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            // A torn last line: the process was killed while writing it.
            Err(_) if Some(index) == last_nonblank => break,
            Err(e) => {
                warnings.push(format!(
                    "{}:{}: not a transcript record ({e}); the rest of this file is ignored",
                    shown,
                    index + 1
                ));
                break;
            }
        };
        apply(&mut file, &record);
    }
    file
}

fn apply(file: &mut AgentFile, record: &Value) {
    match record.get("kind").and_then(Value::as_str) {
        Some("header") => {
            file.model = record
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_owned);
            file.created_ms = record.get("created_ms").and_then(Value::as_u64);
            file.inherited = record
                .get("inherited_messages")
                .and_then(Value::as_u64)
                .unwrap_or(0);
        }
        Some("message") => {
            let message = record.get("message").unwrap_or(&Value::Null);
            file.messages += 1;
            file.ended = None;
            let own = file.messages > file.inherited;
            match message.get("role").and_then(Value::as_str) {
                Some("assistant") if own => file.turns += 1,
                Some("user") if file.first_prompt.is_none() => {
                    file.first_prompt = first_text(message);
                }
                _ => {}
            }
        }
        Some("finished") => {
            let usage: Usage = record
                .get("usage")
                .and_then(|u| serde_json::from_value(u.clone()).ok())
                .unwrap_or_default();
            file.usage = file.usage.plus(usage);
            file.ended = Some(
                record
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("finished")
                    .to_owned(),
            );
        }
        Some("query_failed") => file.ended = Some("failed".to_owned()),
        _ => {}
    }
}

/// The first text block of a message, if any.
fn first_text(message: &Value) -> Option<String> {
    message
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|b| b.get("text").and_then(Value::as_str))
        .map(str::to_owned)
}

/// `text`'s first line, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    crate::render::plain::one_line(text.lines().next().unwrap_or_default(), max)
}

/// A start time as `YYYY-MM-DD HH:MM:SS` (UTC).
fn format_started(ms: Option<u64>) -> String {
    ms.and_then(|ms| i64::try_from(ms).ok())
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || "-".to_owned(),
            |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
        )
}

/// A cost as `$0.1234`, `-` when unknown.
pub(crate) fn format_cost(cost: Option<f64>) -> String {
    cost.map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"))
}

/// `zr sessions`: the table or JSON, and warnings for standard error.
///
/// # Errors
///
/// None yet: a missing sessions folder is an empty list.
pub(crate) fn command(root: &Path, args: &SessionsArgs) -> Result<(String, Vec<String>), CliError> {
    let (sessions, warnings) = list(&sessions_dir(root), root);
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
                s.status.clone(),
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
