//! The live tree of running agents on a terminal: type, current tool,
//! turns, tokens and elapsed time per agent, background agents marked;
//! redrawn in place, collapsed into a summary at the end.
//!
//! Drawing: the tree is written as whole lines below the cursor; the next
//! draw moves up over them (`ESC [ n A`), clears to the end of the screen
//! (`ESC [ J`) and writes them again. Lines are cut to the terminal's width
//! (minus one column, so that no terminal wraps them) and the tree to its
//! height, so that moving up `n` lines lands exactly on the first one. The
//! cursor is hidden while the tree is up and shown again by
//! [`Renderer::finish`] (or when the renderer is dropped).
//!
//! Log lines (`tracing` warnings of the engine, the servers, ...) would
//! break that count: while the tree is up they are held
//! ([`super::held_logs`]) and each draw writes them above the tree.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::time::{Duration, Instant};

use unicode_width::UnicodeWidthChar as _;
use zr_engine::{Event, EventKind, QueryResult, TaskStatus};
use zr_types::{SessionId, Usage};

use super::held_logs::{LOGS, LogHold};
// Text from a model or a server goes through `flat`: no control
// character moves the cursor.
use super::plain::flat;
use super::state::{AgentRow, Phase};
use super::{AgentTable, Renderer};

const HIDE_CURSOR: &str = "\x1b[?25l";
const SHOW_CURSOR: &str = "\x1b[?25h";
/// Clears from the cursor to the end of the screen.
const CLEAR_BELOW: &str = "\x1b[J";
/// The size used when the writer's size cannot be read.
const FALLBACK_SIZE: (usize, usize) = (80, 24);
/// How much of the root's current text is kept for its last line.
const TEXT_TAIL: usize = 400;

/// How a piece of a line looks (with colours on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Dim,
    Bold,
    Cyan,
    Yellow,
    Green,
    Red,
    /// An agent type's own colour (its file's `color`).
    Agent(&'static str),
}

impl Style {
    fn sgr(self) -> &'static str {
        match self {
            Self::Plain => "",
            Self::Dim => "\x1b[2m",
            Self::Bold => "\x1b[1m",
            Self::Cyan => "\x1b[36m",
            Self::Yellow => "\x1b[33m",
            Self::Green => "\x1b[32m",
            Self::Red => "\x1b[31m",
            Self::Agent(sgr) => sgr,
        }
    }
}

/// One line of output: pieces of text with their style.
type Line = Vec<(Style, String)>;

/// Where the terminal's size comes from.
#[derive(Debug, Clone, Copy)]
enum Size {
    /// Standard error's size, read at each draw (it may change).
    Stderr,
    /// A fixed size (tests).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "only tests draw at a fixed size")
    )]
    Fixed(usize, usize),
}

/// Where "now" comes from, for the elapsed times of running agents.
#[derive(Debug, Clone, Copy)]
enum Clock {
    /// The wall clock: the instant the query started, learnt from the
    /// first event (its `at` is the time since then).
    Wall(Option<Instant>),
    /// The time of the latest event (tests: the output depends only on
    /// the events).
    #[cfg_attr(not(test), expect(dead_code, reason = "only tests stop the clock"))]
    Events,
}

/// What the root is writing in its current turn.
#[derive(Debug, Default)]
struct RootText {
    thinking: bool,
    text: String,
}

/// Draws the tree on a terminal.
#[derive(Debug)]
pub(crate) struct TreeRenderer<W: Write> {
    out: W,
    table: AgentTable,
    size: Size,
    clock: Clock,
    color: bool,
    /// The time of the latest event.
    last_at: Duration,
    /// The latest usage of the whole query.
    total: Option<Usage>,
    root_text: RootText,
    /// Lines of the tree now on the screen, above the cursor.
    drawn: usize,
    /// Whether an event came since the last draw.
    dirty: bool,
    cursor_hidden: bool,
    finished: bool,
    /// The log lines this tree holds and writes above itself (`None`:
    /// tests that do not hold the log).
    logs: Option<&'static LogHold>,
    /// Agent types' colours, by type name.
    colours: BTreeMap<String, Style>,
}

impl<W: Write> TreeRenderer<W> {
    /// Draws on `out`, standard error on a terminal: its size is read from
    /// standard error; colours unless `NO_COLOR` is set.
    pub(crate) fn new(out: W) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self::build(out, Size::Stderr, Clock::Wall(None), !no_color).holding(&LOGS)
    }

    /// Draws the agents of the types in `colours` (type name -> the file's
    /// `color`) with their type's name in that colour.
    pub(crate) fn with_colours(mut self, colours: BTreeMap<String, String>) -> Self {
        self.colours = colours
            .into_iter()
            .filter_map(|(name, colour)| {
                super::agent_colour::sgr(&colour).map(|sgr| (name, Style::Agent(sgr)))
            })
            .collect();
        self
    }

    /// Holds the log lines written to `logs` and writes them above the
    /// tree, until [`Renderer::finish`] (or the drop).
    fn holding(mut self, logs: &'static LogHold) -> Self {
        logs.hold();
        self.logs = Some(logs);
        self
    }

    /// Draws on `out` as on a terminal of `width` x `height`, times taken
    /// from the events only (for tests).
    #[cfg(test)]
    pub(crate) fn fixed(out: W, width: usize, height: usize, color: bool) -> Self {
        Self::build(out, Size::Fixed(width, height), Clock::Events, color)
    }

    fn build(out: W, size: Size, clock: Clock, color: bool) -> Self {
        Self {
            out,
            table: AgentTable::default(),
            size,
            clock,
            color,
            last_at: Duration::ZERO,
            total: None,
            root_text: RootText::default(),
            drawn: 0,
            dirty: false,
            cursor_hidden: false,
            finished: false,
            logs: None,
            colours: BTreeMap::new(),
        }
    }

    /// As [`TreeRenderer::fixed`], holding the log lines of `logs`.
    #[cfg(test)]
    pub(crate) fn fixed_holding(
        out: W,
        width: usize,
        height: usize,
        logs: &'static LogHold,
    ) -> Self {
        Self::fixed(out, width, height, false).holding(logs)
    }

    /// The writer (tests read what was drawn).
    #[cfg(test)]
    pub(crate) fn out(&self) -> &W {
        &self.out
    }

    /// Width and height, in cells.
    fn size(&self) -> (usize, usize) {
        match self.size {
            Size::Fixed(w, h) => (w, h),
            Size::Stderr => terminal_size::terminal_size_of(std::io::stderr())
                .map_or(FALLBACK_SIZE, |(w, h)| (usize::from(w.0), usize::from(h.0))),
        }
    }

    /// The time since the query started.
    fn now(&self) -> Duration {
        match self.clock {
            Clock::Wall(Some(start)) => start.elapsed().max(self.last_at),
            Clock::Wall(None) | Clock::Events => self.last_at,
        }
    }

    /// Notes the root's text and thinking, for its last line.
    fn follow_root(&mut self, event: &Event) {
        if !event.agent.is_root() {
            return;
        }
        match &event.kind {
            EventKind::TextDelta { text } => {
                if self.root_text.thinking {
                    self.root_text = RootText::default();
                }
                push_tail(&mut self.root_text.text, text);
            }
            EventKind::ThinkingDelta { text } => {
                if !self.root_text.thinking {
                    self.root_text = RootText {
                        thinking: true,
                        text: String::new(),
                    };
                }
                push_tail(&mut self.root_text.text, text);
            }
            EventKind::TurnFinished { .. }
            | EventKind::ModelRetry { .. }
            | EventKind::ToolCallStarted { .. } => self.root_text = RootText::default(),
            _ => {}
        }
    }

    /// The tree's lines for a terminal of `width` x `height`: at most
    /// `height - 1` of them.
    fn tree_lines(&self, width: usize, height: usize) -> Vec<Line> {
        let now = self.now();
        let rows: Vec<(&str, &AgentRow)> = self.table.rows().collect();
        let mut lines: Vec<Line> = Vec::new();
        let max = height.saturating_sub(1).max(1);
        let tail = self.root_line(width);
        let room = max.saturating_sub(usize::from(tail.is_some()));
        // Too many agents: finished ones are counted instead of listed,
        // then the last ones are cut.
        let finished = rows
            .iter()
            .filter(|(id, r)| *id != "root" && matches!(r.phase, Phase::Done(_)))
            .count();
        let hide_finished = rows.len() > room && finished > 0;
        let mut shown: Vec<Line> = rows
            .iter()
            .filter(|(id, r)| {
                !(hide_finished && *id != "root" && matches!(r.phase, Phase::Done(_)))
            })
            .map(|(id, row)| agent_line(id, row, now, &self.colours))
            .collect();
        let mut notes: Vec<Line> = Vec::new();
        if hide_finished {
            notes.push(vec![(
                Style::Dim,
                format!("  {finished} finished agent{} not shown", plural(finished)),
            )]);
        }
        if shown.len() + notes.len() > room {
            let keep = room.saturating_sub(notes.len() + 1).max(1);
            let more = shown.len().saturating_sub(keep);
            shown.truncate(keep);
            notes.push(vec![(
                Style::Dim,
                format!("  … {more} more agent{}", plural(more)),
            )]);
        }
        lines.extend(shown);
        lines.extend(notes);
        lines.truncate(room);
        lines.extend(tail);
        lines
    }

    /// The root's last line: what it is writing or thinking now.
    fn root_line(&self, width: usize) -> Option<Line> {
        let text = self.root_text.text.lines().last()?.trim();
        if text.is_empty() {
            return None;
        }
        let label = if self.root_text.thinking {
            "  thinking: "
        } else {
            "  answering: "
        };
        let room = width.saturating_sub(1 + label.len());
        Some(vec![
            (Style::Dim, label.to_owned()),
            (Style::Plain, tail_to_width(&flat(text), room)),
        ])
    }

    /// Draws the tree in place of the one on the screen.
    fn draw(&mut self) {
        let (width, height) = self.size();
        let lines = self.tree_lines(width, height);
        let mut buf = String::new();
        if !self.cursor_hidden {
            buf.push_str(HIDE_CURSOR);
            self.cursor_hidden = true;
        }
        self.erase_into(&mut buf);
        self.held_logs_into(&mut buf, false);
        for line in &lines {
            buf.push_str(&paint(line, width, self.color));
            buf.push_str("\r\n");
        }
        self.drawn = lines.len();
        self.dirty = false;
        self.write(&buf);
    }

    /// Appends what moves up over the drawn tree and clears it.
    fn erase_into(&self, buf: &mut String) {
        buf.push('\r');
        if self.drawn > 0 {
            let _ = write!(buf, "\x1b[{}A", self.drawn);
        }
        buf.push_str(CLEAR_BELOW);
    }

    /// Appends the log lines held since the last draw (all of them and
    /// the end of the hold when `release`).
    fn held_logs_into(&self, buf: &mut String, release: bool) {
        if let Some(logs) = self.logs {
            let held = if release { logs.release() } else { logs.take() };
            // Each line back to the first column, as the tree's own lines.
            buf.push_str(&String::from_utf8_lossy(&held).replace('\n', "\r\n"));
        }
    }

    fn write(&mut self, text: &str) {
        // A terminal that went away is no reason to stop the run.
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }

    /// The summary: one line per subagent, the totals, the session.
    fn summary(
        &self,
        session: &SessionId,
        result: Option<&QueryResult>,
        error: Option<&str>,
    ) -> Vec<String> {
        let (width, _) = self.size();
        let now = result.map_or_else(|| self.now(), |r| r.duration.max(self.last_at));
        let mut lines: Vec<Line> = Vec::new();
        let mut agents = 0_usize;
        let mut turns = 0_u64;
        let mut tokens = 0_u64;
        for (id, row) in self.table.rows() {
            agents += 1;
            tokens = tokens.saturating_add(row.tokens);
            if id == "root" {
                // The result counts the root's turns too (the events may
                // not have told all of them).
                turns += u64::from(result.map_or(row.turns, |r| r.turns.max(row.turns)));
            } else {
                turns += u64::from(row.turns);
                lines.push(summary_line(id, row, now, result.is_none(), &self.colours));
            }
        }
        // The query's total, or the agents' sum when background agents
        // worked on after the answer.
        if let Some(total) = result.map(|r| &r.total_usage).or(self.total.as_ref()) {
            tokens = tokens.max(total.total());
        }
        let (status, style) = match (result, error) {
            (Some(r), _) => (r.status.as_str().to_owned(), status_style(r.status)),
            (None, Some(e)) => (format!("error: {}", flat(e)), Style::Red),
            (None, None) => ("ended".to_owned(), Style::Plain),
        };
        lines.push(vec![
            (Style::Bold, "total ".to_owned()),
            (style, status),
            (
                Style::Plain,
                format!(
                    " · {agents} agent{} · {} · {} · {}",
                    plural(agents),
                    count(turns, "turn"),
                    tokens_text(tokens),
                    elapsed_text(now)
                ),
            ),
        ]);
        let mut lines: Vec<String> = lines
            .iter()
            .map(|line| paint(line, width, self.color))
            .collect();
        // Not cut: the id must stay whole to be copied. After a signal the
        // caller says it once the agents have stopped.
        if error != Some(super::INTERRUPTED) {
            lines.push(format!("session {session} (zr resume {session})"));
        }
        lines
    }
}

impl<W: Write + Send> Renderer for TreeRenderer<W> {
    fn event(&mut self, event: &Event) {
        if let Clock::Wall(start @ None) = &mut self.clock {
            *start = Instant::now().checked_sub(event.at);
        }
        self.last_at = self.last_at.max(event.at);
        if let EventKind::Usage { total, .. } = &event.kind {
            self.total = Some(*total);
        }
        self.follow_root(event);
        self.table.apply(event);
        self.dirty = true;
    }

    fn tick(&mut self) {
        if self.finished {
            return;
        }
        let running = self
            .table
            .rows()
            .any(|(_, r)| !matches!(r.phase, Phase::Done(_)));
        let logs = self.logs.is_some_and(LogHold::pending);
        if self.dirty || logs || (running && self.drawn > 0) {
            self.draw();
        }
    }

    fn pause(&mut self) {
        let mut buf = String::new();
        self.erase_into(&mut buf);
        self.held_logs_into(&mut buf, false);
        if self.cursor_hidden {
            buf.push_str(SHOW_CURSOR);
            self.cursor_hidden = false;
        }
        self.drawn = 0;
        self.write(&buf);
    }

    fn resume(&mut self) {
        self.dirty = true;
    }

    fn finish(&mut self, session: &SessionId, result: Option<&QueryResult>, error: Option<&str>) {
        let mut buf = String::new();
        self.erase_into(&mut buf);
        self.held_logs_into(&mut buf, true);
        self.drawn = 0;
        for line in self.summary(session, result, error) {
            buf.push_str(&line);
            buf.push_str("\r\n");
        }
        buf.push_str(SHOW_CURSOR);
        self.cursor_hidden = false;
        self.finished = true;
        self.write(&buf);
    }
}

impl<W: Write> Drop for TreeRenderer<W> {
    fn drop(&mut self) {
        let mut buf = String::new();
        self.held_logs_into(&mut buf, true);
        if self.cursor_hidden {
            buf.push_str(SHOW_CURSOR);
        }
        if !buf.is_empty() {
            let _ = self.out.write_all(buf.as_bytes());
            let _ = self.out.flush();
        }
    }
}

/// How an agent's type name looks: its type's colour, else bold.
fn name_style(row: &AgentRow, colours: &BTreeMap<String, Style>) -> Style {
    colours.get(&row.agent_type).copied().unwrap_or(Style::Bold)
}

/// One agent's line in the live tree.
fn agent_line(id: &str, row: &AgentRow, now: Duration, colours: &BTreeMap<String, Style>) -> Line {
    let depth = id.matches('.').count();
    let mut line: Line = vec![(Style::Plain, "  ".repeat(depth))];
    let (glyph, status, style) = look(&row.phase, false);
    line.push((style, format!("{glyph} ")));
    line.push((name_style(row, colours), row.agent_type.clone()));
    if row.background {
        line.push((Style::Plain, " [bg]".to_owned()));
    }
    line.push((Style::Plain, "  ".to_owned()));
    line.push((style, status));
    if let Some(tool) = &row.tool {
        line.push((Style::Plain, " ".to_owned()));
        line.push((Style::Bold, flat(tool)));
    }
    let time = if row.phase == Phase::Queued {
        String::new()
    } else {
        format!(" · {}", elapsed_text(elapsed(row, now)))
    };
    line.push((
        Style::Plain,
        format!(
            " · {} · {}{time}",
            count(u64::from(row.turns), "turn"),
            tokens_text(row.tokens)
        ),
    ));
    if !row.description.is_empty() {
        line.push((Style::Plain, "  ".to_owned()));
        line.push((Style::Plain, flat(&row.description)));
    }
    if matches!(row.phase, Phase::Done(_)) {
        // A finished agent: one dim line.
        for piece in &mut line {
            piece.0 = Style::Dim;
        }
    }
    line
}

/// One subagent's line in the summary; `stopped`: the run ended without a
/// result, so agents that had not ended were stopped with it.
fn summary_line(
    id: &str,
    row: &AgentRow,
    now: Duration,
    stopped: bool,
    colours: &BTreeMap<String, Style>,
) -> Line {
    let depth = id.matches('.').count().saturating_sub(1);
    let (glyph, status, style) = look(&row.phase, stopped);
    let mut line: Line = vec![
        (Style::Plain, "  ".repeat(depth)),
        (style, format!("{glyph} ")),
        (name_style(row, colours), row.agent_type.clone()),
    ];
    if row.background {
        line.push((Style::Plain, " [bg]".to_owned()));
    }
    if !row.description.is_empty() {
        line.push((Style::Plain, format!("  {}", flat(&row.description))));
    }
    line.push((Style::Plain, "  ".to_owned()));
    line.push((style, status));
    line.push((
        Style::Plain,
        format!(
            " · {} · {} · {}",
            count(u64::from(row.turns), "turn"),
            tokens_text(row.tokens),
            elapsed_text(elapsed(row, now))
        ),
    ));
    line
}

/// An agent's glyph, status word and style; `stopped`: the run ended
/// without a result, so an agent that had not ended was stopped.
fn look(phase: &Phase, stopped: bool) -> (&'static str, String, Style) {
    match phase {
        Phase::Queued | Phase::Running if stopped => ("✗", "stopped".to_owned(), Style::Yellow),
        Phase::Queued => ("·", "queued".to_owned(), Style::Yellow),
        Phase::Running => ("▸", "running".to_owned(), Style::Cyan),
        Phase::Done(s) => (done_glyph(*s), s.as_str().to_owned(), status_style(*s)),
    }
}

fn done_glyph(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Completed | TaskStatus::Background => "✓",
        _ => "✗",
    }
}

fn status_style(status: TaskStatus) -> Style {
    match status {
        TaskStatus::Completed | TaskStatus::Background => Style::Green,
        TaskStatus::MaxTurns | TaskStatus::BudgetExhausted | TaskStatus::Cancelled => Style::Yellow,
        _ => Style::Red,
    }
}

/// How long `row` has run (queued time included), until it ended or `now`.
fn elapsed(row: &AgentRow, now: Duration) -> Duration {
    row.ended.unwrap_or(now).saturating_sub(row.started)
}

/// `1.2s`, `12.0s`, `3m05s`.
fn elapsed_text(d: Duration) -> String {
    let tenths = d.as_millis() / 100;
    if tenths < 600 {
        format!("{}.{}s", tenths / 10, tenths % 10)
    } else {
        let secs = d.as_secs();
        format!("{}m{:02}s", secs / 60, secs % 60)
    }
}

/// `340 tok`, `12.3k tok`, `1.2M tok`.
fn tokens_text(n: u64) -> String {
    if n < 1000 {
        format!("{n} tok")
    } else if n < 1_000_000 {
        format!("{}.{}k tok", n / 1000, n % 1000 / 100)
    } else {
        format!("{}.{}M tok", n / 1_000_000, n % 1_000_000 / 100_000)
    }
}

/// `1 turn`, `2 turns`.
fn count(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Appends `text` to `buf`, keeping its last [`TEXT_TAIL`] characters.
fn push_tail(buf: &mut String, text: &str) {
    buf.push_str(text);
    let chars = buf.chars().count();
    if chars > TEXT_TAIL {
        *buf = buf.chars().skip(chars - TEXT_TAIL).collect();
    }
}

/// The end of `text` that fits in `room` cells, after `…` if cut.
fn tail_to_width(text: &str, room: usize) -> String {
    if width_of(text) <= room {
        return text.to_owned();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1; // the `…`
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        kept.push(c);
    }
    let mut out = String::from("…");
    out.extend(kept.iter().rev());
    out
}

fn width_of(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `line` as terminal text: at most `width - 1` cells (cut with `…`),
/// with colours if `color`.
fn paint(line: &Line, width: usize, color: bool) -> String {
    let room = width.saturating_sub(1).max(1);
    let total: usize = line.iter().map(|(_, t)| width_of(t)).sum();
    let cut = total > room;
    // Cells for text: one is kept for the `…` when the line is cut.
    let mut left = if cut { room - 1 } else { room };
    let mut out = String::new();
    for (style, text) in line {
        if left == 0 {
            break;
        }
        let mut piece = String::new();
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            if w > left {
                left = 0;
                break;
            }
            left -= w;
            piece.push(c);
        }
        if piece.is_empty() {
            continue;
        }
        if color && *style != Style::Plain {
            out.push_str(style.sgr());
            out.push_str(&piece);
            out.push_str("\x1b[0m");
        } else {
            out.push_str(&piece);
        }
    }
    if cut {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;
