//! Engine tests as data: [`check`] runs one query of a scripted session
//! (the [`Harness`]'s recording provider, real builtin tools, transcripts
//! on) and renders what happened as stable text, which the test
//! snapshots with `insta::assert_snapshot!`:
//!
//! - `requests`: each model request, per agent: its turn, how many
//!   messages it sent and the tools it advertised;
//! - `events`: the query's events, grouped by agent (in the order each
//!   agent's first event came; an agent's own events in their order),
//!   consecutive text pieces joined;
//! - `result`: the query's status, turns, usage and answer;
//! - `transcripts`: every transcript file the session wrote, each record
//!   on a line (messages as their blocks).
//!
//! What varies from run to run is normalised: the project folder is
//! `<project>`, the session id `<session>`, times and durations are left
//! out, and so are input token counts (see [`usage_text`]). Concurrent
//! agents interleave their events in any order, so the text groups them
//! by agent; within one agent the order is the engine's.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use zr_engine::{
    Agent, AgentConfig, EngineError, Event, EventKind, QueryOverrides, QueryResult, ToolChoice,
};
use zr_types::{Usage, error_chain};

use crate::support::{Harness, run};

/// One query's run: its rendering, and the parts a test may still check
/// (what the text does not show).
pub(crate) struct Checked {
    /// The run as text, for `insta::assert_snapshot!`.
    pub(crate) text: String,
    pub(crate) result: Result<QueryResult, EngineError>,
    /// The agent, for its history and later queries.
    pub(crate) agent: Agent,
}

/// Runs `prompt` through an agent of `config` in `h`, with its
/// transcripts in a folder of their own (outside the project, so that
/// the agents' tools do not see them), and renders the run.
pub(crate) async fn check(h: &Harness, mut config: AgentConfig, prompt: &str) -> Checked {
    let own = tempfile::tempdir().unwrap();
    let sessions = config
        .sessions_dir
        .get_or_insert_with(|| own.path().to_path_buf())
        .clone();
    let agent = h.agent(config);
    let (events, result) = run(agent.query(prompt, QueryOverrides::default())).await;
    let mut text = String::new();
    render_requests(&mut text, h);
    render_events(&mut text, &events);
    render_result(&mut text, &result);
    render_transcripts(&mut text, &sessions);
    let text = normalise(&text, h.dir.path(), &sessions);
    Checked {
        text,
        result,
        agent,
    }
}

fn render_requests(out: &mut String, h: &Harness) {
    out.push_str("== requests\n");
    let requests = h.provider.requests.lock().unwrap().clone();
    let mut by_agent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for request in &requests {
        let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        by_agent
            .entry(format!(
                "{} ({})",
                request.origin.agent, request.origin.agent_type
            ))
            .or_default()
            .push(format!(
                "turn {}: {} messages{}; tools: {}\n    last {}",
                request.origin.turn,
                request.messages.len(),
                if request.tool_choice == ToolChoice::Auto {
                    String::new()
                } else {
                    format!("; tool choice {:?}", request.tool_choice)
                },
                if tools.is_empty() {
                    "none".to_owned()
                } else {
                    tools.join(", ")
                },
                request.messages.last().map_or_else(
                    || "none".to_owned(),
                    |m| message_text(&serde_json::to_value(m).unwrap())
                )
            ));
    }
    for (agent, lines) in by_agent {
        let _ = writeln!(out, "{agent}");
        for line in lines {
            let _ = writeln!(out, "  {line}");
        }
    }
}

fn render_events(out: &mut String, events: &[Event]) {
    out.push_str("== events\n");
    // Agents in the order of their first event; each agent's lines in
    // the order of its events.
    let mut order: Vec<String> = Vec::new();
    let mut lines: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut text: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for event in events {
        let agent = format!("{} ({})", event.agent, event.agent_type);
        if !order.contains(&agent) {
            order.push(agent.clone());
        }
        let own = lines.entry(agent.clone()).or_default();
        if let EventKind::TextDelta { text: piece } = &event.kind {
            let pending = text.entry(agent).or_default();
            pending.0.push_str(piece);
            pending.1 += 1;
            continue;
        }
        if let Some((joined, pieces)) = text.remove(&agent) {
            own.push(format!("text {joined:?} ({pieces} pieces)"));
        }
        own.push(event_line(&event.kind));
    }
    for (agent, (joined, pieces)) in text {
        lines
            .entry(agent)
            .or_default()
            .push(format!("text {joined:?} ({pieces} pieces)"));
    }
    for agent in order {
        let _ = writeln!(out, "{agent}");
        for line in &lines[&agent] {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// One event as a line, without its time.
fn event_line(kind: &EventKind) -> String {
    match kind {
        EventKind::TextDelta { text } => format!("text {text:?}"),
        EventKind::ThinkingDelta { text } => format!("thinking {text:?}"),
        EventKind::ModelRetry {
            attempt, reason, ..
        } => format!("model retry {attempt}: {reason}"),
        EventKind::TurnFinished {
            turn,
            stop_reason,
            usage,
        } => format!(
            "turn {turn} finished: {stop_reason:?}, {}",
            usage_text(usage)
        ),
        EventKind::Usage { agent, total } => {
            format!(
                "usage: agent {}; total {}",
                usage_text(agent),
                usage_text(total)
            )
        }
        EventKind::ToolCallStarted {
            call_id,
            tool,
            input,
        } => format!("call {call_id} {tool} {input}"),
        EventKind::ToolCallFinished {
            call_id,
            tool,
            is_error,
            summary,
            ..
        } => format!(
            "call {call_id} {tool} {}: {summary:?}",
            if *is_error { "failed" } else { "done" }
        ),
        EventKind::ToolFailed {
            call_id,
            tool,
            error,
        } => format!("call {call_id} {tool} error: {error}"),
        EventKind::SubagentStarted {
            parent,
            description,
            index,
            background,
        } => format!(
            "subagent started by {parent}: #{index} {description:?}{}",
            if *background { " (background)" } else { "" }
        ),
        EventKind::SubagentRunning => "subagent running".to_owned(),
        EventKind::SubagentFinished { result } => format!(
            "subagent finished: #{} {} {:?}, {} turns, {}: {:?}",
            result.index,
            result.agent_type,
            result.status,
            result.turns,
            usage_text(&result.usage),
            result.output
        ),
        EventKind::SubagentProgress { summary } => format!("progress {summary:?}"),
        EventKind::PermissionDenied {
            call_id,
            tool,
            reason,
        } => format!("denied {call_id} {tool}: {reason}"),
        EventKind::Compacted {
            before_tokens,
            after_tokens,
            messages,
            usage,
        } => format!(
            "compacted {before_tokens} -> {after_tokens} tokens, {messages} messages, {}",
            usage_text(usage)
        ),
        EventKind::CompactionFailed {
            before_tokens,
            reason,
        } => format!("compaction failed at {before_tokens} tokens: {reason}"),
        EventKind::TranscriptError { path, error } => {
            format!("transcript error {}: {error}", path.display())
        }
        EventKind::ResumeWarning { message } => format!("resume warning: {message}"),
        EventKind::HookStopped { reason } => format!("hook stopped: {reason}"),
        other => format!("{other:?}"),
    }
}

/// Usage as `out N` (and the cache's figures when there are any). Input
/// tokens are left out: the scripted provider estimates them from the
/// request's bytes, which carry wall times (a task result's
/// `duration_ms`), so they vary by a token from run to run.
fn usage_text(usage: &Usage) -> String {
    let mut text = format!("out {}", usage.output_tokens);
    if usage.cache_read_input_tokens > 0 || usage.cache_creation_input_tokens > 0 {
        let _ = write!(
            text,
            " cache read {} written {}",
            usage.cache_read_input_tokens, usage.cache_creation_input_tokens
        );
    }
    text
}

fn render_result(out: &mut String, result: &Result<QueryResult, EngineError>) {
    out.push_str("== result\n");
    match result {
        Ok(result) => {
            let _ = writeln!(
                out,
                "{:?} after {} turns; {}; total {}",
                result.status,
                result.turns,
                usage_text(&result.usage),
                usage_text(&result.total_usage)
            );
            let _ = writeln!(out, "output {:?}", result.output);
            if let Some(value) = &result.value {
                let _ = writeln!(out, "value {value}");
            }
            for failed in &result.failed_subagents {
                let _ = writeln!(
                    out,
                    "failed subagent #{} {} {:?}: {:?}",
                    failed.index, failed.agent_type, failed.status, failed.output
                );
            }
        }
        Err(error) => {
            let _ = writeln!(out, "error: {}", error_chain(error));
        }
    }
}

fn render_transcripts(out: &mut String, sessions: &Path) {
    out.push_str("== transcripts\n");
    for file in jsonl_files(sessions) {
        let name = file.strip_prefix(sessions).unwrap_or(&file);
        let _ = writeln!(out, "{}", name.display());
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines() {
            let record: Value = serde_json::from_str(line).unwrap();
            let _ = writeln!(out, "  {}", record_line(&record));
        }
    }
}

/// Every `.jsonl` file under `dir`, sorted.
fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(jsonl_files(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// One transcript record as a line: its kind, then what it holds (a
/// message's blocks; a header's agent, model and limits; the rest as
/// JSON), times left out.
fn record_line(record: &Value) -> String {
    let kind = record["kind"].as_str().unwrap_or("?");
    match kind {
        "message" => format!("message {}", message_text(&record["message"])),
        "header" => {
            let mut fields = Vec::new();
            for key in ["agent", "agent_type", "parent", "model", "max_turns"] {
                fields.push(format!("{key}={}", record[key]));
            }
            for key in [
                "permission_mode",
                "inherited_messages",
                "task",
                "background",
                "output_schema",
                "depth_ceiling",
            ] {
                if let Some(value) = record.get(key) {
                    fields.push(format!("{key}={value}"));
                }
            }
            fields.push(format!("system={:?}", first_line(&record["system_prompt"])));
            format!("header {}", fields.join(" "))
        }
        "finished" => {
            let usage: Usage = serde_json::from_value(record["usage"].clone()).unwrap_or_default();
            let mut line = format!(
                "finished {} after {} turns; {}: {}",
                record["status"].as_str().unwrap_or("?"),
                record["turns"],
                usage_text(&usage),
                record["output"]
            );
            if let Some(error) = record.get("error") {
                let _ = write!(line, "; error {error}");
            }
            if let Some(value) = record.get("value") {
                let _ = write!(line, "; value {value}");
            }
            line
        }
        _ => {
            let mut rest = timeless(record);
            if let Some(map) = rest.as_object_mut() {
                map.remove("kind");
                map.remove("at_ms");
            }
            format!("{kind} {rest}")
        }
    }
}

/// A message as `ROLE: BLOCK | BLOCK`.
fn message_text(message: &Value) -> String {
    let blocks: Vec<String> = message["content"]
        .as_array()
        .map(|blocks| blocks.iter().map(block_text).collect())
        .unwrap_or_default();
    format!(
        "{}: {}",
        message["role"].as_str().unwrap_or("?"),
        blocks.join(" | ")
    )
}

/// A content block: `text "..."`, `tool_use ID NAME INPUT`,
/// `tool_result ID ok|error "..."`, `thinking "..."`.
fn block_text(block: &Value) -> String {
    match block["type"].as_str().unwrap_or("?") {
        "text" => format!("text {}", block["text"]),
        "tool_use" => format!(
            "tool_use {} {} {}",
            block["id"].as_str().unwrap_or("?"),
            block["name"].as_str().unwrap_or("?"),
            block["input"]
        ),
        "tool_result" => {
            let texts: Vec<String> = block["content"]
                .as_array()
                .map(|parts| {
                    parts
                        .iter()
                        .map(|part| match part["type"].as_str() {
                            Some("text") => part["text"].to_string(),
                            Some("json") => timeless(&part["value"]).to_string(),
                            _ => part.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "tool_result {} {} {}",
                block["tool_use_id"].as_str().unwrap_or("?"),
                if block["is_error"] == Value::Bool(true) {
                    "error"
                } else {
                    "ok"
                },
                texts.join(" + ")
            )
        }
        "thinking" => format!("thinking {}", block["thinking"]),
        _ => block.to_string(),
    }
}

/// `value` with every `*_ms` number (durations, times) as `"<ms>"`.
fn timeless(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = if key.ends_with("_ms") && value.is_number() {
                        Value::from("<ms>")
                    } else {
                        timeless(value)
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(timeless).collect()),
        other => other.clone(),
    }
}

/// The first line of a string value (a system prompt), marked `…` when
/// there is more.
fn first_line(value: &Value) -> String {
    let text = value.as_str().unwrap_or_default();
    match text.split_once('\n') {
        Some((first, _)) => format!("{first}…"),
        None => text.to_owned(),
    }
}

/// `text` with the project folder as `<project>`, the sessions folder as
/// `<sessions>` and session ids as `<session>`.
fn normalise(text: &str, project: &Path, sessions: &Path) -> String {
    let mut text = text
        .replace(&sessions.display().to_string(), "<sessions>")
        .replace(&project.display().to_string(), "<project>");
    // A session id is the one folder under `sessions/`.
    let sessions: Vec<String> = text
        .lines()
        .filter(|line| !line.starts_with(' '))
        .filter_map(|line| {
            let (session, file) = line.split_once('/')?;
            file.ends_with(".jsonl").then(|| session.to_owned())
        })
        .collect();
    for session in sessions {
        text = text.replace(&session, "<session>");
    }
    seconds_out(&text)
}

/// `text` with each `after N.N s` (a task's wall time in a delegation
/// report) as `after <s> s`.
fn seconds_out(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("after ") {
        let (before, tail) = rest.split_at(at + "after ".len());
        out.push_str(before);
        let digits = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(tail.len());
        if digits > 0 && tail[digits..].starts_with(" s") {
            out.push_str("<s>");
            rest = &tail[digits..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}
