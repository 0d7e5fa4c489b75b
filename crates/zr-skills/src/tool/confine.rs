//! The root rule applied again when a skill's body is read: the file a
//! view found inside its root may have been replaced by a link since.

use std::fs::{self, File};
use std::io;
use std::path::Path;

use crate::error::Problem;
use crate::roots::Roots;
use crate::stamp::{io_problem, regular_file};

/// Opens `path`, a skill's `SKILL.md` and a regular file, for reading.
/// When `path` lies under
/// one of `roots` (a skill a registry over those roots found), the file
/// opened must still be inside that root's canonical folder: a skill
/// folder, a folder above it or the `SKILL.md` replaced by a link out of
/// the root after the view is refused with [`Problem::EscapesRoot`]. The
/// check is made on the open file (its device and inode), so swapping a
/// link between the check and the read gains nothing. A path under no root
/// (a skill the host defined) is opened as given.
pub(super) fn open_confined(path: &Path, roots: &Roots) -> Result<File, Problem> {
    // Only a regular file is opened: opening a named pipe would block.
    let meta = fs::metadata(path).map_err(|e| io_problem("open the file", &e))?;
    regular_file(path, &meta)?;
    let file = File::open(path).map_err(|e| io_problem("open the file", &e))?;
    let Some(root) = roots
        .as_slice()
        .iter()
        .find(|root| path.starts_with(&root.path))
    else {
        return Ok(file);
    };
    let canonical_root =
        fs::canonicalize(&root.path).map_err(|e| io_problem("open the skills root", &e))?;
    let target = fs::canonicalize(path).map_err(|e| io_problem("follow the link", &e))?;
    if !target.starts_with(&canonical_root) {
        return Err(Problem::EscapesRoot {
            kind: "skills",
            target,
            root: root.path.clone(),
        });
    }
    let checked = fs::metadata(&target).map_err(|e| io_problem("read the file", &e))?;
    let opened = file
        .metadata()
        .map_err(|e| io_problem("read the file", &e))?;
    if !same_file(&checked, &opened) {
        // The path changed between the open and the check.
        return Err(Problem::Io {
            action: "read the file (it was replaced while being read; call again)",
            kind: io::ErrorKind::Interrupted,
        });
    }
    Ok(file)
}

/// Whether two metadata describe the same file.
#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Whether two metadata describe the same file (size and modification
/// time: the best portable guess).
#[cfg(not(unix))]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}
