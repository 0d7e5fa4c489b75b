//! The resolver's source scan: banned text, banned tokens and banned `use`
//! imports in `crates/zr-resolve/src`.
//!
//! This is a lint, not a sandbox. It strips comments (line, block and doc
//! comments) with a small lexer that knows string and char literals, so a
//! `"//"` or `"/*"` inside a string cannot hide the code after it; string
//! contents are still scanned (a false positive there is cheap). Whitespace and
//! comments around `::` are removed first, so `fs :: read` is `fs::read`.
//! Paths it cannot see through (`extern crate std as s;`, macros building
//! paths) are left to clippy's `disallowed-types` and `disallowed-methods` in
//! `crates/zr-resolve/clippy.toml`, which resolve names.

/// How a banned needle matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Match {
    /// Anywhere, even inside a longer word (`FxHashMap` holds `HashMap`).
    Substring,
    /// Not preceded by an identifier character, and, when the needle ends
    /// with one, not followed by one: `fs::` matches `std::fs::read` and
    /// `fs::read` but not `myfs::read`; `rand` does not match `operand`.
    Word,
}

/// What the resolver's reasons say, once.
const IO: &str = "the resolver does no I/O";
const CLOCKS: &str = "clocks make the resolver nondeterministic";
const RANDOM: &str = "randomness makes the resolver nondeterministic";
const HASH_ORDER: &str = "seeded hashing makes iteration order random; use BTreeMap/BTreeSet";
const THREADS: &str = "the resolver is single-threaded and synchronous";

/// Text that must not appear in the code of the resolver's sources (comments
/// excluded), with how it matches and why.
const BANNED_TEXT: &[(&str, Match, &str)] = &[
    ("HashMap", Match::Substring, HASH_ORDER),
    ("HashSet", Match::Substring, HASH_ORDER),
    ("RandomState", Match::Substring, HASH_ORDER),
    ("std::time", Match::Substring, CLOCKS),
    ("SystemTime", Match::Substring, CLOCKS),
    ("Instant", Match::Substring, CLOCKS),
    ("rand::", Match::Substring, RANDOM),
    ("rand", Match::Word, RANDOM),
    (
        "tokio",
        Match::Substring,
        "the resolver is synchronous: no async runtime",
    ),
    ("std::fs", Match::Substring, IO),
    (
        "std::env",
        Match::Substring,
        "the resolver does no I/O (environment)",
    ),
    (
        "std::process",
        Match::Substring,
        "the resolver does no I/O (processes)",
    ),
    (
        "std::net",
        Match::Substring,
        "the resolver does no I/O (network)",
    ),
    ("std::thread", Match::Substring, THREADS),
    ("fs::", Match::Word, IO),
    (
        "env::",
        Match::Word,
        "the resolver does no I/O (environment)",
    ),
    (
        "process::",
        Match::Word,
        "the resolver does no I/O (processes)",
    ),
    ("net::", Match::Word, "the resolver does no I/O (network)"),
    ("thread::", Match::Word, THREADS),
    ("io::stdin", Match::Word, IO),
    ("io::stdout", Match::Word, IO),
    ("io::stderr", Match::Word, IO),
];

/// `std` items a `use` must not import (as a path prefix), and why.
const BANNED_STD_PATHS: &[(&[&str], &str)] = &[
    (&["std", "fs"], IO),
    (&["std", "env"], "the resolver does no I/O (environment)"),
    (&["std", "process"], "the resolver does no I/O (processes)"),
    (&["std", "net"], "the resolver does no I/O (network)"),
    (&["std", "thread"], THREADS),
    (&["std", "time"], CLOCKS),
    (&["std", "io", "stdin"], IO),
    (&["std", "io", "stdout"], IO),
    (&["std", "io", "stderr"], IO),
    (&["std", "collections", "HashMap"], HASH_ORDER),
    (&["std", "collections", "HashSet"], HASH_ORDER),
    (&["std", "collections", "hash_map"], HASH_ORDER),
    (&["std", "collections", "hash_set"], HASH_ORDER),
    (&["std", "hash", "RandomState"], HASH_ORDER),
];

/// The 1-based line numbers of `text` holding banned code, with the reason
/// (the first problem found on the line), in line order.
pub(super) fn scan_resolver_source(text: &str) -> Vec<(usize, String)> {
    let code = normalize_paths(&strip_comments(text));
    let chars: Vec<char> = code.iter().map(|&(c, _)| c).collect();
    let mut found: Vec<(usize, usize, String)> = Vec::new();

    for (rule, (needle, mode, reason)) in BANNED_TEXT.iter().enumerate() {
        let needle_chars: Vec<char> = needle.chars().collect();
        for (start, &(_, line)) in code.iter().enumerate() {
            if matches_at(&chars, start, &needle_chars, *mode) {
                found.push((line, rule, format!("`{needle}` in zr-resolve: {reason}")));
            }
        }
    }
    let use_rule = BANNED_TEXT.len();
    for (line, message) in scan_use_items(&code, &chars) {
        found.push((line, use_rule, message));
    }

    // One message per line: the first rule (table order, then `use` items).
    found.sort_by_key(|&(line, rule, _)| (line, rule));
    found.dedup_by_key(|&mut (line, _, _)| line);
    found
        .into_iter()
        .map(|(line, _, message)| (line, message))
        .collect()
}

/// Whether an identifier may contain `c`.
pub(super) fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Whether `needle` occurs in `chars` at `start` under `mode`.
fn matches_at(chars: &[char], start: usize, needle: &[char], mode: Match) -> bool {
    if !chars[start..].starts_with(needle) {
        return false;
    }
    match mode {
        Match::Substring => true,
        Match::Word => {
            let left_ok = start == 0 || !is_ident_char(chars[start - 1]);
            let ends_in_ident = needle.last().is_some_and(|&c| is_ident_char(c));
            let right_ok = !ends_in_ident
                || chars
                    .get(start + needle.len())
                    .is_none_or(|&c| !is_ident_char(c));
            left_ok && right_ok
        }
    }
}

/// The characters of `text` outside comments, each with its 1-based line.
/// A comment becomes one space so that it still separates tokens. String,
/// raw string and char literals are kept verbatim (and never start a comment).
pub(super) fn strip_comments(text: &str) -> Vec<(char, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut line = 1;
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    // Copies chars[from..to] to `out`, counting lines.
    let copy = |out: &mut Vec<(char, usize)>, line: &mut usize, from: usize, to: usize| {
        for &c in &chars[from..to.min(chars.len())] {
            out.push((c, *line));
            if c == '\n' {
                *line += 1;
            }
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            // Line comment (including `///` and `//!` docs): up to the newline.
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            out.push((' ', line));
        } else if c == '/' && next == Some('*') {
            // Block comment (including `/** */` docs), nested.
            let mut depth = 0usize;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            out.push((' ', line));
        } else if let Some(end) = raw_string_end(&chars, i) {
            copy(&mut out, &mut line, i, end);
            i = end;
        } else if c == '"' {
            let mut end = i + 1;
            while end < chars.len() && chars[end] != '"' {
                end += if chars[end] == '\\' { 2 } else { 1 };
            }
            copy(&mut out, &mut line, i, end + 1);
            i = end + 1;
        } else if c == '\'' && next == Some('\\') {
            // Escaped char literal: `'\''`, `'\n'`, `'\u{1F600}'`.
            let mut end = i + 3;
            while end < chars.len() && chars[end] != '\'' {
                end += 1;
            }
            copy(&mut out, &mut line, i, end + 1);
            i = end + 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            // Plain char literal such as `'"'`; anything else is a lifetime.
            copy(&mut out, &mut line, i, i + 3);
            i += 3;
        } else {
            copy(&mut out, &mut line, i, i + 1);
            i += 1;
        }
    }
    out
}

/// If a raw string literal (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`) starts at
/// `i`, the index just past its end.
pub(super) fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    if i > 0 && is_ident_char(chars[i - 1]) {
        return None;
    }
    let mut j = i;
    if matches!(chars.get(j), Some('b' | 'c')) {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// `code` without the whitespace around `::` (so `fs :: read` and
/// `fs\n::read` read as `fs::read`).
fn normalize_paths(code: &[(char, usize)]) -> Vec<(char, usize)> {
    let mut out: Vec<(char, usize)> = Vec::with_capacity(code.len());
    let mut i = 0;
    while i < code.len() {
        if code[i].0.is_whitespace() {
            let run_end = code[i..]
                .iter()
                .position(|&(c, _)| !c.is_whitespace())
                .map_or(code.len(), |offset| i + offset);
            let after_path_sep =
                out.len() >= 2 && out[out.len() - 2].0 == ':' && out[out.len() - 1].0 == ':';
            let before_path_sep = code.get(run_end).map(|p| p.0) == Some(':')
                && code.get(run_end + 1).map(|p| p.0) == Some(':');
            if !(after_path_sep || before_path_sep) {
                out.extend_from_slice(&code[i..run_end]);
            }
            i = run_end;
        } else {
            out.push(code[i]);
            i += 1;
        }
    }
    out
}

/// A token of a `use` tree.
#[derive(Debug, Clone, PartialEq, Eq)]
enum UseToken {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Glob,
}

/// One imported path of a `use` tree: `use std::{io::{self as i}, fs::*};`
/// gives `std::io` renamed `i` and `std::fs::*`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UsePath {
    segments: Vec<String>,
    glob: bool,
    alias: Option<String>,
}

/// Problems in the `use` items of `code` (`chars` is its text): imports of
/// [`BANNED_STD_PATHS`], globs that bring them in, and renames of a module
/// that holds them (`use std::io as i;` would hide `i::stdin`).
fn scan_use_items(code: &[(char, usize)], chars: &[char]) -> Vec<(usize, String)> {
    let keyword: Vec<char> = "use".chars().collect();
    let mut problems = Vec::new();
    for (start, &(_, line)) in code.iter().enumerate() {
        if !matches_at(chars, start, &keyword, Match::Word) {
            continue;
        }
        let body_start = start + keyword.len();
        let Some(len) = chars[body_start..].iter().position(|&c| c == ';') else {
            continue;
        };
        let body: String = chars[body_start..body_start + len].iter().collect();
        // Not a `use` item (a word in a string, say) if it does not parse.
        let Some(paths) = parse_use_tree(&body) else {
            continue;
        };
        for path in paths {
            if let Some(message) = judge_use_path(&path) {
                problems.push((line, message));
            }
        }
    }
    problems
}

/// Why importing `path` is banned, if it is.
fn judge_use_path(path: &UsePath) -> Option<String> {
    let shown = {
        let mut shown = path.segments.join("::");
        if path.glob {
            shown.push_str("::*");
        }
        shown
    };
    for (banned, reason) in BANNED_STD_PATHS {
        let banned_path = banned.join("::");
        let imports_banned = path.segments.len() >= banned.len()
            && banned.iter().zip(&path.segments).all(|(b, s)| b == s);
        if imports_banned {
            return Some(format!("`use {shown}` in zr-resolve: {reason}"));
        }
        let holds_banned = banned.len() > path.segments.len()
            && banned.iter().zip(&path.segments).all(|(b, s)| b == s);
        if holds_banned && path.glob {
            return Some(format!(
                "`use {shown}` in zr-resolve imports `{banned_path}`: {reason}"
            ));
        }
        let renamed = path
            .alias
            .as_ref()
            .is_some_and(|alias| Some(alias) != path.segments.last());
        if holds_banned && renamed {
            return Some(format!(
                "`use {shown} as …` in zr-resolve renames a module holding `{banned_path}`, \
                 hiding it from tidy: {reason}"
            ));
        }
    }
    None
}

/// The paths a `use` tree imports, `body` being the text between `use` and
/// `;`. `None` if it is not a `use` tree.
fn parse_use_tree(body: &str) -> Option<Vec<UsePath>> {
    let tokens = tokenize_use(body)?;
    let mut pos = 0;
    let mut paths = Vec::new();
    if tokens.first() == Some(&UseToken::PathSep) {
        pos += 1;
    }
    parse_subtree(&tokens, &mut pos, Vec::new(), &mut paths)?;
    (pos == tokens.len()).then_some(paths)
}

/// The tokens of a `use` tree's text, or `None` on anything else.
fn tokenize_use(body: &str) -> Option<Vec<UseToken>> {
    let chars: Vec<char> = body.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push(UseToken::PathSep);
            i += 2;
        } else if c == '{' {
            tokens.push(UseToken::Open);
            i += 1;
        } else if c == '}' {
            tokens.push(UseToken::Close);
            i += 1;
        } else if c == ',' {
            tokens.push(UseToken::Comma);
            i += 1;
        } else if c == '*' {
            tokens.push(UseToken::Glob);
            i += 1;
        } else if is_ident_char(c) {
            // `r#ident` is the identifier `ident`.
            if c == 'r' && chars.get(i + 1) == Some(&'#') {
                i += 2;
            }
            let len = chars[i..].iter().take_while(|&&c| is_ident_char(c)).count();
            if len == 0 {
                return None;
            }
            tokens.push(UseToken::Ident(chars[i..i + len].iter().collect()));
            i += len;
        } else {
            return None;
        }
    }
    Some(tokens)
}

/// Parses one use tree at `pos` below `prefix`, pushing its paths.
fn parse_subtree(
    tokens: &[UseToken],
    pos: &mut usize,
    mut prefix: Vec<String>,
    paths: &mut Vec<UsePath>,
) -> Option<()> {
    loop {
        match tokens.get(*pos)? {
            UseToken::Ident(name) => {
                *pos += 1;
                if name != "self" || prefix.is_empty() {
                    prefix.push(name.clone());
                }
                match tokens.get(*pos) {
                    Some(UseToken::PathSep) => *pos += 1,
                    Some(UseToken::Ident(kw)) if kw == "as" => {
                        let UseToken::Ident(alias) = tokens.get(*pos + 1)? else {
                            return None;
                        };
                        *pos += 2;
                        paths.push(UsePath {
                            segments: prefix,
                            glob: false,
                            alias: Some(alias.clone()),
                        });
                        return Some(());
                    }
                    _ => {
                        paths.push(UsePath {
                            segments: prefix,
                            glob: false,
                            alias: None,
                        });
                        return Some(());
                    }
                }
            }
            UseToken::Glob => {
                *pos += 1;
                paths.push(UsePath {
                    segments: prefix,
                    glob: true,
                    alias: None,
                });
                return Some(());
            }
            UseToken::Open => {
                *pos += 1;
                loop {
                    if tokens.get(*pos)? == &UseToken::Close {
                        *pos += 1;
                        return Some(());
                    }
                    parse_subtree(tokens, pos, prefix.clone(), paths)?;
                    match tokens.get(*pos)? {
                        UseToken::Comma => *pos += 1,
                        UseToken::Close => {
                            *pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            UseToken::PathSep | UseToken::Close | UseToken::Comma => return None,
        }
    }
}
