//! The inspecting commands `zr agents`, `zr skills` and `zr mcp list`, and
//! what they share: aligned tables, paths shown relative to the project,
//! diagnostics and JSON.

pub(crate) mod agents;
pub(crate) mod mcp;
pub(crate) mod skills;

use std::path::Path;

use serde_json::{Value, json};
use zr_skills::Diagnostic;

use crate::project::Project;

/// `path` relative to the project folder when under it (with `/`
/// separators), else as it is.
pub(crate) fn shown_path(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.display().to_string(),
    }
}

/// `path` as the inspecting commands show it: relative to the project
/// folder when under it, else `~/...` when under the home folder, else as
/// it is.
pub(crate) fn shown(project: &Project, path: &Path) -> String {
    if path.starts_with(&project.root) {
        return shown_path(path, &project.root);
    }
    match &project.home {
        Some(home) if path.starts_with(home) => format!("~/{}", shown_path(path, home)),
        _ => path.display().to_string(),
    }
}

/// The first line of `text`, at most `max` characters (cut ones end in
/// `...`).
pub(crate) fn summary(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() <= max && !text.trim().contains('\n') {
        return line.to_owned();
    }
    let cut: String = line.chars().take(max.saturating_sub(3)).collect();
    format!("{}...", cut.trim_end())
}

/// Rows under a header, each column padded to its widest cell (the last
/// column is not padded), two spaces apart.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            if i + 1 < row.len() {
                let pad = widths[i].saturating_sub(cell.chars().count());
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Pretty JSON and a final newline (the JSON of every command but
/// `--json`'s NDJSON).
pub(crate) fn json_text(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// A diagnostic as JSON: file (relative to the project), line, severity
/// and what to fix.
pub(crate) fn diagnostic_json(d: &Diagnostic, project: &Project) -> Value {
    json!({
        "path": shown(project, &d.path),
        "line": d.line,
        "severity": d.severity.to_string(),
        "message": d.message_in(&project.root, project.home.as_deref()).to_string(),
    })
}

/// Prints `diagnostics` on standard error, one `PATH:LINE: severity: what
/// to fix` line each.
pub(crate) fn print_diagnostics<'a>(
    project: &Project,
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
) {
    for d in diagnostics {
        eprintln!("{}", diagnostic_line(project, d));
    }
}

/// A diagnostic as every command prints it: `warning: PATH:LINE: what to
/// fix`, with `(the file is left out)` when the file did not load.
pub(crate) fn diagnostic_line(project: &Project, d: &Diagnostic) -> String {
    let text = d
        .display_in(&project.root, project.home.as_deref())
        .to_string();
    let (marker, note) = match d.severity {
        zr_skills::Severity::Error => (": error: ", " (the file is left out)"),
        _ => (": warning: ", ""),
    };
    let text = text.replacen(marker, ": ", 1);
    format!("warning: {text}{note}")
}

/// The diagnostics of files named `name` (`name.md` or a `name` folder)
/// that did not load: why `show NAME` finds nothing.
pub(crate) fn broken<'a>(
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
    name: &str,
) -> Vec<&'a Diagnostic> {
    diagnostics
        .into_iter()
        .filter(|d| d.severity == zr_skills::Severity::Error)
        .filter(|d| {
            let stem = d.path.file_stem().and_then(|s| s.to_str());
            let folder = d
                .path
                .parent()
                .and_then(|p| p.file_name())
                .and_then(|s| s.to_str());
            stem == Some(name) || (stem == Some("SKILL") && folder == Some(name))
        })
        .collect()
}

/// The error of `show NAME` when no `what` (`agent type`, `skill`) of
/// that name loaded: its file is broken (the diagnostics say why), or
/// there is none (`new_file`: where to add one). `loaded`: the names that
/// did load.
pub(crate) fn not_found<'a>(
    project: &Project,
    what: &str,
    name: &str,
    loaded: &[String],
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
    new_file: &str,
) -> crate::error::CliError {
    let names = if loaded.is_empty() {
        "none".to_owned()
    } else {
        loaded.join(", ")
    };
    let broken = broken(diagnostics, name);
    if broken.is_empty() {
        return crate::error::CliError::usage(
            format!("no {what} '{name}'"),
            format!("{what}s: {names}; add one as {new_file}"),
        );
    }
    let lines: Vec<String> = broken
        .iter()
        .map(|d| format!("  {}", d.display_in(&project.root, project.home.as_deref())))
        .collect();
    crate::error::CliError::usage(
        format!(
            "{what} '{name}' did not load, its file is broken:\n{}",
            lines.join("\n")
        ),
        format!("fix the file as the lines above say; loaded {what}s: {names}"),
    )
}

#[cfg(test)]
mod tests;
