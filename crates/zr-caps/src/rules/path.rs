//! Path specifiers of file-tool rules (`Read(./.env)`, `Edit(src/**)`):
//! gitignore-style globs anchored at the filesystem root, the home folder
//! or the rule's base folder.

use std::fmt;
use std::path::{Component, Path};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::RuleBase;

/// What a path rule matches.
///
/// - `//abs/path`: the absolute path `/abs/path`;
/// - `~/path`: under the home folder (`~` alone: all of it);
/// - `/path` and `./path`: under the rule's base folder (the folder of the
///   settings file; for `zr.toml` and agent files, the project folder);
/// - `path`: under the base folder too; as in `.gitignore`, a pattern
///   with no `/` but a trailing one (`.env`, `*.pem`) matches at any depth
///   below the base, one with a `/` (`src/*.rs`) only from the base.
///
/// `*` and `?` stay within one path segment, `**` crosses segments, `[...]`
/// and `{a,b}` are classes and alternatives, `\` escapes. A pattern also
/// matches everything under a folder it matches (`src` and `src/**` both
/// match `src/a/b.rs`, and `src/**` matches `src` itself). `..` is
/// refused: name such places with `//`.
#[derive(Clone)]
pub struct PathPattern {
    text: String,
    anchor: Anchor,
    set: GlobSet,
}

/// Where a path pattern starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Anchor {
    Root,
    Home,
    Base,
}

/// Why a path specifier is refused.
#[derive(Debug)]
pub(crate) enum PathProblem {
    /// A `..` segment.
    Parent,
    /// Not a glob.
    Glob(globset::Error),
}

impl PathPattern {
    /// Reads a path specifier (trimmed, not empty).
    pub(crate) fn parse(spec: &str) -> Result<Self, PathProblem> {
        let (anchor, rest, anchored) = if let Some(rest) = spec.strip_prefix("//") {
            (Anchor::Root, rest, true)
        } else if spec == "~" {
            (Anchor::Home, "", true)
        } else if let Some(rest) = spec.strip_prefix("~/") {
            (Anchor::Home, rest, true)
        } else if let Some(rest) = spec.strip_prefix('/') {
            (Anchor::Base, rest, true)
        } else if let Some(rest) = spec.strip_prefix("./") {
            (Anchor::Base, rest, true)
        } else {
            (Anchor::Base, spec, spec.trim_end_matches('/').contains('/'))
        };
        let segments: Vec<&str> = rest
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        if segments.contains(&"..") {
            return Err(PathProblem::Parent);
        }
        let mut glob = segments.join("/");
        if glob.is_empty() {
            glob.push_str("**");
        } else if !anchored {
            glob.insert_str(0, "**/");
        }
        let mut globs = vec![glob.clone()];
        if let Some(stem) = glob.strip_suffix("/**") {
            globs.push(stem.to_owned());
        }
        let mut set = GlobSetBuilder::new();
        for glob in &globs {
            set.add(
                GlobBuilder::new(glob)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(PathProblem::Glob)?,
            );
        }
        Ok(Self {
            text: spec.to_owned(),
            anchor,
            set: set.build().map_err(PathProblem::Glob)?,
        })
    }

    /// The specifier as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern matches `path`, an absolute path already
    /// resolved (no `..`, symlinks followed), with relative patterns read
    /// from `base`. A `~` pattern matches nothing when `base.home` is
    /// `None`; a relative `path` matches nothing.
    #[must_use]
    pub fn matches(&self, path: &Path, base: &RuleBase<'_>) -> bool {
        let root = match self.anchor {
            Anchor::Root => Path::new("/"),
            Anchor::Home => match base.home {
                Some(home) => home,
                None => return false,
            },
            Anchor::Base => base.base,
        };
        let Ok(rel) = path.strip_prefix(root) else {
            return false;
        };
        let mut candidate = String::new();
        for component in rel.components() {
            let Component::Normal(segment) = component else {
                return false;
            };
            if !candidate.is_empty() {
                candidate.push('/');
            }
            candidate.push_str(&segment.to_string_lossy());
            if self.set.is_match(&candidate) {
                return true;
            }
        }
        candidate.is_empty() && self.set.is_match("")
    }
}

impl PartialEq for PathPattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for PathPattern {}

impl fmt::Debug for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PathPattern({:?})", self.text)
    }
}
