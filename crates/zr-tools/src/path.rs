//! The path policy: relative paths are resolved against the agent's working
//! directory; absolute paths are taken as given.

use std::path::{Component, Path, PathBuf};

/// Resolves `raw` against `cwd` and removes `.` and `..` lexically (no
/// symlink resolution, so a path that does not exist yet still resolves).
pub(crate) fn resolve(cwd: &Path, raw: &str) -> PathBuf {
    let joined = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        cwd.join(raw)
    };
    normalize(&joined)
}

/// Removes `.` and `..` components lexically; `..` at the root stays at the root.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                let at_parent = matches!(out.components().next_back(), Some(Component::ParentDir));
                if at_parent || (!out.pop() && !out.has_root()) {
                    out.push(comp);
                }
            }
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(comp),
        }
    }
    out
}

#[cfg(test)]
mod tests;
