//! Tests for the tidy checks, on hand-written `cargo metadata` and sources.

use serde_json::{Value, json};

use super::{
    RESOLVER, RESOLVER_BANNED_DEPS, check_banned_closure, check_layering, npx_pin_problems,
    scan_resolver_source, starts_with_module_doc,
};

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
fn test_support_is_a_dev_dependency_only() {
    let support = || {
        package(
            "zr-test-support",
            &[("zr-providers", None), ("zr-types", None)],
        )
    };
    let base = || {
        vec![
            package("zr-types", &[]),
            package("zr-providers", &[("zr-types", None)]),
            support(),
        ]
    };
    let mut dev = base();
    dev.push(package("zr-cli", &[("zr-test-support", Some("dev"))]));
    assert_eq!(
        problems(dev),
        Vec::<String>::new(),
        "a dev-dependency is fine"
    );
    for kind in [None, Some("build")] {
        let mut normal = base();
        normal.push(package("zr-cli", &[("zr-test-support", kind)]));
        let found = problems(normal);
        assert_eq!(found.len(), 1, "{kind:?}: {found:#?}");
        assert!(
            found[0].contains("`zr-cli` depends on `zr-test-support` outside [dev-dependencies]"),
            "{found:#?}"
        );
    }
}

#[test]
fn providers_use_types_alone_and_the_engine_uses_providers() {
    let engine_on_providers = package("zr-engine", &[("zr-providers", None)]);
    let providers_on_types = package("zr-providers", &[("zr-types", None)]);
    let base = vec![
        package("zr-types", &[]),
        providers_on_types,
        engine_on_providers,
    ];
    assert_eq!(problems(base), Vec::<String>::new());
    // Every other workspace crate stands above the providers.
    for above in [
        "zr-caps",
        "zr-resolve",
        "zr-skills",
        "zr-mcp",
        "zr-tools",
        "zr-engine",
        "zr-cli",
    ] {
        let found = problems(vec![
            package(above, &[]),
            package("zr-providers", &[("zr-types", None), (above, None)]),
        ]);
        let edge = format!("`zr-providers` -> `{above}` (allowed for zr-providers: zr-types)");
        assert!(
            matches!(found.as_slice(), [one] if one.contains(&edge)),
            "{above}: {found:#?}"
        );
    }
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

/// Full `cargo metadata` (with `resolve`) for a small graph. `edges` are
/// `(from, to, kinds)` by package name, `kinds` as in `dep_kinds` (`None` for
/// normal). Every package whose name starts with `zr-` is a workspace member.
fn full_metadata(names: &[&str], edges: &[(&str, &str, &[Option<&str>])]) -> Value {
    let id = |name: &str| {
        if name.starts_with("zr-") {
            format!("path+file:///ws/crates/{name}#0.1.0")
        } else {
            format!("registry+https://github.com/rust-lang/crates.io-index#{name}@1.0.0")
        }
    };
    let packages: Vec<Value> = names
        .iter()
        .map(|name| {
            let deps: Vec<Value> = edges
                .iter()
                .filter(|(from, _, _)| from == name)
                .flat_map(|(_, to, kinds)| {
                    kinds
                        .iter()
                        .map(move |kind| json!({ "name": to, "kind": kind, "rename": null }))
                })
                .collect();
            json!({ "name": name, "id": id(name), "dependencies": deps })
        })
        .collect();
    let nodes: Vec<Value> = names
        .iter()
        .map(|name| {
            let deps: Vec<Value> = edges
                .iter()
                .filter(|(from, _, _)| from == name)
                .map(|(_, to, kinds)| {
                    json!({
                        "name": to.replace('-', "_"),
                        "pkg": id(to),
                        "dep_kinds": kinds
                            .iter()
                            .map(|kind| json!({ "kind": kind, "target": null }))
                            .collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({ "id": id(name), "deps": deps, "dependencies": [], "features": [] })
        })
        .collect();
    let members: Vec<Value> = names
        .iter()
        .filter(|name| name.starts_with("zr-"))
        .map(|name| json!(id(name)))
        .collect();
    json!({
        "packages": packages,
        "workspace_members": members,
        "resolve": { "nodes": nodes, "root": null },
    })
}

fn closure_problems(metadata: &Value) -> Vec<String> {
    check_banned_closure(metadata, RESOLVER, RESOLVER_BANNED_DEPS)
        .expect("hand-written metadata is well formed")
}

#[test]
fn banned_package_reached_transitively_is_reported_with_its_chain() {
    let metadata = full_metadata(
        &[
            "zr-types",
            "zr-caps",
            "zr-resolve",
            "serde",
            "helper",
            "tokio",
        ],
        &[
            ("zr-resolve", "zr-types", &[None]),
            ("zr-resolve", "zr-caps", &[None]),
            ("zr-resolve", "serde", &[None]),
            ("zr-caps", "zr-types", &[None]),
            ("zr-caps", "helper", &[Some("normal")]),
            ("helper", "tokio", &[None]),
        ],
    );
    let found = closure_problems(&metadata);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains("must not depend on `tokio`"),
        "{found:#?}"
    );
    assert!(
        found[0].contains("zr-resolve -> zr-caps -> helper -> tokio"),
        "{found:#?}"
    );
    // The layering check reads the same metadata and finds nothing wrong.
    assert_eq!(
        check_layering(&metadata).expect("well formed"),
        Vec::<String>::new()
    );
}

#[test]
fn direct_banned_dependency_is_reported() {
    let metadata = full_metadata(&["zr-resolve", "rand"], &[("zr-resolve", "rand", &[None])]);
    let found = closure_problems(&metadata);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].ends_with(": zr-resolve -> rand"), "{found:#?}");
}

#[test]
fn dev_and_build_only_banned_dependencies_pass() {
    let metadata = full_metadata(
        &[
            "zr-types",
            "zr-resolve",
            "proptest",
            "rand",
            "builder",
            "time",
            "getrandom",
        ],
        &[
            ("zr-resolve", "zr-types", &[None]),
            ("zr-resolve", "proptest", &[Some("dev")]),
            ("proptest", "rand", &[None]),
            ("zr-resolve", "getrandom", &[Some("dev")]),
            ("zr-types", "builder", &[Some("build")]),
            ("builder", "time", &[None]),
        ],
    );
    assert_eq!(closure_problems(&metadata), Vec::<String>::new());
}

#[test]
fn an_edge_that_is_both_dev_and_normal_counts() {
    let metadata = full_metadata(
        &["zr-resolve", "futures"],
        &[("zr-resolve", "futures", &[Some("dev"), None])],
    );
    let found = closure_problems(&metadata);
    assert_eq!(found.len(), 1, "{found:#?}");
}

#[test]
fn closure_check_needs_the_resolve_graph() {
    let no_deps = metadata(vec![package("zr-resolve", &[])]);
    let err = check_banned_closure(&no_deps, RESOLVER, RESOLVER_BANNED_DEPS)
        .expect_err("--no-deps metadata has no resolve graph");
    assert!(err.to_string().contains("resolve.nodes"), "{err}");
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

/// The lines `scan_resolver_source` flags in `source`.
fn flagged_lines(source: &str) -> Vec<usize> {
    scan_resolver_source(source)
        .into_iter()
        .map(|(line, _)| line)
        .collect()
}

/// Asserts that `code`, alone in a file after a module doc, is flagged on
/// its own line (line 2), and returns the message.
#[track_caller]
fn assert_flagged(code: &str) -> String {
    let source = format!("//! Resolver.\n{code}\n");
    let found = scan_resolver_source(&source);
    assert_eq!(
        found.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
        vec![2],
        "{code:?} should be flagged: {found:#?}"
    );
    found[0].1.clone()
}

#[track_caller]
fn assert_clean(code: &str) {
    let source = format!("//! Resolver.\n{code}\n");
    let found = scan_resolver_source(&source);
    assert!(found.is_empty(), "{code:?} should pass: {found:#?}");
}

#[test]
fn grouped_std_imports_are_flagged() {
    let message = assert_flagged("use std::{fs, env};");
    assert!(message.contains("use std::fs"), "{message}");
    assert_flagged("use std::{collections::BTreeMap, process};");
    assert_flagged("use std::{net::TcpStream};");
    assert_flagged("use std::{thread};");
    assert_flagged("use std::{time::{Duration}};");
    assert_flagged("pub(crate) use ::std::{io::{self, stdin}};");
    assert_flagged("use std::{fs as files};");
    assert_flagged("use std::{collections::{BTreeMap, hash_map::RandomState}};");
}

#[test]
fn grouped_import_spanning_lines_is_flagged_at_the_use() {
    let source = "\
//! Resolver.
use std::{
    collections::BTreeMap,
    env,
};
";
    assert_eq!(flagged_lines(source), vec![2]);
}

#[test]
fn module_relative_calls_are_flagged() {
    assert_flagged("fn f() { let _ = fs::read_to_string(\"x\"); }");
    assert_flagged("fn f() { let _ = env::var(\"X\"); }");
    assert_flagged("fn f() { let _ = process::Command::new(\"ls\"); }");
    assert_flagged("fn f() { let _ = net::TcpStream::connect(\"x:1\"); }");
    assert_flagged("fn f() { thread::spawn(|| ()); }");
    assert_flagged("fn f() { std::thread::sleep(D); }");
    assert_flagged("fn f() { let _ = io::stdin(); }");
    assert_flagged("fn f() { let _ = std::io::stdin().lines(); }");
    assert_flagged("fn f() { let _ = std::io::stdout(); }");
}

#[test]
fn hashing_state_is_flagged() {
    assert_flagged("type S = std::collections::hash_map::RandomState;");
    assert_flagged("type S = std::hash::RandomState;");
    assert_flagged("use std::hash::RandomState;");
}

#[test]
fn whitespace_and_comments_around_path_separators_do_not_hide_a_path() {
    assert_flagged("fn f() { let _ = fs :: read(\"x\"); }");
    assert_flagged("fn f() { let _ = env/* hidden */::var(\"X\"); }");
    let source = "//! Resolver.\nfn f() {\n    let _ = fs\n        ::read(\"x\");\n}\n";
    assert_eq!(flagged_lines(source), vec![3]);
}

#[test]
fn renames_and_globs_that_hide_banned_items_are_flagged() {
    assert_flagged("use std::io as i;");
    assert_flagged("use std::io::{self as i};");
    assert_flagged("use std as s;");
    assert_flagged("use std::io::*;");
    assert_flagged("use std::*;");
    assert_flagged("use std::io::{stdin};");
}

#[test]
fn randomness_and_async_are_flagged_as_words() {
    assert_flagged("use rand::Rng;");
    assert_flagged("fn f() -> u8 { rand::random() }");
    assert_flagged("extern crate rand;");
    assert_flagged("async fn f() { tokio::task::yield_now().await }");
    assert_flagged("fn f(t: SystemTime) {}");
    assert_flagged("fn f(t: Instant) {}");
}

#[test]
fn harmless_lookalikes_pass() {
    assert_clean("use std::collections::{BTreeMap, BTreeSet};");
    assert_clean("use std::io::{self, Write as _};");
    assert_clean("use std::fmt::{self, Display};");
    assert_clean("use core::cmp::Ordering;");
    assert_clean("fn f(operand: u8, brand: &str, random_ish: u8) {}");
    assert_clean("fn f() { let _ = myfs::read(); let _ = zr_types::ToolName::mcp; }");
    assert_clean("thread_local! {}");
    assert_clean("fn f() -> char { '\"' }");
    assert_clean("fn f<'a>(x: &'a str) -> &'a str { x }");
}

#[test]
fn comments_and_docs_are_skipped_but_strings_cannot_fake_one() {
    let source = "\
//! Resolver: no `std::fs`, no `HashMap`.
/// Not an `Instant` either: see std::env.
/** Nor a `SystemTime`. /* nested std::fs */ still a comment */
fn f() {} // fs::read would be I/O
/*
use std::{fs, env};
*/
const URL: &str = \"http://x\"; fn g() { let _ = fs::read(URL); }
const OPEN: &str = \"/*\"; fn h() { let _ = env::var(OPEN); }
const RAW: &str = r#\"\" // \"#; fn i() { thread::spawn(|| ()); }
const CH: char = '\"'; fn j() { let _ = io::stdin(); }
";
    assert_eq!(flagged_lines(source), vec![8, 9, 10, 11]);
}

#[test]
fn unsafe_is_refused_outside_the_one_function() {
    use super::unsafety::{UNSAFE_FILE, judge_source};
    let one = "//! Death.\nfn f() {\n    // unsafe in a comment is fine\n    #[allow(unsafe_code)]\n    unsafe { g() }\n}\n";
    assert_eq!(judge_source(UNSAFE_FILE, one), []);
    let two = format!("{one}fn h() {{ unsafe {{ g() }} }}\n");
    let found = judge_source(UNSAFE_FILE, &two);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, 7);
    let elsewhere = judge_source("crates/zr-tools/src/bash.rs", one);
    assert_eq!(
        elsewhere.iter().map(|f| f.0).collect::<Vec<_>>(),
        [4, 5],
        "{elsewhere:?}"
    );
    assert_eq!(
        judge_source("crates/zr-tools/src/x.rs", "fn unsafe_ish() {}\n"),
        []
    );
}

#[test]
fn only_zr_process_leaves_the_workspace_lints() {
    use super::unsafety::judge_manifest;
    assert_eq!(
        judge_manifest("zr-tools", "[lints]\nworkspace = true\n"),
        None
    );
    assert!(judge_manifest("zr-tools", "[lints.rust]\nunsafe_code = \"allow\"\n").is_some());
    assert_eq!(
        judge_manifest("zr-process", "[lints.rust]\nunsafe_code = \"deny\"\n"),
        None
    );
    assert!(judge_manifest("zr-process", "[lints]\nworkspace = true\n").is_some());
}

/// `.mcp.json` with one `npx` server `fs` with `args`.
fn npx_server(args: &[&str]) -> Value {
    json!({"mcpServers": {"fs": {"command": "npx", "args": args}}})
}

fn npx_problems(args: &[&str]) -> Vec<String> {
    let pins = [(
        "@modelcontextprotocol/server-filesystem".to_owned(),
        "2026.8.31".to_owned(),
    )]
    .into_iter()
    .collect();
    npx_pin_problems(".mcp.json", &npx_server(args), &pins)
}

#[test]
fn an_npx_server_at_the_pinned_version_passes() {
    assert_eq!(
        npx_problems(&[
            "-y",
            "@modelcontextprotocol/server-filesystem@2026.8.31",
            "../.."
        ]),
        Vec::<String>::new()
    );
}

#[test]
fn an_npx_server_at_another_version_or_none_is_a_problem() {
    for spec in [
        "@modelcontextprotocol/server-filesystem@2025.1.1",
        "@modelcontextprotocol/server-filesystem",
    ] {
        let found = npx_problems(&["-y", spec, "."]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("pins @modelcontextprotocol/server-filesystem 2026.8.31"),
            "{found:?}"
        );
    }
}

#[test]
fn an_npx_package_deps_does_not_fetch_is_a_problem() {
    let found = npx_problems(&["-y", "@modelcontextprotocol/server-everything@2026.8.31"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("not in NPX_PACKAGES"), "{found:?}");
}

/// The repository's own examples agree with the pins.
#[test]
fn the_examples_npx_servers_are_pinned() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    assert_eq!(
        super::check_npx_pins(&root).expect("the examples are readable"),
        Vec::<String>::new()
    );
}

#[test]
fn an_import_through_lib_rs_is_found_with_its_line_and_a_direct_one_is_not() {
    let lib = syn::parse_file(
        "mod pool;\nmod rule;\npub use pool::{Pool, Slot as PoolSlot};\npub use rule::check;\npub use pool::rule as pool_rule;\npub use other::rule;\n",
    )
    .unwrap();
    let names = super::through_lib::reexports(&lib);
    assert_eq!(
        names.iter().map(String::as_str).collect::<Vec<_>>(),
        ["Pool", "PoolSlot", "check", "pool_rule"]
    );
    let module = syn::parse_file(
        "use crate::pool::Pool;\nuse crate::{\n    PoolSlot,\n    rule::Rule,\n};\nfn f() {\n    crate::check();\n    crate::rule::check();\n}\n",
    )
    .unwrap();
    assert_eq!(
        super::through_lib::through_lib(&module, &names),
        [(3, "PoolSlot".to_owned()), (7, "check".to_owned())]
    );
}

/// Tidy runs under `cargo test` too, so a broken layer, a stray `unsafe`
/// or an import through `lib.rs` fails the ordinary test command.
#[test]
fn the_workspace_is_tidy() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask stands in the workspace");
    super::run(root).expect("cargo xtask tidy reports problems (printed above)");
}
