//! Generic front matter: the splitter and YAML reader of agent-type files,
//! offered to other Markdown formats (skills' `SKILL.md`).

use std::path::Path;

use super::yaml::{Node, file_line};
use super::{AgentFileWarning, fail_at, read_front};
use crate::error::{AgentFileError, AgentFileProblem};

/// A Markdown file's YAML front matter, read without any key rules.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontMatter {
    /// The top-level keys, in file order.
    pub entries: Vec<FrontMatterEntry>,
    /// The text after the closing `---` line, trimmed.
    pub body: String,
    /// What was read leniently (a one-line value holding an unquoted
    /// `: `), one warning per line.
    pub warnings: Vec<AgentFileWarning>,
}

/// One top-level key of a front matter.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontMatterEntry {
    /// The key as written (a non-string key in its YAML spelling).
    pub key: String,
    /// Its value as JSON (nested mappings lose their file order; `.nan`,
    /// `.inf` and `-.inf`, which JSON cannot hold, become those strings).
    pub value: serde_json::Value,
    /// The key's line in the whole file, from 1.
    pub line: usize,
}

impl FrontMatter {
    /// The entry for `key`, if present.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&FrontMatterEntry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

/// Splits and reads the front matter of a Markdown file with the same rules
/// as [`parse_agent_file`](crate::parse_agent_file) (a `---` first line, a
/// closing `---` line, byte-order mark and CRLF accepted, a repeated key
/// refused), but checks no keys: callers apply their own.
///
/// ```
/// use std::path::Path;
/// use zr_caps::parse_front_matter;
/// let text = "---\nname: pdf\ndescription: Reads PDFs\n---\nUse it.\n";
/// let fm = parse_front_matter(Path::new("skills/pdf/SKILL.md"), text).unwrap();
/// assert_eq!(fm.entries[1].key, "description");
/// assert_eq!(fm.entries[1].line, 3);
/// assert_eq!(fm.body, "Use it.");
/// ```
///
/// # Errors
///
/// [`AgentFileError`] naming the file and line, with
/// [`AgentFileProblem::NoFrontMatter`],
/// [`AgentFileProblem::UnterminatedFrontMatter`],
/// [`AgentFileProblem::Yaml`] or [`AgentFileProblem::NotAMapping`]. Never
/// panics, whatever the input.
pub fn parse_front_matter(
    path_for_messages: &Path,
    text: &str,
) -> Result<FrontMatter, AgentFileError> {
    let (tree, body, warnings) = read_front(path_for_messages, text)?;
    let entries = match &tree.value {
        Node::Map(entries) => entries
            .iter()
            .map(|(key, value)| FrontMatterEntry {
                key: key.value.key_text(),
                value: value.value.to_json(),
                line: file_line(key, 1),
            })
            .collect(),
        Node::Null => Vec::new(),
        other => {
            return Err(fail_at(
                path_for_messages,
                file_line(&tree, 1),
                AgentFileProblem::NotAMapping {
                    found: other.describe(),
                },
            ));
        }
    };
    Ok(FrontMatter {
        entries,
        body,
        warnings,
    })
}
