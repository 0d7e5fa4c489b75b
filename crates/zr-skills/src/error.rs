//! What can be wrong with a skill folder or an agent-type file, and why a
//! skill's body could not be loaded.

use std::io;
use std::path::PathBuf;

use thiserror::Error;
use zr_caps::AgentFileProblem;
use zr_types::NameError;

/// What a [`Diagnostic`](crate::Diagnostic) reports: the problem and what to
/// do about it, as a sentence.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Problem {
    /// `SKILL.md` does not start with a `---` line.
    #[error(
        "SKILL.md must start with a line '---' that opens the YAML front matter (name, description), followed by a closing '---' and the instructions"
    )]
    NoFrontMatter,
    /// No `---` line closes the front matter.
    #[error(
        "the front matter opened here is never closed; add a line with only '---' after the last key"
    )]
    UnterminatedFrontMatter,
    /// The front matter is longer than zr reads before giving up.
    #[error(
        "no closing '---' within the first {limit} bytes; close the front matter after its last key"
    )]
    FrontMatterTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// The front matter is not valid YAML.
    #[error("invalid YAML in the front matter (column {column}): {message}")]
    Yaml {
        /// The column, from 1 (0 when unknown).
        column: usize,
        /// The YAML parser's message.
        message: String,
    },
    /// The front matter is not a mapping of keys.
    #[error("the front matter must be 'key: value' lines, found {found}")]
    NotAMapping {
        /// What was found.
        found: String,
    },
    /// The file is not UTF-8 text.
    #[error("the file is not UTF-8 text; save it as UTF-8")]
    NotUtf8,
    /// The file is larger than zr reads.
    #[error("the file is {size} bytes long; at most {limit} are read; shorten it")]
    TooLarge {
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// A folder, device or named pipe where a file is expected (reading a
    /// named pipe would block the registry).
    #[error("{name} is not a regular file; make it one")]
    NotAFile {
        /// The file's name.
        name: String,
    },
    /// The file or folder could not be read.
    #[error("could not {action}: {kind}")]
    Io {
        /// What zr was doing.
        action: &'static str,
        /// The operating system's reason.
        kind: io::ErrorKind,
    },
    /// A required key is missing or empty.
    #[error("required key '{key}' is missing or empty; add '{key}: {hint}'")]
    MissingKey {
        /// The key.
        key: &'static str,
        /// What its value should be.
        hint: &'static str,
    },
    /// A key's value has the wrong YAML type.
    #[error("'{key}' must be {expected}, found {found}")]
    WrongType {
        /// The key.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What was found.
        found: String,
    },
    /// The `name` is not a valid skill name.
    #[error("'name': {error}")]
    InvalidName {
        /// Why it is refused.
        error: NameError,
    },
    /// The `name` differs from the skill's folder (a warning: the skill
    /// loads under its `name`, as in Claude Code).
    #[error(
        "'name' is '{name}' but the folder is '{folder}'; the skill loads as '{name}'; rename the folder or the name so that they match"
    )]
    NameMismatch {
        /// The name in the front matter.
        name: String,
        /// The folder's name.
        folder: String,
    },
    /// The `description` is too long.
    #[error("'description' is {len} characters long; at most {max} are allowed: shorten it")]
    DescriptionTooLong {
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A key zr does not know (kept, not fatal).
    #[error("unknown key '{key}' is kept but not used by zr; known keys: {known}")]
    UnknownKey {
        /// The key.
        key: String,
        /// The keys zr reads.
        known: &'static str,
    },
    /// A link (or the path it names) leads out of its root.
    #[error(
        "refused: it leads to {} outside the {kind} root {}; copy {} into the root instead of linking it",
        target.display(),
        root.display(),
        if *kind == "skills" { "the skill" } else { "the files" }
    )]
    EscapesRoot {
        /// "skills" or "agents": which kind of root.
        kind: &'static str,
        /// Where the link leads.
        target: PathBuf,
        /// The root it must stay in.
        root: PathBuf,
    },
    /// A `SKILL.md` directly in a root, outside any skill folder.
    #[error(
        "a SKILL.md directly in the skills root is ignored; move it into a folder named like the skill"
    )]
    SkillFileInRoot,
    /// Folders nested deeper than zr looks.
    #[error("folders nested deeper than {max} levels under the root are not searched for {kind}")]
    TooDeep {
        /// "skills" or "agent types": what is not searched for.
        kind: &'static str,
        /// The depth limit.
        max: usize,
    },
    /// Another file of higher precedence defines the same name.
    #[error("{kind} '{name}' is also defined in {}, which takes precedence; this one is ignored", winner.display())]
    Shadowed {
        /// "skill" or "agent type".
        kind: &'static str,
        /// The name.
        name: String,
        /// The file that wins.
        winner: PathBuf,
    },
    /// An agent-type file could not be read (C6); the problem is zr-caps'.
    #[error("{0}")]
    AgentFile(AgentFileProblem),
    /// An agent-type file (or a front matter read leniently) loaded, with
    /// something worth fixing.
    #[error("{message}")]
    AgentFileWarning {
        /// The key concerned.
        key: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// An agent-type file's `outputSchema` is not a JSON Schema (it does
    /// not compile): the file is left out rather than run without the
    /// answer's check its author asked for.
    #[error("'outputSchema' is not a valid JSON Schema: {message}; fix it or remove the key")]
    InvalidOutputSchema {
        /// The JSON Schema compiler's message.
        message: String,
    },
    /// The first-use files of the agents folder could not be written.
    #[error("could not create the agents folder's README.md and example.md.template: {kind}")]
    Scaffold {
        /// The operating system's reason.
        kind: io::ErrorKind,
    },
}

/// A skill's body could not be loaded when the `Skill` tool was called.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum BodyError {
    /// The file is gone or unreadable, or its front matter broke since the
    /// registry last read it.
    #[error("skill '{skill}' could not be loaded from {}: {problem}", path.display())]
    Unreadable {
        /// The skill.
        skill: String,
        /// Its `SKILL.md`.
        path: PathBuf,
        /// What is wrong.
        problem: Box<Problem>,
    },
}
