//! The mark that a `zr` process is running a session: an exclusive
//! `flock` on the session's folder, held for the whole run and released by
//! the kernel however the process ends (SIGKILL included), so two runs of
//! one session are refused by the lock, not by a race on a file. Beside it,
//! `zr.pid` (who holds the lock, for the messages) and `processes`, the
//! record of the process groups the run started (`zr_process`), both
//! removed when the run ends.
//!
//! A later `zr resume` reads the record a killed run left and kills what
//! still runs ([`RunningMark::acquire`]); `zr sessions` reports it
//! ([`left_behind`]).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::fcntl::{Flock, FlockArg};
use zr_process::{Leftover, Recording};
use zr_types::SessionId;

/// The pid file's name in a session folder.
const PID_FILE: &str = "zr.pid";
/// The process record's name in a session folder.
const RECORD_FILE: &str = "processes";
/// How often, and how long apart, a held lock is tried again before the
/// session counts as running (`zr sessions` holds it for a moment when it
/// looks).
const LOCK_TRIES: u32 = 5;
const LOCK_RETRY: Duration = Duration::from_millis(40);

/// The session is locked by another process.
#[derive(Debug)]
pub(crate) struct Held {
    /// Its pid, when `zr.pid` names it.
    pub(crate) pid: Option<u32>,
}

/// Holds the session's lock; removes the pid file and the record when
/// dropped (the kernel releases the lock).
#[derive(Debug)]
pub(crate) struct RunningMark {
    folder: PathBuf,
    recording: Option<Recording>,
    _lock: Flock<File>,
}

impl RunningMark {
    /// Locks `session` (in `sessions_dir`, its folder created if needed),
    /// kills what a killed earlier run of it left running, then writes the
    /// pid file and starts the process record. Returns the mark and the
    /// processes it killed.
    ///
    /// # Errors
    ///
    /// [`Held`] when another process holds the lock. A folder that cannot
    /// be created or opened is logged and gives `Ok(None)`: the run goes on
    /// unguarded rather than not at all.
    pub(crate) fn acquire(
        sessions_dir: &Path,
        session: &SessionId,
    ) -> Result<Option<(Self, Vec<Leftover>)>, Held> {
        let folder = sessions_dir.join(session.as_str());
        let opened = std::fs::create_dir_all(&folder).and_then(|()| File::open(&folder));
        let dir = match opened {
            Ok(dir) => dir,
            Err(error) => {
                tracing::warn!(folder = %folder.display(), %error, "cannot lock the session folder");
                return Ok(None);
            }
        };
        let lock = lock(dir, FlockArg::LockExclusiveNonblock).map_err(|()| Held {
            pid: recorded_pid(&folder),
        })?;
        let record = folder.join(RECORD_FILE);
        let left = zr_process::leftovers(&record);
        zr_process::kill_leftovers(&record, &left);
        // A new file: whatever had the name (a FIFO would block the write)
        // is replaced.
        let pid_file = folder.join(PID_FILE);
        let _ = std::fs::remove_file(&pid_file);
        if let Err(error) = std::fs::write(&pid_file, format!("{}\n", std::process::id())) {
            tracing::debug!(%error, "cannot write the session's pid file");
        }
        let recording = Some(zr_process::record_in(record));
        Ok(Some((
            Self {
                folder,
                recording,
                _lock: lock,
            },
            left,
        )))
    }
}

impl Drop for RunningMark {
    fn drop(&mut self) {
        drop(self.recording.take());
        let _ = std::fs::remove_file(self.folder.join(PID_FILE));
        // A run that wrote no transcript leaves no empty folder behind
        // (`remove_dir` removes only an empty one).
        let _ = std::fs::remove_dir(&self.folder);
    }
}

/// Takes the lock on `dir`, trying again a few times while it is held.
fn lock(dir: File, arg: FlockArg) -> Result<Flock<File>, ()> {
    let mut dir = dir;
    for attempt in 0..LOCK_TRIES {
        match Flock::lock(dir, arg) {
            Ok(lock) => return Ok(lock),
            Err((back, _)) => dir = back,
        }
        if attempt + 1 < LOCK_TRIES {
            std::thread::sleep(LOCK_RETRY);
        }
    }
    Err(())
}

/// The pid in the folder's pid file.
fn recorded_pid(folder: &Path) -> Option<u32> {
    zr_tools::read_regular_to_string(&folder.join(PID_FILE), 64)
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether another process runs the session in `folder` now (holds its
/// lock), and its pid when known.
pub(crate) fn running(folder: &Path) -> Option<Held> {
    let dir = File::open(folder).ok()?;
    match Flock::lock(dir, FlockArg::LockSharedNonblock) {
        // Free: released at once by dropping it.
        Ok(_free) => None,
        Err(_) => Some(Held {
            pid: recorded_pid(folder),
        }),
    }
}

/// What a killed run of the session in `folder` left running (empty while
/// a live zr runs it).
pub(crate) fn left_behind(folder: &Path) -> Vec<Leftover> {
    zr_process::leftovers(&folder.join(RECORD_FILE))
}

/// `N processes (pid P: COMMAND; ...)` for messages about leftovers.
pub(crate) fn describe(left: &[Leftover]) -> String {
    let list: Vec<String> = left
        .iter()
        .map(|l| format!("pid {}: {}", l.pid, l.command))
        .collect();
    format!(
        "{} process{} ({})",
        left.len(),
        if left.len() == 1 { "" } else { "es" },
        list.join("; ")
    )
}
