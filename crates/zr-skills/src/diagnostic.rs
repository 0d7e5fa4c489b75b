//! Diagnostics: one per broken file or ignored definition, never a crash.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::Problem;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The file was not loaded.
    Error,
    /// The file loaded (or was ignored on purpose), with something to fix.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
        })
    }
}

/// A problem in one file or folder: where, how bad, and what to fix.
///
/// `Display` is `PATH:LINE: error: WHAT TO FIX` (no `:LINE` when the problem
/// concerns the whole file).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// The file or folder.
    pub path: PathBuf,
    /// The line, from 1, when the problem has one.
    pub line: Option<usize>,
    /// Whether the file was loaded.
    pub severity: Severity,
    /// What is wrong.
    pub problem: Problem,
}

impl Diagnostic {
    /// An error (the file is not loaded).
    pub(crate) fn error(path: &Path, line: Option<usize>, problem: Problem) -> Self {
        Self {
            path: path.to_path_buf(),
            line,
            severity: Severity::Error,
            problem,
        }
    }

    /// A warning (the file is loaded, or ignored on purpose).
    pub(crate) fn warning(path: &Path, line: Option<usize>, problem: Problem) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(path, line, problem)
        }
    }

    /// The diagnostic with paths under `base` shown relative to it (for
    /// people and snapshots): `.zr/skills/pdf/SKILL.md:3: error: ...`.
    #[must_use]
    pub fn display_relative<'a>(&'a self, base: &'a Path) -> impl fmt::Display + 'a {
        Shown {
            diagnostic: self,
            base: Some(base),
            home: None,
        }
    }

    /// As [`Diagnostic::display_relative`], and paths under `home` (not
    /// under `base`) shown as `~/...`: `~/.claude/agents/x.md:3: ...`.
    #[must_use]
    pub fn display_in<'a>(
        &'a self,
        base: &'a Path,
        home: Option<&'a Path>,
    ) -> impl fmt::Display + 'a {
        Shown {
            diagnostic: self,
            base: Some(base),
            home,
        }
    }

    /// What to fix, without the location, with paths inside the sentence
    /// shown as [`Diagnostic::display_in`] shows them.
    #[must_use]
    pub fn message_in<'a>(
        &'a self,
        base: &'a Path,
        home: Option<&'a Path>,
    ) -> impl fmt::Display + 'a {
        Message {
            problem: &self.problem,
            base: Some(base),
            home,
        }
    }

    /// The sort key of diagnostics in a view.
    pub(crate) fn sort_key(&self) -> (&Path, Option<usize>, Severity) {
        (&self.path, self.line, self.severity)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Shown {
            diagnostic: self,
            base: None,
            home: None,
        }
        .fmt(f)
    }
}

struct Shown<'a> {
    diagnostic: &'a Diagnostic,
    base: Option<&'a Path>,
    home: Option<&'a Path>,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.diagnostic;
        let path = crate::shown::shown_path_in(&d.path, self.base, self.home);
        match d.line {
            Some(line) => write!(f, "{path}:{line}: {}: ", d.severity)?,
            None => write!(f, "{path}: {}: ", d.severity)?,
        }
        Message {
            problem: &d.problem,
            base: self.base,
            home: self.home,
        }
        .fmt(f)
    }
}

/// A problem's sentence with the paths inside it shown as the
/// diagnostic's own path is.
struct Message<'a> {
    problem: &'a Problem,
    base: Option<&'a Path>,
    home: Option<&'a Path>,
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rel = |p: &Path| PathBuf::from(crate::shown::shown_path_in(p, self.base, self.home));
        match self.problem {
            Problem::Shadowed { kind, name, winner } => Problem::Shadowed {
                kind,
                name: name.clone(),
                winner: rel(winner),
            }
            .fmt(f),
            Problem::EscapesRoot { kind, target, root } => Problem::EscapesRoot {
                kind,
                target: rel(target),
                root: rel(root),
            }
            .fmt(f),
            other => other.fmt(f),
        }
    }
}

/// How many folders deep a root is read (agent types and skills alike).
pub(crate) const MAX_DEPTH: usize = 6;

/// Reports, once per walk of a root, that a folder lies deeper than
/// [`MAX_DEPTH`] and is not read.
#[derive(Debug, Default)]
pub(crate) struct TooDeep {
    reported: bool,
}

impl TooDeep {
    /// Pushes the warning for `path` unless this walk reported one already.
    pub(crate) fn report(
        &mut self,
        diagnostics: &mut Vec<Diagnostic>,
        path: &Path,
        kind: &'static str,
    ) {
        if !self.reported {
            self.reported = true;
            diagnostics.push(Diagnostic::warning(
                path,
                None,
                Problem::TooDeep {
                    kind,
                    max: MAX_DEPTH,
                },
            ));
        }
    }
}
