//! Integration tests of the builtin tools on real files, real processes and
//! a loopback HTTP server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash;
mod cron;
mod files;
mod search;
mod services;
mod support;
mod web_fetch;

use zr_types::DEFAULT_BUILTINS;

/// Every tool's input schema, reviewed as a snapshot.
#[test]
fn input_schemas() {
    let tools = zr_tools::BuiltinTools::new("/nonexistent/cron.json").tools();
    assert_eq!(tools.len(), DEFAULT_BUILTINS.len() - 4);
    for (def, _) in &tools {
        let pretty = serde_json::to_string_pretty(&def.input_schema).unwrap();
        insta::assert_snapshot!(format!("schema_{}", def.name), pretty);
    }
}
mod web_search;
