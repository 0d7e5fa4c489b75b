//! Tests that the registry matches DEFAULT_BUILTINS.

use zr_types::DEFAULT_BUILTINS;

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
