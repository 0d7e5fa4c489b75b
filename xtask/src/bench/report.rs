//! The table `cargo xtask bench` ends with: one row per target of issue 18,
//! with the figure measured in this run, the limit, and which measure
//! decided (wall time, CPU time, instruction counts or heap bytes), as
//! Markdown that goes into BENCHMARKS.md as it is printed.

use std::fmt::Write as _;

/// One target's row.
#[derive(Debug)]
struct Row {
    target: String,
    measured: String,
    /// `Some(true)` met, `Some(false)` missed, `None` reported only.
    met: Option<bool>,
    /// What decided: `wall`, `cpu`, `instructions`, `heap`, `rss`,
    /// `bytes`, `tokens`.
    by: &'static str,
}

/// The rows, in the order the run measured them.
#[derive(Debug, Default)]
pub(crate) struct Report {
    rows: Vec<Row>,
}

impl Report {
    /// A row whose figure `value` must be at most `limit`.
    pub(crate) fn at_most(
        &mut self,
        target: impl Into<String>,
        measured: String,
        value: f64,
        limit: f64,
        by: &'static str,
    ) {
        self.rows.push(Row {
            target: target.into(),
            measured,
            met: Some(value <= limit),
            by,
        });
    }

    /// A row whose figure `value` must be at least `limit`.
    pub(crate) fn at_least(
        &mut self,
        target: impl Into<String>,
        measured: String,
        value: f64,
        limit: f64,
        by: &'static str,
    ) {
        self.rows.push(Row {
            target: target.into(),
            measured,
            met: Some(value >= limit),
            by,
        });
    }

    /// A row that only reports (a second measure of a target decided by
    /// another row).
    pub(crate) fn note(&mut self, target: impl Into<String>, measured: String, by: &'static str) {
        self.rows.push(Row {
            target: target.into(),
            measured,
            met: None,
            by,
        });
    }

    /// The Markdown table.
    pub(crate) fn markdown(&self) -> String {
        let mut out = String::from("| target | measured | by | result |\n|---|---|---|---|\n");
        for row in &self.rows {
            let result = match row.met {
                Some(true) => "**met**",
                Some(false) => "**missed**",
                None => "(reported)",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {result} |",
                row.target, row.measured, row.by
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Report;

    #[test]
    fn rows_say_met_missed_or_reported_in_run_order() {
        let mut report = Report::default();
        report.at_most("a ≤ 2", "1.5".to_owned(), 1.5, 2.0, "wall");
        report.at_least("b ≥ 2", "1.9x".to_owned(), 1.9, 2.0, "cpu");
        report.note("c", "7".to_owned(), "rss");
        assert_eq!(
            report.markdown(),
            "| target | measured | by | result |\n|---|---|---|---|\n\
             | a ≤ 2 | 1.5 | wall | **met** |\n\
             | b ≥ 2 | 1.9x | cpu | **missed** |\n\
             | c | 7 | rss | (reported) |\n"
        );
    }
}
