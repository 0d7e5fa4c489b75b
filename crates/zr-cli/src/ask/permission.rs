//! The permission question at the terminal: allow once, allow for this
//! session, always (the tool added to `zr.toml` `[permissions] allow`,
//! shown before it is written, the rest of the file kept as it was), or
//! deny with an optional reason the model reads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use zr_engine::{Decision, PermissionRequest};

use super::{Asker, Reply, Turn};

/// The most characters of a call's input shown in the question.
const SHOWN_INPUT: usize = 600;

/// Asks about calls at the terminal; remembers the tools the person
/// allowed always during this run.
#[derive(Debug)]
pub(crate) struct PermissionPrompt {
    asker: Arc<Asker>,
    config_file: PathBuf,
    always: Mutex<BTreeSet<String>>,
}

impl PermissionPrompt {
    pub(crate) fn new(asker: Arc<Asker>, config_file: PathBuf) -> Self {
        Self {
            asker,
            config_file,
            always: Mutex::new(BTreeSet::new()),
        }
    }

    /// Whether the person chose "always" for `tool` during this run.
    pub(crate) fn allowed_always(&self, tool: &str) -> bool {
        self.always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    /// Asks about `request` until the person decides.
    pub(crate) async fn ask(&self, request: &PermissionRequest) -> Decision {
        let mut turn = self.asker.turn().await;
        let tool = request.tool.as_str();
        if request.crossing.is_some() {
            return crossing(&mut turn, request).await;
        }
        if self.allowed_always(tool) {
            // Chosen while this asker waited for its turn.
            return Decision::AllowForSession;
        }
        let mut prompt = question(request);
        loop {
            let line = match turn.line(&prompt).await {
                Reply::Line(line) => line,
                // The run is being stopped (the signal reached `drive`):
                // the call never runs, and no model request follows.
                Reply::Interrupted => return std::future::pending().await,
                Reply::Closed => {
                    return Decision::Deny(
                        "the terminal closed before the user answered".to_owned(),
                    );
                }
            };
            prompt = match line.as_str() {
                "1" => return Decision::Allow,
                "2" => return Decision::AllowForSession,
                "3" => match self.always(&mut turn, tool).await {
                    Some(decision) => return decision,
                    None => format!("Not written. {}", ANSWER),
                },
                "4" => return deny(&mut turn).await,
                _ => format!("Please answer 1, 2, 3 or 4. {ANSWER}"),
            };
        }
    }

    /// "Always": shows the change to zr.toml, writes it when confirmed.
    /// `None`: not written (back to the question).
    async fn always(&self, turn: &mut Turn<'_>, tool: &str) -> Option<Decision> {
        let (old, new) = match with_allowed(&self.config_file, tool) {
            Ok(texts) => texts,
            Err(why) => {
                turn.say(&format!(
                    "Cannot change {}: {why}\n",
                    shown_path(&self.config_file)
                ));
                return None;
            }
        };
        let mut change = format!("\n{} will change:\n", shown_path(&self.config_file));
        for line in changed_lines(&old, &new) {
            change.push_str(&format!("  + {line}\n"));
        }
        change.push_str("Write it? [y/N] ");
        let Reply::Line(yes) = turn.line(&change).await else {
            return Some(Decision::Deny(
                "the user did not confirm the change to zr.toml".to_owned(),
            ));
        };
        if !matches!(yes.to_lowercase().as_str(), "y" | "yes") {
            return None;
        }
        if let Err(e) = std::fs::write(&self.config_file, new) {
            turn.say(&format!(
                "Cannot write {}: {e}\n",
                shown_path(&self.config_file)
            ));
            return None;
        }
        turn.say(&format!("Wrote {}.\n", shown_path(&self.config_file)));
        self.always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tool.to_owned());
        Some(Decision::AllowForSession)
    }
}

const ANSWER: &str = "Answer 1-4: ";

/// "Deny": an optional reason for the agent.
async fn deny(turn: &mut Turn<'_>) -> Decision {
    match turn.line("Reason for the agent (Enter for none): ").await {
        Reply::Line(reason) if !reason.is_empty() => {
            Decision::Deny(format!("the user said no: {reason}"))
        }
        _ => Decision::Deny("the user said no".to_owned()),
    }
}

/// A call that crosses the effects boundary: allowed once or denied;
/// no list can allow it for later.
async fn crossing(turn: &mut Turn<'_>, request: &PermissionRequest) -> Decision {
    let why = request.crossing.as_deref().unwrap_or_default();
    let mut prompt = format!(
        "\n? Permission: {} wants to run {} across the boundary: {why}\n  {}\n  1. Allow once\n  2. Deny (the agent is told; you may give a reason)\nAnswer 1-2: ",
        who(request),
        request.tool,
        shown_input(request)
    );
    loop {
        let line = match turn.line(&prompt).await {
            Reply::Line(line) => line,
            Reply::Interrupted => return std::future::pending().await,
            Reply::Closed => {
                return Decision::Deny("the terminal closed before the user answered".to_owned());
            }
        };
        prompt = match line.as_str() {
            "1" => return Decision::Allow,
            "2" => return deny(turn).await,
            _ => "Please answer 1 or 2. Answer 1-2: ".to_owned(),
        };
    }
}

fn shown_input(request: &PermissionRequest) -> String {
    let mut input = request.input.to_string();
    let chars = input.chars().count();
    if chars > SHOWN_INPUT {
        input = input.chars().take(SHOWN_INPUT).collect();
        input.push_str(&format!(" ... ({} more characters)", chars - SHOWN_INPUT));
    }
    input
}

fn who(request: &PermissionRequest) -> String {
    if request.agent.as_str() == request.agent_type {
        request.agent.to_string()
    } else {
        format!("{} ({})", request.agent, request.agent_type)
    }
}

fn question(request: &PermissionRequest) -> String {
    let input = shown_input(request);
    let tool = &request.tool;
    let who = who(request);
    format!(
        "\n? Permission: {who} wants to run {tool}\n  {input}\n  1. Allow once\n  2. Allow for this session\n  3. Always allow: add \"{tool}\" to zr.toml [permissions] allow\n  4. Deny (the agent is told; you may give a reason)\n{ANSWER}"
    )
}

fn shown_path(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The text of `file` before and after adding `tool` to `[permissions]
/// allow`, everything else (comments, order, spacing) kept.
pub(crate) fn with_allowed(file: &Path, tool: &str) -> Result<(String, String), String> {
    let old = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let mut doc: toml_edit::DocumentMut = old.parse().map_err(|e| format!("{e}"))?;
    let table = doc
        .entry("permissions")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or("[permissions] is not a table")?;
    let allow = table
        .entry("allow")
        .or_insert(toml_edit::value(toml_edit::Array::new()))
        .as_array_mut()
        .ok_or("[permissions] allow is not a list")?;
    if !allow.iter().any(|v| v.as_str() == Some(tool)) {
        allow.push(tool);
    }
    Ok((old, doc.to_string()))
}

/// The lines of `new` that `old` does not have, in order.
fn changed_lines<'a>(old: &str, new: &'a str) -> Vec<&'a str> {
    let old: BTreeSet<&str> = old.lines().collect();
    new.lines().filter(|l| !old.contains(l)).collect()
}

#[cfg(test)]
mod tests;
