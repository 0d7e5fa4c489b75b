//! The effects boundary (DESIGN.md section 11): what a call may touch.
//!
//! The resolver decides which tools an agent sees; this module decides
//! what a call of those tools may touch. Every call the permission gate
//! (`permission.rs`) lets through is first held against it, in every mode
//! but `bypassPermissions`:
//!
//! - **Places.** An agent writes only beneath its writable roots: the
//!   project folder (its worktree alone when it is isolated) plus
//!   [`Boundary::additional_directories`], and its type's memory folder
//!   when it has one (`agent_memory.rs`: that agent's only); it reads
//!   beneath the same and the project folder. Paths are resolved as the tool will open them,
//!   then through every symbolic link, before the comparison.
//! - **Protected files.** `zr.toml`, `.mcp.json`, `.zr/`, `.claude/` and
//!   `.git/` beneath each root, and the user's `~/.zr/` and `~/.claude/`:
//!   a write is a question in every mode, whatever an allow list says.
//! - **The sandbox.** Bash and every process a tool starts run confined
//!   ([`Confinement`]): a read-only file system for read-only agents,
//!   writes beneath the writable roots and the temporary folder for the
//!   others; no network unless [`SandboxConfig::network`].
//!
//! A crossing is never settled by the mode or an allow rule: the host is
//! asked (a terminal), and without one the call is refused with the path
//! and the setting that widens the boundary.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use zr_types::{Access, Confinement};

use crate::meta::AgentMeta;

/// The effects boundary of a session's agents
/// ([`PermissionConfig::boundary`](crate::PermissionConfig::boundary)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Boundary {
    /// Folders every agent may also write and read beneath, besides the
    /// project folder (Claude Code's `additionalDirectories`). Isolated
    /// agents get them too.
    pub additional_directories: Vec<PathBuf>,
    /// The user's home folder, whose `.zr` and `.claude` folders are
    /// protected; `None` protects no home folder. Default: `$HOME`.
    pub home: Option<PathBuf>,
    /// The OS sandbox of the processes tools start.
    pub sandbox: SandboxConfig,
}

impl Default for Boundary {
    fn default() -> Self {
        Self {
            additional_directories: Vec::new(),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            sandbox: SandboxConfig::default(),
        }
    }
}

impl Boundary {
    /// The default boundary with `dirs` as additional directories.
    #[must_use]
    pub fn with_additional_directories(mut self, dirs: Vec<PathBuf>) -> Self {
        self.additional_directories = dirs;
        self
    }

    /// The default boundary with `home` as the user's home folder.
    #[must_use]
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// The default boundary with `sandbox`.
    #[must_use]
    pub fn with_sandbox(mut self, sandbox: SandboxConfig) -> Self {
        self.sandbox = sandbox;
        self
    }
}

/// The OS sandbox of Bash and every process a tool starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxConfig {
    /// Whether processes run confined (default `true`). Off, they may write
    /// wherever the user can; the file tools' boundary still holds.
    pub enabled: bool,
    /// Whether confined processes may open network sockets (default
    /// `false`; local sockets always work).
    pub network: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            network: false,
        }
    }
}

impl SandboxConfig {
    /// A sandbox that is on, with the network `network`.
    #[must_use]
    pub fn on(network: bool) -> Self {
        Self {
            enabled: true,
            network,
        }
    }

    /// No sandbox.
    #[must_use]
    pub fn off() -> Self {
        Self {
            enabled: false,
            network: false,
        }
    }
}

/// Names protected beneath every root: a write to one of them, or beneath
/// one of the folders, is asked about in every mode.
const PROTECTED_FILES: [&str; 2] = ["zr.toml", ".mcp.json"];
const PROTECTED_DIRS: [&str; 3] = [".zr", ".claude", ".git"];
/// Protected beneath the user's home folder.
const PROTECTED_HOME_DIRS: [&str; 2] = [".zr", ".claude"];

/// The protected names as people read them: `zr.toml, .mcp.json, .zr/,
/// .claude/, .git/ beneath every root; ~/.zr/, ~/.claude/`.
#[must_use]
pub fn protected_names() -> String {
    let files = PROTECTED_FILES.iter().map(|f| (*f).to_owned());
    let dirs = PROTECTED_DIRS.iter().map(|d| format!("{d}/"));
    let home: Vec<String> = PROTECTED_HOME_DIRS
        .iter()
        .map(|d| format!("~/{d}/"))
        .collect();
    format!(
        "{} beneath every root; {}",
        files.chain(dirs).collect::<Vec<_>>().join(", "),
        home.join(", ")
    )
}

/// One agent's places, its roots resolved through symbolic links.
#[derive(Debug)]
pub(crate) struct Places {
    /// Beneath these the agent writes.
    writable: Vec<PathBuf>,
    /// Beneath these it reads: the writable roots, the project folder,
    /// then zr's own folders of results.
    readable: Vec<PathBuf>,
    /// How many of `readable` have their settings protected (the
    /// writable roots and the project folder).
    settled: usize,
    home: Option<PathBuf>,
    /// The agent's memory folder (`agent_memory.rs`), also in `writable`:
    /// beneath it the protected names of the home folder do not apply
    /// (a user-scope memory folder lies in `~/.claude`).
    memory: Option<PathBuf>,
    /// For an isolated agent: the parts of the repository's git folder
    /// that git writes for its worktree ([`worktree_git`]); its commands
    /// may write them, its file tools may not.
    git: Vec<PathBuf>,
}

impl Places {
    /// The places of `agent` in a session whose project folder is
    /// `project`.
    pub(crate) fn of(boundary: &Boundary, agent: &AgentMeta, project: &Path) -> Self {
        let project = real_path(project);
        let own = agent
            .worktree
            .as_deref()
            .map_or_else(|| project.clone(), real_path);
        let mut writable = vec![own];
        writable.extend(boundary.additional_directories.iter().map(|d| {
            real_path(&if d.is_absolute() {
                d.clone()
            } else {
                project.join(d)
            })
        }));
        let memory = agent.memory.as_deref().map(real_path);
        writable.extend(memory.clone());
        let mut readable = writable.clone();
        if !readable.contains(&project) {
            readable.push(project);
        }
        // The roots whose settings are protected: the writable ones and
        // the project folder.
        let settled = readable.len();
        Self {
            writable,
            readable,
            settled,
            home: boundary.home.as_deref().map(real_path),
            memory,
            git: agent
                .worktree
                .as_deref()
                .map(worktree_git)
                .unwrap_or_default(),
        }
    }

    /// The folders the agent writes beneath (its own first).
    pub(crate) fn writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// The same places, `dir` readable too (where zr writes what the
    /// model is told to read: oversized tool results).
    pub(crate) fn reading(mut self, dir: &Path) -> Self {
        self.readable.push(real_path(dir));
        self
    }

    /// Whether `access` crosses the boundary, and how. `None`: it stays
    /// inside (or is not a file access).
    pub(crate) fn crossing(&self, access: &Access) -> Option<Crossing> {
        match access {
            Access::Write(path) => {
                let real = real_path(path);
                if let Some(what) = self.protected(&real) {
                    return Some(Crossing::Protected { path: real, what });
                }
                if !under_any(&real, &self.writable) {
                    return Some(Crossing::Outside {
                        path: real,
                        write: true,
                    });
                }
                None
            }
            Access::Read(path) => {
                let real = real_path(path);
                let readable = under_any(&real, &self.readable) || is_command_log(&real);
                (!readable).then_some(Crossing::Outside {
                    path: real,
                    write: false,
                })
            }
            _ => None,
        }
    }

    /// What protects `path`, if something does: the protected name
    /// beneath the innermost root that holds it, or the home folder's.
    fn protected(&self, path: &Path) -> Option<String> {
        let innermost = self.readable[..self.settled]
            .iter()
            .filter(|root| path.starts_with(root))
            .max_by_key(|root| root.components().count());
        if let Some(root) = innermost
            && let Ok(rel) = path.strip_prefix(root)
            && let Some(Component::Normal(first)) = rel.components().next()
        {
            let first = first.to_string_lossy();
            let is_dir_entry = rel.components().count() > 1;
            if PROTECTED_DIRS.contains(&first.as_ref())
                || (!is_dir_entry && PROTECTED_FILES.contains(&first.as_ref()))
            {
                return Some(format!("{first} in {}", root.display()));
            }
        }
        if let Some(home) = &self.home
            && !self.memory.as_ref().is_some_and(|m| path.starts_with(m))
            && let Ok(rel) = path.strip_prefix(home)
            && let Some(Component::Normal(first)) = rel.components().next()
        {
            let first = first.to_string_lossy();
            if PROTECTED_HOME_DIRS.contains(&first.as_ref()) {
                return Some(format!("~/{first}"));
            }
        }
        None
    }
}

/// How a call crosses the boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Crossing {
    /// It writes (or reads) outside the agent's roots.
    Outside { path: PathBuf, write: bool },
    /// It writes a protected file.
    Protected { path: PathBuf, what: String },
}

impl Crossing {
    /// The crossing as the model and the user read it, with the setting
    /// that widens the boundary.
    pub(crate) fn describe(&self, places: &Places) -> String {
        match self {
            Self::Outside { path, write } => {
                let roots = places
                    .writable
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "it {} {}, outside the agent's {} ({roots}); add the folder to zr.toml [permissions] additional_directories to let agents {} there",
                    if *write { "writes" } else { "reads" },
                    path.display(),
                    if *write {
                        "writable roots"
                    } else {
                        "readable roots"
                    },
                    if *write { "write" } else { "read" },
                )
            }
            Self::Protected { path, what } => format!(
                "it writes {}, a protected file ({what}): agents change zr's and Claude Code's settings, agent files and git's hooks only with the user's approval, in every mode but bypassPermissions",
                path.display()
            ),
        }
    }
}

/// The sandbox of `agent`'s processes: `None` when the sandbox is off.
/// A read-only agent writes nowhere; the others beneath their writable
/// roots.
pub(crate) fn confinement(
    boundary: &Boundary,
    places: &Places,
    read_only: bool,
) -> Option<Confinement> {
    boundary.sandbox.enabled.then(|| Confinement {
        // A root that does not exist (an additional directory not made
        // yet) has nothing to confine to; writing it needs its parent.
        writable: if read_only {
            Vec::new()
        } else {
            places
                .writable
                .iter()
                .chain(&places.git)
                .filter(|r| r.is_dir())
                .cloned()
                .collect()
        },
        network: boundary.sandbox.network,
    })
}

/// Whether `path` is a background command's log (`zr-bash-*.log` in the
/// temporary folder), which the model is told to read.
fn is_command_log(path: &Path) -> bool {
    let in_temp = path
        .parent()
        .is_some_and(|dir| dir == real_path(&std::env::temp_dir()));
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("zr-bash-") && n.ends_with(".log"));
    in_temp && named
}

/// What git writes for the worktree at `worktree` outside it, so that
/// `git add` and `git commit` work in an isolated agent's commands: the
/// worktree's own git folder (its index, HEAD and logs: the `gitdir:` of
/// its `.git` file) and the repository's `objects`, `refs` and `logs`.
/// Not the repository's `hooks` or `config`: those stay read-only, so an
/// isolated agent cannot plant code that git runs. Empty when `worktree`
/// has no `.git` file.
fn worktree_git(worktree: &Path) -> Vec<PathBuf> {
    let Ok(link) = std::fs::read_to_string(worktree.join(".git")) else {
        return Vec::new();
    };
    let Some(own) = link.trim().strip_prefix("gitdir:").map(str::trim) else {
        return Vec::new();
    };
    let own = real_path(&worktree.join(own));
    let common = std::fs::read_to_string(own.join("commondir"))
        .map(|c| real_path(&own.join(c.trim())))
        .unwrap_or_else(|_| real_path(&own.join("../..")));
    let mut dirs = vec![own];
    dirs.extend(["objects", "refs", "logs"].map(|d| common.join(d)));
    dirs
}

fn under_any(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

/// How many symbolic links one path may go through before it counts as a
/// loop (the kernel's limit).
const MAX_LINKS: usize = 40;

/// `path` (absolute) as the file system will reach it: every symbolic
/// link followed, the final component's too, even when its target does
/// not exist yet (a dangling link that a write would follow out of a
/// root). `..` after a link is taken from the link's target, as the
/// kernel does. Parts that do not exist are kept as written.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    let mut pending: Vec<OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() && links < MAX_LINKS => {
                links += 1;
                match std::fs::read_link(&next) {
                    Ok(target) => {
                        if target.is_absolute() {
                            out = PathBuf::from("/");
                        }
                        pending.extend(target.components().rev().filter_map(|c| match c {
                            Component::Normal(n) => Some(n.to_os_string()),
                            Component::ParentDir => Some(OsString::from("..")),
                            _ => None,
                        }));
                    }
                    Err(_) => out = next,
                }
            }
            _ => out = next,
        }
    }
    out
}

#[cfg(test)]
mod tests;
