//! The project's instruction files (`CLAUDE.md`, `AGENTS.md`,
//! `CLAUDE.local.md` and their imports, read by zr-skills'
//! `InstructionRegistry`) as `zr` shows them: the warnings of a run about
//! imports left out, and the list `zr resolve` and `zr agents show` print.
//!
//! Every agent gets the same files: they end the root's and every typed
//! subagent's system prompt, and a fork keeps its parent's.

use serde_json::{Value, json};
use zr_skills::{InstructionKind, InstructionsView, Skipped};

use crate::project::Project;

/// Where the text goes, as `zr resolve` says it.
const WHERE: &str =
    "they end the system prompt of the root and of every typed subagent; a fork keeps its parent's";

/// One `warning:` text per file left out that people should hear of (an
/// `@mention` that names no file is not one).
pub(crate) fn warnings(project: &Project) -> Vec<String> {
    let view = &project.instructions_view;
    view.skipped()
        .iter()
        .filter(|s| s.is_warning())
        .map(|s| {
            format!(
                "warning: {}: {} is left out of the instructions: {}\n  help: {}",
                place(view, s),
                what(s),
                s.reason,
                help(s)
            )
        })
        .collect()
}

/// `CLAUDE.md:4`, or the file itself for a top-level file.
fn place(view: &InstructionsView, skipped: &Skipped) -> String {
    match &skipped.by {
        Some((by, line)) => format!("{}:{line}", view.shown(by)),
        None => skipped.written.clone(),
    }
}

fn what(skipped: &Skipped) -> String {
    match &skipped.by {
        Some(_) => format!("the import @{}", skipped.written),
        None => "the file".to_owned(),
    }
}

fn help(skipped: &Skipped) -> &'static str {
    match skipped.reason {
        zr_skills::SkipReason::Outside => {
            "move the file into the repository or ~/.claude, or copy what the agents need into an instruction file"
        }
        zr_skills::SkipReason::TooDeep => "import the file from a file nearer the top",
        _ => "make it a UTF-8 text file of at most 1 MiB, or remove the import",
    }
}

/// `user`, `project`, `local`, `imported by CLAUDE.md:3`.
fn kind(view: &InstructionsView, kind: &InstructionKind) -> String {
    match kind {
        InstructionKind::User => "user".to_owned(),
        InstructionKind::Local => "local".to_owned(),
        InstructionKind::Import { by, line } => format!("imported by {}:{line}", view.shown(by)),
        _ => "project".to_owned(),
    }
}

/// The list `zr resolve` prints after the pools.
pub(crate) fn table(project: &Project) -> String {
    let view = &project.instructions_view;
    if view.files().is_empty() && view.skipped().is_empty() {
        return "instructions: none (no CLAUDE.md, AGENTS.md or CLAUDE.local.md)\n".to_owned();
    }
    let mut out = format!("instructions ({WHERE}):\n");
    for file in view.files() {
        out.push_str(&format!(
            "  {} ({}, {} bytes)\n",
            view.shown(&file.path),
            kind(view, &file.kind),
            file.text.len()
        ));
    }
    for skipped in view.skipped() {
        out.push_str(&format!(
            "  left out: {} ({}): {}\n",
            what(skipped),
            place(view, skipped),
            skipped.reason
        ));
    }
    out
}

/// One line for `zr agents show`: the files, with their sizes.
pub(crate) fn line(project: &Project) -> String {
    let view = &project.instructions_view;
    if view.files().is_empty() {
        return "instructions: none\n".to_owned();
    }
    let files: Vec<String> = view
        .files()
        .iter()
        .map(|f| format!("{} ({} bytes)", view.shown(&f.path), f.text.len()))
        .collect();
    format!(
        "instructions: {} (every agent gets them)\n",
        files.join(", ")
    )
}

/// The same as JSON.
pub(crate) fn json(project: &Project) -> Value {
    let view = &project.instructions_view;
    json!({
        "files": view.files().iter().map(|f| json!({
            "path": view.shown(&f.path),
            "kind": kind(view, &f.kind),
            "bytes": f.text.len(),
        })).collect::<Vec<_>>(),
        "left_out": view.skipped().iter().map(|s| json!({
            "import": s.by.as_ref().map(|_| s.written.clone()),
            "at": place(view, s),
            "reason": s.reason.to_string(),
        })).collect::<Vec<_>>(),
    })
}
