//! Locks between processes that share one cron store: a short one around
//! each change, and the scheduler's, held while it runs. Both are OS file
//! locks (`flock`) on files next to the store, so the kernel releases them
//! when their process dies, however it dies.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use crate::error::CronStoreError;

/// `cron.json` -> `cron.json.SUFFIX`.
pub(super) fn beside(store: &Path, suffix: &str) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(suffix);
    store.with_file_name(name)
}

fn open(path: &Path) -> Result<File, CronStoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| CronStoreError::Lock {
            path: path.to_path_buf(),
            source,
        })?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|source| CronStoreError::Lock {
            path: path.to_path_buf(),
            source,
        })
}

/// An exclusive lock on `path`, waited for; released when dropped.
pub(super) fn exclusive(path: &Path) -> Result<File, CronStoreError> {
    let file = open(path)?;
    file.lock().map_err(|source| CronStoreError::Lock {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(file)
}

/// Proof that this process is the one scheduler of a cron store: while it
/// lives, [`crate::CronStore::lock_scheduler`] fails in every other process
/// (and for every other call in this one). Dropping it, or the process
/// ending in any way, releases the lock.
#[derive(Debug)]
pub struct SchedulerLock {
    _file: File,
    path: PathBuf,
}

impl SchedulerLock {
    /// The lock file (`STORE.scheduler`), which holds the holder's process
    /// id.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Takes the scheduler lock of `path` without waiting, and writes this
/// process's id into the file for the next one to name.
pub(super) fn scheduler(path: PathBuf) -> Result<SchedulerLock, CronStoreError> {
    let mut file = open(&path)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(CronStoreError::SchedulerRunning {
                path,
                pid: text.trim().parse().ok(),
            });
        }
        Err(TryLockError::Error(source)) => return Err(CronStoreError::Lock { path, source }),
    }
    let written = file
        .set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{}", std::process::id()));
    if let Err(error) = written {
        // The lock holds without the id; the next scheduler's message
        // just cannot name this process.
        tracing::debug!(%error, path = %path.display(), "cannot write the scheduler's process id");
    }
    Ok(SchedulerLock { _file: file, path })
}
