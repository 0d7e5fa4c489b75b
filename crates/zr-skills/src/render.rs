//! Stable text forms of views, for people (`zr skills`, `zr agents`) and
//! snapshots.

use std::fmt;
use std::path::Path;

use zr_types::SkillBody;

use crate::agents::{AgentSource, AgentTypesView};
use crate::shown::shown_path;
use crate::skills::SkillsView;

/// A view shown with paths relative to a base folder.
#[derive(Debug, Clone, Copy)]
pub struct Relative<'a, V> {
    view: &'a V,
    base: Option<&'a Path>,
}

impl SkillsView {
    /// The view as text with paths under `base` shown relative to it.
    #[must_use]
    pub fn display_relative<'a>(&'a self, base: &'a Path) -> Relative<'a, Self> {
        Relative {
            view: self,
            base: Some(base),
        }
    }
}

impl AgentTypesView {
    /// The view as text with paths under `base` shown relative to it.
    #[must_use]
    pub fn display_relative<'a>(&'a self, base: &'a Path) -> Relative<'a, Self> {
        Relative {
            view: self,
            base: Some(base),
        }
    }
}

fn diagnostics(
    f: &mut fmt::Formatter<'_>,
    list: &[crate::diagnostic::Diagnostic],
    base: Option<&Path>,
) -> fmt::Result {
    writeln!(f, "diagnostics ({}):", list.len())?;
    for d in list {
        match base {
            Some(base) => writeln!(f, "  {}", d.display_relative(base))?,
            None => writeln!(f, "  {d}")?,
        }
    }
    Ok(())
}

/// One block per skill (name, root, folder, description, allowed tools,
/// license, metadata, other keys), then the diagnostics.
impl fmt::Display for Relative<'_, SkillsView> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "skills ({}):", self.view.skills().len())?;
        for skill in self.view.skills() {
            let d = &skill.definition;
            writeln!(f, "skill {}", d.name)?;
            writeln!(
                f,
                "  root: {} ({})",
                shown_path(&skill.root.path, self.base),
                skill.root.scope
            )?;
            writeln!(f, "  folder: {}", shown_path(skill.folder(), self.base))?;
            match &d.body {
                SkillBody::File(path) => writeln!(f, "  body: {}", shown_path(path, self.base))?,
                SkillBody::Inline(_) => writeln!(f, "  body: inline")?,
            }
            writeln!(f, "  description: {:?}", d.description)?;
            match &d.allowed_tools {
                None => writeln!(f, "  allowed tools: unset")?,
                Some(tools) => writeln!(f, "  allowed tools: {tools:?}")?,
            }
            match &skill.license {
                None => writeln!(f, "  license: unset")?,
                Some(license) => writeln!(f, "  license: {license:?}")?,
            }
            for (key, value) in &skill.metadata {
                writeln!(f, "  metadata {key}: {value:?}")?;
            }
            for (key, value) in &skill.extras {
                writeln!(f, "  other {key}: {value}")?;
            }
        }
        diagnostics(f, self.view.diagnostics(), self.base)
    }
}

impl fmt::Display for SkillsView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Relative {
            view: self,
            base: None,
        }
        .fmt(f)
    }
}

/// One block per type (source, then the definition as zr-caps prints it),
/// then the diagnostics.
impl fmt::Display for Relative<'_, AgentTypesView> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "agent types ({}):", self.view.types().len())?;
        for entry in self.view.types() {
            match &entry.source {
                AgentSource::Builtin => writeln!(f, "source: built-in")?,
                AgentSource::File { path, scope } => {
                    writeln!(f, "source: {} ({scope})", shown_path(path, self.base))?;
                }
            }
            write!(f, "{}", entry.definition)?;
            if let Some(color) = &entry.color {
                writeln!(f, "  color: {color:?}")?;
            }
            if let Some(memory) = &entry.memory {
                writeln!(f, "  memory: {memory:?}")?;
            }
            for extra in &entry.extras {
                writeln!(f, "  other {}: {}", extra.key, extra.value)?;
            }
        }
        diagnostics(f, self.view.diagnostics(), self.base)
    }
}

impl fmt::Display for AgentTypesView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Relative {
            view: self,
            base: None,
        }
        .fmt(f)
    }
}
