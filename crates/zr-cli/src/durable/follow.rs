//! A durable turn followed live: its journal read from the admin API
//! while the turn runs, each step shown as it ends, each child invocation
//! as it is called. Plain lines on standard error in the style of the
//! plain progress lines, or, with `--json`, one JSON object a line on
//! standard output (the renderers take the engine's events, which only
//! the worker has; the journal is what the client can read).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::json;
use zr_restate::JournalEntry;

use crate::render;

/// How often the journal is read.
const POLL: Duration = Duration::from_millis(250);

/// How the turn's progress and answer are shown (`--json`, `--quiet`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shown {
    /// Plain lines on standard error, the answer on standard output.
    Plain,
    /// JSON lines on standard output, ending with the `result` line.
    Json,
    /// Only the answer.
    Quiet,
}

/// What one journal entry shows, once it has something to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// A step ended: `model root #1`, `tool toolu_01`, `subagent root.0001-explore`.
    Step {
        /// Its name, the session left out of a subagent's.
        name: String,
        /// Whether it failed.
        failed: bool,
    },
    /// A child invocation was called: `ZrAgent/{session}/{agent}/run`.
    Call {
        /// `Object/key/handler`.
        target: String,
    },
    /// A background agent was sent (a one-way call the turn attaches to
    /// later): `ZrAgent/{session}/{agent}/run`.
    Send {
        /// `Object/key/handler`.
        target: String,
    },
}

impl Line {
    /// The plain line: `  ✓ model root #1`, `  → ZrAgent/k/run`,
    /// `  → ZrAgent/k/run (background)`.
    pub(crate) fn plain(&self) -> String {
        match self {
            Self::Step { name, failed } => {
                let mark = if *failed { "✗" } else { "✓" };
                format!("  {mark} {name}")
            }
            Self::Call { target } => format!("  → {target}"),
            Self::Send { target } => format!("  → {target} (background)"),
        }
    }

    /// The JSON line (`type`, `at_ms`, `agent` first, as `--json`'s
    /// events): `durable_step` with `name` and `status` (`ok` or
    /// `failed`), `durable_call` or `durable_send` (a background agent)
    /// with `target`. `agent` is the root:
    /// the followed journal is the root's turn.
    pub(crate) fn json(&self, at_ms: u64) -> String {
        let mut fields = vec![
            (
                "type",
                json!(match self {
                    Self::Step { .. } => "durable_step",
                    Self::Call { .. } => "durable_call",
                    Self::Send { .. } => "durable_send",
                }),
            ),
            ("at_ms", json!(at_ms)),
            ("agent", json!("root")),
        ];
        match self {
            Self::Step { name, failed } => {
                fields.push(("name", json!(name)));
                fields.push(("status", json!(if *failed { "failed" } else { "ok" })));
            }
            Self::Call { target } | Self::Send { target } => {
                fields.push(("target", json!(target)));
            }
        }
        render::json::line(&fields)
    }
}

/// What has been shown of one journal.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// Entries already read.
    read: usize,
    /// Step names by completion id (an attach to a background agent's
    /// invocation: the agent).
    names: BTreeMap<u64, String>,
    /// The background agents sent, by invocation id.
    sent: BTreeMap<String, String>,
}

impl Progress {
    /// The lines for the entries of `journal` not read yet.
    pub(crate) fn lines(&mut self, journal: &[JournalEntry]) -> Vec<Line> {
        let mut lines = Vec::new();
        for entry in journal.iter().skip(self.read) {
            match entry {
                JournalEntry::Step { completion, name } => {
                    self.names.insert(*completion, short(name));
                }
                JournalEntry::Done { completion, failed } => {
                    if let Some(name) = self.names.get(completion) {
                        lines.push(Line::Step {
                            name: name.clone(),
                            failed: *failed,
                        });
                    }
                }
                JournalEntry::Call { target } => lines.push(Line::Call {
                    target: target.clone(),
                }),
                JournalEntry::Send { target, invocation } => {
                    lines.push(Line::Send {
                        target: target.clone(),
                    });
                    self.sent.insert(invocation.clone(), background(target));
                }
                JournalEntry::Attach {
                    completion,
                    invocation,
                } => {
                    if let Some(name) = self.sent.get(invocation) {
                        self.names.insert(*completion, name.clone());
                    }
                }
                _ => {}
            }
        }
        self.read = self.read.max(journal.len());
        lines
    }
}

/// `ZrAgent/s-.../root.0001-explore/run` -> `background
/// root.0001-explore`.
fn background(target: &str) -> String {
    let agent = target.rsplit('/').nth(1).unwrap_or(target);
    format!("background {agent}")
}

/// `subagent s-.../root.0001-explore` -> `subagent root.0001-explore`.
fn short(name: &str) -> String {
    match name.strip_prefix("subagent ") {
        Some(rest) => format!(
            "subagent {}",
            rest.split_once('/').map_or(rest, |(_, agent)| agent)
        ),
        None => name.to_owned(),
    }
}

/// Milliseconds since `start`.
pub(crate) fn millis_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Shows the journal of `invocation` as `shown` says until `done` ends,
/// then what is left of it. A journal that cannot be read is skipped (the
/// answer still comes): following is a view, not the turn.
pub(crate) async fn follow(
    admin: &str,
    invocation: &str,
    shown: Shown,
    start: Instant,
    done: impl Future<Output = ()>,
) {
    if shown == Shown::Quiet {
        return done.await;
    }
    let mut progress = Progress::default();
    let mut done = std::pin::pin!(done);
    loop {
        let ended = tokio::select! {
            () = &mut done => true,
            () = tokio::time::sleep(POLL) => false,
        };
        if let Ok(journal) = zr_restate::journal(admin, invocation).await {
            let lines = progress.lines(&journal);
            if shown == Shown::Json {
                let mut out = std::io::stdout().lock();
                for line in lines {
                    let _ = writeln!(out, "{}", line.json(millis_since(start)));
                }
            } else {
                let mut err = std::io::stderr().lock();
                for line in lines {
                    let _ = writeln!(err, "{}", line.plain());
                }
            }
        }
        if ended {
            return;
        }
    }
}

#[cfg(test)]
mod tests;
