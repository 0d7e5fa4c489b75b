//! First use of the agents folder: a README explaining the format and a
//! template that becomes an agent type when copied to a `.md` file.

use std::fs;
use std::io;
use std::path::Path;

/// The README written into a new agents folder.
pub const AGENTS_README: &str = include_str!("scaffold/README.md");

/// The example written into a new agents folder as `example.md.template`.
pub const AGENTS_TEMPLATE: &str = include_str!("scaffold/example.md.template");

/// Creates `dir` with `README.md` and `example.md.template` if `dir` does
/// not exist yet. An existing folder is never touched (a user who deleted
/// the README keeps it deleted).
pub(crate) fn scaffold(dir: &Path) -> io::Result<()> {
    match fs::metadata(dir) {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::create_dir_all(dir)?;
    fs::write(dir.join("README.md"), AGENTS_README)?;
    fs::write(dir.join("example.md.template"), AGENTS_TEMPLATE)
}
