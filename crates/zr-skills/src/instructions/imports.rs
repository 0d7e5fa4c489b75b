//! The `@path` imports of an instruction file: where they are written,
//! outside Markdown code (fenced blocks and inline code spans are not
//! read, as in Claude Code).

/// One `@path` written in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Import {
    /// The path as written, without the `@` (`\ ` read as a space).
    pub(crate) path: String,
    /// The 1-based line it is on.
    pub(crate) line: usize,
}

/// Every `@path` of `text`, in order: a `@` at the start of a line or
/// after white space, followed by a path (up to the next white space; a
/// backslash keeps a space in it) that starts like one (`./`, `../`,
/// `~/`, `/`, or a letter, digit, `.`, `_` or `-`). Text inside fenced code
/// blocks (```` ``` ```` or `~~~`) and inline code spans is skipped.
pub(crate) fn imports(text: &str) -> Vec<Import> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if indent <= 3
            && let Some(marker) = fence_marker(trimmed)
        {
            match fence {
                None => fence = Some(marker),
                Some((c, n)) if marker.0 == c && marker.1 >= n => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        for path in in_line(&without_code_spans(line)) {
            out.push(Import {
                path,
                line: index + 1,
            });
        }
    }
    out
}

/// The character and length of a fence that opens or closes a code block
/// (three or more backticks or tildes).
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let first = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = line.chars().take_while(|c| *c == first).count();
    (run >= 3).then_some((first, run))
}

/// `line` with its inline code spans (a run of backticks up to the next
/// run of the same length) replaced by a space.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        let rest = i + run;
        // The closing run: the next run of exactly as many backticks.
        let mut close = None;
        let mut j = rest;
        while j < chars.len() {
            if chars[j] != '`' {
                j += 1;
                continue;
            }
            let n = chars[j..].iter().take_while(|c| **c == '`').count();
            if n == run {
                close = Some(j);
                break;
            }
            j += n;
        }
        match close {
            Some(j) => {
                out.push(' ');
                i = j + run;
            }
            None => {
                // An unclosed run is literal text.
                out.extend(&chars[i..rest]);
                i = rest;
            }
        }
    }
    out
}

/// The paths of the `@` tokens of one line (code already removed).
fn in_line(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i] == '@' && (i == 0 || chars[i - 1].is_whitespace());
        if !starts {
            i += 1;
            continue;
        }
        let mut path = String::new();
        let mut j = i + 1;
        while j < chars.len() && !chars[j].is_whitespace() {
            if chars[j] == '\\' && chars.get(j + 1) == Some(&' ') {
                path.push(' ');
                j += 2;
            } else {
                path.push(chars[j]);
                j += 1;
            }
        }
        if looks_like_a_path(&path) {
            out.push(path);
        }
        i = j;
    }
    out
}

/// Whether `path` starts as a path does (not `@@x`, `@#`, `@(`...).
fn looks_like_a_path(path: &str) -> bool {
    if path.starts_with("~/") || path.starts_with('/') && !path.starts_with("//") {
        return true;
    }
    path.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))
}
