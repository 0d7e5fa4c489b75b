//! Unit tests of the 2.x migration; fixture snapshots are in `tests/it`.
#![allow(clippy::unwrap_used)]

use super::*;

fn patterns(list: &[&str]) -> Vec<ToolPattern> {
    list.iter().map(|p| p.parse().unwrap()).collect()
}

#[test]
fn intersection_of_allow_lists_over_builtins() {
    let cases: [(&[&str], &[&str], &[&str]); 6] = [
        (&["Read", "Grep"], &["*"], &["Read", "Grep"]),
        (&["*"], &["Read"], &["Read"]),
        (&["Web*"], &["WebFetch", "Bash"], &["WebFetch"]),
        (&["Web*"], &["WebF*"], &["WebF*"]),
        (&["Read", "mcp__gh"], &["mcp__gh", "Grep"], &[]),
        (&["Gr*", "Glob"], &["G*"], &["Gr*", "Glob"]),
    ];
    for (own, env, want) in cases {
        assert_eq!(
            intersect(&patterns(own), &patterns(env)),
            patterns(want),
            "{own:?} & {env:?}"
        );
    }
}

#[test]
fn allow_list_entries_naming_custom_or_mcp_tools_are_split_off() {
    let named = vec!["search".parse().unwrap(), "mcp__gh__x".parse().unwrap()];
    let (builtin, moved) = split_allow_list(
        &patterns(&[
            "Read",
            "search",
            "mcp__gh",
            "mcp__db*",
            "mcp__gh__x",
            "*",
            "Web*",
        ]),
        &named,
    );
    assert_eq!(builtin, patterns(&["Read", "*", "Web*"]));
    assert_eq!(
        moved,
        patterns(&["search", "mcp__gh", "mcp__db*", "mcp__gh__x"])
    );
}

#[test]
fn errors_name_the_key_and_the_agent() {
    let err = migrate_v2(r#"{"environment": {"model": "m", "customTool": []}}"#).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("unknown field `customTool`"), "{text}");
    assert!(text.contains("at environment.customTool:"), "{text}");

    let err = migrate_v2(
        r#"{"environment": {"model": "m"}, "agents": {"a": {"description": "d", "prompt": "p", "tools": [], "allowedTools": []}}}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "agent 'a' sets both 'tools' and 'allowedTools', two spellings of its allow list; keep one of them"
    );

    let err = migrate_v2(
        r#"{"environment": {"model": "m"}, "agents": {"a": {"description": "d", "prompt": "p"}, "a": {"description": "d", "prompt": "p"}}}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("agent 'a' is defined twice"),
        "{err}"
    );

    let err = migrate_v2(r#"{"environment": {"model": "m"}} x"#).unwrap_err();
    assert!(err.to_string().contains("trailing characters"), "{err}");

    let err = migrate_v2(
        r#"{"environment": {"model": "m", "mcpTools": [{"server": "gh", "name": ""}]}}"#,
    )
    .unwrap_err();
    assert!(matches!(err, MigrateError::McpToolName { .. }), "{err}");
}

#[test]
fn a_subagent_with_inherit_tools_off_gets_nothing_and_no_change_is_claimed() {
    let m = migrate_v2(
        r#"{"environment": {"model": "m", "customTools": [{"name": "search"}], "availableSkills": []},
            "agents": {"a": {"description": "d", "prompt": "p", "inheritTools": false, "skills": []}}}"#,
    )
    .unwrap();
    let caps = &m.agents[0].capabilities;
    assert_eq!(caps.custom_tools, None);
    assert_eq!(caps.connection_tools, None);
    assert_eq!(caps.skills, Some(vec![]));
    assert!(
        m.changes
            .iter()
            .all(|c| matches!(c, MigrationChange::AvailableSkillsRootOnly { .. })),
        "{:?}",
        m.changes
    );
}
