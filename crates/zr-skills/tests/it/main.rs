//! zr-skills integration tests: real temporary folders, fixture snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_folders;
mod agents;
mod skills;
mod snapshots;
mod tool;

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tempfile::TempDir;

/// A temporary project folder (and a home folder beside it).
struct Project {
    dir: TempDir,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("project")).unwrap();
        fs::create_dir_all(dir.path().join("home")).unwrap();
        Self { dir }
    }

    /// The project folder (canonical, so paths compare).
    fn path(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    /// The home folder.
    fn home(&self) -> PathBuf {
        self.dir.path().join("home").canonicalize().unwrap()
    }

    /// The folder holding both (for paths outside the project).
    fn base(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Writes `text` to `rel` under the base folder, creating folders.
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.base().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// Writes a valid skill `name` under `root` (relative to the base).
    fn skill(&self, root: &str, name: &str, description: &str) -> PathBuf {
        self.write(
            &format!("{root}/{name}/SKILL.md"),
            &format!(
                "---\nname: {name}\ndescription: {description}\n---\nInstructions of {name}.\n"
            ),
        )
    }

    /// `diagnostics` as people see them, with paths relative to the base
    /// folder.
    fn shown(&self, diagnostics: &[zr_skills::Diagnostic]) -> Vec<String> {
        let base = self.base();
        diagnostics
            .iter()
            .map(|d| d.display_relative(&base).to_string())
            .collect()
    }

    /// Sets every file's and folder's modification time a minute back, so
    /// that hot-reload assertions do not depend on the clock's tick.
    fn age(&self) {
        age(&self.base());
    }
}

fn age(path: &Path) {
    let old = SystemTime::now() - Duration::from_secs(60);
    let meta = fs::symlink_metadata(path).unwrap();
    if meta.is_symlink() {
        return;
    }
    if meta.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            age(&entry.unwrap().path());
        }
    }
    File::open(path).unwrap().set_modified(old).unwrap();
}

/// Polls a future that must be ready at once (the Skill handler's are).
fn ready<T>(future: impl std::future::Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("the handler's future was not ready"),
    }
}
