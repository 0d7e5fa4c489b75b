//! Reading a file zr keeps or is pointed at (a transcript, the cron store,
//! a model script, zr.toml): a regular file only, and up to a size, so that
//! a FIFO or a device in its place fails at once with an error naming what
//! it is, instead of blocking zr (where no signal reaches the blocked
//! read) or filling memory (`/dev/zero`).

use std::fs::File;
use std::io::{Error, ErrorKind, Read as _};
use std::path::Path;

/// Opens `path` for reading if it is a regular file. The open does not
/// block (`O_NONBLOCK`: opening a FIFO otherwise waits for a writer); the
/// type is checked on the open file.
///
/// # Errors
///
/// The open's error; [`ErrorKind::InvalidInput`] "not a regular file (a
/// FIFO)" for anything else.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, nix::libc::O_NONBLOCK);
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("not a regular file ({})", describe(kind)),
        ));
    }
    Ok(file)
}

/// The bytes of the regular file at `path`, if it holds at most `limit`.
///
/// # Errors
///
/// [`open_regular`]'s errors; [`ErrorKind::FileTooLarge`] "larger than the
/// limit of N bytes"; a read error.
pub fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let too_large = || {
        Error::new(
            ErrorKind::FileTooLarge,
            format!("larger than the limit of {limit} bytes"),
        )
    };
    let len = file.metadata()?.len();
    if len > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if u64::try_from(bytes.len()).map_or(true, |n| n > limit) {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
///
/// # Errors
///
/// [`read_regular`]'s errors; [`ErrorKind::InvalidData`] when it is not
/// UTF-8.
pub fn read_regular_to_string(path: &Path, limit: u64) -> std::io::Result<String> {
    String::from_utf8(read_regular(path, limit)?)
        .map_err(|e| Error::new(ErrorKind::InvalidData, e.utf8_error()))
}

fn describe(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}
