//! `cargo xtask tidy`: layering, resolver purity, the workspace's one
//! `unsafe`, module docs, imports from where a name is defined (never
//! through `lib.rs`), the examples' `npx` pins and snapshot checks. It
//! also runs under `cargo test` (xtask is a default member; see
//! `tests.rs`'s `the_workspace_is_tidy`).
//!
//! The layering table below ([`LAYERS`]) is the executable form of
//! DESIGN.md section 1 and of the edges ARCHITECTURE.md draws: change them
//! together.

mod closure;
mod scan;
#[cfg(test)]
mod tests;
mod through_lib;
mod unsafety;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::deps::{NPX_PACKAGES, node_pins};
use crate::{Metadata, cargo_metadata, display_rel, walk_files};
use closure::check_banned_closure;
use scan::scan_resolver_source;
use through_lib::check_imports_through_lib;
use unsafety::check_unsafe;

/// Which workspace crates a workspace crate may depend on.
#[derive(Debug, Clone, Copy)]
enum Allowed {
    /// Exactly these crates (possibly none).
    Only(&'static [&'static str]),
    /// Any workspace crate (the top of the stack).
    Any,
}

/// The allowed edges between workspace crates (normal and build
/// dependencies; dev-dependencies are free).
///
/// DESIGN.md section 1's list, each row narrowed to the edges the crate
/// has: DESIGN allows zr-telemetry and zr-restate "zr-engine (and below)",
/// and the rows below name only what they use, so that a new edge is a
/// deliberate change here (within DESIGN's list) and any edge outside
/// DESIGN's list is a defect.
const LAYERS: &[(&str, Allowed)] = &[
    ("zr-types", Allowed::Only(&[])),
    // The formats other programs read (host-protocol messages, events,
    // transcript records): data only, beside zr-types; a transcript header
    // holds zr-caps' agent definition.
    ("zr-protocol", Allowed::Only(&["zr-types", "zr-caps"])),
    ("zr-caps", Allowed::Only(&["zr-types"])),
    ("zr-resolve", Allowed::Only(&["zr-types", "zr-caps"])),
    ("zr-skills", Allowed::Only(&["zr-types", "zr-caps"])),
    ("zr-process", Allowed::Only(&[])),
    ("zr-mcp", Allowed::Only(&["zr-types", "zr-process"])),
    ("zr-tools", Allowed::Only(&["zr-types", "zr-process"])),
    ("zr-providers", Allowed::Only(&["zr-types"])),
    (
        "zr-engine",
        Allowed::Only(&[
            "zr-types",
            "zr-protocol",
            "zr-caps",
            "zr-resolve",
            "zr-tools",
            "zr-providers",
        ]),
    ),
    // Its exporter implements zr-engine's `Tracer` seam; nothing below it
    // knows OpenTelemetry.
    ("zr-telemetry", Allowed::Only(&["zr-engine"])),
    // Its `DurableEffects` implements zr-engine's `Effects` seam; nothing
    // below it knows Restate.
    ("zr-restate", Allowed::Only(&["zr-types", "zr-engine"])),
    // Where every crate meets (today all but zr-providers, which it
    // reaches through zr-engine's re-exports).
    ("zr-cli", Allowed::Any),
    // The shared test helpers: above every crate (its helpers may use any
    // of them), and below none: see [`TEST_ONLY`].
    (TEST_ONLY, Allowed::Any),
    ("xtask", Allowed::Only(&[])),
];

/// The crate of shared test helpers: any crate may take it as a
/// dev-dependency, none as a normal or build dependency (it would then
/// ship with the crate).
const TEST_ONLY: &str = "zr-test-support";

/// The pure resolver crate, held to stricter rules.
const RESOLVER: &str = "zr-resolve";

/// Packages the resolver must not depend on, directly or through any chain
/// of normal dependencies: async runtimes, clocks, randomness. See
/// [`closure`] for which edges count.
const RESOLVER_BANNED_DEPS: &[&str] = &[
    "tokio",
    "async-trait",
    "futures",
    "rand",
    "getrandom",
    "chrono",
    "time",
];

/// Runs every tidy check and fails with the full list of problems.
pub(crate) fn run(root: &Path) -> Result<()> {
    let metadata = cargo_metadata(root, Metadata::WithResolve)?;
    let mut problems = check_layering(&metadata)?;
    problems.extend(check_banned_closure(
        &metadata,
        RESOLVER,
        RESOLVER_BANNED_DEPS,
    )?);
    problems.extend(check_resolver_sources(root)?);
    problems.extend(check_module_docs(root)?);
    problems.extend(check_unsafe(root)?);
    problems.extend(check_imports_through_lib(root)?);
    problems.extend(check_npx_pins(root)?);
    problems.extend(pending_snapshots(root)?.iter().map(|path| {
        format!(
            "{}: unreviewed snapshot (run `cargo insta review`)",
            display_rel(root, path)
        )
    }));
    if problems.is_empty() {
        println!("tidy: ok");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("tidy: {problem}");
    }
    bail!("tidy found {} problem(s)", problems.len())
}

/// Every `npx` server in an example's `.mcp.json` names a package of
/// [`NPX_PACKAGES`] at the version `xtask/deps/package.json` pins: the
/// version a new user's first command fetches is the one the tests run.
fn check_npx_pins(root: &Path) -> Result<Vec<String>> {
    let pins = node_pins(&root.join("xtask/deps"))?;
    let mut problems = Vec::new();
    let examples = root.join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&examples)
        .with_context(|| format!("could not read {}", examples.display()))?
        .filter_map(|entry| Some(entry.ok()?.path().join(".mcp.json")))
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    for path in files {
        let file = display_rel(root, &path);
        let mcp: Value =
            serde_json::from_str(&read(&path)?).with_context(|| format!("{file} is not JSON"))?;
        problems.extend(npx_pin_problems(&file, &mcp, &pins));
    }
    Ok(problems)
}

/// The problems of one `.mcp.json` (named `file`) against the pinned
/// `pins` (see [`check_npx_pins`]).
fn npx_pin_problems(file: &str, mcp: &Value, pins: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    let servers = mcp["mcpServers"].as_object().into_iter().flatten();
    for (server, config) in servers {
        if config["command"] != "npx" {
            continue;
        }
        // The package is the first argument that is not an option.
        let spec = config["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|arg| !arg.starts_with('-'))
            .unwrap_or("");
        // `@scope/name@version`: the version follows the last `@` after
        // the first character.
        let (name, version) = match spec.get(1..).and_then(|rest| rest.rsplit_once('@')) {
            Some((name, version)) => (format!("{}{name}", &spec[..1]), version),
            None => (spec.to_owned(), ""),
        };
        if !NPX_PACKAGES.contains(&name.as_str()) {
            problems.push(format!(
                "{file}: server '{server}' runs `npx {spec}`, which is not in NPX_PACKAGES (xtask/src/deps.rs), so `cargo xtask deps` does not fetch it for the tests"
            ));
            continue;
        }
        match pins.get(&name) {
            Some(pinned) if pinned == version => {}
            Some(pinned) => problems.push(format!(
                "{file}: server '{server}' runs `npx {spec}`, but xtask/deps/package.json pins {name} {pinned}: write `{name}@{pinned}`"
            )),
            None => problems.push(format!(
                "{file}: server '{server}' runs `npx {spec}`, which xtask/deps/package.json does not pin"
            )),
        }
    }
    problems
}

/// Fails if an unreviewed snapshot (`*.snap.new`, `*.pending-snap`) exists
/// under `crates/`, listing them.
pub(crate) fn check_no_pending_snapshots(root: &Path) -> Result<()> {
    let pending = pending_snapshots(root)?;
    if pending.is_empty() {
        println!("no unreviewed snapshots");
        return Ok(());
    }
    for path in &pending {
        eprintln!("unreviewed snapshot: {}", display_rel(root, path));
    }
    bail!(
        "{} unreviewed snapshot(s); review them with `cargo insta review`",
        pending.len()
    )
}

/// Every `*.snap.new` and `*.pending-snap` file under `crates/`.
fn pending_snapshots(root: &Path) -> Result<Vec<PathBuf>> {
    Ok(walk_files(&root.join("crates"))?
        .into_iter()
        .filter(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            name.ends_with(".snap.new") || name.ends_with(".pending-snap")
        })
        .collect())
}

/// Checks workspace-internal dependency edges against [`LAYERS`], given the
/// output of `cargo metadata` (with or without `--no-deps`: only the
/// workspace members' direct dependencies are read). Returns one message per
/// problem. Banned packages are [`check_banned_closure`]'s job.
fn check_layering(metadata: &Value) -> Result<Vec<String>> {
    let member_ids: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .context("cargo metadata: no `workspace_members` array")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let members: Vec<&Value> = metadata["packages"]
        .as_array()
        .context("cargo metadata: no `packages` array")?
        .iter()
        .filter(|pkg| pkg["id"].as_str().is_some_and(|id| member_ids.contains(id)))
        .collect();
    let member_names: BTreeSet<&str> = members
        .iter()
        .filter_map(|pkg| pkg["name"].as_str())
        .collect();

    let mut problems = Vec::new();
    for pkg in members {
        let name = pkg["name"]
            .as_str()
            .context("cargo metadata: package without a name")?;
        let deps: BTreeSet<&str> = pkg["dependencies"]
            .as_array()
            .with_context(|| format!("cargo metadata: {name} has no `dependencies` array"))?
            .iter()
            // `kind` is null for normal dependencies, "build" or "dev" otherwise.
            .filter(|dep| dep["kind"].as_str() != Some("dev"))
            .filter_map(|dep| dep["name"].as_str())
            .collect();
        if deps.contains(TEST_ONLY) {
            problems.push(format!(
                "`{name}` depends on `{TEST_ONLY}` outside [dev-dependencies]: \
                 test helpers are a dev-dependency only"
            ));
        }

        match LAYERS.iter().find(|(crate_name, _)| *crate_name == name) {
            None => problems.push(format!(
                "workspace crate `{name}` is not in the layering table: \
                 add it to the layering table in xtask/src/tidy.rs and to ARCHITECTURE.md"
            )),
            Some((_, Allowed::Any)) => {}
            Some((_, Allowed::Only(allowed))) => {
                for dep in deps.iter().filter(|dep| member_names.contains(*dep)) {
                    if !allowed.contains(dep) {
                        problems.push(format!(
                            "forbidden dependency edge `{name}` -> `{dep}` \
                             (allowed for {name}: {})",
                            if allowed.is_empty() {
                                "no workspace crate".to_owned()
                            } else {
                                allowed.join(", ")
                            }
                        ));
                    }
                }
            }
        }
    }
    Ok(problems)
}

/// Scans `crates/zr-resolve/src/**/*.rs` for banned code (see [`scan`]).
fn check_resolver_sources(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for path in rust_files(&root.join("crates").join(RESOLVER).join("src"))? {
        let text = read(&path)?;
        for (line, reason) in scan_resolver_source(&text) {
            problems.push(format!("{}:{line}: {reason}", display_rel(root, &path)));
        }
    }
    Ok(problems)
}

/// Checks that every `.rs` file under `crates/*/src` and `crates/*/examples`
/// starts with a `//!` line (an example's says what it shows and how to
/// run it).
fn check_module_docs(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let crates_dir = root.join("crates");
    if !crates_dir.is_dir() {
        return Ok(problems);
    }
    let mut crate_dirs: Vec<PathBuf> = std::fs::read_dir(&crates_dir)
        .with_context(|| format!("could not read {}", crates_dir.display()))?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("could not read {}", crates_dir.display()))?;
    crate_dirs.sort();
    for crate_dir in crate_dirs {
        let mut paths = rust_files(&crate_dir.join("src"))?;
        paths.extend(rust_files(&crate_dir.join("examples"))?);
        for path in paths {
            if !starts_with_module_doc(&read(&path)?) {
                problems.push(format!(
                    "{}: must start with a `//!` line saying what the module is for",
                    display_rel(root, &path)
                ));
            }
        }
    }
    Ok(problems)
}

/// Whether the first non-empty line of `text` is a `//!` module doc.
fn starts_with_module_doc(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .is_some_and(|line| line.starts_with("//!"))
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(walk_files(dir)?
        .into_iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect())
}

/// Reads a source file as text.
fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("could not read {}", path.display()))
}
