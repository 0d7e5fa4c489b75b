//! `cargo xtask bench`: the zr-resolve criterion benchmarks.

use std::path::Path;

use anyhow::Result;

use crate::{Metadata, cargo, cargo_metadata, run_cmd};

/// Runs `cargo bench -p zr-resolve --bench resolve`; `quick` shortens
/// criterion's warm-up and measurement times.
pub(crate) fn run(root: &Path, quick: bool) -> Result<()> {
    let mut cmd = cargo(root);
    cmd.args(["bench", "-p", "zr-resolve", "--bench", "resolve"]);
    if quick {
        cmd.args(["--", "--warm-up-time", "1", "--measurement-time", "2"]);
    }
    run_cmd(cmd)?;

    let target_dir = cargo_metadata(root, Metadata::WorkspaceOnly)?
        .get("target_directory")
        .and_then(serde_json::Value::as_str)
        .map_or_else(|| root.join("target"), Into::into);
    println!(
        "\nbench results: {} (HTML report: {})",
        target_dir.join("criterion").display(),
        target_dir.join("criterion/report/index.html").display()
    );
    Ok(())
}
