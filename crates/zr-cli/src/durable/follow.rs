//! A durable turn followed live: its journal read from the admin API
//! while the turn runs, each step shown as it ends, each child invocation
//! as it is called, in the style of the plain progress lines (the
//! renderers take the engine's events, which only the worker has).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use zr_restate::JournalEntry;

/// How often the journal is read.
const POLL: Duration = Duration::from_millis(250);

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
    pub(crate) fn lines(&mut self, journal: &[JournalEntry]) -> Vec<String> {
        let mut lines = Vec::new();
        for entry in journal.iter().skip(self.read) {
            match entry {
                JournalEntry::Step { completion, name } => {
                    self.names.insert(*completion, short(name));
                }
                JournalEntry::Done { completion, failed } => {
                    if let Some(name) = self.names.get(completion) {
                        let mark = if *failed { "✗" } else { "✓" };
                        lines.push(format!("  {mark} {name}"));
                    }
                }
                JournalEntry::Call { target } => lines.push(format!("  → {target}")),
                JournalEntry::Send { target, invocation } => {
                    lines.push(format!("  → {target} (background)"));
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

/// Shows the journal of `invocation` on standard error until `done`
/// ends, then what is left of it. A journal that cannot be read is
/// skipped (the answer still comes): following is a view, not the turn.
pub(crate) async fn follow(admin: &str, invocation: &str, done: impl Future<Output = ()>) {
    let mut progress = Progress::default();
    let mut done = std::pin::pin!(done);
    loop {
        let ended = tokio::select! {
            () = &mut done => true,
            () = tokio::time::sleep(POLL) => false,
        };
        if let Ok(journal) = zr_restate::journal(admin, invocation).await {
            let mut err = std::io::stderr().lock();
            for line in progress.lines(&journal) {
                let _ = writeln!(err, "{line}");
            }
        }
        if ended {
            return;
        }
    }
}

#[cfg(test)]
mod tests;
