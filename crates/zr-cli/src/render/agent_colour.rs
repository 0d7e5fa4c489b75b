//! An agent type's `color` (Claude Code's agent-file key) as the live tree
//! and the HTML timeline show it: one table from the names Claude Code
//! offers to a terminal colour and a CSS colour. A name not in it (or
//! none) leaves the agent in the default look.

/// Name, terminal SGR sequence, CSS colour.
const COLOURS: [(&str, &str, &str); 10] = [
    ("red", "\x1b[1;31m", "#d1242f"),
    ("green", "\x1b[1;32m", "#1a7f37"),
    ("yellow", "\x1b[1;33m", "#9a6700"),
    ("blue", "\x1b[1;34m", "#0969da"),
    ("purple", "\x1b[1;35m", "#8250df"),
    ("magenta", "\x1b[1;35m", "#bf3989"),
    ("cyan", "\x1b[1;36m", "#1b7c83"),
    ("orange", "\x1b[1;38;5;208m", "#bc4c00"),
    ("pink", "\x1b[1;38;5;205m", "#bf3989"),
    ("gray", "\x1b[1;90m", "#59636e"),
];

fn find(name: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
    let name = name.trim();
    COLOURS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
}

/// The terminal sequence (bold, in the colour) for `name`.
pub(crate) fn sgr(name: &str) -> Option<&'static str> {
    find(name).map(|(_, sgr, _)| *sgr)
}

/// The CSS colour for `name`.
pub(crate) fn css(name: &str) -> Option<&'static str> {
    find(name).map(|(_, _, css)| *css)
}
