//! `Grep`: searches file contents with ripgrep's library crates; output
//! modes content, files_with_matches and count; bounded.

mod sink;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use zr_types::{Access, BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::bound::cut_text;
use crate::path::resolve;
use crate::toolkit::{Builtin, Hints, blocking};
use crate::walk::{mtime, walker};

use sink::Collect;

/// Entries (lines, files or counts) returned when `head_limit` is not given.
pub(crate) const DEFAULT_HEAD_LIMIT: usize = 500;
/// Bytes of output at most.
pub(crate) const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Characters kept of one matching line.
const MAX_LINE_CHARS: usize = 500;

/// What `Grep` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OutputMode {
    /// Matching lines as `path:line:text` (context lines as `path-line-text`).
    Content,
    /// Paths of files with a match, most recently modified first.
    #[default]
    FilesWithMatches,
    /// `path:count` of matching lines per file.
    Count,
}

/// Input of `Grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepInput {
    /// The regular expression (Rust regex syntax, like ripgrep).
    pattern: String,
    /// File or directory to search (default: the working directory).
    path: Option<String>,
    /// Only search files matching this glob, e.g. `*.rs` or `*.{ts,tsx}`.
    glob: Option<String>,
    /// Only search files of this type, e.g. `rust`, `py`, `js` (ripgrep's type names).
    #[serde(rename = "type")]
    file_type: Option<String>,
    /// `content`, `files_with_matches` (default) or `count`.
    output_mode: Option<OutputMode>,
    /// Case-insensitive search.
    #[serde(rename = "-i")]
    case_insensitive: Option<bool>,
    /// Show line numbers in content mode (default true).
    #[serde(rename = "-n")]
    line_numbers: Option<bool>,
    /// Lines of context after each match (content mode).
    #[serde(rename = "-A")]
    after: Option<usize>,
    /// Lines of context before each match (content mode).
    #[serde(rename = "-B")]
    before: Option<usize>,
    /// Lines of context before and after each match (content mode).
    #[serde(rename = "-C")]
    context: Option<usize>,
    /// Let the pattern span lines (`.` also matches newlines).
    multiline: Option<bool>,
    /// Return at most this many lines, files or counts (default 500).
    #[schemars(range(min = 1))]
    head_limit: Option<usize>,
}

/// The `Grep` tool.
#[derive(Debug)]
pub(crate) struct GrepTool;

impl Builtin for GrepTool {
    type Input = GrepInput;
    const NAME: BuiltinName = BuiltinName::Grep;
    const HINTS: Hints = Hints::LOCAL;

    fn details(&self) -> String {
        format!(
            "Built on ripgrep: Rust regex syntax, .gitignore honoured, binary files skipped. output_mode `files_with_matches` (default; newest first), `content` (`path:line:text`, with -A/-B/-C context and -n line numbers) or `count`. Filter with `glob` (e.g. `*.rs`) or `type` (e.g. `rust`). `-i` ignores case; `multiline` lets a match span lines. At most `head_limit` entries (default {DEFAULT_HEAD_LIMIT}; in content mode `--` separators count as lines) and {} KiB are returned, saying when something was left out.",
            MAX_OUTPUT_BYTES / 1024
        )
    }

    fn access(input: &Self::Input, cwd: &Path) -> Vec<Access> {
        vec![Access::Read(resolve(
            cwd,
            input.path.as_deref().unwrap_or("."),
        ))]
    }

    fn run<'a>(
        &'a self,
        input: GrepInput,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let base = resolve(&ctx.cwd, input.path.as_deref().unwrap_or("."));
            blocking(Self::NAME.as_str(), move || grep(&base, &input)).await
        })
    }
}

fn grep(base: &Path, input: &GrepInput) -> ToolOutput {
    if !base.exists() {
        return ToolOutput::error(format!("Grep: {} does not exist.", base.display()));
    }
    if input.head_limit == Some(0) {
        return ToolOutput::error("Grep: `head_limit` must be at least 1.");
    }
    let mode = input.output_mode.unwrap_or_default();
    let multiline = input.multiline.unwrap_or(false);
    let mut mb = RegexMatcherBuilder::new();
    mb.case_insensitive(input.case_insensitive.unwrap_or(false));
    if multiline {
        mb.multi_line(true).dot_matches_new_line(true);
    } else {
        mb.line_terminator(Some(b'\n'));
    }
    let matcher = match mb.build(&input.pattern) {
        Ok(m) => m,
        Err(e) => {
            return ToolOutput::error(format!(
                "Grep: invalid regular expression {:?}: {e}. Escape special characters such as ( [ {{ . * + ? with a backslash for a literal search.",
                input.pattern
            ));
        }
    };
    let mut walk = walker(base);
    if let Some(ty) = &input.file_type {
        let mut types = TypesBuilder::new();
        types.add_defaults();
        types.select(ty);
        match types.build() {
            Ok(t) => {
                walk.types(t);
            }
            Err(e) => {
                return ToolOutput::error(format!(
                    "Grep: unknown file type {ty:?} ({e}); use a ripgrep type name such as rust, py, js, ts, go, java, c, cpp, md, json, or use `glob` instead."
                ));
            }
        }
    }
    if let Some(glob) = &input.glob {
        let root = if base.is_dir() {
            base
        } else {
            base.parent().unwrap_or(base)
        };
        let mut ob = OverrideBuilder::new(root);
        let built = ob.add(glob).and_then(|b| b.build());
        match built {
            Ok(o) => {
                walk.overrides(o);
            }
            Err(e) => return ToolOutput::error(format!("Grep: invalid glob {glob:?}: {e}")),
        }
    }
    let (before, after) = match mode {
        OutputMode::Content => (
            input.before.or(input.context).unwrap_or(0),
            input.after.or(input.context).unwrap_or(0),
        ),
        OutputMode::FilesWithMatches | OutputMode::Count => (0, 0),
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(before)
        .after_context(after)
        .multi_line(multiline)
        .binary_detection(BinaryDetection::quit(0))
        .build();
    let limit = input.head_limit.unwrap_or(DEFAULT_HEAD_LIMIT);
    let numbers = input.line_numbers.unwrap_or(true);
    let mut lines: Vec<String> = Vec::new();
    let mut files: Vec<(PathBuf, u64)> = Vec::new();
    let mut more = false;
    for entry in walk.build().filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let shown = path.display().to_string();
        let mut sink = Collect::new(mode, &shown, numbers, MAX_LINE_CHARS);
        // A `--` between files counts against `head_limit` like any line.
        let separate = !lines.is_empty() && (before > 0 || after > 0);
        if mode == OutputMode::Content {
            sink = sink.with_room(limit.saturating_sub(lines.len() + usize::from(separate)));
        }
        if searcher.search_path(&matcher, path, &mut sink).is_err() {
            continue;
        }
        if sink.count == 0 {
            continue;
        }
        match mode {
            OutputMode::Content => {
                if !sink.lines.is_empty() {
                    if separate {
                        lines.push("--".to_owned());
                    }
                    lines.append(&mut sink.lines);
                }
                // Once full, the search goes on with no room only until
                // the next match proves that something was left out.
                if sink.truncated {
                    more = true;
                    break;
                }
            }
            OutputMode::FilesWithMatches | OutputMode::Count => {
                files.push((path.to_path_buf(), sink.count));
            }
        }
    }
    let text = match mode {
        OutputMode::Content => {
            if lines.is_empty() {
                return ToolOutput::text(format!("No matches for {:?}.", input.pattern));
            }
            let mut text = lines.join("\n");
            if more {
                let _ = write!(
                    text,
                    "\n[output stopped after {} lines (head_limit {limit}, `--` separators included); more matches were left out. Narrow the search or raise head_limit]",
                    lines.len()
                );
            }
            text
        }
        OutputMode::FilesWithMatches | OutputMode::Count => {
            if files.is_empty() {
                return ToolOutput::text(format!("No files match {:?}.", input.pattern));
            }
            if mode == OutputMode::FilesWithMatches {
                let mut dated: Vec<_> = files.into_iter().map(|(p, c)| (mtime(&p), p, c)).collect();
                dated.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                files = dated.into_iter().map(|(_, p, c)| (p, c)).collect();
            }
            let total = files.len();
            let mut text = String::new();
            for (p, c) in files.iter().take(limit) {
                if mode == OutputMode::Count {
                    let _ = writeln!(text, "{}:{c}", p.display());
                } else {
                    let _ = writeln!(text, "{}", p.display());
                }
            }
            if total > limit {
                let _ = write!(
                    text,
                    "[showing {limit} of {total} files; narrow the search or raise head_limit]"
                );
            } else if mode == OutputMode::Count {
                let sum: u64 = files.iter().map(|(_, c)| c).sum();
                let _ = write!(text, "[{sum} matching lines in {total} files]");
            }
            text
        }
    };
    ToolOutput::text(cut_text(
        &text,
        MAX_OUTPUT_BYTES,
        "narrow the search (path, glob, type) or lower head_limit",
    ))
}
