//! Project instructions: the `CLAUDE.md`, `AGENTS.md` and
//! `CLAUDE.local.md` files Claude Code (and Codex, for `AGENTS.md`) reads,
//! with their `@path` imports, as one text every agent's system prompt
//! ends with.
//!
//! # Which files, in which order
//!
//! From the most general to the most specific (a model weighs what comes
//! later, so the more specific file has the last word), as Claude Code
//! orders its memory:
//!
//! 1. the user's `~/.claude/CLAUDE.md`;
//! 2. for each folder from the repository's top (the nearest folder
//!    upwards from the project holding `.git`; outside a repository, the
//!    project folder alone) down to the project folder: `CLAUDE.md`,
//!    `.claude/CLAUDE.md`, `AGENTS.md`, then `CLAUDE.local.md`.
//!
//! Each file is followed by the files it imports (`@docs/style.md`,
//! `@~/.claude/mine.md`, `@/abs/path`: relative to the importing file's
//! folder), depth first, in the order written, at most five hops deep as
//! in Claude Code; `@` inside code blocks and code spans is text. A file
//! is included once, wherever it is reached first: a link (`CLAUDE.md ->
//! AGENTS.md`), an import cycle or a second import of the same file adds
//! nothing, nor does a file with the very text of one already included.
//!
//! # What an import may reach
//!
//! An import is followed only when its target (every link resolved) lies
//! beneath the repository's top folder (the project folder outside a
//! repository) or beneath the user's `~/.claude`: instruction files go to
//! every agent's prompt, so a checked-in file must not pull in
//! `~/.ssh/id_rsa` or `/etc/shadow`. Others are skipped
//! ([`SkipReason::Outside`]), as are targets that do not exist (an
//! `@mention` in prose is no import), are not regular UTF-8 files of at
//! most 1 MiB, or are more than five hops deep; each skip is listed in
//! [`InstructionsView::skipped`], with the file and line that wrote it.
//! The top-level files themselves are read wherever their links point:
//! they are the user's own files, found by name.
//!
//! # Hot reload
//!
//! [`InstructionRegistry::view`] `stat`s every file it read or looked for
//! (the missing ones too, so a new `CLAUDE.md` is seen) and returns the
//! previous view itself (`Arc::ptr_eq`) when none changed, with the
//! registries' stamps and their racy-clean rule.

mod imports;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::stamp::{MAX_FILE, Seen, Stamp};

/// How many hops of imports are followed (Claude Code's limit).
pub const MAX_IMPORT_DEPTH: usize = 5;

/// Where an instruction file comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstructionKind {
    /// `~/.claude/CLAUDE.md`: the user's, for every project.
    User,
    /// `CLAUDE.md`, `.claude/CLAUDE.md` or `AGENTS.md` of the project
    /// folder or a parent up to the repository's top: checked in.
    Project,
    /// `CLAUDE.local.md`: the user's own, for this project.
    Local,
    /// Imported with `@path` by the file `by`, at `line`.
    Import {
        /// The importing file.
        by: PathBuf,
        /// The 1-based line of the `@path`.
        line: usize,
    },
}

impl InstructionKind {
    /// What the kind is, as the prompt and `zr` say it.
    #[must_use]
    pub fn describe(&self) -> &'static str {
        match self {
            Self::User => "the user's instructions for every project",
            Self::Project => "project instructions, checked in",
            Self::Local => "the user's own instructions for this project, not checked in",
            Self::Import { .. } => "imported",
        }
    }
}

/// One file whose text reaches the agents.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InstructionFile {
    /// The file, as found (a top-level file) or resolved (an import).
    pub path: PathBuf,
    /// Where it comes from.
    pub kind: InstructionKind,
    /// Its text.
    pub text: String,
}

/// Why an import (or a top-level file) was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// There is no such file (an `@mention` in prose, or a typo).
    NotFound,
    /// The target lies outside the repository and `~/.claude`.
    Outside,
    /// More than [`MAX_IMPORT_DEPTH`] hops from a top-level file.
    TooDeep,
    /// Not a regular UTF-8 file of at most 1 MiB, or unreadable.
    Unreadable(String),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound => f.write_str("no such file"),
            Self::Outside => {
                f.write_str("it lies outside the repository and ~/.claude, where imports may reach")
            }
            Self::TooDeep => write!(f, "imports are followed {MAX_IMPORT_DEPTH} hops deep"),
            Self::Unreadable(why) => f.write_str(why),
        }
    }
}

/// A file left out, and where it was named.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The path as written (`@docs/x.md` without the `@`), or a top-level
    /// file's path.
    pub written: String,
    /// The importing file and the line (`None`: a top-level file).
    pub by: Option<(PathBuf, usize)>,
    /// Why.
    pub reason: SkipReason,
}

impl Skipped {
    /// Whether people should hear of it when a run starts: everything but
    /// an import that names no file (prose says `@someone` often).
    #[must_use]
    pub fn is_warning(&self) -> bool {
        self.reason != SkipReason::NotFound
    }
}

/// The instruction files of a project at one moment.
#[derive(Debug)]
pub struct InstructionsView {
    files: Vec<InstructionFile>,
    skipped: Vec<Skipped>,
    project: PathBuf,
    home: Option<PathBuf>,
}

/// Every path a load read or looked for, with its stamp (`None`:
/// missing).
#[derive(Debug)]
struct Looked(Vec<(PathBuf, Option<Seen>)>);

impl Looked {
    /// Whether a file read or looked for changed since.
    fn changed(&self) -> bool {
        self.0.iter().any(|(path, seen)| {
            match (seen, std::fs::metadata(path).ok().filter(|m| m.is_file())) {
                (None, None) => false,
                (Some(seen), Some(meta)) => !seen.still(&Stamp::of(&meta)),
                _ => true,
            }
        })
    }
}

impl InstructionsView {
    /// The files, in the order the prompt has them.
    #[must_use]
    pub fn files(&self) -> &[InstructionFile] {
        &self.files
    }

    /// What was left out, in the order it was met.
    #[must_use]
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// `path` as people and the prompt see it: relative to the project
    /// folder (`CLAUDE.md`, `../CLAUDE.md` for a parent's), `~/...` in the
    /// home folder, else absolute.
    #[must_use]
    pub fn shown(&self, path: &Path) -> String {
        shown(path, &self.project, self.home.as_deref())
    }

    /// The text every agent's system prompt ends with; `None` when no file
    /// has any text.
    #[must_use]
    pub fn prompt(&self) -> Option<String> {
        let files: Vec<&InstructionFile> = self
            .files
            .iter()
            .filter(|f| !f.text.trim().is_empty())
            .collect();
        if files.is_empty() {
            return None;
        }
        let mut out = String::from(
            "# Instructions\n\nThe user's and the project's instruction files follow (CLAUDE.md, AGENTS.md and what they import), from the most general to the most specific. Follow them: they take precedence over your default behaviour, and where two disagree, the later one wins.\n",
        );
        for file in files {
            let what = match &file.kind {
                InstructionKind::Import { by, .. } => format!("imported by {}", self.shown(by)),
                kind => kind.describe().to_owned(),
            };
            let _ = write!(
                out,
                "\nContents of {} ({what}):\n\n{}\n",
                self.shown(&file.path),
                file.text.trim_end()
            );
        }
        // No newline after the last file: the prompt's end is its text's.
        out.truncate(out.trim_end().len());
        Some(out)
    }
}

/// The instruction files of one project, read again when they change.
#[derive(Debug)]
pub struct InstructionRegistry {
    project: PathBuf,
    home: Option<PathBuf>,
    current: Mutex<(Arc<InstructionsView>, Looked)>,
}

impl InstructionRegistry {
    /// The registry of the project folder `project`, with the user's
    /// home folder `home` (`None`: no user file). Reads the files at once.
    #[must_use]
    pub fn new(project: &Path, home: Option<&Path>) -> Self {
        let (view, looked) = load(project, home);
        Self {
            project: project.to_path_buf(),
            home: home.map(Path::to_path_buf),
            current: Mutex::new((Arc::new(view), looked)),
        }
    }

    /// The current files: the previous view itself when no file changed
    /// (or one was written again with the same text).
    #[must_use]
    pub fn view(&self) -> Arc<InstructionsView> {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.1.changed() {
            let (view, looked) = load(&self.project, self.home.as_deref());
            if view.files != current.0.files || view.skipped != current.0.skipped {
                current.0 = Arc::new(view);
            }
            current.1 = looked;
        }
        Arc::clone(&current.0)
    }
}

/// The nearest folder upwards from `project` (itself included) that holds
/// `.git` (a folder, or a worktree's file); `project` when none does.
fn top_folder(project: &Path) -> PathBuf {
    project
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .unwrap_or(project)
        .to_path_buf()
}

/// What one load collects.
struct Loader {
    scan_start: SystemTime,
    home: Option<PathBuf>,
    /// Where imports may reach (canonical).
    allowed: Vec<PathBuf>,
    files: Vec<InstructionFile>,
    skipped: Vec<Skipped>,
    seen: Vec<(PathBuf, Option<Seen>)>,
    /// Canonical paths already included.
    included: BTreeSet<PathBuf>,
}

fn load(project: &Path, home: Option<&Path>) -> (InstructionsView, Looked) {
    let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let home = home.map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
    let top = top_folder(&project);
    let mut allowed = vec![top.clone()];
    if let Some(home) = &home {
        let claude = home.join(".claude");
        allowed.push(std::fs::canonicalize(&claude).unwrap_or(claude));
    }
    let mut loader = Loader {
        scan_start: SystemTime::now(),
        home: home.clone(),
        allowed,
        files: Vec::new(),
        skipped: Vec::new(),
        seen: Vec::new(),
        included: BTreeSet::new(),
    };
    if let Some(home) = &home {
        loader.top_level(&home.join(".claude/CLAUDE.md"), InstructionKind::User);
    }
    let folders: Vec<&Path> = project
        .ancestors()
        .take_while(|dir| dir.starts_with(&top))
        .collect();
    for dir in folders.into_iter().rev() {
        for (name, kind) in [
            ("CLAUDE.md", InstructionKind::Project),
            (".claude/CLAUDE.md", InstructionKind::Project),
            ("AGENTS.md", InstructionKind::Project),
            ("CLAUDE.local.md", InstructionKind::Local),
        ] {
            loader.top_level(&dir.join(name), kind);
        }
    }
    let view = InstructionsView {
        files: loader.files,
        skipped: loader.skipped,
        project,
        home,
    };
    (view, Looked(loader.seen))
}

impl Loader {
    /// Reads `path` if it is a regular file: its stamp recorded either way.
    fn stat(&mut self, path: &Path) -> Option<std::fs::Metadata> {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file());
        let seen = meta
            .as_ref()
            .map(|m| Seen::new(Stamp::of(m), self.scan_start));
        self.seen.push((path.to_path_buf(), seen));
        meta
    }

    fn top_level(&mut self, path: &Path, kind: InstructionKind) {
        if self.stat(path).is_none() {
            return;
        }
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.included.contains(&canonical) {
            return;
        }
        match read(path) {
            Ok(text) => self.include(path.to_path_buf(), canonical, kind, text, 0),
            Err(why) => self.skipped.push(Skipped {
                written: path.display().to_string(),
                by: None,
                reason: SkipReason::Unreadable(why),
            }),
        }
    }

    /// Adds a file and, after it, what it imports (`depth`: its hops from
    /// a top-level file).
    fn include(
        &mut self,
        path: PathBuf,
        canonical: PathBuf,
        kind: InstructionKind,
        text: String,
        depth: usize,
    ) {
        self.included.insert(canonical);
        if self.files.iter().any(|f| f.text == text) {
            return;
        }
        let found = imports::imports(&text);
        let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.files.push(InstructionFile {
            path: path.clone(),
            kind,
            text,
        });
        for import in found {
            self.import(&path, &folder, import, depth + 1);
        }
    }

    fn import(&mut self, by: &Path, folder: &Path, import: imports::Import, depth: usize) {
        let skip = |reason| Skipped {
            written: import.path.clone(),
            by: Some((by.to_path_buf(), import.line)),
            reason,
        };
        let target = match import.path.strip_prefix("~/") {
            Some(rest) => match &self.home {
                Some(home) => home.join(rest),
                None => {
                    self.skipped.push(skip(SkipReason::NotFound));
                    return;
                }
            },
            None => folder.join(&import.path),
        };
        if self.stat(&target).is_none() {
            self.skipped.push(skip(SkipReason::NotFound));
            return;
        }
        let Ok(canonical) = std::fs::canonicalize(&target) else {
            self.skipped.push(skip(SkipReason::NotFound));
            return;
        };
        if !self.allowed.iter().any(|root| canonical.starts_with(root)) {
            self.skipped.push(skip(SkipReason::Outside));
            return;
        }
        if self.included.contains(&canonical) {
            return;
        }
        if depth > MAX_IMPORT_DEPTH {
            self.skipped.push(skip(SkipReason::TooDeep));
            return;
        }
        match read(&canonical) {
            Ok(text) => {
                let kind = InstructionKind::Import {
                    by: by.to_path_buf(),
                    line: import.line,
                };
                self.include(canonical.clone(), canonical, kind, text, depth);
            }
            Err(why) => self.skipped.push(skip(SkipReason::Unreadable(why))),
        }
    }
}

/// The text of the regular file at `path`, at most [`MAX_FILE`] bytes of
/// UTF-8; else why not.
fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    if meta.len() > MAX_FILE {
        return Err(format!(
            "larger than {} KiB ({} bytes)",
            MAX_FILE / 1024,
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
}

/// `path` relative to `project` (through `..` for its parents), `~/...`
/// beneath `home`, else absolute; with `/` separators.
fn shown(path: &Path, project: &Path, home: Option<&Path>) -> String {
    let join = |p: &Path| {
        p.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/")
    };
    if let Ok(rel) = path.strip_prefix(project) {
        return join(rel);
    }
    // A parent of the project below the home folder and the file system's
    // root: `../CLAUDE.md`, `../../docs/x.md`.
    let ups = project.ancestors().skip(1).position(|dir| {
        dir.parent().is_some() && path.starts_with(dir) && home.is_none_or(|h| !h.starts_with(dir))
    });
    if let Some(ups) = ups {
        let dir = project.ancestors().nth(ups + 1).unwrap_or(project);
        if let Ok(rel) = path.strip_prefix(dir) {
            let mut parts: Vec<String> = vec!["..".to_owned(); ups + 1];
            parts.extend(rel.components().map(|c| match c {
                Component::Normal(n) => n.to_string_lossy().into_owned(),
                other => other.as_os_str().to_string_lossy().into_owned(),
            }));
            return parts.join("/");
        }
    }
    if let Some(rel) = home.and_then(|h| path.strip_prefix(h).ok()) {
        return format!("~/{}", join(rel));
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests;
