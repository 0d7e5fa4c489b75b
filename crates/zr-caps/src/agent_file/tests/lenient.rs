//! What agent files read leniently, as Claude Code does: odd `tools`
//! entries, Claude Code's tool names, an unquoted `: ` in a one-line value.
//! Each leniency must leave a warning with its line.

use super::parse;
use crate::AgentFileWarning;

/// The allow list, the deny list and the warnings (`line: message`).
fn lists(text: &str) -> (Option<Vec<String>>, Option<Vec<String>>, Vec<String>) {
    let file = parse(text).unwrap();
    let shown = |list: Option<Vec<crate::ToolPattern>>| {
        list.map(|l| l.iter().map(|p| p.as_str().to_owned()).collect())
    };
    let caps = file.definition.capabilities;
    (
        shown(caps.allowed_tools),
        shown(caps.disallowed_tools),
        file.warnings
            .iter()
            .map(AgentFileWarning::to_string)
            .collect(),
    )
}

#[test]
fn a_bad_tools_entry_drops_only_that_entry() {
    let (allow, _, warnings) = lists(
        "---\nname: x\ndescription: d\ntools:\n  - Read\n  - subagent-catalog:search\n  - \"\"\n  - 7\n  - Grep\n---\n",
    );
    assert_eq!(allow.unwrap(), ["Read", "Grep"]);
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(
        warnings[0].starts_with("line 6: tool pattern 'subagent-catalog:search' contains ':'")
            && warnings[0].ends_with("; the entry is dropped"),
        "{}",
        warnings[0]
    );
    assert_eq!(warnings[1], "line 7: an empty entry in 'tools' is dropped");
    assert_eq!(
        warnings[2],
        "line 8: an entry of 'tools' must be a tool name, found the number 7; the entry is dropped"
    );
}

#[test]
fn a_permission_rule_never_widens_what_the_agent_gets() {
    // Allowed: dropped (the agent gets no Bash); denied: the whole tool.
    let (allow, deny, warnings) = lists(
        "---\nname: x\ndescription: d\ntools: Read, Bash(git diff:*)\ndisallowedTools: Bash(rm:*), Write\n---\n",
    );
    assert_eq!(allow.unwrap(), ["Read"]);
    assert_eq!(deny.unwrap(), ["Bash", "Write"]);
    assert_eq!(
        warnings,
        [
            "line 4: 'Bash(git diff:*)' allows Bash only for some uses, which an agent's tools cannot say in zr: the entry is dropped and the agent gets no Bash from it; write 'Bash' to allow all of it (zr.toml [permissions] can limit its commands)",
            "line 5: 'Bash(rm:*)' denies Bash only for some uses, which zr cannot say here: all of Bash is denied instead",
        ]
    );
    // A rule alone leaves an empty allow list: no builtins, not all.
    let (allow, _, _) = lists("---\nname: x\ndescription: d\ntools: Bash(npm test)\n---\n");
    assert_eq!(allow.unwrap(), Vec::<String>::new());
}

#[test]
fn claude_code_tool_names_map_to_zr_names_or_are_dropped() {
    let (allow, deny, warnings) = lists(
        "---\nname: x\ndescription: d\ntools: Agent, MultiEdit, LS, NotebookEdit, BashOutput, KillShell, Read\ndisallowedTools: [MultiEdit, ExitPlanMode]\n---\n",
    );
    assert_eq!(allow.unwrap(), ["Task", "Edit", "Glob", "Read"]);
    assert_eq!(deny.unwrap(), ["Edit"]);
    assert_eq!(warnings.len(), 8, "{warnings:?}");
    assert_eq!(
        warnings[0],
        "line 4: 'Agent' is Claude Code's name; zr's tool is 'Task' (Claude Code's later name for Task): read as 'Task'"
    );
    assert!(
        warnings[3]
            .starts_with("line 4: 'NotebookEdit' is a Claude Code tool that zr does not have (")
            && warnings[3].ends_with("): the entry is dropped"),
        "{}",
        warnings[3]
    );
    assert!(
        warnings[7].starts_with("line 5: 'ExitPlanMode'"),
        "{}",
        warnings[7]
    );
}

#[test]
fn every_mapped_name_is_a_default_builtin() {
    for tool in crate::CLAUDE_CODE_TOOLS {
        if let Some(zr) = tool.zr {
            assert!(
                zr_types::DEFAULT_BUILTINS.iter().any(|b| b.name == zr),
                "{} maps to {zr}, which is not a builtin",
                tool.name
            );
        }
        assert!(
            !zr_types::DEFAULT_BUILTINS
                .iter()
                .any(|b| b.name == tool.name),
            "{} is a zr builtin's own name",
            tool.name
        );
    }
}

#[test]
fn tools_as_a_list_or_a_comma_string_read_the_same() {
    let (a, _, wa) = lists("---\nname: x\ndescription: d\ntools: [Read, Grep, Glob]\n---\n");
    let (b, _, wb) = lists("---\nname: x\ndescription: d\ntools: Read, Grep, Glob\n---\n");
    let (c, _, wc) =
        lists("---\nname: x\ndescription: d\ntools:\n  - Read\n  - Grep\n  - Glob\n---\n");
    assert_eq!(a, b);
    assert_eq!(b, c);
    assert!(wa.is_empty() && wb.is_empty() && wc.is_empty());
    let (star, _, w) = lists("---\nname: x\ndescription: d\ntools: \"*\"\n---\n");
    assert_eq!(star.unwrap(), ["*"]);
    assert!(w.is_empty());
}

#[test]
fn empty_tools_is_unset_with_a_warning() {
    let (allow, deny, warnings) =
        lists("---\nname: x\ndescription: d\ntools:\ndisallowedTools:\n---\n");
    assert_eq!((allow, deny), (None, None));
    assert_eq!(
        warnings,
        [
            "line 4: 'tools' is empty, which leaves it unset: the agent gets every builtin tool its kind allows; write 'tools: []' for none, or remove the key"
        ]
    );
}

#[test]
fn an_unquoted_colon_in_a_one_line_value_loads_with_the_quoted_form() {
    let text = "---\nname: x\ndescription: Use this agent when: the user asks for a \"review\"\ntools: Read\n---\nBody.\n";
    let file = parse(text).unwrap();
    assert_eq!(
        file.definition.description,
        "Use this agent when: the user asks for a \"review\""
    );
    assert_eq!(file.definition.prompt, "Body.");
    let warnings: Vec<String> = file.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            r#"line 3: the value of 'description' holds ': ', which YAML reads as a new key; zr read the whole line as the value; quote it: description: "Use this agent when: the user asks for a \"review\"""#
        ]
    );
    // A long value is shown cut.
    let long = format!(
        "---\nname: x\ndescription: Use it when: {}\n---\n",
        "the user asks. ".repeat(20)
    );
    let w = parse(&long).unwrap().warnings[0].to_string();
    assert!(w.ends_with("...\" (shortened here)"), "{w}");
    // Generic front matter (skills) gets the same reading and warning.
    let fm = crate::parse_front_matter(std::path::Path::new("SKILL.md"), text).unwrap();
    assert_eq!(fm.warnings.len(), 1);
    assert_eq!(fm.warnings[0].line, 3);
}

#[test]
fn other_yaml_errors_stay_errors() {
    // The colon is not the only problem: the original error is reported.
    let err = parse("---\nname: x\ndescription: a: b\ntools: [Read\n---\n").unwrap_err();
    assert!(err.to_string().contains("invalid YAML"), "{err}");
    // A continued (multi-line) value is not rewritten.
    let err = parse("---\nname: x\ndescription: a: b\n  more\n---\n").unwrap_err();
    assert!(err.to_string().contains("invalid YAML"), "{err}");
    // Nor a front matter that is not a mapping.
    assert!(parse("---\n- a: b: c\n---\n").is_err());
}

#[test]
fn names_with_a_dot_load() {
    let file = parse("---\nname: dotnet-framework-4.8-expert\ndescription: d\n---\n").unwrap();
    assert_eq!(file.definition.name.as_str(), "dotnet-framework-4.8-expert");
    assert!(parse("---\nname: ../escape\ndescription: d\n---\n").is_err());
}
