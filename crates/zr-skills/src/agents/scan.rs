//! One pass over the agent-type roots: list each folder (and its
//! sub-folders, `agents/**/*.md`) when it changed, parse only new and
//! changed files.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zr_caps::{ParsedAgentFile, parse_agent_file};

use super::{AgentSource, AgentTypeEntry};
use crate::cache::Pass;
use crate::diagnostic::Diagnostic;
use crate::diagnostic::{MAX_DEPTH, TooDeep};
use crate::error::Problem;
use crate::roots::{Root, Scope};
use crate::stamp::{identity, io_problem, read_bounded, regular_file};

/// What a folder's listing keeps: its `*.md` files and its sub-folders
/// (not hidden), each sorted, and whether each sub-folder is a link.
#[derive(Debug, Clone)]
pub(super) struct Listing {
    files: Arc<[OsString]>,
    subdirs: Arc<[(OsString, bool)]>,
}

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

/// One root's walk: its canonical path (worked out at the first linked
/// sub-folder) and the folders entered through links, to stop cycles.
struct Walk<'r> {
    root: &'r Root,
    canonical: Option<PathBuf>,
    entered: BTreeSet<PathBuf>,
    too_deep: TooDeep,
}

impl Scan<'_> {
    /// Lists and parses root `index` and its sub-folders, appending each
    /// file's outcome in path order.
    pub(super) fn root(&mut self, index: usize, root: &Root, found: &mut Vec<Arc<Outcome>>) {
        self.pass.stats.stat_calls += 1;
        let meta = match fs::metadata(&root.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(e) => {
                let problem = io_problem("read the agents folder", &e);
                self.diagnostics
                    .push(Diagnostic::error(&root.path, None, problem));
                return;
            }
        };
        if let Some(id) = identity(&meta) {
            if self.listed_roots.contains(&id) {
                // The same folder as a root of higher precedence.
                return;
            }
            self.listed_roots.push(id);
        }
        let mut walk = Walk {
            root,
            canonical: None,
            entered: BTreeSet::new(),
            too_deep: TooDeep::default(),
        };
        let mut files = Vec::new();
        self.dir(&mut walk, &root.path, Some(&meta), 0, &mut files);
        // Path order (component by component), whatever the walk's order:
        // inside one root the first path wins a duplicate name.
        files.sort();
        for path in &files {
            found.push(self.file(index, root, path));
        }
    }

    /// Collects the `*.md` files of `dir` and of its sub-folders.
    fn dir(
        &mut self,
        walk: &mut Walk<'_>,
        dir: &Path,
        meta: Option<&fs::Metadata>,
        depth: usize,
        files: &mut Vec<PathBuf>,
    ) {
        let listing = match self.listing(dir, meta) {
            Ok(listing) => listing,
            Err(problem) => {
                self.diagnostics.push(Diagnostic::error(dir, None, problem));
                return;
            }
        };
        files.extend(listing.files.iter().map(|name| dir.join(name)));
        for (name, is_link) in listing.subdirs.iter() {
            let sub = dir.join(name);
            if depth + 1 > MAX_DEPTH {
                walk.too_deep
                    .report(&mut self.diagnostics, &sub, "agent types");
                continue;
            }
            if *is_link && !self.enter_link(walk, &sub) {
                continue;
            }
            self.dir(walk, &sub, None, depth + 1, files);
        }
    }

    /// Whether to walk `sub`, a linked folder: only when it stays inside
    /// the root (else it is refused, with a diagnostic) and was not
    /// entered before (a cycle).
    fn enter_link(&mut self, walk: &mut Walk<'_>, sub: &Path) -> bool {
        let canonical = match &walk.canonical {
            Some(path) => path.clone(),
            None => match fs::canonicalize(&walk.root.path) {
                Ok(path) => {
                    // A link back to the root itself is a cycle too.
                    walk.entered.insert(path.clone());
                    walk.canonical.insert(path).clone()
                }
                Err(e) => {
                    let problem = io_problem("open the agents folder", &e);
                    self.diagnostics.push(Diagnostic::error(sub, None, problem));
                    return false;
                }
            },
        };
        match fs::canonicalize(sub) {
            Ok(target) if target.starts_with(&canonical) => walk.entered.insert(target),
            Ok(target) => {
                self.diagnostics.push(Diagnostic::error(
                    sub,
                    None,
                    Problem::EscapesRoot {
                        kind: "agents",
                        target,
                        root: walk.root.path.clone(),
                    },
                ));
                false
            }
            Err(e) => {
                let problem = io_problem("follow the link", &e);
                self.diagnostics.push(Diagnostic::error(sub, None, problem));
                false
            }
        }
    }

    /// The listing of `dir` (from the cache when its stamp is unchanged);
    /// `meta` when the caller already has it.
    fn listing(&mut self, dir: &Path, meta: Option<&fs::Metadata>) -> Result<Listing, Problem> {
        let owned;
        let meta = match meta {
            Some(meta) => meta,
            None => {
                self.pass.stats.stat_calls += 1;
                owned = fs::metadata(dir).map_err(|e| io_problem("read the agents folder", &e))?;
                &owned
            }
        };
        if !meta.is_dir() {
            return Err(Problem::Io {
                action: "read the agents folder",
                kind: io::ErrorKind::NotADirectory,
            });
        }
        self.pass.listing(dir, meta, || list(dir))
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

/// The `*.md` files and the sub-folders of `dir`, each sorted. Hidden
/// entries are editors' and systems' (Emacs' `.#x.md` lock links, macOS'
/// `._x.md`, `.git`), never agent types; nor is a `README.md` (in any
/// case), which collections put in every folder.
fn list(dir: &Path) -> Result<Listing, Problem> {
    let mut files = Vec::new();
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_problem("list the agents folder", &e))? {
        let entry = entry.map_err(|e| io_problem("list the agents folder", &e))?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text.starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            subdirs.push((name, false));
        } else if kind.is_symlink() && fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()) {
            subdirs.push((name, true));
        } else if text.ends_with(".md") && !text.eq_ignore_ascii_case("README.md") {
            files.push(name);
        }
    }
    files.sort();
    subdirs.sort();
    Ok(Listing {
        files: files.into(),
        subdirs: subdirs.into(),
    })
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
        Ok(file) => match invalid_output_schema(path, &file) {
            Some(diagnostic) => Outcome {
                entry: None,
                diagnostics: vec![diagnostic],
            },
            None => loaded(path, scope, file),
        },
    }
}

/// The error of a file whose `outputSchema` does not compile, checked
/// here (with the `jsonschema` crate the engine checks answers with) so
/// that it names the file and line at load rather than failing a `Task`
/// call later.
fn invalid_output_schema(path: &Path, file: &ParsedAgentFile) -> Option<Diagnostic> {
    let schema = file.definition.output_schema.as_ref()?;
    let error = jsonschema::validator_for(schema).err()?;
    Some(Diagnostic::error(
        path,
        file.output_schema_line,
        Problem::InvalidOutputSchema {
            message: error.to_string(),
        },
    ))
}

/// The outcome of a file that parsed, with its warnings.
fn loaded(path: &Path, scope: Scope, file: ParsedAgentFile) -> Outcome {
    Outcome {
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
            inline_servers: file.inline_servers,
            extras: file.extras,
        })),
    }
}
