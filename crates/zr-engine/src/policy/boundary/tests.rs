//! The effects boundary's places: roots, links, protected files, worktrees.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zr_caps::PermissionMode;
use zr_types::Access;

use super::{Boundary, Crossing, Places, real_path};
use crate::meta::AgentMeta;

fn agent(cwd: &Path, worktree: Option<&Path>) -> AgentMeta {
    AgentMeta {
        worktree: worktree.map(Arc::from),
        memory: None,
        ..AgentMeta::preview("root", PermissionMode::AcceptEdits, cwd)
    }
}

fn boundary(home: &Path) -> Boundary {
    Boundary::default().with_home(Some(home.to_path_buf()))
}

/// A project, a home and an outside folder, in one temporary folder
/// (itself resolved: `/tmp` may be a link).
fn places() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = real_path(dir.path());
    for d in ["project/src", "home/.claude", "outside"] {
        std::fs::create_dir_all(root.join(d)).expect("folders");
    }
    (dir, root)
}

fn write(p: PathBuf) -> Access {
    Access::Write(p)
}

#[test]
fn writes_inside_the_project_stay_inside() {
    let (_dir, root) = places();
    let places = Places::of(
        &boundary(&root.join("home")),
        &agent(&root.join("project"), None),
        &root.join("project"),
    );
    assert_eq!(places.crossing(&write(root.join("project/src/a.rs"))), None);
    assert_eq!(places.crossing(&write(root.join("project/new/b.rs"))), None);
    assert_eq!(places.crossing(&Access::Read(root.join("project"))), None);
}

#[test]
fn writes_outside_through_a_path_a_symlink_or_a_dangling_link_cross() {
    let (_dir, root) = places();
    let project = root.join("project");
    symlink(root.join("outside"), project.join("linkout")).expect("a link");
    symlink(root.join("outside/new.txt"), project.join("dangling")).expect("a link");
    symlink("../outside", project.join("src/relative")).expect("a link");
    let places = Places::of(
        &boundary(&root.join("home")),
        &agent(&project, None),
        &project,
    );
    for (path, real) in [
        (root.join("outside/x.txt"), root.join("outside/x.txt")),
        (project.join("linkout/x.txt"), root.join("outside/x.txt")),
        (project.join("dangling"), root.join("outside/new.txt")),
        (
            project.join("src/relative/y"),
            root.join("project/outside/y"),
        ),
    ] {
        let crossing = places.crossing(&write(path.clone()));
        if real.starts_with(&project) {
            // `src/relative` is `../outside` from `src`: the project's own
            // (missing) `outside` folder, still inside.
            assert_eq!(crossing, None, "{}", path.display());
        } else {
            assert_eq!(
                crossing,
                Some(Crossing::Outside {
                    path: real,
                    write: true
                }),
                "{}",
                path.display()
            );
        }
    }
    assert!(
        places
            .crossing(&Access::Read(PathBuf::from("/etc/passwd")))
            .is_some()
    );
}

#[test]
fn protected_files_are_protected_beneath_every_root_and_home() {
    let (_dir, root) = places();
    let project = root.join("project");
    let places = Places::of(
        &boundary(&root.join("home")),
        &agent(&project, None),
        &project,
    );
    for rel in [
        "zr.toml",
        ".mcp.json",
        ".zr/agents/x.md",
        ".claude/settings.json",
        ".git/hooks/pre-commit",
        ".git/config",
        ".git",
    ] {
        assert!(
            matches!(
                places.crossing(&write(project.join(rel))),
                Some(Crossing::Protected { .. })
            ),
            "{rel}"
        );
    }
    // Only at a root's top: `src/zr.toml` is an ordinary file.
    assert_eq!(places.crossing(&write(project.join("src/zr.toml"))), None);
    assert!(matches!(
        places.crossing(&write(root.join("home/.claude/settings.json"))),
        Some(Crossing::Protected { .. })
    ));
}

#[test]
fn an_isolated_agent_writes_only_in_its_worktree() {
    let (_dir, root) = places();
    let project = root.join("project");
    let worktree = project.join(".zr/worktrees/s/a");
    std::fs::create_dir_all(worktree.join("src")).expect("a worktree");
    let places = Places::of(
        &boundary(&root.join("home")),
        &agent(&worktree, Some(&worktree)),
        &project,
    );
    assert_eq!(places.crossing(&write(worktree.join("src/a.rs"))), None);
    // The main checkout is readable, not writable.
    assert_eq!(places.crossing(&Access::Read(project.join("src"))), None);
    assert!(matches!(
        places.crossing(&write(project.join("src/a.rs"))),
        Some(Crossing::Outside { write: true, .. })
    ));
    // Its own settings and git link are protected too.
    assert!(matches!(
        places.crossing(&write(worktree.join(".git"))),
        Some(Crossing::Protected { .. })
    ));
}

#[test]
fn additional_directories_widen_the_roots() {
    let (_dir, root) = places();
    let project = root.join("project");
    let places = Places::of(
        &boundary(&root.join("home")).with_additional_directories(vec![root.join("outside")]),
        &agent(&project, None),
        &project,
    );
    assert_eq!(places.crossing(&write(root.join("outside/x"))), None);
}

#[test]
fn a_link_loop_ends() {
    let (_dir, root) = places();
    let project = root.join("project");
    symlink(project.join("b"), project.join("a")).expect("a link");
    symlink(project.join("a"), project.join("b")).expect("a link");
    // Bounded by the kernel's 40 links; the result stays a path.
    let real = real_path(&project.join("a/x"));
    assert!(real.starts_with(&project), "{}", real.display());
}

#[test]
fn a_memory_folder_is_writable_by_its_agent_only_and_never_a_way_out() {
    let (_dir, root) = places();
    let project = root.join("project");
    let home = root.join("home");
    let boundary = boundary(&home);
    for memory in [
        project.join(".claude/agent-memory/reviewer"),
        project.join(".claude/agent-memory-local/reviewer"),
        home.join(".claude/agent-memory/reviewer"),
    ] {
        let with = AgentMeta {
            memory: Some(Arc::from(memory.as_path())),
            ..agent(&project, None)
        };
        let places = Places::of(&boundary, &with, &project);
        assert_eq!(
            places.crossing(&write(memory.join("MEMORY.md"))),
            None,
            "{}",
            memory.display()
        );
        assert_eq!(places.crossing(&write(memory.join("topics/sql.md"))), None);
        assert_eq!(
            places.crossing(&Access::Read(memory.join("MEMORY.md"))),
            None
        );
        // `..` out of it is judged where it lands: the protected settings
        // beside it, another agent's memory, the home folder's settings.
        for escape in [
            "../../settings.json",
            "../other/MEMORY.md",
            "../../../.git/config",
            "../../../../.ssh/id_ed25519",
        ] {
            let path = memory.join(escape);
            assert!(
                places.crossing(&write(path.clone())).is_some(),
                "{} must cross",
                path.display()
            );
        }
        // Another agent (no memory, or another's) may not write it.
        let other = Places::of(&boundary, &agent(&project, None), &project);
        assert!(
            other.crossing(&write(memory.join("MEMORY.md"))).is_some(),
            "{}",
            memory.display()
        );
        let other_memory = AgentMeta {
            memory: Some(Arc::from(memory.with_file_name("other").as_path())),
            ..agent(&project, None)
        };
        let other = Places::of(&boundary, &other_memory, &project);
        assert!(other.crossing(&write(memory.join("MEMORY.md"))).is_some());
    }
}
