//! Tests that the registry matches DEFAULT_BUILTINS.

use zr_types::{DEFAULT_BUILTINS, ToolOrigin};

use super::*;

#[test]
fn every_tool_matches_its_registry_entry_in_order() {
    let tools = BuiltinTools::new("/nonexistent/cron.json").tools();
    let names: Vec<&str> = tools.iter().map(|(d, _)| d.name.as_str()).collect();
    let expected: Vec<&str> = DEFAULT_BUILTINS
        .iter()
        .map(|s| s.name)
        .filter(|n| !["Task", "MultiTask", "FindTool", "Skill"].contains(n))
        .collect();
    assert_eq!(names, expected);
    for (def, _) in &tools {
        let spec = DEFAULT_BUILTINS
            .iter()
            .find(|s| s.name == def.name.as_str())
            .expect("every tool is in the registry");
        assert_eq!(def.annotations.read_only, spec.read_only, "{}", def.name);
        assert_eq!(def.defer, spec.deferred.then_some(true), "{}", def.name);
        assert_eq!(def.origin, ToolOrigin::Builtin);
        let details = def
            .description
            .strip_prefix(spec.description)
            .and_then(|rest| rest.strip_prefix(' '));
        assert!(
            details.is_some_and(|d| !d.trim().is_empty()),
            "{}: {}",
            def.name,
            def.description
        );
        assert_eq!(def.input_schema["type"], "object", "{}", def.name);
    }
}

/// A tool's name with its destructive, idempotent and open-world hints.
type Stated<'a> = (&'a str, Option<bool>, Option<bool>, Option<bool>);

#[test]
fn every_tool_states_its_behaviour_hints() {
    let expected: [Stated<'_>; 14] = [
        ("Bash", Some(true), Some(false), Some(true)),
        ("Read", None, None, Some(false)),
        ("Write", Some(true), Some(true), Some(false)),
        ("Edit", Some(true), Some(false), Some(false)),
        ("Glob", None, None, Some(false)),
        ("Grep", None, None, Some(false)),
        ("WebFetch", None, Some(true), Some(true)),
        ("WebSearch", None, None, Some(true)),
        ("AskUserQuestion", None, None, Some(true)),
        ("CronCreate", Some(false), Some(false), Some(false)),
        ("CronDelete", Some(true), Some(true), Some(false)),
        ("CronList", None, None, Some(false)),
        ("Config", Some(false), Some(true), Some(false)),
        ("TodoWrite", Some(false), Some(true), Some(false)),
    ];
    let tools = BuiltinTools::new("/nonexistent/cron.json").tools();
    let mut actual: Vec<Stated<'_>> = tools
        .iter()
        .map(|(d, _)| {
            let a = &d.annotations;
            (d.name.as_str(), a.destructive, a.idempotent, a.open_world)
        })
        .collect();
    let rank = |n: &str| expected.iter().position(|e| e.0 == n);
    actual.sort_by_key(|a| rank(a.0));
    assert_eq!(actual, expected);
}
