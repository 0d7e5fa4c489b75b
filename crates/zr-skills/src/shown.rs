//! Paths as people read them: relative to the project, or under `~/`.

use std::path::Path;

/// `path` relative to `base` when under it (with `/` separators), else as
/// is.
pub(crate) fn shown_path(path: &Path, base: Option<&Path>) -> String {
    match base.and_then(|b| path.strip_prefix(b).ok()) {
        Some(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Some(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        None => path.display().to_string(),
    }
}

/// As [`shown_path`], and a path under `home` but not under `base` as
/// `~/...`.
pub(crate) fn shown_path_in(path: &Path, base: Option<&Path>, home: Option<&Path>) -> String {
    if base.is_some_and(|b| path.starts_with(b)) {
        return shown_path(path, base);
    }
    match home {
        Some(home) if path.starts_with(home) => format!("~/{}", shown_path(path, Some(home))),
        _ => shown_path(path, base),
    }
}
