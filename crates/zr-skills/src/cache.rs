//! What a registry keeps between views (folder listings and parsed files,
//! each with the stamp it was read at), one scan's use of it, and the
//! pruning of what a scan no longer saw.

use std::collections::HashMap;
use std::convert::Infallible;
use std::ffi::OsString;
use std::fs::Metadata;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use crate::assemble::{self, Outcome, View};
use crate::diagnostic::Diagnostic;
use crate::stamp::{Seen, Stamp};
use crate::stats::ScanStats;

/// What reading a file or folder gave (`T`: a parse outcome, what a folder
/// listing keeps), with the stamp it was read at and the generation of the
/// last scan that saw it.
#[derive(Debug)]
pub(crate) struct Cached<T> {
    pub(crate) seen: Seen,
    pub(crate) generation: u64,
    pub(crate) value: T,
}

/// Cache entries by path, keyed by the path's bytes (hashing a `Path` walks
/// its components, which an unchanged view cannot afford).
pub(crate) type CacheMap<T> = HashMap<OsString, Cached<T>>;

/// What a registry keeps between views: folder listings (`L`: what a
/// listing keeps), the parsed files of each root, the last view and what
/// it cost.
#[derive(Debug)]
pub(crate) struct Cache<L, V: View> {
    generation: u64,
    dirs: CacheMap<L>,
    files: Vec<CacheMap<Arc<Outcome<V::Entry>>>>,
    last: Option<Arc<V>>,
    /// What the last scan did.
    pub(crate) stats: ScanStats,
}

impl<L, V: View> Default for Cache<L, V> {
    fn default() -> Self {
        Self {
            generation: 0,
            dirs: CacheMap::new(),
            files: Vec::new(),
            last: None,
            stats: ScanStats::default(),
        }
    }
}

impl<L, V: View> Cache<L, V> {
    /// Starts a scan, one generation later than the last.
    pub(crate) fn begin(&mut self) -> Pass<'_, L, Outcome<V::Entry>> {
        self.generation += 1;
        Pass {
            generation: self.generation,
            scan_start: SystemTime::now(),
            dirs: &mut self.dirs,
            files: &mut self.files,
            stats: ScanStats::default(),
        }
    }

    /// Ends the scan [`Cache::begin`] started: drops the entries it did not
    /// see, records its `stats` and returns its view (see
    /// [`assemble::settle`]).
    pub(crate) fn finish(
        &mut self,
        found: &[Arc<Outcome<V::Entry>>],
        builtins: &[Arc<V::Entry>],
        diagnostics: Vec<Diagnostic>,
        stats: ScanStats,
    ) -> Arc<V> {
        let pruned = prune(&mut self.dirs, &mut self.files, self.generation);
        self.stats = stats;
        assemble::settle(&mut self.last, found, builtins, diagnostics, pruned, stats)
    }
}

/// One scan's use of a registry's cache: folder listings (`L`) and parsed
/// files (`O`) read again only when their stamps changed.
#[derive(Debug)]
pub(crate) struct Pass<'a, L, O> {
    /// The scan's number: what it sees is marked with it.
    pub(crate) generation: u64,
    scan_start: SystemTime,
    /// Folder listings by path.
    pub(crate) dirs: &'a mut CacheMap<L>,
    files: &'a mut Vec<CacheMap<Arc<O>>>,
    /// What the scan did so far.
    pub(crate) stats: ScanStats,
}

impl<L: Clone, O> Pass<'_, L, O> {
    /// The listing of folder `dir` (whose metadata is `meta`): the cached
    /// one while its stamp is unchanged, else `list()`'s, counted as a
    /// folder listed.
    pub(crate) fn listing<E>(
        &mut self,
        dir: &Path,
        meta: &Metadata,
        list: impl FnOnce() -> Result<L, E>,
    ) -> Result<L, E> {
        let stats = &mut self.stats;
        cached(
            self.dirs,
            dir,
            Stamp::of(meta),
            (self.generation, self.scan_start),
            || {
                stats.dirs_listed += 1;
                list()
            },
        )
    }

    /// The outcome of file `path` (whose metadata is `meta`) of root
    /// `index`: the cached one while its stamp is unchanged, else
    /// `parse()`'s, counted as a file parsed.
    pub(crate) fn outcome(
        &mut self,
        index: usize,
        path: &Path,
        meta: &Metadata,
        parse: impl FnOnce() -> O,
    ) -> Arc<O> {
        if self.files.len() <= index {
            self.files.resize_with(index + 1, HashMap::new);
        }
        let stats = &mut self.stats;
        let Ok(outcome) = cached(
            &mut self.files[index],
            path,
            Stamp::of(meta),
            (self.generation, self.scan_start),
            || {
                stats.files_parsed += 1;
                Ok::<_, Infallible>(Arc::new(parse()))
            },
        );
        outcome
    }
}

/// What `path` (stamped `stamp` now) gave: the cached value, marked as seen
/// by the scan `generation`, while its stamp is trusted and unchanged;
/// otherwise `read()`'s, cached as seen by that scan, which started at
/// `scan_start` (a failed read caches nothing).
fn cached<T: Clone, E>(
    map: &mut CacheMap<T>,
    path: &Path,
    stamp: Stamp,
    (generation, scan_start): (u64, SystemTime),
    read: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    if let Some(cached) = map.get_mut(path.as_os_str())
        && cached.seen.still(&stamp)
    {
        cached.generation = generation;
        return Ok(cached.value.clone());
    }
    let value = read()?;
    map.insert(
        path.as_os_str().to_owned(),
        Cached {
            seen: Seen::new(stamp, scan_start),
            generation,
            value: value.clone(),
        },
    );
    Ok(value)
}

/// Drops the folder listings and file entries that the scan of `generation`
/// did not see (deleted files, vanished folders); says whether any went.
fn prune<L, F>(dirs: &mut CacheMap<L>, files: &mut [CacheMap<F>], generation: u64) -> bool {
    let count = |dirs: &CacheMap<L>, files: &[CacheMap<F>]| {
        dirs.len() + files.iter().map(HashMap::len).sum::<usize>()
    };
    let before = count(dirs, files);
    dirs.retain(|_, d| d.generation == generation);
    for root in files.iter_mut() {
        root.retain(|_, f| f.generation == generation);
    }
    before != count(dirs, files)
}
