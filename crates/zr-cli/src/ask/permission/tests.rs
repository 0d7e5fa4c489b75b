//! Unit tests of "always": the rule added to zr.toml, the rest kept.

use super::{changed_lines, with_allowed};

#[test]
fn always_adds_the_tool_to_allow_and_keeps_the_files_formatting() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zr.toml");
    let text = "# my settings\n[model]\nname = \"x\"   # the model\n\n[permissions]\nmode = \"default\"\nallow = [\"Read\"]  # reviewed\n";
    std::fs::write(&file, text).unwrap();
    let (old, new) = with_allowed(&file, "Bash").unwrap();
    assert_eq!(old, text);
    assert_eq!(
        new,
        "# my settings\n[model]\nname = \"x\"   # the model\n\n[permissions]\nmode = \"default\"\nallow = [\"Read\", \"Bash\"]  # reviewed\n"
    );
    assert_eq!(
        changed_lines(&old, &new),
        ["allow = [\"Read\", \"Bash\"]  # reviewed"]
    );
    std::fs::write(&file, &new).unwrap();
    let (_, again) = with_allowed(&file, "Bash").unwrap();
    assert_eq!(again, new, "a tool already there is not added twice");
}

#[test]
fn always_creates_the_table_or_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zr.toml");
    let (old, new) = with_allowed(&file, "Write").unwrap();
    assert_eq!(
        (old.as_str(), new.as_str()),
        ("", "[permissions]\nallow = [\"Write\"]\n")
    );
    std::fs::write(&file, "[model]\nname = \"x\"\n").unwrap();
    let (_, new) = with_allowed(&file, "Write").unwrap();
    assert_eq!(
        new,
        "[model]\nname = \"x\"\n\n[permissions]\nallow = [\"Write\"]\n"
    );
    std::fs::write(&file, "[permissions\n").unwrap();
    assert!(with_allowed(&file, "Write").is_err());
}
