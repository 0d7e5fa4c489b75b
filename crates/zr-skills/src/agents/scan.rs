//! One pass over the agent-type roots: list each folder's `*.md` files when
//! the folder changed, parse only new and changed files.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::Arc;

use zr_caps::parse_agent_file;

use super::{AgentSource, AgentTypeEntry};
use crate::cache::Pass;
use crate::stamp::{identity, io_problem, read_bounded, regular_file};
use crate::{Diagnostic, Problem, Root, Scope};

/// A folder's device and inode (`None` off Unix) and its `*.md` files.
type Found = (Option<(u64, u64)>, Listing);

/// What a folder's listing keeps: its `*.md` files, sorted.
pub(super) type Listing = Arc<[OsString]>;

/// What parsing one agent-type file gave.
pub(super) type Outcome = crate::assemble::Outcome<AgentTypeEntry>;

/// The state of one [`AgentRegistry::view`](super::AgentRegistry::view).
pub(super) struct Scan<'a> {
    pub(super) pass: Pass<'a, Listing, Outcome>,
    pub(super) diagnostics: Vec<Diagnostic>,
    /// The roots listed so far (device, inode): a root that is the same
    /// folder as an earlier one (`.claude/agents` linked to `.zr/agents`)
    /// is not read again.
    pub(super) listed_roots: Vec<(u64, u64)>,
}

impl Scan<'_> {
    /// Lists and parses root `index`, appending each file's outcome in name
    /// order.
    pub(super) fn root(&mut self, index: usize, root: &Root, found: &mut Vec<Arc<Outcome>>) {
        let files = match self.listing(&root.path) {
            Ok(Some((Some(id), _))) if self.listed_roots.contains(&id) => {
                // The same folder as a root of higher precedence.
                return;
            }
            Ok(Some((id, files))) => {
                self.listed_roots.extend(id);
                files
            }
            Ok(None) => return,
            Err(problem) => {
                self.diagnostics
                    .push(Diagnostic::error(&root.path, None, problem));
                return;
            }
        };
        for name in files.iter() {
            let path = root.path.join(name);
            found.push(self.file(index, root, &path));
        }
    }

    /// The identity and `*.md` files (sorted) of `dir`, `None` when it does
    /// not exist.
    fn listing(&mut self, dir: &Path) -> Result<Option<Found>, Problem> {
        self.pass.stats.stat_calls += 1;
        let meta = match fs::metadata(dir) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_problem("read the agents folder", &e)),
        };
        if !meta.is_dir() {
            return Err(Problem::Io {
                action: "read the agents folder",
                kind: io::ErrorKind::NotADirectory,
            });
        }
        let files = self.pass.listing(dir, &meta, || list(dir))?;
        Ok(Some((identity(&meta), files)))
    }

    fn file(&mut self, index: usize, root: &Root, path: &Path) -> Arc<Outcome> {
        self.pass.stats.stat_calls += 1;
        let fail = |problem| Arc::new(Outcome::failed(path, problem));
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) => return fail(io_problem("read the file", &e)),
        };
        if let Err(problem) = regular_file(path, &meta) {
            return fail(problem);
        }
        self.pass
            .outcome(index, path, &meta, || parse(path, root.scope))
    }
}

/// The `*.md` files of `dir`, sorted.
fn list(dir: &Path) -> Result<Listing, Problem> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_problem("list the agents folder", &e))? {
        let entry = entry.map_err(|e| io_problem("list the agents folder", &e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = entry.file_name();
        let text = name.to_string_lossy();
        // Hidden files are editors' and systems' (Emacs' `.#x.md` lock
        // links, macOS' `._x.md`), never agent types.
        if text.ends_with(".md")
            && !text.starts_with('.')
            && !text.eq_ignore_ascii_case("README.md")
        {
            files.push(name);
        }
    }
    files.sort();
    Ok(files.into())
}

/// Reads and parses one agent-type file.
fn parse(path: &Path, scope: Scope) -> Outcome {
    let text = match read_bounded(path) {
        Ok(text) => text,
        Err(problem) => return Outcome::failed(path, problem),
    };
    match parse_agent_file(path, &text) {
        Err(error) => Outcome {
            entry: None,
            diagnostics: vec![Diagnostic::error(
                path,
                Some(error.line),
                Problem::AgentFile(error.problem),
            )],
        },
        Ok(file) => Outcome {
            diagnostics: file
                .warnings
                .iter()
                .map(|w| {
                    Diagnostic::warning(
                        path,
                        Some(w.line),
                        Problem::AgentFileWarning {
                            key: w.key.clone(),
                            message: w.message.clone(),
                        },
                    )
                })
                .collect(),
            entry: Some(Arc::new(AgentTypeEntry {
                definition: Arc::new(file.definition),
                source: AgentSource::File {
                    path: path.to_path_buf(),
                    scope,
                },
                color: file.color,
                memory: file.memory,
                extras: file.extras,
            })),
        },
    }
}
