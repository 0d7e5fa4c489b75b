//! `zr sessions show SESSION --html FILE`: one self-contained page (no
//! script, no network, no external font or style) with a timeline of the
//! session's agents — a row each in tree order, labelled by the last
//! segment of its id and indented by its depth (a nested agent's row
//! under its parent's): a grey bar while it waited for a slot of its
//! parent's call, then a bar coloured by its status while it ran, so
//! parallel agents read as stacked bars that overlap and a child's bar
//! lies within its parent's — and the agent tree with each agent's
//! figures, tool calls and conclusion.
//!
//! The colours are fixed (see [`Colour`]) and the bars are drawn with
//! crisp edges, so that a screenshot of the page can be checked by its
//! pixels (the CLI's tests do so in headless Chromium).

use std::fmt::Write as _;

use super::units::{format_cost, format_ms, format_started};
use super::view::{AgentView, SessionView, Timing, agent_cost};

/// The bar colours, by what they show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Colour {
    /// Waiting for a slot of the parent's call.
    Queued,
    Completed,
    Failed,
    /// Stopped by a limit: `max_turns`, `timed_out`, `budget_exhausted`.
    Limited,
    /// Cut short: interrupted, cancelled, killed.
    Cut,
    /// A live `zr` process runs it now.
    Running,
}

impl Colour {
    /// Its CSS value.
    pub(crate) fn css(self) -> &'static str {
        match self {
            Self::Queued => "#c4c9d2",
            Self::Completed => "#2e9e5b",
            Self::Failed => "#d43f3f",
            Self::Limited => "#e3901c",
            Self::Cut => "#7a7f8a",
            Self::Running => "#2f73d8",
        }
    }

    fn of_status(status: &str) -> Self {
        match status {
            "completed" => Self::Completed,
            "failed" | "error" => Self::Failed,
            "max_turns" | "timed_out" | "budget_exhausted" => Self::Limited,
            "running" => Self::Running,
            _ => Self::Cut,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Queued => "waiting for a slot",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Limited => "stopped by a limit",
            Self::Cut => "cut short",
            Self::Running => "running",
        }
    }
}

/// Row height and bar height of the timeline, in CSS pixels.
const ROW: u64 = 28;
const BAR: u64 = 18;
/// Where the bars begin (the labels are left of it) and how wide the
/// time axis is.
const LABELS: u64 = 300;
const AXIS: u64 = 860;
/// The narrowest bar drawn, so that an agent of a millisecond shows.
const MIN_BAR: u64 = 3;
/// How far a label moves right per level of nesting.
const INDENT: u64 = 14;

/// An agent's label on the timeline: the last segment of its id
/// (`0005-worker` for `root.0001-lead.0004-reviewer.0005-worker`), as a
/// file tree names a file, not its path: the indent shows the parent,
/// and a whole id three levels deep would run into the bars. The whole
/// id is the label's tooltip and the table's first column.
fn label(id: &str) -> &str {
    id.rsplit_once('.').map_or(id, |(_, last)| last)
}

/// The page of `view`.
pub(crate) fn page(view: &SessionView) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let title = format!("zr session {}", view.id);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    let _ = writeln!(out, "<h1>{}</h1>", escape(&title));
    summary(&mut out, view);
    legend(&mut out);
    timeline(&mut out, view);
    tree(&mut out, view);
    out.push_str("</body>\n</html>\n");
    out
}

const STYLE: &str = "body{font:14px/1.4 sans-serif;margin:24px;color:#1d2129;background:#fff}\
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:24px 0 8px}\
.summary{margin:0 0 12px}.legend span{display:inline-block;margin-right:16px}\
.legend i{display:inline-block;width:10px;height:10px;margin-right:6px;vertical-align:middle}\
svg text{font:12px sans-serif;fill:#1d2129}svg .axis{fill:#5c6370}\
table{border-collapse:collapse}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #e3e5e8;vertical-align:top}\
td.num{text-align:right}details{margin:6px 0}summary{cursor:pointer}pre{white-space:pre-wrap;margin:4px 0 8px 16px}";

fn summary(out: &mut String, view: &SessionView) {
    let prompt = view
        .root()
        .and_then(|r| r.first_prompt.as_deref())
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<p class=\"summary\"><b>{}</b> · started {} UTC · {} agents · {} tokens · cost {} (estimate)<br>Prompt: {}</p>",
        escape(&view.status()),
        format_started(Some(view.origin())),
        view.agents.len(),
        view.usage().total(),
        format_cost(view.cost()),
        escape(prompt.lines().next().unwrap_or_default()),
    );
}

fn legend(out: &mut String) {
    out.push_str("<p class=\"legend\">");
    for colour in [
        Colour::Queued,
        Colour::Completed,
        Colour::Failed,
        Colour::Limited,
        Colour::Cut,
        Colour::Running,
    ] {
        let _ = write!(
            out,
            "<span><i style=\"background:{}\"></i>{}</span>",
            colour.css(),
            colour.label()
        );
    }
    out.push_str("</p>\n");
}

/// Tick spacing for a span of `total` milliseconds: about 8 ticks at a
/// round step.
fn tick_step(total: u64) -> u64 {
    let rough = (total / 8).max(1);
    let mut step = 1;
    while step * 10 <= rough {
        step *= 10;
    }
    [1, 2, 5, 10]
        .into_iter()
        .map(|m| step * m)
        .find(|&s| s >= rough)
        .unwrap_or(step * 10)
}

fn timeline(out: &mut String, view: &SessionView) {
    let origin = view.origin();
    let rows = view.tree();
    let end = rows
        .iter()
        .filter_map(|(_, a)| view.timing(&a.file))
        .map(|t| t.end_ms)
        .max()
        .unwrap_or(origin);
    let total = end.saturating_sub(origin).max(1);
    let x = |ms: u64| LABELS + ms.saturating_sub(origin).min(total) * AXIS / total;
    let height = ROW * rows.len() as u64 + 30;
    let _ = writeln!(
        out,
        "<h2>Timeline</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" role=\"img\" aria-label=\"timeline of the agents\">",
        LABELS + AXIS + 40
    );
    let step = tick_step(total);
    let mut tick = 0;
    while tick <= total {
        let at = LABELS + tick * AXIS / total;
        let _ = writeln!(
            out,
            "<line x1=\"{at}\" y1=\"0\" x2=\"{at}\" y2=\"{}\" stroke=\"#eceef1\" shape-rendering=\"crispEdges\"/><text class=\"axis\" x=\"{at}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            height - 20,
            height - 6,
            escape(&format_ms(tick))
        );
        tick += step;
    }
    for (row, &(depth, agent)) in rows.iter().enumerate() {
        let top = ROW * row as u64;
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\"{}><title>{}</title>{}</text>",
            4 + INDENT * depth as u64,
            top + ROW / 2 + 4,
            colour_of(agent).map_or_else(String::new, |c| format!(" fill=\"{c}\"")),
            escape(&agent.id),
            escape(label(&agent.id))
        );
        let Some(timing) = view.timing(&agent.file) else {
            continue;
        };
        let bar_top = top + (ROW - BAR) / 2;
        if let Some(queued) = timing.queued_ms.filter(|&q| q < timing.start_ms) {
            rect(
                out,
                x(queued),
                x(timing.start_ms),
                bar_top,
                Colour::Queued,
                agent,
                "waited",
            );
        }
        let colour = Colour::of_status(&view.agent_status(&agent.file));
        let (from, to) = (x(timing.start_ms), x(timing.end_ms));
        rect(
            out,
            from,
            to.max(from + MIN_BAR),
            bar_top,
            colour,
            agent,
            "ran",
        );
    }
    out.push_str("</svg>\n");
}

fn rect(
    out: &mut String,
    from: u64,
    to: u64,
    top: u64,
    colour: Colour,
    agent: &AgentView,
    what: &str,
) {
    let _ = writeln!(
        out,
        "<rect x=\"{from}\" y=\"{top}\" width=\"{}\" height=\"{BAR}\" fill=\"{}\" shape-rendering=\"crispEdges\"><title>{} {what}</title></rect>",
        to.saturating_sub(from).max(1),
        colour.css(),
        escape(&agent.id)
    );
}

fn tree(out: &mut String, view: &SessionView) {
    let origin = view.origin();
    out.push_str("<h2>Agents</h2>\n<table>\n<tr><th>Agent</th><th>Type</th><th>Status</th><th>Turns</th><th>Tokens</th><th>Cost</th><th>Start</th><th>Waited</th><th>Ran</th><th>Tools</th></tr>\n");
    let rows = view.tree();
    for &(depth, agent) in &rows {
        let file = &agent.file;
        let timing = view.timing(file);
        let dash = || "-".to_owned();
        let _ = writeln!(
            out,
            "<tr><td style=\"padding-left:{}px\">{}</td><td{}>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            10 + 16 * depth,
            escape(&agent.id),
            colour_of(agent).map_or_else(String::new, |c| format!(" style=\"color:{c}\"")),
            escape(file.agent_type.as_deref().unwrap_or("-")),
            escape(&view.agent_status(file)),
            file.turns,
            file.usage.total(),
            format_cost(agent_cost(file)),
            timing.map_or_else(dash, |t| format!(
                "+{}",
                format_ms(t.start_ms.saturating_sub(origin))
            )),
            timing
                .and_then(Timing::waited_ms)
                .map_or_else(dash, format_ms),
            timing.map_or_else(dash, |t| format_ms(t.ran_ms())),
            escape(&agent.tool_summary()),
        );
    }
    out.push_str("</table>\n<h2>Conclusions</h2>\n");
    for &(_, agent) in &rows {
        let conclusion = agent.file.output.as_deref().unwrap_or("(none)");
        let _ = writeln!(
            out,
            "<details><summary>{}</summary><pre>{}</pre></details>",
            escape(&agent.id),
            escape(conclusion)
        );
    }
}

/// The CSS colour of `agent`'s type (its file's `color`, as its
/// transcript's header recorded it), if it has one zr knows.
fn colour_of(agent: &AgentView) -> Option<&'static str> {
    agent
        .file
        .colour
        .as_deref()
        .and_then(crate::render::agent_colour::css)
}

/// `text` safe inside HTML text and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{escape, label, tick_step};

    #[test]
    fn a_label_is_the_last_segment_of_the_id() {
        assert_eq!(label("root"), "root");
        assert_eq!(label("root.0001-lead"), "0001-lead");
        assert_eq!(
            label("root.0001-lead.0004-reviewer.0005-worker"),
            "0005-worker"
        );
    }

    #[test]
    fn text_is_escaped_for_html() {
        assert_eq!(
            escape("<b a=\"1\">Tom & 'Jerry'</b>"),
            "&lt;b a=&quot;1&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/b&gt;"
        );
    }

    #[test]
    fn ticks_are_round_and_about_eight() {
        assert_eq!(tick_step(1_000), 200);
        assert_eq!(tick_step(60_000), 10_000);
        assert_eq!(tick_step(7), 1);
        assert_eq!(tick_step(1), 1);
    }
}
