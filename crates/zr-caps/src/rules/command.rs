//! `Bash(...)` specifiers: which simple commands a rule matches.

use std::fmt;

use super::shell::normalize;

/// What a `Bash(...)` rule matches, one simple command at a time.
///
/// - `prefix:*` (Claude Code's legacy prefix form): the command `prefix`,
///   or `prefix` followed by a space and anything (`npm run test:*`
///   matches `npm run test -- --watch`, not `npm run testing`);
/// - a `*` anywhere else: any run of characters, spaces included
///   (`git * main`); a trailing ` *` also matches the command without it
///   (`ls *` matches `ls` and `ls -la`, not `lsof`);
/// - otherwise the exact command (`git status`).
///
/// Runs of unquoted white space count as one space, in the rule and in the
/// command.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CommandPattern {
    text: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Kind {
    Exact,
    Prefix(String),
    Glob,
}

impl CommandPattern {
    /// Reads the inside of `Bash(...)`; `None` when it is empty.
    pub(crate) fn parse(spec: &str) -> Option<Self> {
        let text = normalize(spec);
        if text.is_empty() {
            return None;
        }
        let kind = match text.strip_suffix(":*") {
            Some(prefix) if !prefix.contains('*') => Kind::Prefix(prefix.trim_end().to_owned()),
            _ if text.contains('*') => Kind::Glob,
            _ => Kind::Exact,
        };
        Some(Self { text, kind })
    }

    /// The specifier as read (white space runs made one space).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern matches one simple command, as the splitter
    /// gives it (trimmed, white space runs made one space).
    #[must_use]
    pub fn matches(&self, command: &str) -> bool {
        match &self.kind {
            Kind::Exact => command == self.text,
            Kind::Prefix(prefix) => {
                command == prefix
                    || command
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(' '))
            }
            Kind::Glob => {
                wildcard(self.text.as_bytes(), command.as_bytes())
                    || self
                        .text
                        .strip_suffix(" *")
                        .is_some_and(|bare| wildcard(bare.as_bytes(), command.as_bytes()))
            }
        }
    }
}

impl fmt::Debug for CommandPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CommandPattern({:?})", self.text)
    }
}

/// Whether `text` matches `pattern`, where `*` is any run of bytes.
fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // The last `*` seen and the text position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}
