//! Files a test or bench sets up: the registries trust a file's
//! modification time only once it is two seconds old, so a bench that
//! measures the cached path ages what it wrote.

use std::fs::{self, File};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Sets the modification time of `path` and of everything under it a
/// minute back, so that stamps are trusted (a just-written file is
/// re-read for two seconds, by design).
///
/// # Panics
///
/// When a file cannot be opened or its time set.
pub fn age(path: &Path) {
    let old = SystemTime::now() - Duration::from_secs(60);
    if path.is_dir() {
        for entry in fs::read_dir(path).expect("a readable folder") {
            age(&entry.expect("a folder entry").path());
        }
    }
    File::open(path)
        .and_then(|file| file.set_modified(old))
        .unwrap_or_else(|error| panic!("cannot age {}: {error}", path.display()));
}
