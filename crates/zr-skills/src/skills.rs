//! The skill registry: roots in precedence order, a cache per file and
//! folder, and the immutable views it hands out.

mod scan;

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use zr_types::SkillDefinition;

use crate::stamp;
use crate::{Diagnostic, Problem, Roots, ScanStats, Skill};

use scan::{FileCache, Listing, Scan};

/// The skills of a set of roots, re-read as they change.
///
/// [`SkillRegistry::view`] returns the current [`SkillsView`]. The first
/// call reads every `SKILL.md` front matter (never a body); later calls
/// `stat` each folder and `SKILL.md` and re-read only what changed. When
/// nothing changed, the previous view is returned (the same `Arc`); an
/// entry modified within the last two seconds counts as changed, since its
/// stamp cannot be trusted yet (see the crate docs on hot reload).
///
/// ```
/// use zr_skills::{Roots, SkillRegistry};
/// let project = tempfile::tempdir().unwrap();
/// let folder = project.path().join(".zr/skills/pdf-tools");
/// std::fs::create_dir_all(&folder).unwrap();
/// std::fs::write(
///     folder.join("SKILL.md"),
///     "---\nname: pdf-tools\ndescription: Fill PDF forms\n---\nRun fill.py.\n",
/// )
/// .unwrap();
/// let registry = SkillRegistry::new(Roots::skills(project.path(), None));
/// let view = registry.view();
/// assert_eq!(view.get("pdf-tools").unwrap().definition.description, "Fill PDF forms");
/// assert_eq!(registry.last_scan().files_parsed, 1);
/// ```
#[derive(Debug)]
pub struct SkillRegistry {
    roots: Roots,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    generation: u64,
    dirs: HashMap<OsString, Listing>,
    files: Vec<HashMap<OsString, FileCache>>,
    last: Option<Arc<SkillsView>>,
    stats: ScanStats,
}

impl SkillRegistry {
    /// A registry over `roots` (see [`Roots::skills`] for the standard
    /// ones). Nothing is read until the first view.
    #[must_use]
    pub fn new(roots: Roots) -> Self {
        Self {
            roots,
            state: Mutex::new(State::default()),
        }
    }

    /// The roots, in precedence order.
    #[must_use]
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// The current skills: re-reads what changed since the last view.
    ///
    /// Never fails: a broken file or unreadable folder is a diagnostic of
    /// the view, and the other skills still load.
    pub fn view(&self) -> Arc<SkillsView> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = &mut *state;
        state.generation += 1;
        let mut scan = Scan {
            generation: state.generation,
            scan_start: SystemTime::now(),
            dirs: &mut state.dirs,
            files: &mut state.files,
            stats: ScanStats::default(),
            diagnostics: Vec::new(),
            walked_roots: Vec::new(),
        };
        let mut found = Vec::new();
        for (index, root) in self.roots.as_slice().iter().enumerate() {
            scan.root(index, root, &mut found);
        }
        let Scan {
            stats,
            mut diagnostics,
            generation,
            ..
        } = scan;
        let pruned = stamp::prune(&mut state.dirs, &mut state.files, generation);

        // Discovery order is precedence order; a stable sort by name keeps
        // it among equal names, so the first of each run wins.
        let mut all: Vec<&Arc<Skill>> = Vec::with_capacity(found.len());
        for outcome in &found {
            diagnostics.extend(outcome.diagnostics.iter().cloned());
            all.extend(outcome.skill.as_ref());
        }
        all.sort_by(|a, b| a.name().cmp(b.name()));
        let mut skills: Vec<Arc<Skill>> = Vec::with_capacity(all.len());
        for skill in all {
            match skills.last() {
                Some(winner) if winner.name() == skill.name() => {
                    diagnostics.push(Diagnostic::warning(
                        skill.file(),
                        None,
                        Problem::Shadowed {
                            kind: "skill",
                            name: skill.name().to_string(),
                            winner: winner.file().to_path_buf(),
                        },
                    ));
                }
                _ => skills.push(Arc::clone(skill)),
            }
        }
        diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        state.stats = stats;
        if let Some(last) = &state.last
            && !pruned
            && last.diagnostics == diagnostics
            && stamp::same_entries(&last.skills, &skills)
        {
            return Arc::clone(last);
        }
        tracing::debug!(
            files_parsed = stats.files_parsed,
            dirs_listed = stats.dirs_listed,
            skills = skills.len(),
            diagnostics = diagnostics.len(),
            "skill registry changed"
        );
        let view = Arc::new(SkillsView::new(skills, diagnostics));
        state.last = Some(Arc::clone(&view));
        view
    }

    /// What the last [`SkillRegistry::view`] did: how many folders it
    /// listed and files it parsed.
    #[must_use]
    pub fn last_scan(&self) -> ScanStats {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stats
    }
}

/// The skills of a registry at one moment: immutable, cheap to share.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillsView {
    skills: Vec<Arc<Skill>>,
    definitions: Vec<Arc<SkillDefinition>>,
    diagnostics: Vec<Diagnostic>,
}

impl SkillsView {
    fn new(skills: Vec<Arc<Skill>>, diagnostics: Vec<Diagnostic>) -> Self {
        let definitions = skills.iter().map(|s| Arc::clone(&s.definition)).collect();
        Self {
            skills,
            definitions,
            diagnostics,
        }
    }

    /// The skills, sorted by name; each name once (the root of highest
    /// precedence wins).
    #[must_use]
    pub fn skills(&self) -> &[Arc<Skill>] {
        &self.skills
    }

    /// The definitions in the same order: the resolver's skill registry
    /// (`ResolveInput::skills`).
    #[must_use]
    pub fn definitions(&self) -> &[Arc<SkillDefinition>] {
        &self.definitions
    }

    /// The skill named `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.skills
            .binary_search_by(|s| s.name().as_str().cmp(name))
            .ok()
            .and_then(|i| self.skills.get(i))
    }

    /// Every problem found, sorted by file and line.
    #[must_use]
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}
