//! The agent-type registry: built-in types, `agents/*.md` files in roots of
//! fixed precedence, re-read when they change.

mod scan;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use zr_caps::{AgentDefinition, ExtraKey, InlineServer};
use zr_types::AgentName;

use crate::assemble::{self, View};
use crate::builtin::builtin_agent_types;
use crate::cache::Cache;
use crate::diagnostic::Diagnostic;
use crate::error::Problem;
use crate::roots::{Roots, Scope};
use crate::scaffold::scaffold;
use crate::stats::ScanStats;

use scan::{Listing, Scan};

/// Where an agent type comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSource {
    /// Built into zr.
    Builtin,
    /// A Markdown file.
    File {
        /// The file.
        path: PathBuf,
        /// Whose root it is in.
        scope: Scope,
    },
}

/// One agent type of a view.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentTypeEntry {
    /// The definition (front matter plus the body as its prompt).
    pub definition: Arc<AgentDefinition>,
    /// Where it comes from.
    pub source: AgentSource,
    /// The file's `color` key.
    pub color: Option<String>,
    /// The file's `memory` key.
    pub memory: Option<String>,
    /// The MCP servers the file defines inline in `mcpServers`, for
    /// agents of this type only.
    pub inline_servers: Vec<InlineServer>,
    /// Keys zr does not know, in file order (each also has a warning).
    pub extras: Vec<ExtraKey>,
}

impl AgentTypeEntry {
    /// The type's name.
    #[must_use]
    pub fn name(&self) -> &AgentName {
        &self.definition.name
    }
}

impl assemble::Entry for AgentTypeEntry {
    const KIND: &'static str = "agent type";

    fn key(&self) -> &str {
        self.name().as_str()
    }

    fn source_file(&self) -> Option<&Path> {
        match &self.source {
            AgentSource::Builtin => None,
            AgentSource::File { path, .. } => Some(path),
        }
    }
}

/// The agent types of a set of roots plus the built-ins, re-read as files
/// change.
///
/// [`AgentRegistry::view`] lists each root's `*.md` files, sub-folders
/// included (not `README.md` files nor hidden files and folders such as
/// editors' `.#x.md` locks; other names such as `example.md.template` are
/// ignored),
/// `stat`s them and parses only the new and changed ones with
/// [`zr_caps::parse_agent_file`]. A file whose `name` is a built-in's
/// replaces the built-in.
#[derive(Debug)]
pub struct AgentRegistry {
    roots: Roots,
    scaffold: Option<PathBuf>,
    builtins: Vec<Arc<AgentTypeEntry>>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The diagnostics of the first-use files, once written (or not).
    scaffolded: Option<Vec<Diagnostic>>,
    cache: Cache<Listing, AgentTypesView>,
}

impl AgentRegistry {
    /// A registry over `roots` (see [`Roots::agents`]), with the built-in
    /// types and no first-use files.
    #[must_use]
    pub fn new(roots: Roots) -> Self {
        let builtins = builtin_agent_types()
            .into_iter()
            .map(|definition| {
                Arc::new(AgentTypeEntry {
                    definition: Arc::new(definition),
                    source: AgentSource::Builtin,
                    color: None,
                    memory: None,
                    inline_servers: Vec::new(),
                    extras: Vec::new(),
                })
            })
            .collect();
        Self {
            roots,
            scaffold: None,
            builtins,
            state: Mutex::new(State::default()),
        }
    }

    /// The standard registry of a project: [`Roots::agents`], and the
    /// first-use files in `<project>/.zr/agents`.
    #[must_use]
    pub fn for_project(project: &Path, home: Option<&Path>) -> Self {
        Self::new(Roots::agents(project, home)).with_scaffold(project.join(".zr").join("agents"))
    }

    /// On the first view, if `dir` does not exist, creates it with a
    /// `README.md` explaining the format and an `example.md.template`.
    #[must_use]
    pub fn with_scaffold(mut self, dir: impl Into<PathBuf>) -> Self {
        self.scaffold = Some(dir.into());
        self
    }

    /// The current agent types: re-reads what changed since the last view;
    /// the previous view (the same `Arc`) when nothing did (an entry
    /// modified within the last two seconds counts as changed).
    pub fn view(&self) -> Arc<AgentTypesView> {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = &mut *guard;
        let scaffold_diagnostics = state
            .scaffolded
            .get_or_insert_with(|| match &self.scaffold {
                None => Vec::new(),
                Some(dir) => match scaffold(dir) {
                    Ok(()) => Vec::new(),
                    Err(e) => vec![Diagnostic::error(
                        dir,
                        None,
                        Problem::Scaffold { kind: e.kind() },
                    )],
                },
            })
            .clone();
        let state = &mut state.cache;
        let mut scan = Scan {
            pass: state.begin(),
            diagnostics: scaffold_diagnostics,
            listed_roots: Vec::new(),
        };
        let mut found = Vec::new();
        for (index, root) in self.roots.as_slice().iter().enumerate() {
            scan.root(index, root, &mut found);
        }
        let (diagnostics, stats) = (scan.diagnostics, scan.pass.stats);
        state.finish(&found, &self.builtins, diagnostics, stats)
    }

    /// What the last [`AgentRegistry::view`] did.
    #[must_use]
    pub fn last_scan(&self) -> ScanStats {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cache
            .stats
    }
}

/// The agent types at one moment: immutable, cheap to share.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentTypesView {
    types: Vec<Arc<AgentTypeEntry>>,
    diagnostics: Vec<Diagnostic>,
}

impl View for AgentTypesView {
    type Entry = AgentTypeEntry;

    fn assemble(types: Vec<Arc<AgentTypeEntry>>, diagnostics: Vec<Diagnostic>) -> Self {
        Self { types, diagnostics }
    }

    fn parts(&self) -> (&[Arc<AgentTypeEntry>], &[Diagnostic]) {
        (&self.types, &self.diagnostics)
    }
}

impl AgentTypesView {
    /// The types, sorted by name; each name once (a file beats a built-in,
    /// an earlier root a later one).
    #[must_use]
    pub fn types(&self) -> &[Arc<AgentTypeEntry>] {
        &self.types
    }

    /// The type named `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Arc<AgentTypeEntry>> {
        assemble::by_name(&self.types, name)
    }

    /// Every problem found, sorted by file and line.
    #[must_use]
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}
