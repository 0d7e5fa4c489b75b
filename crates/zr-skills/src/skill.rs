//! One skill: its `SKILL.md` front matter checked against the Agent Skills
//! rules and turned into a [`SkillDefinition`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use zr_caps::{AgentFileError, AgentFileProblem, FrontMatter, parse_front_matter};
use zr_types::{SkillBody, SkillDefinition, SkillName};

use crate::diagnostic::Diagnostic;
use crate::error::Problem;
use crate::roots::Root;

/// The longest description allowed, in characters.
pub const MAX_DESCRIPTION: usize = 1024;

/// Keys zr reads.
const KNOWN: &str = "name, description, allowed-tools, license, metadata";

/// Keys other tools define (the Agent Skills spec, Claude Code): kept in
/// [`Skill::extras`] without a warning, so existing folders load quietly.
const TOLERATED: [&str; 8] = [
    "compatibility",
    "argument-hint",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "context",
    "agent",
    "hooks",
];

/// A skill found in a root.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The definition the resolver and the `Skill` tool use: its body is
    /// [`SkillBody::File`] (the `SKILL.md`) and its root the skill's folder.
    pub definition: Arc<SkillDefinition>,
    /// The `license` key.
    pub license: Option<String>,
    /// The `metadata` mapping (scalar values as text).
    pub metadata: BTreeMap<String, String>,
    /// Other keys, kept as written (as JSON).
    pub extras: BTreeMap<String, Value>,
    /// The root the skill was found in.
    pub root: Root,
}

impl Skill {
    /// The skill's name.
    #[must_use]
    pub fn name(&self) -> &SkillName {
        &self.definition.name
    }

    /// Its `SKILL.md`.
    #[must_use]
    pub fn file(&self) -> &Path {
        match &self.definition.body {
            SkillBody::File(path) => path,
            SkillBody::Inline(_) => Path::new(""),
        }
    }

    /// Its folder, against which its relative files are read.
    #[must_use]
    pub fn folder(&self) -> &Path {
        self.definition.root.as_deref().unwrap_or(Path::new(""))
    }
}

impl crate::assemble::Entry for Skill {
    const KIND: &'static str = "skill";

    fn key(&self) -> &str {
        self.name().as_str()
    }

    fn source_file(&self) -> Option<&Path> {
        Some(self.file())
    }
}

/// A front-matter error from zr-caps as a diagnostic of this file.
pub(crate) fn front_matter_diagnostic(error: AgentFileError) -> Diagnostic {
    let problem = match error.problem {
        AgentFileProblem::NoFrontMatter => Problem::NoFrontMatter,
        AgentFileProblem::UnterminatedFrontMatter => Problem::UnterminatedFrontMatter,
        AgentFileProblem::Yaml { column, message } => Problem::Yaml { column, message },
        AgentFileProblem::NotAMapping { found } => Problem::NotAMapping { found },
        other => Problem::AgentFile(other),
    };
    Diagnostic::error(&error.path, Some(error.line), problem)
}

/// "the number 3", "a list": what a value is, for messages.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let shown: String = s.chars().take(60).collect();
            if shown.len() < s.len() {
                format!("the string {shown:?}...")
            } else {
                format!("the string {shown:?}")
            }
        }
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping".to_owned(),
    }
}

/// Splits `allowed-tools` written as one string: entries are separated by
/// commas or white space, except inside parentheses (`Bash(git add:*)`).
pub(crate) fn split_tools(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut current)),
            c if c.is_whitespace() && depth == 0 => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Reads the front matter `text` of `file` (in the folder named `folder`)
/// found under `root`: the skill, or the errors that keep it from loading,
/// plus warnings either way.
pub(crate) fn parse_skill(
    file: &Path,
    folder: &str,
    text: &str,
    root: &Root,
) -> (Option<Skill>, Vec<Diagnostic>) {
    let front = match parse_front_matter(file, text) {
        Ok(front) => front,
        Err(error) => return (None, vec![front_matter_diagnostic(error)]),
    };
    let lenient = front.warnings.iter().map(|w| {
        Diagnostic::warning(
            file,
            Some(w.line),
            Problem::AgentFileWarning {
                key: w.key.clone(),
                message: w.message.clone(),
            },
        )
    });
    let mut checker = Checker {
        file,
        diagnostics: lenient.collect(),
        failed: false,
    };
    let skill = checker.skill(&front, folder, root);
    let Checker { diagnostics, .. } = checker;
    (skill, diagnostics)
}

struct Checker<'a> {
    file: &'a Path,
    diagnostics: Vec<Diagnostic>,
    failed: bool,
}

impl Checker<'_> {
    fn fail(&mut self, line: usize, problem: Problem) {
        self.failed = true;
        self.diagnostics
            .push(Diagnostic::error(self.file, Some(line), problem));
    }

    /// A required, non-empty string.
    fn required<'v>(
        &mut self,
        front: &'v FrontMatter,
        key: &'static str,
        hint: &'static str,
    ) -> Option<(&'v str, usize)> {
        match front.get(key) {
            None => {
                self.fail(1, Problem::MissingKey { key, hint });
                None
            }
            Some(entry) => match &entry.value {
                Value::String(s) if !s.trim().is_empty() => Some((s.as_str(), entry.line)),
                Value::String(_) | Value::Null => {
                    self.fail(entry.line, Problem::MissingKey { key, hint });
                    None
                }
                other => {
                    self.fail(
                        entry.line,
                        Problem::WrongType {
                            key,
                            expected: "a string",
                            found: describe(other),
                        },
                    );
                    None
                }
            },
        }
    }

    fn skill(&mut self, front: &FrontMatter, folder: &str, root: &Root) -> Option<Skill> {
        let name = self
            .required(front, "name", "<the folder's name, e.g. pdf-tools>")
            .and_then(|(text, line)| match text.parse::<SkillName>() {
                Err(error) => {
                    self.fail(line, Problem::InvalidName { error });
                    None
                }
                Ok(name) if name.as_str() != folder => {
                    // Claude Code loads such a skill under its `name`.
                    self.diagnostics.push(Diagnostic::warning(
                        self.file,
                        Some(line),
                        Problem::NameMismatch {
                            name: name.to_string(),
                            folder: folder.to_owned(),
                        },
                    ));
                    Some(name)
                }
                Ok(name) => Some(name),
            });
        let description = self
            .required(
                front,
                "description",
                "<what the skill does and when to use it>",
            )
            .and_then(|(text, line)| {
                // Counted as stored: a block scalar's closing line break
                // and surrounding blanks are not part of it.
                let text = text.trim();
                let len = text.chars().count();
                if len > MAX_DESCRIPTION {
                    self.fail(
                        line,
                        Problem::DescriptionTooLong {
                            len,
                            max: MAX_DESCRIPTION,
                        },
                    );
                    None
                } else {
                    Some(text.to_owned())
                }
            });
        let allowed_tools = self.allowed_tools(front);
        let license = self.license(front);
        let metadata = self.metadata(front);
        let mut extras = BTreeMap::new();
        for entry in &front.entries {
            match entry.key.as_str() {
                "name" | "description" | "allowed-tools" | "license" | "metadata" => {}
                key => {
                    if !TOLERATED.contains(&key) {
                        self.diagnostics.push(Diagnostic::warning(
                            self.file,
                            Some(entry.line),
                            Problem::UnknownKey {
                                key: key.to_owned(),
                                known: KNOWN,
                            },
                        ));
                    }
                    extras.insert(entry.key.clone(), entry.value.clone());
                }
            }
        }
        let (Some(name), Some(description)) = (name, description) else {
            return None;
        };
        if self.failed {
            return None;
        }
        let folder_path: PathBuf = self
            .file
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        let definition = SkillDefinition {
            name,
            description,
            body: SkillBody::File(self.file.to_path_buf()),
            allowed_tools,
            root: Some(folder_path),
        };
        Some(Skill {
            definition: Arc::new(definition),
            license,
            metadata,
            extras,
            root: root.clone(),
        })
    }

    fn allowed_tools(&mut self, front: &FrontMatter) -> Option<Vec<String>> {
        let entry = front.get("allowed-tools")?;
        let wrong = |found: &Value| Problem::WrongType {
            key: "allowed-tools",
            expected: "a list of tool names or one string of them separated by commas or spaces",
            found: describe(found),
        };
        match &entry.value {
            Value::Null => Some(Vec::new()),
            Value::String(s) => Some(split_tools(s)),
            Value::Array(items) => {
                let mut tools = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        Value::String(s) if !s.trim().is_empty() => tools.push(s.trim().to_owned()),
                        other => {
                            self.fail(entry.line, wrong(other));
                            return None;
                        }
                    }
                }
                Some(tools)
            }
            other => {
                self.fail(entry.line, wrong(other));
                None
            }
        }
    }

    fn license(&mut self, front: &FrontMatter) -> Option<String> {
        let entry = front.get("license")?;
        match &entry.value {
            Value::String(s) => Some(s.clone()),
            other => {
                self.fail(
                    entry.line,
                    Problem::WrongType {
                        key: "license",
                        expected: "a string (a license name or the file that holds it)",
                        found: describe(other),
                    },
                );
                None
            }
        }
    }

    fn metadata(&mut self, front: &FrontMatter) -> BTreeMap<String, String> {
        let Some(entry) = front.get("metadata") else {
            return BTreeMap::new();
        };
        let wrong = |found: String| Problem::WrongType {
            key: "metadata",
            expected: "a mapping of names to text values",
            found,
        };
        match &entry.value {
            Value::Null => BTreeMap::new(),
            Value::Object(map) => {
                let mut out = BTreeMap::new();
                for (key, value) in map {
                    let text = match value {
                        Value::String(s) => s.clone(),
                        Value::Bool(_) | Value::Number(_) => value.to_string(),
                        other => {
                            self.fail(
                                entry.line,
                                wrong(format!("{} under '{key}'", describe(other))),
                            );
                            return BTreeMap::new();
                        }
                    };
                    out.insert(key.clone(), text);
                }
                out
            }
            other => {
                self.fail(entry.line, wrong(describe(other)));
                BTreeMap::new()
            }
        }
    }
}

#[cfg(test)]
mod tests;
