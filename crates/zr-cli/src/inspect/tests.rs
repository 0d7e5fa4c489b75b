//! Unit tests of the inspecting commands' helpers: tables, summaries,
//! paths and skill bodies.

use std::path::Path;

use super::skills::body_of;
use super::{shown_path, summary, table};

#[test]
fn the_body_is_what_follows_the_front_matter() {
    assert_eq!(
        body_of("---\nname: a\n---\n\n# A\n\ntext\n"),
        "# A\n\ntext\n"
    );
    assert_eq!(body_of("---\r\nname: a\r\n---\r\nbody\r\n"), "body\r\n");
    assert_eq!(body_of("\u{feff}---\nname: a\n---\nbody"), "body");
    // No front matter: all of it; an unclosed one: nothing.
    assert_eq!(body_of("just text\n"), "just text\n");
    assert_eq!(body_of("---\nname: a\nno end\n"), "");
    assert_eq!(body_of(""), "");
}

#[test]
fn a_summary_is_the_first_line_cut_to_the_width() {
    assert_eq!(summary("Short.", 10), "Short.");
    assert_eq!(summary("One\nTwo", 10), "One...");
    assert_eq!(summary("abcdefghijkl", 10), "abcdefg...");
    assert_eq!(summary("ééééééééééé", 6), "ééé...");
    assert_eq!(summary("", 6), "");
}

#[test]
fn tables_align_every_column_but_the_last() {
    let rows = vec![
        vec!["a".to_owned(), "long cell".to_owned(), "x".to_owned()],
        vec!["bbb".to_owned(), "c".to_owned(), String::new()],
    ];
    assert_eq!(
        table(&["N", "V", "D"], &rows),
        "N    V          D\na    long cell  x\nbbb  c\n"
    );
}

#[test]
fn paths_under_the_project_are_relative() {
    let root = Path::new("/p/proj");
    assert_eq!(
        shown_path(Path::new("/p/proj/.zr/agents/a.md"), root),
        ".zr/agents/a.md"
    );
    assert_eq!(shown_path(Path::new("/home/u/a.md"), root), "/home/u/a.md");
}
