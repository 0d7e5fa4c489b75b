//! One pass over the agent-type roots: list each folder's `*.md` files when
//! the folder changed, parse only new and changed files.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use zr_caps::parse_agent_file;

use super::{AgentSource, AgentTypeEntry};
use crate::stamp::{Seen, Stamp, identity, io_problem, read_bounded, regular_file};
use crate::{Diagnostic, Problem, Root, ScanStats, Scope};

/// A folder's device and inode (`None` off Unix) and its `*.md` files.
type Found = (Option<(u64, u64)>, Arc<[OsString]>);

/// A folder's `*.md` files, as last listed.
#[derive(Debug)]
pub(super) struct Listing {
    seen: Seen,
    pub(super) generation: u64,
    files: Arc<[OsString]>,
}

/// An agent-type file as last parsed.
pub(super) type FileCache = crate::stamp::FileCache<Outcome>;

/// What parsing one agent-type file gave.
pub(super) type Outcome = crate::assemble::Outcome<AgentTypeEntry>;

/// The state of one [`AgentRegistry::view`](super::AgentRegistry::view).
pub(super) struct Scan<'a> {
    pub(super) generation: u64,
    pub(super) scan_start: SystemTime,
    /// Folder listings by path (as bytes: cheap to hash).
    pub(super) dirs: &'a mut HashMap<OsString, Listing>,
    /// Parsed files by path, one map per root.
    pub(super) files: &'a mut Vec<HashMap<OsString, FileCache>>,
    pub(super) stats: ScanStats,
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
        self.stats.stat_calls += 1;
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
        let stamp = Stamp::of(&meta);
        let id = identity(&meta);
        if let Some(cached) = self.dirs.get_mut(dir.as_os_str())
            && cached.seen.still(&stamp)
        {
            cached.generation = self.generation;
            return Ok(Some((id, Arc::clone(&cached.files))));
        }
        self.stats.dirs_listed += 1;
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
        let files: Arc<[OsString]> = files.into();
        self.dirs.insert(
            dir.as_os_str().to_owned(),
            Listing {
                seen: Seen::new(stamp, self.scan_start),
                generation: self.generation,
                files: Arc::clone(&files),
            },
        );
        Ok(Some((id, files)))
    }

    fn file(&mut self, index: usize, root: &Root, path: &Path) -> Arc<Outcome> {
        self.stats.stat_calls += 1;
        let fail = |problem| Arc::new(Outcome::failed(path, problem));
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) => return fail(io_problem("read the file", &e)),
        };
        if let Err(problem) = regular_file(path, &meta) {
            return fail(problem);
        }
        let stamp = Stamp::of(&meta);
        if self.files.len() <= index {
            self.files.resize_with(index + 1, HashMap::new);
        }
        if let Some(cached) = self.files[index].get_mut(path.as_os_str())
            && cached.seen.still(&stamp)
        {
            cached.generation = self.generation;
            return Arc::clone(&cached.outcome);
        }
        self.stats.files_parsed += 1;
        let outcome = Arc::new(parse(path, root.scope));
        self.files[index].insert(
            path.as_os_str().to_owned(),
            FileCache {
                seen: Seen::new(stamp, self.scan_start),
                generation: self.generation,
                outcome: Arc::clone(&outcome),
            },
        );
        outcome
    }
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

impl crate::stamp::Generational for Listing {
    fn generation(&self) -> u64 {
        self.generation
    }
}
