//! The memory section: MEMORY.md bounded by lines and bytes.

use super::{MEMORY_LINES, section};

#[test]
fn the_section_holds_the_first_lines_of_memory_md_and_says_where_the_folder_is() {
    let dir = tempfile::tempdir().unwrap();
    let empty = section(dir.path());
    assert!(empty.contains(&dir.path().display().to_string()));
    assert!(empty.ends_with("MEMORY.md:\n(empty: nothing remembered yet)"));
    let lines: String = (0..300).map(|i| format!("fact {i}\n")).collect();
    std::fs::write(dir.path().join("MEMORY.md"), lines).unwrap();
    let shown = section(dir.path());
    assert!(shown.contains("fact 0\n"));
    assert!(
        shown.ends_with(&format!("fact {}", MEMORY_LINES - 1)),
        "{shown}"
    );
    assert!(!shown.contains(&format!("fact {MEMORY_LINES}")));
    // One long line is cut by bytes.
    std::fs::write(dir.path().join("MEMORY.md"), "é".repeat(40_000)).unwrap();
    assert!(section(dir.path()).len() < 26_000);
}
