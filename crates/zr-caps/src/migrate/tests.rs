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
    assert_eq!(
        err.to_string(),
        "not a valid 2.x configuration: at agents: 'a' appears twice at line 1 column 88"
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

#[test]
fn absent_mcp_hints_stay_unstated_and_take_mcps_defaults() {
    let m = migrate_v2(
        r#"{"environment": {"model": "m", "mcpTools": [
              {"server": "gh", "name": "push"},
              {"server": "gh", "name": "label", "annotations": {"destructiveHint": false, "idempotentHint": true}}
            ]}}"#,
    )
    .unwrap();
    let push = &m.options.mcp_tools[0].annotations;
    assert_eq!(
        (push.destructive, push.idempotent, push.open_world),
        (None, None, None)
    );
    assert!(push.is_destructive() && push.is_open_world() && !push.is_idempotent());
    let label = &m.options.mcp_tools[1].annotations;
    assert_eq!(label.destructive, Some(false));
    assert!(!label.is_destructive() && label.is_idempotent() && label.is_open_world());
}

#[test]
fn an_agent_named_like_a_builtin_kind_is_told_so() {
    let m = migrate_v2(
        r#"{"environment": {"model": "m"},
            "agents": {"plan": {"description": "d", "prompt": "p", "skills": []},
                       "explore": {"description": "d", "prompt": "p", "skills": []},
                       "verification": {"description": "d", "prompt": "p", "skills": []},
                       "planner": {"description": "d", "prompt": "p", "skills": []}}}"#,
    )
    .unwrap();
    let kinds: Vec<_> = m.agents.iter().map(|a| a.agent_type.clone()).collect();
    assert_eq!(
        kinds,
        [
            AgentType::Plan,
            AgentType::Explore,
            AgentType::Verification,
            AgentType::Custom("planner".parse().unwrap())
        ]
    );
    let changes: Vec<String> = m.changes.iter().map(ToString::to_string).collect();
    assert_eq!(changes.len(), 3, "{changes:#?}");
    assert_eq!(
        changes[0],
        "agent 'plan' now has the built-in kind plan: it keeps only read-only tools and builtin Bash (R6); rename it to keep 2.x behaviour"
    );
    assert!(changes[1].starts_with(
        "agent 'explore' now has the built-in kind explore: it keeps only read-only tools"
    ));
    assert!(changes[2].starts_with("agent 'verification' now has the built-in kind verification"));
}
