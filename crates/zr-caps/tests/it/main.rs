//! zr-caps integration tests: fixture files in, text snapshots out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_files;
mod migrate;

use std::path::{Path, PathBuf};

/// `tests/fixtures`, where every input file lives.
fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    // `glob!` hands out canonical paths; compare like with like.
    dir.canonicalize().unwrap_or(dir)
}

/// `path` relative to the fixtures folder, with `/` separators, so that
/// snapshots never hold a machine's absolute paths.
fn relative(path: &Path) -> String {
    let rel = path
        .strip_prefix(fixtures())
        .expect("glob! yields files under tests/fixtures");
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
