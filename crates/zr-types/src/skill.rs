//! Skill definitions: reusable instructions an agent loads on demand.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::name::SkillName;

/// Where a skill's body (its instructions) comes from.
///
/// Only name and description enter the system prompt; the body is read when
/// the `Skill` tool is called (progressive disclosure), so a registry holds
/// the body's location, not its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillBody {
    /// The Markdown file (`SKILL.md`) whose text after the front matter is the
    /// body.
    File(PathBuf),
    /// A body given in code.
    Inline(String),
}

/// A skill as registered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillDefinition {
    /// Its name (equal to its folder).
    pub name: SkillName,
    /// What it is for and when to use it (at most 1024 characters).
    pub description: String,
    /// Where its instructions are.
    pub body: SkillBody,
    /// Tools the skill asks for while it is active (`allowed-tools`), if any.
    pub allowed_tools: Option<Vec<String>>,
    /// The skill's folder, against which its relative files are read.
    pub root: Option<PathBuf>,
}

impl SkillDefinition {
    /// A skill with an inline body and no folder.
    #[must_use]
    pub fn inline(
        name: SkillName,
        description: impl Into<String>,
        body: impl Into<String>,
    ) -> Self {
        Self {
            name,
            description: description.into(),
            body: SkillBody::Inline(body.into()),
            allowed_tools: None,
            root: None,
        }
    }
}
