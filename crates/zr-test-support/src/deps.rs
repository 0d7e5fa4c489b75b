//! Where `cargo xtask deps` installed the tests' outside programs (MCP
//! servers, `restate-server`, Phoenix, the Python SDKs): `$ZR_DEPS_DIR`,
//! else `.deps` at the workspace root.

use std::path::{Path, PathBuf};

/// The deps folder.
pub fn dir() -> PathBuf {
    std::env::var_os("ZR_DEPS_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.deps"),
        PathBuf::from,
    )
}

/// The file or folder at `relative` in the deps folder; fails the test
/// (never skips it) when it is missing.
///
/// # Panics
///
/// When nothing is at that path.
pub fn installed(relative: &str) -> PathBuf {
    let path = dir().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run `cargo xtask deps` first (or set ZR_DEPS_DIR)",
        path.display()
    );
    path
}
