//! The searcher sink of `Grep`: collects lines or counts per file.

use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

use super::OutputMode;
use crate::bound::cut_line;

/// Collects one file's results.
#[derive(Debug)]
pub(super) struct Collect<'p> {
    mode: OutputMode,
    path: &'p str,
    numbers: bool,
    max_chars: usize,
    room: usize,
    /// Matching lines seen.
    pub(super) count: u64,
    /// Output lines (content mode).
    pub(super) lines: Vec<String>,
    /// Whether the room ran out in this file.
    pub(super) truncated: bool,
}

impl<'p> Collect<'p> {
    pub(super) fn new(mode: OutputMode, path: &'p str, numbers: bool, max_chars: usize) -> Self {
        Self {
            mode,
            path,
            numbers,
            max_chars,
            room: usize::MAX,
            count: 0,
            lines: Vec::new(),
            truncated: false,
        }
    }

    /// At most `room` output lines.
    pub(super) fn with_room(mut self, room: usize) -> Self {
        self.room = room;
        self
    }

    fn push(&mut self, sep: char, number: Option<u64>, bytes: &[u8]) -> bool {
        if self.lines.len() >= self.room {
            self.truncated = true;
            return false;
        }
        let text = String::from_utf8_lossy(bytes);
        let text = cut_line(text.trim_end_matches(['\n', '\r']), self.max_chars);
        let line = match (self.numbers, number) {
            (true, Some(n)) => format!("{}{sep}{n}{sep}{text}", self.path),
            _ => format!("{}{sep}{text}", self.path),
        };
        self.lines.push(line);
        true
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        match self.mode {
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => Ok(true),
            OutputMode::Content => {
                let first = mat.line_number();
                for (i, line) in mat.lines().enumerate() {
                    let n = first.map(|f| f + i as u64);
                    if !self.push(':', n, line) {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        ctx: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content {
            return Ok(self.push('-', ctx.line_number(), ctx.bytes()));
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        if self.mode == OutputMode::Content && !self.lines.is_empty() {
            // A separator is only worth its line if a line can follow it.
            if self.lines.len() + 1 >= self.room {
                self.truncated = true;
                return Ok(false);
            }
            self.lines.push("--".to_owned());
        }
        Ok(true)
    }
}
