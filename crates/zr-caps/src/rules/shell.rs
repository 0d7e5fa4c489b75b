//! Splitting a Bash command into the simple commands that rules match.
//!
//! Not a shell: a scanner that knows quotes, backslash escapes, comments,
//! command separators (`&&`, `||`, `;`, `|`, `|&`, `&`, newlines),
//! redirections that hold `&` or `|` (`2>&1`, `&>`, `>|`), subshells
//! `( ... )` and the substitutions `$( ... )`, backticks and `<( ... )`,
//! whose commands are parts of their own. It errs on the side of more
//! parts: a here-document's lines, say, are read as commands, which can
//! only make an allow rule miss and a deny rule hit.

/// The simple commands of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    /// Each simple command, with leading shell keywords (`if`, `then`,
    /// `do`, `!`, `{`, ...) taken off and runs of unquoted white space made
    /// one space; leading `VAR=value` assignments and redirections stay
    /// (deny and ask rules also read a part without its assignments:
    /// [`without_assignments`]).
    pub(crate) parts: Vec<String>,
    /// `false` when a quote, a substitution or a parenthesis is left open
    /// (or a `)` closes nothing): `parts` are then a best effort.
    pub(crate) complete: bool,
}

/// Splits `command` into its simple commands.
pub(crate) fn split(command: &str) -> Split {
    let text = command.replace("\\\n", " ");
    let mut scanner = Scanner {
        s: text.as_bytes(),
        text: &text,
        pos: 0,
        parts: Vec::new(),
        complete: true,
    };
    scanner.commands(false);
    Split {
        parts: scanner.parts,
        complete: scanner.complete,
    }
}

struct Scanner<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    parts: Vec<String>,
    complete: bool,
}

impl Scanner<'_> {
    /// Scans commands from `pos` to the end, or (when `nested`) to the `)`
    /// that closes the enclosing `(`, which is consumed.
    fn commands(&mut self, nested: bool) {
        let mut start = self.pos;
        while self.pos < self.s.len() {
            let c = self.s[self.pos];
            let prev = self.pos.checked_sub(1).map(|i| self.s[i]);
            let next = self.s.get(self.pos + 1).copied();
            match c {
                b'\\' => self.pos += 2,
                b'\'' => self.single_quoted(),
                b'"' => self.double_quoted(),
                b'`' => self.backticks(),
                b'$' | b'<' | b'>' if next == Some(b'(') => {
                    self.pos += 2;
                    self.commands(true);
                }
                b'(' if self.text[start..self.pos].trim().is_empty() => {
                    // A subshell: its commands are parts; what follows its
                    // `)` (a redirection) starts a part of its own.
                    self.pos += 1;
                    self.commands(true);
                    start = self.pos;
                }
                b')' => {
                    self.push(start, self.pos);
                    self.pos += 1;
                    if nested {
                        return;
                    }
                    self.complete = false;
                    start = self.pos;
                }
                b'#' if prev.is_none_or(|p| p.is_ascii_whitespace() || b";&|(".contains(&p)) => {
                    self.push(start, self.pos);
                    while self.pos < self.s.len() && self.s[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                    start = self.pos;
                }
                b';' | b'\n' => {
                    self.push(start, self.pos);
                    self.pos += 1;
                    start = self.pos;
                }
                b'&' if matches!(prev, Some(b'>' | b'<')) || next == Some(b'>') => self.pos += 1,
                b'|' if prev == Some(b'>') => self.pos += 1,
                b'&' | b'|' => {
                    self.push(start, self.pos);
                    self.pos += if next == Some(c) || (c == b'|' && next == Some(b'&')) {
                        2
                    } else {
                        1
                    };
                    start = self.pos;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.s.len());
        self.push(start, self.pos);
        if nested {
            self.complete = false;
        }
    }

    /// From an opening `'` past its closing one.
    fn single_quoted(&mut self) {
        match self.s[self.pos + 1..].iter().position(|&b| b == b'\'') {
            Some(i) => self.pos += i + 2,
            None => self.unclosed(),
        }
    }

    /// From an opening `"` past its closing one; substitutions inside are
    /// scanned for their commands.
    fn double_quoted(&mut self) {
        self.pos += 1;
        while self.pos < self.s.len() {
            match self.s[self.pos] {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return;
                }
                b'`' => self.backticks(),
                b'$' if self.s.get(self.pos + 1) == Some(&b'(') => {
                    self.pos += 2;
                    self.commands(true);
                }
                _ => self.pos += 1,
            }
        }
        self.unclosed();
    }

    /// From an opening backtick past its closing one; the text between is
    /// split on its own.
    fn backticks(&mut self) {
        let open = self.pos + 1;
        let mut i = open;
        while i < self.s.len() {
            match self.s[i] {
                b'\\' => i += 2,
                b'`' => {
                    let inner = split(&self.text[open..i]);
                    self.parts.extend(inner.parts);
                    self.complete &= inner.complete;
                    self.pos = i + 1;
                    return;
                }
                _ => i += 1,
            }
        }
        self.unclosed();
    }

    fn unclosed(&mut self) {
        self.complete = false;
        self.pos = self.s.len();
    }

    /// Adds `text[start..end]` as a part, cleaned; nothing when it is empty.
    fn push(&mut self, start: usize, end: usize) {
        let end = end.min(self.s.len());
        if start >= end {
            return;
        }
        let part = clean(&self.text[start..end]);
        if !part.is_empty() && !CLOSERS.contains(&part.as_str()) {
            self.parts.push(part);
        }
    }
}

/// Words that open a compound command or negate one: taken off the front.
const OPENERS: [&str; 10] = [
    "!", "{", "if", "then", "else", "elif", "do", "while", "until", "time",
];

/// Parts that only close a compound command: dropped.
const CLOSERS: [&str; 4] = ["fi", "done", "esac", "}"];

/// A part's text with unquoted white space runs made one space, and
/// leading keywords taken off.
pub(crate) fn clean(part: &str) -> String {
    let mut rest = normalize(part);
    loop {
        let end = first_word_end(&rest);
        let word = &rest[..end];
        // A leading `NAME=value` stays: `LD_PRELOAD=x.so git status` is
        // not `git status`, and a part of assignments alone
        // (`PATH=/tmp/evil; git status`) must be allowed on its own.
        if OPENERS.contains(&word) {
            rest = rest[end..].trim_start().to_owned();
        } else {
            return rest;
        }
    }
}

/// `text`, trimmed, with each run of unquoted spaces and tabs made one space.
pub(crate) fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut space = false;
    for c in text.trim().chars() {
        if quote.is_none() && !escaped && (c == ' ' || c == '\t') {
            space = true;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some('"'), '"') => quote = None,
            _ => {}
        }
    }
    out
}

/// Where the first word of `text` ends: at unquoted white space outside
/// parentheses.
fn first_word_end(text: &str) -> usize {
    let mut quote: Option<u8> = None;
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        match (quote, b) {
            _ if escaped => escaped = false,
            (Some(b'\''), b'\'') | (Some(b'"'), b'"') => quote = None,
            (Some(b'\''), _) => {}
            (_, b'\\') => escaped = true,
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'(') => depth += 1,
            (None, b')') => depth = depth.saturating_sub(1),
            (None, b' ' | b'\t') if depth == 0 => return i,
            _ => {}
        }
    }
    text.len()
}

/// `part` without its leading `NAME=value` words: the command that runs,
/// as deny and ask rules read it (`FOO=1 git push` is a `git push`).
pub(crate) fn without_assignments(part: &str) -> &str {
    let mut rest = part;
    loop {
        let end = first_word_end(rest);
        if end == 0 || !is_assignment(&rest[..end]) {
            return rest;
        }
        rest = rest[end..].trim_start();
    }
}

/// `NAME=value` (any value, quoted or not).
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
