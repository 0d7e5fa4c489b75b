//! How a run shows itself: a live tree of agents on a terminal
//! ([`tree`]), plain progress lines otherwise ([`plain`]), or every event
//! as NDJSON ([`json`]). All three follow the same [`AgentTable`].
//!
//! "Tokens" in the tree, the plain lines and `zr sessions` are
//! [`Usage::total`](zr_types::Usage::total): input and output tokens and
//! the prompt cache's reads and writes; `--json` gives the four counts.

pub(crate) mod agent_colour;
pub(crate) mod held_logs;
pub(crate) mod json;
pub(crate) mod plain;
pub(crate) mod state;
pub(crate) mod tree;

use std::io::IsTerminal as _;

use zr_engine::{Event, QueryResult};
use zr_types::SessionId;

pub(crate) use state::AgentTable;

use crate::cli::OutputArgs;

/// Follows a run's events and shows them.
pub(crate) trait Renderer: Send {
    /// One event of the run.
    fn event(&mut self, event: &Event);
    /// Called every [`TICK`] while the run goes on (the tree redraws its
    /// elapsed times).
    fn tick(&mut self) {}
    /// The run ended: with `result`, or without (failed or interrupted).
    /// The tree collapses into its summary here; the answer is printed by
    /// the caller afterwards (except in JSON mode, where it is an event).
    fn finish(&mut self, session: &SessionId, result: Option<&QueryResult>, error: Option<&str>);
    /// Someone asks the person at the terminal: get out of the way (the
    /// tree erases itself and shows the cursor). Events are held by the
    /// caller until [`Renderer::resume`].
    fn pause(&mut self) {}
    /// The question was answered: draw again at the next tick.
    fn resume(&mut self) {}
    /// Whether the caller prints the answer to standard output after
    /// [`Renderer::finish`].
    fn prints_answer(&self) -> bool {
        true
    }
}

/// The `error` of [`Renderer::finish`] when a signal stopped the run: the
/// caller then prints the session and how to continue it once the agents
/// have stopped, so the renderers leave that line out.
pub(crate) const INTERRUPTED: &str = "interrupted";

/// How often [`Renderer::tick`] is called.
pub(crate) const TICK: std::time::Duration = std::time::Duration::from_millis(100);

/// Whether `TERM` names a terminal that cannot move its cursor.
fn dumb_terminal() -> bool {
    std::env::var_os("TERM").is_some_and(|t| t == "dumb")
}

/// The renderer for `output`: JSON to standard output, else the live tree
/// when standard error is a terminal (not `TERM=dumb`), else plain lines
/// on standard error.
///
/// `colours` are the agent types' `color` keys, by type name: the tree
/// draws those names in their colour.
pub(crate) fn choose(
    output: &OutputArgs,
    colours: std::collections::BTreeMap<String, String>,
) -> Box<dyn Renderer> {
    if output.json {
        Box::new(json::JsonRenderer::new(std::io::stdout()))
    } else if output.quiet {
        Box::new(plain::PlainRenderer::new(std::io::sink()))
    } else if std::io::stderr().is_terminal() && !dumb_terminal() {
        Box::new(tree::TreeRenderer::new(std::io::stderr()).with_colours(colours))
    } else {
        Box::new(plain::PlainRenderer::new(std::io::stderr()))
    }
}
