//! `Edit`: replaces exact text in a file, with whitespace- and
//! indentation-tolerant matching when the exact text is not there.

mod matching;

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use zr_types::{Access, BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::bound::cut_line;
use crate::ledger::{FileStamp, ReadLedger, check_fresh};
use crate::path::resolve;
use crate::state::{AgentKey, AgentStates};
use crate::toolkit::{Builtin, Hints};

use matching::{Strategy, find};

/// Lines of context shown around the first change.
const SNIPPET_CONTEXT: usize = 3;
/// Lines of the snippet at most.
const SNIPPET_MAX: usize = 40;

/// Input of `Edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditInput {
    /// The file to change; relative paths are resolved against the working directory.
    file_path: String,
    /// The exact text to replace (include enough surrounding lines to make it unique).
    old_string: String,
    /// The text to put in its place (must differ from old_string).
    new_string: String,
    /// Replace every occurrence instead of requiring a unique one (default false).
    #[serde(default)]
    replace_all: bool,
}

/// The `Edit` tool.
#[derive(Debug)]
pub(crate) struct EditTool {
    states: Arc<AgentStates<ReadLedger>>,
}

impl EditTool {
    pub(crate) fn new(states: Arc<AgentStates<ReadLedger>>) -> Self {
        Self { states }
    }
}

fn line_of(content: &str, byte: usize) -> usize {
    content[..byte].matches('\n').count() + 1
}

impl Builtin for EditTool {
    type Input = EditInput;
    const NAME: BuiltinName = BuiltinName::Edit;
    const HINTS: Hints = Hints::local_change(true, false);

    fn details(&self) -> String {
        "Replaces `old_string` with `new_string` in the file. You must have read the file with Read in this session. `old_string` must occur exactly once unless `replace_all` is true; copy it from Read's output without the line-number prefix. If the exact text is not found, a line-by-line match ignoring trailing whitespace, then indentation, then all whitespace differences is tried (new_string is re-indented to fit), and the result says which matched.".to_owned()
    }

    fn access(input: &Self::Input, cwd: &Path) -> Vec<Access> {
        vec![Access::Write(resolve(cwd, &input.file_path))]
    }

    fn run<'a>(
        &'a self,
        input: EditInput,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let path = resolve(&ctx.cwd, &input.file_path);
            let key = AgentKey::of(&ctx);
            if input.old_string.is_empty() {
                return Ok(ToolOutput::error(
                    "Edit: `old_string` is empty. To create a file or replace all of it, use Write.",
                ));
            }
            if input.old_string == input.new_string {
                return Ok(ToolOutput::error(
                    "Edit: `old_string` and `new_string` are the same; nothing would change.",
                ));
            }
            let meta = match tokio::fs::metadata(&path).await {
                Ok(m) if m.is_file() => m,
                Ok(_) => {
                    return Ok(ToolOutput::error(format!(
                        "Edit: {} is not a regular file.",
                        path.display()
                    )));
                }
                Err(_) => {
                    return Ok(ToolOutput::error(format!(
                        "Edit: {} does not exist. Use Write to create a file.",
                        path.display()
                    )));
                }
            };
            if let Err(msg) = check_fresh("Edit", &path, self.states.read_stamp(&key, &path), &meta)
            {
                return Ok(ToolOutput::error(msg));
            }
            let bytes = match tokio::fs::read(&path).await {
                Ok(b) => b,
                Err(e) => {
                    return Ok(ToolOutput::error(format!(
                        "Edit: cannot read {}: {e}",
                        path.display()
                    )));
                }
            };
            let Ok(content) = String::from_utf8(bytes) else {
                return Ok(ToolOutput::error(format!(
                    "Edit: {} is not UTF-8 text; Edit changes text files only.",
                    path.display()
                )));
            };
            let Some(found) = find(&content, &input.old_string, &input.new_string) else {
                return Ok(ToolOutput::error(format!(
                    "Edit: old_string was not found in {}, not even ignoring whitespace and indentation. Read the file again and copy the text exactly (without the line-number prefix).",
                    path.display()
                )));
            };
            if found.ranges.len() > 1 && !input.replace_all {
                let lines: Vec<String> = found
                    .ranges
                    .iter()
                    .take(10)
                    .map(|r| line_of(&content, r.start).to_string())
                    .collect();
                return Ok(ToolOutput::error(format!(
                    "Edit: old_string occurs {} times in {} (at lines {}). Include more surrounding lines to make it unique, or set replace_all to true to change every occurrence.",
                    found.ranges.len(),
                    path.display(),
                    lines.join(", ")
                )));
            }
            let mut updated = content.clone();
            for (range, text) in found.ranges.iter().zip(&found.replacements).rev() {
                updated.replace_range(range.clone(), text);
            }
            if let Err(e) = tokio::fs::write(&path, updated.as_bytes()).await {
                return Ok(ToolOutput::error(format!(
                    "Edit: cannot write {}: {e}",
                    path.display()
                )));
            }
            if let Ok(meta) = tokio::fs::metadata(&path).await {
                self.states.record_read(&key, &path, FileStamp::of(&meta));
            }
            let first = found.ranges.first().map_or(0, |r| r.start);
            let first_text = found.replacements.first().map_or("", String::as_str);
            let count = found.ranges.len();
            let mut text = format!(
                "Edited {}: replaced {count} occurrence{} ({}).",
                path.display(),
                if count == 1 { "" } else { "s" },
                found.describe()
            );
            if found.strategy != Strategy::Exact || found.prefixes_removed {
                tracing::debug!(path = %path.display(), strategy = ?found.strategy, "tolerant edit match");
            }
            text.push_str(&snippet(&updated, first, first_text));
            Ok(ToolOutput::text(text))
        })
    }
}

/// Numbered lines around the replaced text starting at byte `start` of
/// `updated`.
fn snippet(updated: &str, start: usize, replacement: &str) -> String {
    let first_line = line_of(updated, start);
    let span = replacement.matches('\n').count() + 1;
    let from = first_line.saturating_sub(SNIPPET_CONTEXT).max(1);
    let to = first_line + span + SNIPPET_CONTEXT;
    let mut out = String::from("\nThe file now reads, around the change:\n");
    for (i, line) in updated
        .lines()
        .enumerate()
        .skip(from - 1)
        .take((to - from).min(SNIPPET_MAX))
    {
        let _ = writeln!(out, "{:>6}\t{}", i + 1, cut_line(line, 300));
    }
    out
}
