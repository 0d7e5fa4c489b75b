//! The live tree of running agents on a terminal: type, current tool,
//! turns, tokens and elapsed time per agent, background agents marked;
//! redrawn in place, collapsed into a summary at the end.

use std::io::Write;

use zr_engine::{Event, QueryResult};
use zr_types::SessionId;

use super::Renderer;
use super::plain::PlainRenderer;

/// Draws the tree on a terminal.
// TODO(tree helper): the live tree; until then, plain lines.
#[derive(Debug)]
pub(crate) struct TreeRenderer<W: Write> {
    inner: PlainRenderer<W>,
}

impl<W: Write> TreeRenderer<W> {
    /// Draws on `out`, a terminal.
    pub(crate) fn new(out: W) -> Self {
        Self {
            inner: PlainRenderer::new(out),
        }
    }
}

impl<W: Write + Send> Renderer for TreeRenderer<W> {
    fn event(&mut self, event: &Event) {
        self.inner.event(event);
    }

    fn finish(&mut self, session: &SessionId, result: Option<&QueryResult>, error: Option<&str>) {
        self.inner.finish(session, result, error);
    }
}
