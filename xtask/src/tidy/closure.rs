//! The resolver's transitive dependency check: no banned package anywhere in
//! zr-resolve's normal-dependency closure, read from the `resolve` graph of a
//! full `cargo metadata` (not `--no-deps`, which only lists direct deps).
//!
//! Which edges count: an edge is followed when one of its `dep_kinds` is
//! normal (`kind` null or `"normal"`), whatever its `target` (a
//! platform-specific dependency counts, on every platform). Dev-dependencies
//! never reach a user of the resolver, and build-dependencies only run at
//! compile time, so neither is followed, at any depth: a banned package that
//! only a build script or a test needs passes. Proc-macro crates are normal
//! dependencies and are followed (conservative: they run at compile time
//! only, but a banned one almost always has a runtime sibling).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// One message per banned package found in `root_crate`'s normal-dependency
/// closure, with the shortest chain that brings it in
/// (`zr-resolve -> zr-caps -> tokio`). `metadata` must be the output of
/// `cargo metadata --format-version 1` with dependencies (it needs `resolve`).
pub(super) fn check_banned_closure(
    metadata: &Value,
    root_crate: &str,
    banned: &[&str],
) -> Result<Vec<String>> {
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .context("cargo metadata: no `packages` array")?
        .iter()
        .filter_map(|pkg| Some((pkg["id"].as_str()?, pkg["name"].as_str()?)))
        .collect();
    let Some(nodes) = metadata["resolve"]["nodes"].as_array() else {
        bail!(
            "cargo metadata: no `resolve.nodes` (the dependency closure check \
             needs `cargo metadata` without `--no-deps`)"
        );
    };
    let nodes: BTreeMap<&str, &Value> = nodes
        .iter()
        .filter_map(|node| Some((node["id"].as_str()?, node)))
        .collect();
    let Some(root_id) = metadata["workspace_members"]
        .as_array()
        .context("cargo metadata: no `workspace_members` array")?
        .iter()
        .filter_map(Value::as_str)
        .find(|id| names.get(id) == Some(&root_crate))
    else {
        return Ok(vec![format!(
            "`{root_crate}` is not a workspace member: the dependency closure check has nothing to check"
        )]);
    };

    // Breadth-first, so the chain recorded for each package is a shortest one.
    let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
    let mut seen: BTreeSet<&str> = BTreeSet::from([root_id]);
    let mut queue = VecDeque::from([root_id]);
    let mut problems = Vec::new();
    while let Some(id) = queue.pop_front() {
        let name = names.get(id).copied().unwrap_or(id);
        if id != root_id && banned.contains(&name) {
            problems.push(format!(
                "`{root_crate}` must not depend on `{name}`, even indirectly \
                 (no async, clocks or randomness in the resolver): {}",
                chain(id, &parent, &names)
            ));
        }
        let node = nodes
            .get(id)
            .with_context(|| format!("cargo metadata: no resolve node for `{id}`"))?;
        let deps = node["deps"]
            .as_array()
            .with_context(|| format!("cargo metadata: resolve node `{id}` has no `deps` array"))?;
        for dep in deps.iter().filter(|dep| is_normal_edge(dep)) {
            let dep_id = dep["pkg"]
                .as_str()
                .with_context(|| format!("cargo metadata: a dependency of `{id}` has no `pkg`"))?;
            if seen.insert(dep_id) {
                parent.insert(dep_id, id);
                queue.push_back(dep_id);
            }
        }
    }
    Ok(problems)
}

/// Whether a `resolve.nodes[].deps[]` entry is a normal dependency edge. An
/// entry without `dep_kinds` (cargo older than 1.41) is taken as normal.
fn is_normal_edge(dep: &Value) -> bool {
    match dep["dep_kinds"].as_array() {
        None => true,
        Some(kinds) => kinds.iter().any(|kind| match &kind["kind"] {
            Value::Null => true,
            other => other.as_str() == Some("normal"),
        }),
    }
}

/// `root -> a -> b -> id` by package name, following `parent` links.
fn chain(id: &str, parent: &BTreeMap<&str, &str>, names: &BTreeMap<&str, &str>) -> String {
    let mut links = vec![id];
    let mut current = id;
    while let Some(&up) = parent.get(current) {
        links.push(up);
        current = up;
    }
    links
        .iter()
        .rev()
        .map(|id| names.get(id).copied().unwrap_or(id))
        .collect::<Vec<_>>()
        .join(" -> ")
}
