//! One pass over the skill roots: `stat` every folder and `SKILL.md`, list
//! and parse only what changed, refuse links that leave their root.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cache::Pass;
use crate::diagnostic::Diagnostic;
use crate::diagnostic::{MAX_DEPTH, TooDeep};
use crate::error::Problem;
use crate::roots::Root;
use crate::skill::Skill;
use crate::skill::parse_skill;
use crate::stamp::{io_problem, read_front_matter, regular_file};

/// The name of a skill's file.
const SKILL_FILE: &str = "SKILL.md";

/// Sub-folders (not hidden), sorted, and whether each is a link.
type Subdirs = Arc<[(OsString, bool)]>;

/// What a folder's listing keeps: the entries that matter.
#[derive(Debug, Clone)]
pub(crate) struct Listing {
    /// Whether the folder holds a `SKILL.md` (and whether it is a link).
    skill_file: Option<bool>,
    /// Sub-folders (not hidden), sorted, and whether each is a link.
    subdirs: Subdirs,
}

/// What parsing one `SKILL.md` gave.
pub(crate) type Outcome = crate::assemble::Outcome<Skill>;

/// The state of one [`SkillRegistry::view`](crate::SkillRegistry::view).
pub(crate) struct Scan<'a> {
    pub(crate) pass: Pass<'a, Listing, Outcome>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// The canonical paths of the roots walked so far: a root that is the
    /// same folder as an earlier one (`.claude/skills` linked to
    /// `.agents/skills`) is not walked again.
    pub(crate) walked_roots: Vec<PathBuf>,
}

/// Where a walk is: the root's index and canonical path, folders entered
/// through links (to stop cycles).
struct Walk<'r> {
    index: usize,
    root: &'r Root,
    canonical: PathBuf,
    entered: BTreeSet<PathBuf>,
    too_deep: TooDeep,
}

impl Scan<'_> {
    /// Walks `root` (index `index` in precedence order), appending what
    /// each `SKILL.md` gave, in path order.
    pub(crate) fn root(&mut self, index: usize, root: &Root, found: &mut Vec<Arc<Outcome>>) {
        let canonical = match fs::canonicalize(&root.path) {
            Ok(path) => path,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(e) => {
                self.diagnostics.push(Diagnostic::error(
                    &root.path,
                    None,
                    io_problem("open the skills root", &e),
                ));
                return;
            }
        };
        if self.walked_roots.contains(&canonical) {
            // The same folder as a root of higher precedence: its skills
            // are those, not duplicates of them.
            tracing::trace!(root = %root.path.display(), "same folder as an earlier root");
            return;
        }
        self.walked_roots.push(canonical.clone());
        let mut walk = Walk {
            index,
            root,
            entered: BTreeSet::from([canonical.clone()]),
            canonical,
            too_deep: TooDeep::default(),
        };
        self.dir(&mut walk, &root.path, 0, found);
    }

    /// The listing of `dir`, from the cache when its stamp is unchanged.
    fn listing(&mut self, dir: &Path) -> Result<Listing, Problem> {
        self.pass.stats.stat_calls += 1;
        let meta = fs::metadata(dir).map_err(|e| io_problem("read the folder", &e))?;
        if !meta.is_dir() {
            return Err(Problem::Io {
                action: "read the folder",
                kind: io::ErrorKind::NotADirectory,
            });
        }
        self.pass.listing(dir, &meta, || list(dir))
    }

    /// Whether `path`, a link, stays inside the walk's root; reports it
    /// when it does not.
    fn inside(&mut self, walk: &Walk<'_>, path: &Path) -> Option<PathBuf> {
        match fs::canonicalize(path) {
            Ok(target) if target.starts_with(&walk.canonical) => Some(target),
            Ok(target) => {
                self.diagnostics.push(Diagnostic::error(
                    path,
                    None,
                    Problem::EscapesRoot {
                        kind: "skills",
                        target,
                        root: walk.root.path.clone(),
                    },
                ));
                None
            }
            Err(e) => {
                self.diagnostics.push(Diagnostic::error(
                    path,
                    None,
                    io_problem("follow the link", &e),
                ));
                None
            }
        }
    }

    fn dir(
        &mut self,
        walk: &mut Walk<'_>,
        dir: &Path,
        depth: usize,
        found: &mut Vec<Arc<Outcome>>,
    ) {
        if depth > 0 && self.known_skill(walk, dir, found) {
            return;
        }
        let Listing {
            skill_file,
            subdirs,
        } = match self.listing(dir) {
            Ok(listing) => listing,
            Err(problem) => {
                self.diagnostics.push(Diagnostic::error(dir, None, problem));
                return;
            }
        };
        if let Some(is_link) = skill_file {
            let file = dir.join(SKILL_FILE);
            if depth == 0 {
                self.diagnostics
                    .push(Diagnostic::warning(&file, None, Problem::SkillFileInRoot));
            } else {
                if !is_link || self.inside(walk, &file).is_some() {
                    self.pass.stats.stat_calls += 1;
                    let outcome = match fs::metadata(&file) {
                        Ok(meta) => self.file(walk, dir, &file, &meta),
                        Err(e) => Arc::new(Outcome::failed(&file, io_problem("read the file", &e))),
                    };
                    found.push(outcome);
                }
                // A skill folder's sub-folders are its supporting files.
                return;
            }
        }
        for (name, is_link) in subdirs.iter() {
            let sub = dir.join(name);
            if depth + 1 > MAX_DEPTH {
                walk.too_deep.report(&mut self.diagnostics, &sub, "skills");
                continue;
            }
            if *is_link {
                let Some(target) = self.inside(walk, &sub) else {
                    continue;
                };
                if !walk.entered.insert(target) {
                    continue;
                }
            }
            self.dir(walk, &sub, depth + 1, found);
        }
    }

    /// The fast path for a folder that was a skill folder at the last scan:
    /// when its `SKILL.md` is still a plain file, one `lstat` of it says
    /// everything (its sub-folders are not searched, so the folder's own
    /// listing does not matter). Returns false to take the full path
    /// (gone, replaced by a link, or a folder not known as a skill).
    fn known_skill(&mut self, walk: &Walk<'_>, dir: &Path, found: &mut Vec<Arc<Outcome>>) -> bool {
        let Some(cached) = self.pass.dirs.get_mut(dir.as_os_str()) else {
            return false;
        };
        if cached.value.skill_file != Some(false) || !cached.seen.trusted() {
            return false;
        }
        let file = dir.join(SKILL_FILE);
        self.pass.stats.stat_calls += 1;
        match fs::symlink_metadata(&file) {
            Ok(meta) if meta.is_file() => {
                cached.generation = self.pass.generation;
                let outcome = self.file(walk, dir, &file, &meta);
                found.push(outcome);
                true
            }
            _ => false,
        }
    }

    /// The outcome of `file` (whose metadata is `meta`) in folder `dir`,
    /// parsed again only if changed.
    fn file(
        &mut self,
        walk: &Walk<'_>,
        dir: &Path,
        file: &Path,
        meta: &fs::Metadata,
    ) -> Arc<Outcome> {
        if let Err(problem) = regular_file(file, meta) {
            return Arc::new(Outcome::failed(file, problem));
        }
        self.pass.outcome(walk.index, file, meta, || {
            let folder = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match read_front_matter(file) {
                Err(problem) => Outcome::failed(file, problem),
                Ok(text) => {
                    let (skill, diagnostics) = parse_skill(file, &folder, &text, walk.root);
                    Outcome {
                        entry: skill.map(Arc::new),
                        diagnostics,
                    }
                }
            }
        })
    }
}

/// The entries of `dir` that matter: its `SKILL.md` and its sub-folders.
fn list(dir: &Path) -> Result<Listing, Problem> {
    let mut skill_file = None;
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_problem("list the folder", &e))? {
        let entry = entry.map_err(|e| io_problem("list the folder", &e))?;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        if name == SKILL_FILE && !kind.is_dir() {
            skill_file = Some(kind.is_symlink());
        } else if name.as_encoded_bytes().starts_with(b".") {
            // Hidden folders (.git, editors' state) hold no skills.
        } else if kind.is_dir() {
            subdirs.push((name, false));
        } else if kind.is_symlink() && fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()) {
            subdirs.push((name, true));
        }
    }
    subdirs.sort();
    Ok(Listing {
        skill_file,
        subdirs: subdirs.into(),
    })
}
