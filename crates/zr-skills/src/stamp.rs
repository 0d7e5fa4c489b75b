//! File identity for hot reload (modification and change times, size,
//! inode) and the bounded readers that load front matter and bodies.

use std::fs::{File, Metadata};
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::error::Problem;

/// The longest front matter read before giving up (bytes).
pub(crate) const MAX_FRONT_MATTER: usize = 64 * 1024;

/// The largest file read whole: agent-type files and skill bodies (bytes).
pub(crate) const MAX_FILE: u64 = 1024 * 1024;

/// How recent a modification must be for its stamp to be distrusted.
pub(crate) const RACY_WINDOW: Duration = Duration::from_secs(2);

/// What a cached entry was read from. Two equal stamps are taken to mean an
/// unchanged file or folder.
///
/// The modification time alone is not enough: anyone who can write a
/// folder can also set its modification time back (`touch -d`), and a
/// folder listing cached under a forged time would hide a plain skill
/// folder replaced by a link out of the root. The inode change time
/// (`ctime`, Unix) is set by the kernel on every change, including that of
/// the modification time, and cannot be set back, so it is part of the
/// stamp (as in git's index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    mtime: Option<SystemTime>,
    /// The inode change time (seconds, nanoseconds); `None` off Unix.
    ctime: Option<(i64, i64)>,
    size: u64,
    inode: u64,
}

impl Stamp {
    /// The stamp of `meta`.
    pub(crate) fn of(meta: &Metadata) -> Self {
        #[cfg(unix)]
        let (inode, ctime) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), Some((meta.ctime(), meta.ctime_nsec())))
        };
        #[cfg(not(unix))]
        let (inode, ctime) = (0, None);
        Self {
            mtime: meta.modified().ok(),
            ctime,
            size: meta.len(),
            inode,
        }
    }

    /// Whether a later change could go unseen: file systems stamp
    /// modification times with a coarse clock (a few milliseconds, or whole
    /// seconds), so a file written again within the same tick, at the same
    /// size, would keep its stamp. An entry modified within [`RACY_WINDOW`]
    /// of `scan_start` (or in the future) is therefore read again by the
    /// next scan too (git's "racily clean" rule).
    pub(crate) fn is_racy(&self, scan_start: SystemTime) -> bool {
        self.mtime.is_none_or(|mtime| {
            scan_start
                .duration_since(mtime)
                .is_ok_and(|age| age < RACY_WINDOW)
                || mtime > scan_start
        })
    }
}

/// A cached stamp that is only trusted when it was not racy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    stamp: Stamp,
    trusted: bool,
}

impl Seen {
    /// Records `stamp` as seen by the scan that started at `scan_start`.
    pub(crate) fn new(stamp: Stamp, scan_start: SystemTime) -> Self {
        Self {
            stamp,
            trusted: !stamp.is_racy(scan_start),
        }
    }

    /// Whether the stamp was old enough to be trusted when recorded.
    pub(crate) fn trusted(&self) -> bool {
        self.trusted
    }

    /// Whether the cached entry can be reused for a file now stamped `now`.
    pub(crate) fn still(&self, now: &Stamp) -> bool {
        self.trusted && self.stamp == *now
    }
}

/// Which file or folder `meta` describes (device and inode), to notice one
/// folder reached by two paths; `None` off Unix.
pub(crate) fn identity(meta: &Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Unless `meta` is a regular file's, the problem of reading `path`: only
/// regular files are opened (opening a named pipe would block).
pub(crate) fn regular_file(path: &Path, meta: &Metadata) -> Result<(), Problem> {
    if meta.is_file() {
        return Ok(());
    }
    Err(Problem::NotAFile {
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    })
}

/// An I/O failure as a problem.
pub(crate) fn io_problem(action: &'static str, error: &io::Error) -> Problem {
    if error.kind() == io::ErrorKind::InvalidData {
        return Problem::NotUtf8;
    }
    Problem::Io {
        action,
        kind: error.kind(),
    }
}

/// Reads a Markdown file up to the end of its front matter (the body is not
/// read): the text handed to the front-matter parser, whose line numbers
/// are the file's.
pub(crate) fn read_front_matter(path: &Path) -> Result<String, Problem> {
    let file = File::open(path).map_err(|e| io_problem("open the file", &e))?;
    front_matter_prefix(BufReader::new(file))
}

/// The front-matter part of the text `reader` yields, read line by line
/// and stopped at the closing fence; not UTF-8 or too long is a problem.
pub(crate) fn front_matter_prefix(mut reader: impl BufRead) -> Result<String, Problem> {
    let mut text = String::new();
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        let n = reader
            .by_ref()
            .take(u64::try_from(MAX_FRONT_MATTER + 1).unwrap_or(u64::MAX))
            .read_until(b'\n', &mut line)
            .map_err(|e| io_problem("read the file", &e))?;
        if n == 0 {
            // End of file without a closing fence: the parser says so.
            return Ok(text);
        }
        let piece = std::str::from_utf8(&line).map_err(|_| Problem::NotUtf8)?;
        text.push_str(piece);
        // A byte-order mark is the file's, before its first line only (as
        // in the parser, which sees the whole text).
        let bare = if first {
            piece.strip_prefix('\u{feff}').unwrap_or(piece)
        } else {
            piece
        };
        let fence = bare.trim_end_matches([' ', '\t', '\r', '\n']) == "---";
        if first {
            first = false;
            if !fence {
                // No front matter at all: the first line is enough to say so.
                return Ok(text);
            }
        } else if fence {
            return Ok(text);
        }
        if text.len() > MAX_FRONT_MATTER {
            return Err(Problem::FrontMatterTooLong {
                limit: MAX_FRONT_MATTER,
            });
        }
    }
}

/// Reads a whole file of at most [`MAX_FILE`] bytes as UTF-8.
pub(crate) fn read_bounded(path: &Path) -> Result<String, Problem> {
    let file = File::open(path).map_err(|e| io_problem("open the file", &e))?;
    read_open_bounded(file)
}

/// Reads the rest of an open file, at most [`MAX_FILE`] bytes, as UTF-8.
pub(crate) fn read_open_bounded(file: File) -> Result<String, Problem> {
    let size = file.metadata().ok().map(|m| m.len());
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_problem("read the file", &e))?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > MAX_FILE {
        return Err(Problem::TooLarge {
            size: size.unwrap_or(read).max(read),
            limit: MAX_FILE,
        });
    }
    String::from_utf8(bytes).map_err(|_| Problem::NotUtf8)
}

#[cfg(test)]
mod tests;
