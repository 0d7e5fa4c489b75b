//! How far apart two names are: the one edit distance behind every "did
//! you mean" of the workspace (config keys, tool names, agent types,
//! skills, file names).

/// The Levenshtein distance of `a` and `b` (insertions, deletions and
/// substitutions), counted in characters.
///
/// ```
/// assert_eq!(zr_types::edit_distance("Bsh", "Bash"), 1);
/// assert_eq!(zr_types::edit_distance("", "abc"), 3);
/// ```
#[must_use]
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}
