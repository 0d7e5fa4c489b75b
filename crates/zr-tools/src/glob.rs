//! `Glob`: finds files by glob pattern, honouring `.gitignore`, newest
//! first, bounded.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use zr_types::{Access, BoxFuture, BuiltinName, ToolContext, ToolError, ToolOutput};

use crate::path::resolve;
use crate::toolkit::{Builtin, Hints, blocking};
use crate::walk::{mtime, walker};

/// Paths returned at most.
pub(crate) const MAX_RESULTS: usize = 100;

/// Input of `Glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GlobInput {
    /// The glob to match against paths relative to `path`, e.g. `**/*.rs` or `src/**/*.{ts,tsx}`.
    pattern: String,
    /// The directory to search (default: the working directory).
    path: Option<String>,
}

/// The `Glob` tool.
#[derive(Debug)]
pub(crate) struct GlobTool;

impl Builtin for GlobTool {
    type Input = GlobInput;
    const NAME: BuiltinName = BuiltinName::Glob;
    const HINTS: Hints = Hints::LOCAL;

    fn details(&self) -> String {
        format!(
            "Matches `pattern` against file paths relative to `path` (default: the working directory): `*` stays within one folder, `**` crosses folders, `{{a,b}}` alternates. Files ignored by .gitignore/.ignore and the .git folder are skipped. Returns absolute paths, most recently modified first, at most {MAX_RESULTS}."
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
        input: GlobInput,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let base = resolve(&ctx.cwd, input.path.as_deref().unwrap_or("."));
            blocking(Self::NAME.as_str(), move || glob(&base, &input.pattern)).await
        })
    }
}

fn glob(base: &Path, pattern: &str) -> ToolOutput {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    if pattern.trim().is_empty() {
        return ToolOutput::error("Glob: `pattern` is empty; e.g. `**/*.rs`.");
    }
    if Path::new(pattern).is_absolute() {
        return ToolOutput::error(format!(
            "Glob: `pattern` must be relative ({pattern} is absolute); put the folder in `path` and the pattern relative to it."
        ));
    }
    if !base.is_dir() {
        return ToolOutput::error(format!(
            "Glob: {} is not a directory; `path` must name a folder.",
            base.display()
        ));
    }
    let matcher = match GlobBuilder::new(pattern).literal_separator(true).build() {
        Ok(g) => g.compile_matcher(),
        Err(e) => {
            return ToolOutput::error(format!("Glob: invalid pattern {pattern:?}: {e}"));
        }
    };
    let mut found: Vec<PathBuf> = walker(base)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file() || t.is_symlink()))
        .filter(|e| {
            e.path()
                .strip_prefix(base)
                .is_ok_and(|rel| matcher.is_match(rel))
        })
        .map(ignore::DirEntry::into_path)
        .collect();
    if found.is_empty() {
        return ToolOutput::text(format!(
            "No files match {pattern:?} under {}.",
            base.display()
        ));
    }
    let mut dated: Vec<(std::time::SystemTime, PathBuf)> =
        found.drain(..).map(|p| (mtime(&p), p)).collect();
    dated.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = dated.len();
    let mut text = String::new();
    for (_, p) in dated.iter().take(MAX_RESULTS) {
        let _ = writeln!(text, "{}", p.display());
    }
    if total > MAX_RESULTS {
        let _ = write!(
            text,
            "[showing the {MAX_RESULTS} most recently modified of {total} matching files; use a narrower pattern or path]"
        );
    }
    ToolOutput::text(text)
}
