//! Tests of the worktree's names, its report line and its JSON form.

use std::process::Command;

use serde_json::json;
use zr_types::SessionId;

use super::*;

#[test]
fn branch_names_from_any_agent_type_are_valid_git_refs() {
    let session = SessionId::from_parts(u64::MAX >> 12, u32::MAX);
    let root = AgentId::root();
    let ids = [
        root.child(1, "worker"),
        root.child(10_000, "x"),
        root.child(u32::MAX, "lock"),
        root.child(7, "a..b.lock"),
        root.child(8, ".hidden"),
        root.child(9, "ÜBER agent/@{1}"),
        root.child(10, ""),
    ];
    for id in ids {
        let branch = format!("zr/{session}/{id}");
        let out = Command::new("git")
            .args(["check-ref-format", "--branch", &branch])
            .output()
            .unwrap();
        assert!(out.status.success(), "{branch} is not a valid branch name");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), branch);
        assert_eq!(
            Path::new(id.as_str()).components().count(),
            1,
            "{id} is one path component"
        );
    }
}

#[test]
fn the_report_line_says_what_became_of_the_worktree() {
    let info = |changed, kept| WorktreeInfo {
        path: PathBuf::from("/repo/.zr/worktrees/s/root.0001-w"),
        branch: "zr/s/root.0001-w".to_owned(),
        changed,
        kept,
        files: Vec::new(),
        ignored: Vec::new(),
    };
    assert_eq!(
        info(true, true).describe(),
        "worktree kept with its changes: /repo/.zr/worktrees/s/root.0001-w (branch zr/s/root.0001-w)"
    );
    assert_eq!(
        info(false, false).describe(),
        "worktree removed: nothing changed in it"
    );
    assert_eq!(
        info(false, true).describe(),
        "worktree unchanged but could not be removed: /repo/.zr/worktrees/s/root.0001-w (branch zr/s/root.0001-w)"
    );
    assert_eq!(
        serde_json::to_value(info(true, true)).unwrap(),
        json!({"path": "/repo/.zr/worktrees/s/root.0001-w", "branch": "zr/s/root.0001-w", "changed": true, "kept": true})
    );
    // What changed is named; ignored files are never "nothing changed".
    let named = WorktreeInfo {
        files: vec!["M src/a.rs".to_owned(), "?? notes.txt".to_owned()],
        ..info(true, true)
    };
    assert_eq!(
        named.describe(),
        "worktree kept with its changes: /repo/.zr/worktrees/s/root.0001-w (branch zr/s/root.0001-w): M src/a.rs, ?? notes.txt"
    );
    let ignored = WorktreeInfo {
        ignored: vec!["target/".to_owned()],
        ..info(false, false)
    };
    assert_eq!(
        ignored.describe(),
        "worktree removed: no tracked or untracked file changed; ignored files it left, removed with it: target/"
    );
}

#[cfg(unix)]
#[test]
fn a_path_that_is_not_utf8_still_serialises() {
    use std::os::unix::ffi::OsStrExt as _;
    let info = WorktreeInfo {
        path: PathBuf::from(std::ffi::OsStr::from_bytes(b"/r/\xff")),
        branch: "b".to_owned(),
        changed: true,
        kept: true,
        files: Vec::new(),
        ignored: Vec::new(),
    };
    assert_eq!(
        serde_json::to_value(info).unwrap()["path"],
        json!("/r/\u{fffd}")
    );
}
