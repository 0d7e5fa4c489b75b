//! The folders skills and agent types are read from, in precedence order.

use std::fmt;
use std::path::{Path, PathBuf};

/// Whose folder a root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The project's (checked in with the code).
    Project,
    /// The user's (in the home folder, for every project).
    User,
    /// A folder the host named.
    Custom,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Project => "project",
            Self::User => "user",
            Self::Custom => "custom",
        })
    }
}

/// One folder of definitions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Root {
    /// Whose it is.
    pub scope: Scope,
    /// The folder (need not exist).
    pub path: PathBuf,
}

impl Root {
    /// A root of `scope` at `path`.
    #[must_use]
    pub fn new(scope: Scope, path: impl Into<PathBuf>) -> Self {
        Self {
            scope,
            path: path.into(),
        }
    }
}

/// Roots in precedence order: when two roots define the same name, the
/// earlier root wins and the later definition is reported.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Roots(Vec<Root>);

impl Roots {
    /// These roots, first = highest precedence.
    #[must_use]
    pub fn new(roots: Vec<Root>) -> Self {
        Self(roots)
    }

    /// The skill roots of a project, in this fixed order:
    ///
    /// 1. `<project>/.zr/skills`
    /// 2. `<project>/.agents/skills`
    /// 3. `<project>/.claude/skills`
    /// 4. `<home>/.zr/skills`, `<home>/.agents/skills`,
    ///    `<home>/.claude/skills`, when `home` is given.
    ///
    /// Project before user; in each, zr's own folder, then the Agent Skills
    /// folder that several tools share, then Claude Code's. `home` is
    /// passed in, never read from the environment: see [`home_dir`] for
    /// the convenience.
    #[must_use]
    pub fn skills(project: &Path, home: Option<&Path>) -> Self {
        Self::standard(project, home, &[".zr", ".agents", ".claude"], "skills")
    }

    /// The agent-type roots of a project, in this fixed order:
    ///
    /// 1. `<project>/.zr/agents`
    /// 2. `<project>/.claude/agents`
    /// 3. `<home>/.zr/agents`, `<home>/.claude/agents`, when `home` is
    ///    given.
    #[must_use]
    pub fn agents(project: &Path, home: Option<&Path>) -> Self {
        Self::standard(project, home, &[".zr", ".claude"], "agents")
    }

    /// `<project>/<dir>/<kind>` for each of `dirs` in order, then
    /// `<home>/<dir>/<kind>` likewise when `home` is given.
    fn standard(project: &Path, home: Option<&Path>, dirs: &[&str], kind: &str) -> Self {
        let under = |scope, base: &Path| -> Vec<Root> {
            dirs.iter()
                .map(|dir| Root::new(scope, base.join(dir).join(kind)))
                .collect()
        };
        let mut roots = under(Scope::Project, project);
        if let Some(home) = home {
            roots.extend(under(Scope::User, home));
        }
        Self(roots)
    }

    /// The roots, first = highest precedence.
    #[must_use]
    pub fn as_slice(&self) -> &[Root] {
        &self.0
    }
}

/// The user's home folder from `$HOME` (or `%USERPROFILE%`), for hosts that
/// want the standard user roots. The registries never call this
/// themselves, so that what they read is exactly what they were given.
#[must_use]
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}
