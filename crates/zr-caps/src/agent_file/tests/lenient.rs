//! What agent files read leniently, as Claude Code does: odd `tools`
//! entries, Claude Code's tool names, an unquoted `: ` in a one-line value.
//! Each leniency must leave a warning with its line.

use super::parse;
use crate::agent_file::AgentFileWarning;

/// The allow list, the deny list and the warnings (`line: message`).
fn lists(text: &str) -> (Option<Vec<String>>, Option<Vec<String>>, Vec<String>) {
    let file = parse(text).unwrap();
    let shown = |list: Option<Vec<crate::pattern::ToolPattern>>| {
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

/// The allow list, the tool rules, the deny list, the denied rules and the
/// warnings of a file whose front matter ends with `keys`.
type Shown = (
    Vec<String>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
);

fn rules_of(keys: &str) -> Shown {
    let file = parse(&format!("---\nname: x\ndescription: d\n{keys}---\n")).unwrap();
    let d = file.definition;
    let text = |items: &[String]| items.to_vec();
    let patterns = |list: Option<Vec<crate::pattern::ToolPattern>>| -> Vec<String> {
        list.unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let rules = |list: &[crate::rules::PermissionRule]| -> Vec<String> {
        list.iter().map(ToString::to_string).collect()
    };
    (
        patterns(d.capabilities.allowed_tools),
        rules(&d.tool_rules),
        patterns(d.capabilities.disallowed_tools),
        rules(&d.denied_rules),
        text(
            &file
                .warnings
                .iter()
                .map(AgentFileWarning::to_string)
                .collect::<Vec<_>>(),
        ),
    )
}

#[test]
fn permission_rules_narrow_the_tool_they_name() {
    let none: &[&str] = &[];
    // Front matter keys; allow list, tool rules, deny list, denied rules,
    // warnings.
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
    );
    let cases: &[Case<'_>] = &[
        (
            "tools: Read, Grep, Bash(git diff:*), Bash(git log:*)\n",
            &["Read", "Grep", "Bash"],
            &["Bash(git diff:*)", "Bash(git log:*)"],
            none,
            none,
            none,
        ),
        (
            "tools: [\"Bash(npm run test:*)\", Read]\n",
            &["Bash", "Read"],
            &["Bash(npm run test:*)"],
            none,
            none,
            none,
        ),
        (
            "tools:\n  - Read(src/**)\n  - WebFetch(domain:docs.rs)\n  - Bash(npm test)\n",
            &["Read", "WebFetch", "Bash"],
            &["Read(src/**)", "WebFetch(domain:docs.rs)", "Bash(npm test)"],
            none,
            none,
            none,
        ),
        // A comma inside the parentheses stays in the rule.
        (
            "tools: Bash(git add:*, x), Read\n",
            &["Bash", "Read"],
            &["Bash(git add:*, x)"],
            none,
            none,
            none,
        ),
        // Denied rules refuse what they match; a bare name removes the tool.
        (
            "tools: Read, Bash\ndisallowedTools: Bash(rm:*), Bash(git push:*), Write\n",
            &["Read", "Bash"],
            none,
            &["Write"],
            &["Bash(rm:*)", "Bash(git push:*)"],
            none,
        ),
        // Claude Code's names are read as zr's.
        (
            "tools: MultiEdit(src/**)\n",
            &["Edit"],
            &["Edit(src/**)"],
            none,
            none,
            &[
                "line 4: 'MultiEdit(src/**)' uses Claude Code's name; zr's tool is 'Edit' (zr makes several edits as several Edit calls): read as 'Edit(src/**)'",
            ],
        ),
        // Rules zr cannot read never widen: dropped from tools, the whole
        // tool denied in disallowedTools.
        (
            "tools: Read, Bash()\ndisallowedTools: WebFetch(docs.rs)\n",
            &["Read"],
            none,
            &["WebFetch"],
            none,
            &[
                "line 4: permission rule 'Bash()' has an empty specifier; write 'Bash' for every use, or say which uses inside the parentheses, e.g. 'Bash(npm run test:*)'; the entry is dropped and the agent gets no Bash from it",
                "line 5: permission rule 'WebFetch(docs.rs)': WebFetch rules name a host after 'domain:'; write 'WebFetch(domain:docs.rs)' or 'WebFetch(domain:*.example.com)'; all of WebFetch is denied instead",
            ],
        ),
        (
            "tools: NotebookEdit(a.ipynb), mcp__gh(x)\n",
            none,
            none,
            none,
            none,
            &[
                "line 4: 'NotebookEdit(a.ipynb)' is a rule of a Claude Code tool that zr does not have (zr has no notebook editor; list Edit to edit notebooks as JSON text): the entry is dropped",
                "line 4: permission rule 'mcp__gh(x)' gives a specifier to 'mcp__gh', which takes none (specifiers belong to one builtin tool: Bash, Read, Edit, Write, Glob, Grep, WebFetch, ...); write 'mcp__gh'; the entry is dropped and the agent gets no mcp__gh from it",
            ],
        ),
    ];
    for (keys, allow, tool_rules, deny, denied_rules, warnings) in cases {
        let got = rules_of(keys);
        let want = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            got,
            (
                want(allow),
                want(tool_rules),
                want(deny),
                want(denied_rules),
                want(warnings)
            ),
            "{keys}"
        );
    }
}

#[test]
fn agent_rules_narrow_calls() {
    use std::path::Path;

    use zr_types::{ToolDefinition, ToolOrigin};

    use crate::rules::{RuleBase, Subject};

    let file = parse(
        "---\nname: differ\ndescription: d\ntools: Read(src/**), Bash(git diff:*), Bash(git log:*), Grep\ndisallowedTools: Bash(git log -p:*)\n---\n",
    )
    .unwrap();
    let d = file.definition;
    let tool = |name: &str| ToolDefinition::new(name.parse().unwrap(), "", ToolOrigin::Builtin);
    let base = RuleBase {
        base: Path::new("/p"),
        home: None,
    };
    let check = |name: &str, subject: Subject<'_>| {
        d.narrows(&tool(name), &subject, &base)
            .map(|r| r.map_err(|e| e.to_string()))
    };
    type Case<'a> = (&'a str, Subject<'a>, Option<Result<(), &'a str>>);
    let cases: Vec<Case<'_>> = vec![
        ("Bash", Subject::Command("git diff HEAD"), Some(Ok(()))),
        (
            "Bash",
            Subject::Command("git diff && git log -3"),
            Some(Ok(())),
        ),
        (
            "Bash",
            Subject::Command("git diff; rm -rf x"),
            Some(Err(
                "agent 'differ' may use Bash only as its tools rules say (Bash(git diff:*), Bash(git log:*)); this call matches none of them (each command of a compound command must match one)",
            )),
        ),
        (
            "Bash",
            Subject::Command("git log -p"),
            Some(Err(
                "agent 'differ' may not make this call: its disallowedTools rule 'Bash(git log -p:*)' matches it",
            )),
        ),
        (
            "Read",
            Subject::Path(Path::new("/p/src/a.rs")),
            Some(Ok(())),
        ),
        // Read(...) rules speak for Grep too (Claude Code's family).
        ("Grep", Subject::Path(Path::new("/p/src")), Some(Ok(()))),
        (
            "Read",
            Subject::Path(Path::new("/p/.env")),
            Some(Err(
                "agent 'differ' may use Read only as its tools rules say (Read(src/**)); this call matches none of them",
            )),
        ),
        ("Edit", Subject::Path(Path::new("/p/.env")), None),
    ];
    for (name, subject, want) in cases {
        assert_eq!(
            check(name, subject),
            want.map(|r| r.map_err(str::to_owned)),
            "{name} {subject:?}"
        );
    }
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
    for tool in crate::agent_file::claude_tools::CLAUDE_CODE_TOOLS {
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
    let fm =
        crate::agent_file::front_matter::parse_front_matter(std::path::Path::new("SKILL.md"), text)
            .unwrap();
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

#[test]
fn agent_rules_serialize_only_when_set() {
    // Definitions are hashed as JSON for transcripts: unused rule fields
    // must not change the JSON of existing definitions.
    let plain = parse("---\nname: x\ndescription: d\ntools: Read\n---\n").unwrap();
    let json = serde_json::to_value(&plain.definition).unwrap();
    assert!(json.get("tool_rules").is_none() && json.get("denied_rules").is_none());
    let ruled = parse(
        "---\nname: x\ndescription: d\ntools: Bash(git diff:*)\ndisallowedTools: Bash(rm:*)\n---\n",
    )
    .unwrap()
    .definition;
    let json = serde_json::to_value(&ruled).unwrap();
    assert_eq!(json["tool_rules"], serde_json::json!(["Bash(git diff:*)"]));
    assert_eq!(json["denied_rules"], serde_json::json!(["Bash(rm:*)"]));
    let back: crate::definition::AgentDefinition = serde_json::from_value(json).unwrap();
    assert_eq!(back, ruled);
}
