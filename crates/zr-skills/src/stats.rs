//! What one registry view cost: the figures hot reload is judged by.

/// What the last view of a registry did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// `stat` calls on folders and files.
    pub stat_calls: usize,
    /// Folders listed (changed or new ones only).
    pub dirs_listed: usize,
    /// Files read and parsed (changed or new ones only).
    pub files_parsed: usize,
}
