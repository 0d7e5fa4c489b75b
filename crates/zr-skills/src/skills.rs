//! The skill registry: roots in precedence order, a cache per file and
//! folder, and the immutable views it hands out.

mod scan;

use std::sync::{Arc, Mutex, PoisonError};

use zr_types::SkillDefinition;

use crate::assemble::{self, View};
use crate::cache::Cache;
use crate::diagnostic::Diagnostic;
use crate::roots::Roots;
use crate::skill::Skill;
use crate::stats::ScanStats;

use scan::{Listing, Scan};

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
    state: Mutex<Cache<Listing, SkillsView>>,
}

impl SkillRegistry {
    /// A registry over `roots` (see [`Roots::skills`] for the standard
    /// ones). Nothing is read until the first view.
    #[must_use]
    pub fn new(roots: Roots) -> Self {
        Self {
            roots,
            state: Mutex::default(),
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
        let mut scan = Scan {
            pass: state.begin(),
            diagnostics: Vec::new(),
            walked_roots: Vec::new(),
        };
        let mut found = Vec::new();
        for (index, root) in self.roots.as_slice().iter().enumerate() {
            scan.root(index, root, &mut found);
        }
        let (diagnostics, stats) = (scan.diagnostics, scan.pass.stats);
        state.finish(&found, &[], diagnostics, stats)
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

impl View for SkillsView {
    type Entry = Skill;

    fn assemble(skills: Vec<Arc<Skill>>, diagnostics: Vec<Diagnostic>) -> Self {
        let definitions = skills.iter().map(|s| Arc::clone(&s.definition)).collect();
        Self {
            skills,
            definitions,
            diagnostics,
        }
    }

    fn parts(&self) -> (&[Arc<Skill>], &[Diagnostic]) {
        (&self.skills, &self.diagnostics)
    }
}

impl SkillsView {
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
        assemble::by_name(&self.skills, name)
    }

    /// Every problem found, sorted by file and line.
    #[must_use]
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}
