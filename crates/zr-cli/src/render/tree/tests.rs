//! The tree drawn into a buffer and read back through a terminal emulator.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use zr_engine::{Event, EventKind, QueryResult, TaskResult, TaskStatus};
use zr_types::{AgentId, SessionId, StopReason, Usage};

use super::{Renderer as _, TreeRenderer, paint, tail_to_width, tokens_text};

const ROOT: &str = "root";
const EXPLORE: &str = "root.0001-explore";
const WORKER: &str = "root.0002-worker";
const NESTED: &str = "root.0001-explore.0001-explore";

fn event(at_ms: u64, agent: &str, kind: EventKind) -> Event {
    let id: AgentId = agent.parse().unwrap();
    let agent_type = match agent.rsplit_once('-') {
        Some((_, t)) => t,
        None => "root",
    };
    Event {
        at: Duration::from_millis(at_ms),
        agent: id,
        agent_type: Arc::from(agent_type),
        kind,
    }
}

fn started(at: u64, agent: &str, description: &str, background: bool) -> Event {
    let parent = agent.rsplit_once('.').unwrap().0.parse().unwrap();
    event(
        at,
        agent,
        EventKind::SubagentStarted {
            parent,
            description: description.to_owned(),
            index: 0,
            background,
        },
    )
}

fn tool(at: u64, agent: &str, name: &str) -> Event {
    event(
        at,
        agent,
        EventKind::ToolCallStarted {
            call_id: "c1".to_owned(),
            tool: name.to_owned(),
            input: json!({}),
        },
    )
}

fn usage(at: u64, agent: &str, tokens: u64, total: u64) -> Event {
    let u = |n| Usage {
        input_tokens: n,
        ..Usage::default()
    };
    event(
        at,
        agent,
        EventKind::Usage {
            agent: u(tokens),
            total: u(total),
        },
    )
}

fn turn(at: u64, agent: &str, n: u32) -> Event {
    event(
        at,
        agent,
        EventKind::TurnFinished {
            turn: n,
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        },
    )
}

fn finished(at: u64, agent: &str, status: TaskStatus, turns: u32) -> Event {
    let result = TaskResult {
        index: 0,
        agent_id: Some(agent.parse().unwrap()),
        agent_type: "explore".to_owned(),
        description: String::new(),
        status,
        output: "out".to_owned(),
        value: None,
        turns,
        usage: Usage::default(),
        cost_usd: None,
        duration: Duration::from_millis(at),
        error: None,
        worktree: None,
    };
    event(
        at,
        agent,
        EventKind::SubagentFinished {
            result: Box::new(result),
        },
    )
}

fn text(at: u64, agent: &str, t: &str) -> Event {
    event(at, agent, EventKind::TextDelta { text: t.to_owned() })
}

/// A run in the middle: the root delegated to an explore agent (running a
/// tool, with a nested agent queued under it) and a background worker
/// that finished.
fn running_events() -> Vec<Event> {
    vec![
        turn(100, ROOT, 1),
        usage(100, ROOT, 120, 120),
        tool(110, ROOT, "MultiTask"),
        started(120, EXPLORE, "look at the files", false),
        event(130, EXPLORE, EventKind::SubagentRunning),
        started(140, WORKER, "crawl", true),
        event(150, WORKER, EventKind::SubagentRunning),
        turn(400, EXPLORE, 1),
        usage(400, EXPLORE, 1500, 1620),
        tool(410, EXPLORE, "Glob"),
        started(420, NESTED, "deeper", false),
        finished(900, WORKER, TaskStatus::Completed, 2),
        turn(2100, ROOT, 2),
    ]
}

fn screen(bytes: &[u8], rows: u16, cols: u16) -> vt100::Parser {
    let mut parser = vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 0);
    parser.process(bytes);
    parser
}

/// The screen's rows, trailing spaces and empty rows at the end removed.
fn rows(parser: &vt100::Parser) -> Vec<String> {
    let (_, cols) = parser.screen().size();
    let mut rows: Vec<String> = parser
        .screen()
        .rows(0, cols.get())
        .map(|r| r.trim_end().to_owned())
        .collect();
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows
}

fn drive(tree: &mut TreeRenderer<Vec<u8>>, events: &[Event]) {
    for e in events {
        tree.event(e);
        tree.tick();
    }
}

fn session() -> SessionId {
    SessionId::from_parts(0x0123_4567_89ab, 0xdead_beef)
}

#[test]
fn the_tree_shows_each_agent_under_its_parent() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 100, 20, false);
    drive(&mut tree, &running_events());
    let parser = screen(tree.out(), 20, 100);
    assert_eq!(
        rows(&parser),
        [
            "▸ root  running MultiTask · 2 turns · 120 tok · 2.0s",
            "  ▸ explore  running Glob · 1 turn · 1.5k tok · 1.9s  look at the files",
            "    · explore  queued · 0 turns · 0 tok  deeper",
            "  ✓ worker [bg]  completed · 2 turns · 0 tok · 0.7s  crawl",
        ]
    );
    assert!(parser.screen().hide_cursor(), "the cursor is hidden");
}

/// Three levels deep, each agent under its parent; siblings in start
/// order even past 9,999 (as text, `root.10000-x` would come first).
#[test]
fn grandchildren_stay_under_their_parent_and_siblings_keep_start_order() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 100, 20, false);
    let lead = "root.9999-lead";
    let sub = "root.9999-lead.10001-sub";
    drive(
        &mut tree,
        &[
            started(10, lead, "split", false),
            started(20, "root.10000-explore", "look", false),
            started(30, sub, "part", false),
            started(40, "root.9999-lead.10001-sub.10002-worker", "detail", false),
        ],
    );
    assert_eq!(
        rows(&screen(tree.out(), 20, 100)),
        [
            "  · lead  queued · 0 turns · 0 tok  split",
            "    · sub  queued · 0 turns · 0 tok  part",
            "      · worker  queued · 0 turns · 0 tok  detail",
            "  · explore  queued · 0 turns · 0 tok  look",
        ]
    );
}

#[test]
fn each_draw_replaces_the_last_one() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 100, 20, false);
    let events = running_events();
    drive(&mut tree, &events[..4]);
    let first = rows(&screen(tree.out(), 20, 100));
    assert_eq!(first.len(), 2, "{first:?}");
    drive(&mut tree, &events[4..]);
    let parser = screen(tree.out(), 20, 100);
    // Four lines: no copy of an earlier draw is left above them.
    assert_eq!(rows(&parser).len(), 4, "{:?}", rows(&parser));
    assert_eq!(parser.screen().cursor_position(), (4, 0));
}

#[test]
fn events_only_mark_the_tree_and_ticks_draw_it() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 100, 20, false);
    for e in &running_events() {
        tree.event(e);
    }
    assert!(tree.out().is_empty(), "nothing drawn before a tick");
    tree.tick();
    let once = tree.out().len();
    assert_eq!(rows(&screen(tree.out(), 20, 100)).len(), 4);
    // Agents run: each tick redraws (their times go on).
    tree.tick();
    assert!(tree.out().len() > once);
    // Nothing runs and nothing happened: no redraw.
    let mut idle = TreeRenderer::fixed(Vec::new(), 100, 20, false);
    idle.event(&finished(10, WORKER, TaskStatus::Completed, 1));
    idle.tick();
    let once = idle.out().len();
    idle.tick();
    assert_eq!(idle.out().len(), once);
}

#[test]
fn lines_are_cut_to_the_width_and_never_wrap() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 40, 20, false);
    drive(&mut tree, &running_events());
    let parser = screen(tree.out(), 20, 40);
    let rows = rows(&parser);
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(rows[1], "  ▸ explore  running Glob · 1 turn · 1…");
    for (i, row) in rows.iter().enumerate() {
        assert!(row.chars().count() <= 39, "row {i} too wide: {row:?}");
        assert!(!parser.screen().row_wrapped(u16::try_from(i).unwrap()));
    }
}

#[test]
fn wide_characters_count_twice() {
    let line = vec![(super::Style::Plain, "日本語のテキスト".to_owned())];
    assert_eq!(paint(&line, 8, false), "日本語…");
    assert_eq!(tail_to_width("日本語のテキスト", 7), "…キスト");
}

#[test]
fn too_many_agents_for_the_height_are_counted_not_drawn() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 80, 5, false);
    let mut events = vec![turn(10, ROOT, 1)];
    for i in 1..=6 {
        let id = format!("root.{i:04}-explore");
        events.push(started(20, &id, &format!("task {i}"), false));
        events.push(event(30, &id, EventKind::SubagentRunning));
    }
    events.push(finished(40, "root.0001-explore", TaskStatus::Completed, 1));
    drive(&mut tree, &events);
    let parser = screen(tree.out(), 5, 80);
    assert_eq!(
        rows(&parser),
        [
            "▸ root  running · 1 turn · 0 tok · 0.0s",
            "  ▸ explore  running · 0 turns · 0 tok · 0.0s  task 2",
            "  1 finished agent not shown",
            "  … 4 more agents",
        ]
    );
}

#[test]
fn the_roots_text_is_one_last_line_not_the_whole_answer() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 60, 20, false);
    drive(
        &mut tree,
        &[
            turn(10, ROOT, 1),
            text(20, ROOT, "First line of the answer.\nThe second line is "),
            text(30, ROOT, "exactly where the model writes now"),
        ],
    );
    assert_eq!(
        rows(&screen(tree.out(), 20, 60)),
        [
            "▸ root  running · 1 turn · 0 tok · 0.0s",
            "  answering: …nd line is exactly where the model writes now",
        ]
    );
    // A tool call ends the text.
    drive(&mut tree, &[tool(40, ROOT, "Read")]);
    assert_eq!(
        rows(&screen(tree.out(), 20, 60)),
        ["▸ root  running Read · 1 turn · 0 tok · 0.0s"]
    );
}

#[test]
fn finish_replaces_the_tree_with_a_summary() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 100, 20, false);
    let mut events = running_events();
    events.push(finished(2200, NESTED, TaskStatus::Completed, 1));
    events.push(finished(2300, EXPLORE, TaskStatus::MaxTurns, 3));
    events.push(usage(2400, ROOT, 300, 2000));
    drive(&mut tree, &events);
    let result = QueryResult {
        status: TaskStatus::Completed,
        output: "All done.".to_owned(),
        turns: 3,
        usage: Usage::default(),
        total_usage: Usage {
            input_tokens: 2000,
            output_tokens: 345,
            ..Usage::default()
        },
        cost_usd: Some(0.0),
        duration: Duration::from_millis(2500),
        failed_subagents: Vec::new(),
        value: None,
        budget_ended: None,
    };
    tree.finish(&session(), Some(&result), None);
    let parser = screen(tree.out(), 20, 100);
    assert_eq!(
        rows(&parser),
        [
            "✗ explore  look at the files  max_turns · 3 turns · 1.5k tok · 2.1s",
            "  ✓ explore  deeper  completed · 1 turn · 0 tok · 1.7s",
            "✓ worker [bg]  crawl  completed · 2 turns · 0 tok · 0.7s",
            "total completed · 4 agents · 9 turns · 2.3k tok · 2.5s",
            "session s-00123456789ab-deadbeef (zr resume s-00123456789ab-deadbeef)",
        ]
    );
    assert!(!parser.screen().hide_cursor(), "the cursor is shown again");
    // Ticks after the end draw nothing more.
    let len = tree.out().len();
    tree.tick();
    assert_eq!(tree.out().len(), len);
}

#[test]
fn an_interrupted_run_leaves_a_summary_and_the_cursor() {
    let mut tree = TreeRenderer::fixed(Vec::new(), 100, 20, false);
    drive(&mut tree, &running_events());
    tree.finish(&session(), None, Some("interrupted"));
    let parser = screen(tree.out(), 20, 100);
    assert_eq!(
        rows(&parser),
        [
            "✗ explore  look at the files  stopped · 1 turn · 1.5k tok · 1.9s",
            "  ✗ explore  deeper  stopped · 0 turns · 0 tok · 1.6s",
            "✓ worker [bg]  crawl  completed · 2 turns · 0 tok · 0.7s",
            "total error: interrupted · 4 agents · 5 turns · 1.6k tok · 2.1s",
        ]
    );
    assert!(!parser.screen().hide_cursor());
}

#[test]
fn dropping_the_renderer_shows_the_cursor() {
    let mut out = Vec::new();
    {
        let mut tree = TreeRenderer::fixed(&mut out, 80, 20, false);
        tree.event(&turn(10, ROOT, 1));
        tree.tick();
    }
    let parser = screen(&out, 20, 80);
    assert!(!parser.screen().hide_cursor());
}

#[test]
fn colours_only_when_asked_and_finished_agents_are_dim() {
    let events = running_events();
    let mut plain = TreeRenderer::fixed(Vec::new(), 100, 20, false);
    drive(&mut plain, &events);
    let mut color = TreeRenderer::fixed(Vec::new(), 100, 20, true);
    drive(&mut color, &events);
    assert!(!has_sgr(plain.out()), "no colours without colour");
    assert!(has_sgr(color.out()));
    let parser = screen(color.out(), 20, 100);
    let screen = parser.screen();
    // The running explore agent's status is coloured, the finished
    // worker's whole line dim.
    let status = screen.cell(1, 13).unwrap();
    assert_eq!(status.contents(), "r");
    assert_eq!(status.fgcolor(), vt100::Color::Idx(6));
    for col in [2, 4, 20, 40] {
        assert!(screen.cell(3, col).unwrap().dim(), "col {col}");
    }
    assert_eq!(rows(&parser), rows(&self::screen(plain.out(), 20, 100)));
}

/// Whether `bytes` hold a Select Graphic Rendition sequence (`ESC [ ... m`).
fn has_sgr(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.split("\x1b[").skip(1).any(|seq| {
        seq.chars()
            .find(|c| !(c.is_ascii_digit() || *c == ';' || *c == '?'))
            == Some('m')
    })
}

#[test]
fn tokens_read_short() {
    assert_eq!(tokens_text(999), "999 tok");
    assert_eq!(tokens_text(12_345), "12.3k tok");
    assert_eq!(tokens_text(2_500_000), "2.5M tok");
}

/// A log line written while the tree is up lands above the tree at the
/// next draw, and the tree stays whole below it (it is not drawn over).
#[test]
fn log_lines_are_written_above_the_tree() {
    static LOGS: crate::render::held_logs::LogHold = crate::render::held_logs::LogHold::new();
    let mut tree = TreeRenderer::fixed_holding(Vec::new(), 100, 20, &LOGS);
    drive(&mut tree, &running_events());
    assert!(
        LOGS.keep(b"WARN request failed\n"),
        "the tree holds the log"
    );
    assert!(LOGS.pending());
    tree.tick();
    assert!(!LOGS.pending(), "the draw wrote it");
    let drawn = rows(&screen(tree.out(), 20, 100));
    assert_eq!(drawn.len(), 5, "{drawn:#?}");
    assert_eq!(drawn[0], "WARN request failed");
    assert!(drawn[1].starts_with("▸ root  running"), "{drawn:#?}");
    // Held after the last draw: written before the summary, then the log
    // is no longer held.
    assert!(LOGS.keep(b"WARN second\n"));
    tree.finish(&session(), None, Some("interrupted"));
    assert!(!LOGS.keep(b"not held\n"), "finish ends the hold");
    let done = rows(&screen(tree.out(), 20, 100));
    assert_eq!(done[0], "WARN request failed");
    assert_eq!(done[1], "WARN second");
    assert!(
        done[2].contains("explore  look at the files  stopped"),
        "{done:#?}"
    );
    assert!(!done.iter().any(|r| r.starts_with("▸ root")), "{done:#?}");
}

#[test]
fn an_agent_types_colour_paints_its_name() {
    let colours = [("explore", "purple"), ("root", "no-such-colour")]
        .into_iter()
        .map(|(n, c)| (n.to_owned(), c.to_owned()))
        .collect();
    let mut tree = TreeRenderer::fixed(Vec::new(), 100, 20, true).with_colours(colours);
    drive(&mut tree, &running_events());
    let parser = screen(tree.out(), 20, 100);
    let screen = parser.screen();
    // Row 1 is "  ▸ explore ...": the name's cells are magenta (SGR 35).
    let cell = screen.cell(1, 4).expect("a cell");
    assert_eq!(cell.contents(), "e");
    assert_eq!(cell.fgcolor(), vt100::Color::Idx(5), "explore is purple");
    // A type without a colour zr knows (the root's, here none) keeps
    // the bold default.
    let cell = screen.cell(0, 2).expect("a cell");
    assert_eq!(cell.contents(), "r");
    assert_eq!(cell.fgcolor(), vt100::Color::Default);
    assert!(cell.bold());
}
