//! The directory walker shared by Glob and Grep: ripgrep's `ignore` crate,
//! honouring `.gitignore`, `.ignore` and `.git/info/exclude` even outside a
//! git repository, showing hidden files but never descending into `.git`,
//! in file-name order (so output does not depend on the file system's
//! directory order).

use std::path::Path;
use std::time::SystemTime;

use ignore::WalkBuilder;

/// A walker over `base` with the filters above.
pub(crate) fn walker(base: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(base);
    builder
        .hidden(false)
        .require_git(false)
        .git_global(false)
        .follow_links(false)
        .sort_by_file_name(std::cmp::Ord::cmp)
        .filter_entry(|e| e.file_name() != ".git");
    builder
}

/// A file's modification time, for newest-first ordering.
pub(crate) fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}
