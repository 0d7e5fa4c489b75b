//! Finding `old_string` in a file: exactly first, then line by line with
//! growing tolerance (trailing whitespace and line endings, indentation,
//! any whitespace).

use std::ops::Range;

/// How `old_string` was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Byte for byte.
    Exact,
    /// Line by line, ignoring trailing whitespace and `\r\n` vs `\n`.
    TrailingWhitespace,
    /// Line by line, ignoring leading and trailing whitespace; `new_string`
    /// is re-indented by the difference.
    Indentation,
    /// Line by line, treating every run of whitespace as one space.
    Whitespace,
}

impl Strategy {
    /// How the match is described to the model.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::Exact => "exact match",
            Self::TrailingWhitespace => {
                "old_string was not found exactly; it matched ignoring trailing whitespace and line endings"
            }
            Self::Indentation => {
                "old_string was not found exactly; it matched ignoring indentation, and new_string was re-indented to the file's indentation"
            }
            Self::Whitespace => {
                "old_string was not found exactly; it matched ignoring differences in whitespace, and new_string was re-indented to the file's indentation"
            }
        }
    }
}

/// Normalises one line for a tolerant comparison.
type Normalize = fn(&str) -> String;

/// Where `old_string` matched, and what to put in each place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The strategy that matched.
    pub(crate) strategy: Strategy,
    /// Non-overlapping byte ranges in the file, in order.
    pub(crate) ranges: Vec<Range<usize>>,
    /// The text for each range.
    pub(crate) replacements: Vec<String>,
    /// Whether `old_string` (and `new_string`) carried Read's `NNNNNN\t`
    /// line-number prefixes, removed before matching.
    pub(crate) prefixes_removed: bool,
}

impl Found {
    /// How the match is described to the model.
    pub(crate) fn describe(&self) -> String {
        if self.prefixes_removed {
            format!(
                "old_string carried Read's line-number prefixes, which were removed; then {}",
                self.strategy.describe()
            )
        } else {
            self.strategy.describe().to_owned()
        }
    }
}

/// Finds `old` in `content`, trying each strategy in turn, then again
/// without Read's line-number prefixes if `old` carries them; `None` when
/// nothing matches.
///
/// In a file whose lines end in `\r\n`, the line breaks of the replacement
/// text are written as `\r\n` too, so an edit never mixes line endings.
pub(crate) fn find(content: &str, old: &str, new: &str) -> Option<Found> {
    let mut found = find_as_given(content, old, new).or_else(|| {
        let old = strip_line_numbers(old)?;
        // `new_string` copied from Read carries the prefixes on the lines
        // it kept; lines the model added have none. Strip each prefix
        // found, so none is ever written into the file.
        let new = strip_some_line_numbers(new);
        let mut found = find_as_given(content, &old, &new)?;
        found.prefixes_removed = true;
        Some(found)
    })?;
    if uses_crlf(content) {
        let bytes = content.as_bytes();
        let mut prev_end = 0;
        for (range, text) in found.ranges.iter_mut().zip(&mut found.replacements) {
            // A match that starts between the `\r` and the `\n` of a line
            // break takes that `\r` too (unless the previous match has it),
            // so no lone `\r` is left behind.
            if range.start > prev_end
                && bytes[range.start - 1] == b'\r'
                && bytes.get(range.start) == Some(&b'\n')
            {
                range.start -= 1;
            }
            prev_end = range.end;
            *text = text.replace("\r\n", "\n").replace('\n', "\r\n");
        }
    }
    Some(found)
}

/// Whether most line breaks of `content` are `\r\n`.
fn uses_crlf(content: &str) -> bool {
    let crlf = content.matches("\r\n").count();
    crlf > 0 && crlf * 2 > content.matches('\n').count()
}

/// The body of `line` after a Read prefix (spaces, digits, a tab), if it
/// has one.
fn strip_prefix_of(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    rest[digits..].strip_prefix('\t')
}

/// `text` without the `  12\t` prefix of each line, when every non-empty
/// line has one.
fn strip_line_numbers(text: &str) -> Option<String> {
    let mut any = false;
    let mut out = Vec::new();
    for line in text.split('\n') {
        if line.is_empty() {
            out.push(line);
            continue;
        }
        out.push(strip_prefix_of(line)?);
        any = true;
    }
    any.then(|| out.join("\n"))
}

/// `text` with the `  12\t` prefix removed from every line that has one.
fn strip_some_line_numbers(text: &str) -> String {
    text.split('\n')
        .map(|line| strip_prefix_of(line).unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

fn find_as_given(content: &str, old: &str, new: &str) -> Option<Found> {
    if old.is_empty() {
        return None;
    }
    let exact: Vec<Range<usize>> = content
        .match_indices(old)
        .map(|(i, m)| i..i + m.len())
        .collect();
    if !exact.is_empty() {
        let replacements = vec![new.to_owned(); exact.len()];
        return Some(Found {
            strategy: Strategy::Exact,
            ranges: exact,
            replacements,
            prefixes_removed: false,
        });
    }
    let lines = file_lines(content);
    let (old_lines, old_nl) = split_lines(old);
    if old_lines.iter().all(|l| l.trim().is_empty()) {
        return None;
    }
    let (new_lines, _) = split_lines(new);
    let strategies: [(Strategy, Normalize); 3] = [
        (Strategy::TrailingWhitespace, |s| s.trim_end().to_owned()),
        (Strategy::Indentation, |s| s.trim().to_owned()),
        (Strategy::Whitespace, |s| {
            s.split_whitespace().collect::<Vec<_>>().join(" ")
        }),
    ];
    for (strategy, norm) in strategies {
        let wanted: Vec<String> = old_lines.iter().map(|l| norm(l)).collect();
        let normed: Vec<String> = lines.iter().map(|r| norm(&content[r.clone()])).collect();
        let n = wanted.len();
        let mut starts = Vec::new();
        let mut i = 0;
        while i + n <= normed.len() {
            if normed[i..i + n] == wanted[..] {
                starts.push(i);
                i += n;
            } else {
                i += 1;
            }
        }
        if starts.is_empty() {
            continue;
        }
        let mut ranges = Vec::new();
        let mut replacements = Vec::new();
        for start in starts {
            let first = &lines[start];
            let last = &lines[start + n - 1];
            let mut end = last.end;
            let eol = line_ending(content, last.end);
            if old_nl {
                end += eol.len();
            }
            let body: Vec<String> = if strategy == Strategy::TrailingWhitespace {
                new_lines.iter().map(|l| (*l).to_owned()).collect()
            } else {
                // Compare the indentation of the first non-blank line of
                // old_string with the file line it matched (a blank first
                // line says nothing about indentation).
                let k = old_lines
                    .iter()
                    .position(|l| !l.trim().is_empty())
                    .unwrap_or(0);
                let file_indent = leading_ws(&content[lines[start + k].clone()]);
                let old_indent = leading_ws(old_lines[k]);
                reindent(&new_lines, old_indent, file_indent)
            };
            let eol_used = if eol.is_empty() { "\n" } else { eol };
            let mut text = body.join(eol_used);
            if old_nl {
                text.push_str(eol_used);
            }
            ranges.push(first.start..end);
            replacements.push(text);
        }
        return Some(Found {
            strategy,
            ranges,
            replacements,
            prefixes_removed: false,
        });
    }
    None
}

/// The byte ranges of each line, without its terminator.
fn file_lines(content: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in content.bytes().enumerate() {
        if b == b'\n' {
            let end = if i > start && content.as_bytes()[i - 1] == b'\r' {
                i - 1
            } else {
                i
            };
            out.push(start..end);
            start = i + 1;
        }
    }
    if start < content.len() {
        out.push(start..content.len());
    }
    out
}

/// The terminator after the line ending at `end`.
fn line_ending(content: &str, end: usize) -> &'static str {
    let rest = &content.as_bytes()[end..];
    if rest.starts_with(b"\r\n") {
        "\r\n"
    } else if rest.starts_with(b"\n") {
        "\n"
    } else {
        ""
    }
}

/// Lines of `s` without terminators, and whether it ended with a newline.
fn split_lines(s: &str) -> (Vec<&str>, bool) {
    let ends_nl = s.ends_with('\n');
    let body = s.strip_suffix('\n').unwrap_or(s);
    let lines = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    (lines, ends_nl)
}

fn leading_ws(s: &str) -> &str {
    &s[..s.len() - s.trim_start().len()]
}

/// Moves each line of `lines` from indentation `from` to `to`.
fn reindent(lines: &[&str], from: &str, to: &str) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else if let Some(rest) = l.strip_prefix(from) {
                format!("{to}{rest}")
            } else {
                format!("{to}{}", l.trim_start())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
