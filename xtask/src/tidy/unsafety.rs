//! The workspace's one `unsafe`: every crate but zr-process takes the
//! workspace lints (`unsafe_code = "forbid"`), and in every source file
//! `unsafe` and `unsafe_code` appear only in zr-process's `death.rs`, once
//! each (the `pre_exec` block and the `allow` on its function).

use std::path::Path;

use anyhow::{Context, Result};

use super::scan::{is_ident_char, raw_string_end, strip_comments};
use crate::{display_rel, walk_files};

/// The crate allowed to leave the workspace lints (it denies `unsafe_code`
/// instead of forbidding it).
pub(super) const UNSAFE_CRATE: &str = "zr-process";
/// The one file that may hold `unsafe`, relative to the repository.
pub(super) const UNSAFE_FILE: &str = "crates/zr-process/src/death.rs";

/// Problems with `unsafe` in the repository at `root`.
pub(super) fn check_unsafe(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let crates = root.join("crates");
    let mut manifests = walk_files(&crates)?;
    manifests.retain(|p| p.file_name().is_some_and(|n| n == "Cargo.toml"));
    for manifest in manifests {
        let name = manifest
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&manifest)
            .with_context(|| format!("could not read {}", manifest.display()))?;
        if let Some(problem) = judge_manifest(&name, &text) {
            problems.push(format!("{}: {problem}", display_rel(root, &manifest)));
        }
    }
    let mut sources = walk_files(&crates)?;
    sources.extend(walk_files(&root.join("xtask"))?);
    sources.retain(|p| p.extension().is_some_and(|e| e == "rs"));
    for path in sources {
        let rel = display_rel(root, &path);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("could not read {}", path.display()))?;
        problems.extend(
            judge_source(&rel, &text)
                .into_iter()
                .map(|(line, why)| format!("{rel}:{line}: {why}")),
        );
    }
    Ok(problems)
}

/// A crate's manifest: the workspace lints, or (zr-process) its own with
/// `unsafe_code = "deny"`.
pub(super) fn judge_manifest(name: &str, text: &str) -> Option<String> {
    let takes_workspace = text.contains("[lints]\nworkspace = true");
    if name == UNSAFE_CRATE {
        (!text.contains("unsafe_code = \"deny\"")).then(|| {
            format!("{UNSAFE_CRATE} must set `unsafe_code = \"deny\"` in its own [lints.rust]")
        })
    } else {
        (!takes_workspace).then(|| {
            "must take the workspace lints (`[lints]` `workspace = true`): only zr-process may leave them".to_owned()
        })
    }
}

/// The lines of the source `text` (at `rel`) where `unsafe` or
/// `unsafe_code` appears outside comments where it may not.
pub(super) fn judge_source(rel: &str, text: &str) -> Vec<(usize, String)> {
    let code = blank_strings(&strip_comments(text));
    let chars: Vec<char> = code.iter().map(|&(c, _)| c).collect();
    let mut found = Vec::new();
    for word in ["unsafe", "unsafe_code"] {
        let lines = word_lines(&chars, &code, word);
        let allowed = usize::from(rel == UNSAFE_FILE);
        if lines.len() > allowed {
            for line in lines.into_iter().skip(allowed) {
                found.push((
                    line,
                    format!("`{word}`: the workspace's one unsafe function is in {UNSAFE_FILE}"),
                ));
            }
        }
    }
    found.sort();
    found
}

/// The lines where `word` stands as a whole identifier.
fn word_lines(chars: &[char], code: &[(char, usize)], word: &str) -> Vec<usize> {
    let needle: Vec<char> = word.chars().collect();
    (0..chars.len())
        .filter(|&i| {
            chars[i..].starts_with(&needle)
                && (i == 0 || !is_ident_char(chars[i - 1]))
                && chars
                    .get(i + needle.len())
                    .is_none_or(|&c| !is_ident_char(c))
        })
        .map(|i| code[i].1)
        .collect()
}

/// `code` with the contents of string and char literals replaced by
/// spaces (a word in a message is not code).
fn blank_strings(code: &[(char, usize)]) -> Vec<(char, usize)> {
    let chars: Vec<char> = code.iter().map(|&(c, _)| c).collect();
    let mut out = code.to_vec();
    let mut blank = |from: usize, to: usize| {
        for slot in out.iter_mut().take(to.min(chars.len())).skip(from) {
            if slot.0 != '\n' {
                slot.0 = ' ';
            }
        }
    };
    let mut i = 0;
    while i < chars.len() {
        if let Some(end) = raw_string_end(&chars, i) {
            blank(i, end);
            i = end;
        } else if chars[i] == '"' {
            let mut end = i + 1;
            while end < chars.len() && chars[end] != '"' {
                end += if chars[end] == '\\' { 2 } else { 1 };
            }
            blank(i, end + 1);
            i = end + 1;
        } else if chars[i] == '\'' && chars.get(i + 2) == Some(&'\'') {
            blank(i, i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    out
}
