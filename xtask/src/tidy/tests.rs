//! Tests for the tidy checks, on hand-written `cargo metadata` and sources.

use serde_json::{Value, json};

use super::{check_layering, scan_resolver_source, starts_with_module_doc};

/// A workspace package as `cargo metadata --no-deps` prints it, with
/// `(name, kind)` dependencies (`kind` is `None` for normal dependencies).
fn package(name: &str, deps: &[(&str, Option<&str>)]) -> Value {
    json!({
        "name": name,
        "id": format!("path+file:///ws/crates/{name}#0.1.0"),
        "dependencies": deps
            .iter()
            .map(|(dep, kind)| json!({ "name": dep, "kind": kind, "rename": null }))
            .collect::<Vec<_>>(),
    })
}

/// Metadata whose workspace members are exactly `packages`.
fn metadata(packages: Vec<Value>) -> Value {
    let members: Vec<Value> = packages.iter().map(|pkg| pkg["id"].clone()).collect();
    json!({ "packages": packages, "workspace_members": members })
}

fn problems(packages: Vec<Value>) -> Vec<String> {
    check_layering(&metadata(packages)).expect("hand-written metadata is well formed")
}

#[test]
fn allowed_edge_passes() {
    let found = problems(vec![
        package("zr-types", &[("serde", None)]),
        package("zr-caps", &[("zr-types", None), ("serde", None)]),
    ]);
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn forbidden_edge_is_reported() {
    let found = problems(vec![
        package("zr-types", &[]),
        package("zr-caps", &[("zr-types", None)]),
        package("zr-skills", &[("zr-types", None)]),
        package("zr-engine", &[("zr-types", None), ("zr-skills", None)]),
    ]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains("`zr-engine` -> `zr-skills`"),
        "{found:#?}"
    );
}

#[test]
fn build_dependencies_count_and_dev_dependencies_do_not() {
    let found = problems(vec![
        package("zr-types", &[("zr-caps", Some("dev"))]),
        package("zr-caps", &[]),
        package("zr-mcp", &[("zr-caps", Some("build"))]),
    ]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("`zr-mcp` -> `zr-caps`"), "{found:#?}");
}

#[test]
fn top_of_stack_may_depend_on_anything() {
    let found = problems(vec![
        package("zr-types", &[]),
        package("zr-mcp", &[("zr-types", None)]),
        package("zr-cli", &[("zr-types", None), ("zr-mcp", None)]),
    ]);
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn crate_missing_from_table_is_reported() {
    let found = problems(vec![package("zr-new", &[])]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("`zr-new` is not in the layering table"));
}

#[test]
fn resolver_may_not_depend_on_runtime_crates() {
    let found = problems(vec![
        package("zr-types", &[]),
        package(
            "zr-resolve",
            &[("zr-types", None), ("tokio", None), ("rand", Some("dev"))],
        ),
    ]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains("must not depend on `tokio`"),
        "{found:#?}"
    );
}

#[test]
fn resolver_source_scan_skips_comments() {
    let source = "\
//! Resolver.
use std::collections::BTreeMap;
// A HashMap would make the order random.
/// Not an `Instant` either.
use std::collections::HashMap;
fn f() { let _ = std::env::var(\"X\"); }
";
    let found: Vec<usize> = scan_resolver_source(source)
        .into_iter()
        .map(|(line, _)| line)
        .collect();
    assert_eq!(found, vec![5, 6]);
}

#[test]
fn module_doc_must_be_first_non_empty_line() {
    assert!(starts_with_module_doc("\n//! Docs.\nfn f() {}\n"));
    assert!(!starts_with_module_doc("/// Item doc.\nfn f() {}\n"));
    assert!(!starts_with_module_doc("use x;\n//! Late.\n"));
    assert!(!starts_with_module_doc(""));
}
