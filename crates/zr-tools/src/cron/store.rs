//! The durable cron store: one JSON file, replaced atomically (temp file in
//! the same folder, fsync, rename, fsync of the folder) on every change,
//! each change under a lock that other processes respect.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::lock::{SchedulerLock, beside, exclusive, scheduler};
use super::schedule::{Schedule, jitter_of};
use crate::error::CronStoreError;

/// A scheduled prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronJob {
    /// `cron-N`, unique within the store.
    pub id: String,
    /// The 5-field cron expression.
    pub cron: String,
    /// The prompt to run when it fires.
    pub prompt: String,
    /// Whether it fires on every occurrence (else once, then it is removed).
    pub recurring: bool,
    /// Each firing is delayed by a fixed offset in `0..=jitter_seconds`
    /// derived from the id.
    #[serde(default)]
    pub jitter_seconds: u32,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last fired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_fired: Option<DateTime<Utc>>,
}

impl CronJob {
    /// The parsed schedule.
    ///
    /// # Errors
    ///
    /// [`CronStoreError::FieldCount`] or [`CronStoreError::Expression`]
    /// when the stored expression is invalid
    /// (only possible if the file was edited by hand).
    pub fn schedule(&self) -> Result<Schedule, CronStoreError> {
        Schedule::parse(&self.cron)
    }

    /// The next time it fires strictly after `after` (jitter included), if
    /// any.
    #[must_use]
    pub fn next_fire_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let since = self.last_fired.unwrap_or(self.created_at).max(after);
        self.schedule()
            .ok()?
            .next_after(since, jitter_of(&self.id, self.jitter_seconds))
    }

    /// Whether it is due at `at`: it has an occurrence (jitter included)
    /// after its last firing (or its creation) and no later than `at`.
    #[must_use]
    pub fn is_due(&self, at: DateTime<Utc>) -> bool {
        let since = self.last_fired.unwrap_or(self.created_at);
        self.schedule()
            .ok()
            .and_then(|s| s.next_after(since, jitter_of(&self.id, self.jitter_seconds)))
            .is_some_and(|next| next <= at)
    }
}

/// What a new job is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCronJob {
    /// The 5-field cron expression.
    pub cron: String,
    /// The prompt.
    pub prompt: String,
    /// Fire on every occurrence (else once).
    pub recurring: bool,
    /// Maximum jitter in seconds.
    pub jitter_seconds: u32,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    version: u32,
    next_id: u64,
    jobs: Vec<CronJob>,
}

impl StoreFile {
    /// Where job `id` is in `jobs`.
    fn position(&self, id: &str) -> Result<usize, CronStoreError> {
        self.jobs
            .iter()
            .position(|j| j.id == id)
            .ok_or_else(|| CronStoreError::UnknownJob { id: id.to_owned() })
    }
}

/// The durable store of scheduled prompts.
///
/// Every change reads the file, changes it and writes a new file next to it
/// that is renamed over the old one, so a crash at any moment leaves either
/// the old or the new store, never a torn one. Changes are serialised by
/// a lock within the process and by an OS file lock (`flock` on
/// `STORE.lock`) between processes, so a `CronCreate` in one process and a
/// firing recorded by a scheduler in another never lose each other's
/// change. [`CronStore::lock_scheduler`] is the other lock: one scheduler
/// per store.
#[derive(Debug)]
pub struct CronStore {
    path: PathBuf,
    lock: Mutex<()>,
}

/// The largest store read: thousands of jobs fit many times over.
const STORE_LIMIT: u64 = 16 * 1024 * 1024;

impl CronStore {
    /// A store kept in `path` (created on the first change).
    #[must_use]
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            lock: Mutex::new(()),
        }
    }

    /// The store file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load(&self) -> Result<StoreFile, CronStoreError> {
        match crate::file::read_regular(&self.path, STORE_LIMIT) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| CronStoreError::Parse {
                path: self.path.clone(),
                source,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StoreFile {
                version: 1,
                ..StoreFile::default()
            }),
            Err(source) => Err(CronStoreError::Read {
                path: self.path.clone(),
                source,
            }),
        }
    }

    fn save(&self, file: &StoreFile) -> Result<(), CronStoreError> {
        let write_err = |source: std::io::Error| CronStoreError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(write_err)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".cron-store-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(write_err)?;
        serde_json::to_writer_pretty(&mut tmp, file)
            .map_err(|e| write_err(std::io::Error::other(e)))?;
        tmp.as_file().sync_all().map_err(write_err)?;
        tmp.persist(&self.path).map_err(|e| write_err(e.error))?;
        // Make the rename itself durable.
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    fn change<R>(
        &self,
        f: impl FnOnce(&mut StoreFile) -> Result<R, CronStoreError>,
    ) -> Result<R, CronStoreError> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let _between_processes = exclusive(&beside(&self.path, "lock"))?;
        let mut file = self.load()?;
        let out = f(&mut file)?;
        self.save(&file)?;
        Ok(out)
    }

    /// Takes the store's scheduler lock (`STORE.scheduler`, an OS file
    /// lock) without waiting: while the returned guard lives, no other
    /// process (and no other call) gets it, so two schedulers never fire
    /// one job twice. The kernel releases it if the process dies.
    ///
    /// # Errors
    ///
    /// [`CronStoreError::SchedulerRunning`] (naming the holder's process
    /// id) when another scheduler holds it; [`CronStoreError::Lock`] when
    /// the lock file cannot be opened or locked.
    pub fn lock_scheduler(&self) -> Result<SchedulerLock, CronStoreError> {
        scheduler(beside(&self.path, "scheduler"))
    }

    /// Every job, in creation order.
    ///
    /// # Errors
    ///
    /// [`CronStoreError`] when the file cannot be read or parsed.
    pub fn list(&self) -> Result<Vec<CronJob>, CronStoreError> {
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(self.load()?.jobs)
    }

    /// Adds a job created at `now`.
    ///
    /// # Errors
    ///
    /// [`CronStoreError::FieldCount`] or [`CronStoreError::Expression`] for
    /// an invalid expression, [`CronStoreError::NeverFires`] for one with no
    /// occurrence after `now`; read and write errors of the file.
    pub fn create(&self, new: NewCronJob, now: DateTime<Utc>) -> Result<CronJob, CronStoreError> {
        let schedule = Schedule::parse(&new.cron)?;
        if schedule.next_after(now, Duration::ZERO).is_none() {
            return Err(CronStoreError::NeverFires {
                expression: schedule.expression().to_owned(),
            });
        }
        self.change(|file| {
            file.version = 1;
            file.next_id += 1;
            let job = CronJob {
                id: format!("cron-{}", file.next_id),
                cron: schedule.expression().to_owned(),
                prompt: new.prompt,
                recurring: new.recurring,
                jitter_seconds: new.jitter_seconds,
                created_at: now,
                last_fired: None,
            };
            file.jobs.push(job.clone());
            Ok(job)
        })
    }

    /// Removes the job `id` and returns it.
    ///
    /// # Errors
    ///
    /// [`CronStoreError::UnknownJob`] when there is none; file errors.
    pub fn delete(&self, id: &str) -> Result<CronJob, CronStoreError> {
        self.change(|file| {
            let pos = file.position(id)?;
            Ok(file.jobs.remove(pos))
        })
    }

    /// The jobs due at `at`, in creation order: each has an occurrence
    /// (plus its jitter) after its last firing (or creation) and no later
    /// than `at`. Call [`CronStore::mark_fired`] for each one run.
    ///
    /// # Errors
    ///
    /// [`CronStoreError`] when the file cannot be read or parsed.
    pub fn due(&self, at: DateTime<Utc>) -> Result<Vec<CronJob>, CronStoreError> {
        Ok(self.list()?.into_iter().filter(|j| j.is_due(at)).collect())
    }

    /// Records that job `id` fired at `at`: a recurring job remembers it, a
    /// one-shot job is removed.
    ///
    /// # Errors
    ///
    /// [`CronStoreError::UnknownJob`] when there is none; file errors.
    pub fn mark_fired(&self, id: &str, at: DateTime<Utc>) -> Result<(), CronStoreError> {
        self.change(|file| {
            let pos = file.position(id)?;
            if file.jobs[pos].recurring {
                file.jobs[pos].last_fired = Some(at);
            } else {
                file.jobs.remove(pos);
            }
            Ok(())
        })
    }
}
