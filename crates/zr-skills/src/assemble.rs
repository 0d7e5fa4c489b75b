//! What both registries do with one scan's findings: keep the first entry
//! of each name (precedence order), warn about the shadowed ones, sort the
//! diagnostics, and hand out the previous view when nothing changed.

use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::error::Problem;
use crate::stats::ScanStats;

/// What parsing one file gave: the entry, or the errors that kept it from
/// loading, plus warnings either way.
#[derive(Debug)]
pub(crate) struct Outcome<E> {
    pub(crate) entry: Option<Arc<E>>,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl<E> Outcome<E> {
    /// An outcome with no entry and one error.
    pub(crate) fn failed(path: &Path, problem: Problem) -> Self {
        Self {
            entry: None,
            diagnostics: vec![Diagnostic::error(path, None, problem)],
        }
    }
}

/// An entry of a registry view.
pub(crate) trait Entry {
    /// What it is, for messages: `"skill"`, `"agent type"`.
    const KIND: &'static str;
    /// Its name, which views are sorted and searched by.
    fn key(&self) -> &str;
    /// The file it comes from; `None` for a built-in (shadowing a built-in
    /// is not warned about).
    fn source_file(&self) -> Option<&Path>;
}

/// A registry's immutable view.
pub(crate) trait View {
    /// What it lists.
    type Entry: Entry;
    /// A view of `entries` (sorted by name) and `diagnostics` (sorted).
    fn assemble(entries: Vec<Arc<Self::Entry>>, diagnostics: Vec<Diagnostic>) -> Self;
    /// Its entries and diagnostics.
    fn parts(&self) -> (&[Arc<Self::Entry>], &[Diagnostic]);
}

/// The view of one scan: the entries of `found` (in precedence order) then
/// `builtins`, each name once, the first winning; `diagnostics` plus those
/// of `found` and a warning per shadowed file, sorted by file and line.
/// `last` when it lists the very same entries and diagnostics and `pruned`
/// (whether the scan dropped cache entries) is false; otherwise the new
/// view, also stored in `last`.
pub(crate) fn settle<V: View>(
    last: &mut Option<Arc<V>>,
    found: &[Arc<Outcome<V::Entry>>],
    builtins: &[Arc<V::Entry>],
    mut diagnostics: Vec<Diagnostic>,
    pruned: bool,
    stats: ScanStats,
) -> Arc<V> {
    let mut all: Vec<&Arc<V::Entry>> = Vec::with_capacity(found.len() + builtins.len());
    for outcome in found {
        diagnostics.extend(outcome.diagnostics.iter().cloned());
        all.extend(outcome.entry.as_ref());
    }
    all.extend(builtins);
    // A stable sort keeps precedence order among equal names, so the first
    // of each run wins.
    all.sort_by(|a, b| a.key().cmp(b.key()));
    let mut entries: Vec<Arc<V::Entry>> = Vec::with_capacity(all.len());
    for entry in all {
        match entries.last() {
            Some(winner) if winner.key() == entry.key() => {
                if let (Some(path), Some(by)) = (entry.source_file(), winner.source_file()) {
                    diagnostics.push(Diagnostic::warning(
                        path,
                        None,
                        Problem::Shadowed {
                            kind: V::Entry::KIND,
                            name: entry.key().to_owned(),
                            winner: by.to_path_buf(),
                        },
                    ));
                }
            }
            _ => entries.push(Arc::clone(entry)),
        }
    }
    diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    if let Some(last) = last.as_ref()
        && !pruned
        && last.parts().1 == diagnostics.as_slice()
        && same_entries(last.parts().0, &entries)
    {
        return Arc::clone(last);
    }
    tracing::debug!(
        kind = V::Entry::KIND,
        files_parsed = stats.files_parsed,
        dirs_listed = stats.dirs_listed,
        entries = entries.len(),
        diagnostics = diagnostics.len(),
        "registry changed"
    );
    let view = Arc::new(V::assemble(entries, diagnostics));
    *last = Some(Arc::clone(&view));
    view
}

/// Whether two lists hold the very same entries, in the same order.
fn same_entries<T>(a: &[Arc<T>], b: &[Arc<T>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| Arc::ptr_eq(a, b))
}

/// The entry named `name` of `entries`, sorted by name as [`settle`] leaves
/// them.
pub(crate) fn by_name<'a, E: Entry>(entries: &'a [Arc<E>], name: &str) -> Option<&'a Arc<E>> {
    entries
        .binary_search_by(|e| e.key().cmp(name))
        .ok()
        .and_then(|i| entries.get(i))
}
