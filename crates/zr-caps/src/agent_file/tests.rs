//! Unit tests of agent-type file parsing; fixture snapshots are in `tests/it`.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use proptest::prelude::*;

use super::*;
use crate::definition::AgentType;

fn parse(text: &str) -> Result<ParsedAgentFile, AgentFileError> {
    parse_agent_file(Path::new("agents/x.md"), text)
}

#[test]
fn splits_front_matter_and_body() {
    let file = parse("---\nname: x\ndescription: d\n---\n\n  Be brief.\n\n").unwrap();
    assert_eq!(file.definition.prompt, "Be brief.");
    assert_eq!(file.definition.description, "d");
    assert!(file.warnings.is_empty());
}

#[test]
fn a_yaml_error_names_the_line_in_the_file() {
    let err = parse("---\nname: x\ndescription: [\n---\nbody").unwrap_err();
    assert_eq!(err.path, Path::new("agents/x.md"));
    assert!(err.line >= 3, "{err}");
    assert!(err.to_string().starts_with("agents/x.md:"), "{err}");
}

#[test]
fn empty_and_odd_inputs_are_errors_not_panics() {
    for text in [
        "",
        "---",
        "---\n",
        "---\n---",
        "\u{feff}",
        "---\n- a\n---\n",
        "---\n: :\n---",
    ] {
        assert!(parse(text).is_err(), "{text:?}");
    }
}

#[test]
fn the_kind_follows_the_name_unless_set() {
    let k = |t: &str| parse(t).unwrap().definition.agent_type;
    assert_eq!(
        k("---\nname: explore\ndescription: d\n---\n"),
        AgentType::Explore
    );
    assert_eq!(
        k("---\nname: scout\ndescription: d\ntype: plan\n---\n"),
        AgentType::Plan
    );
    assert_eq!(
        k("---\nname: scout\ndescription: d\n---\n").to_string(),
        "scout"
    );
    let err =
        parse("---\nname: a\ndescription: d\ntype: plan\nagentType: explore\n---\n").unwrap_err();
    assert_eq!(err.line, 5);
}

#[test]
fn unknown_keys_suggest_the_known_spelling() {
    let file = parse("---\nname: a\ndescription: d\nmax_turns: 3\n---\n").unwrap();
    assert_eq!(file.warnings.len(), 1);
    assert_eq!(file.warnings[0].line, 4);
    assert!(file.warnings[0].message.contains("did you mean 'maxTurns'"));
    assert_eq!(file.extras[0].value, serde_json::json!(3));
}

fn yaml_garbage() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("name".to_owned()),
        Just("description".to_owned()),
        Just("tools".to_owned()),
        Just("disallowedTools".to_owned()),
        Just("maxTurns".to_owned()),
        Just("permissionMode".to_owned()),
        Just("skills".to_owned()),
        Just("mcpServers".to_owned()),
        Just("background".to_owned()),
        Just("isolation".to_owned()),
        Just("effort".to_owned()),
        Just("type".to_owned()),
        "[a-zA-Z_]{1,8}",
    ];
    let value = prop_oneof![
        "\\PC{0,20}",
        "[a-z, *:\\[\\]{}'\"-]{0,20}",
        Just("[Read, Grep]".to_owned()),
        Just("\n  - a\n  - 1".to_owned()),
        Just("-3".to_owned()),
        Just("99999999999999999999999".to_owned()),
        Just("&a [*a]".to_owned()),
        Just("!!binary aGk=".to_owned()),
    ];
    prop::collection::vec((key, value), 0..8).prop_map(|entries| {
        let mut text = String::from("---\n");
        for (k, v) in entries {
            text.push_str(&format!("{k}: {v}\n"));
        }
        text.push_str("---\nbody\n");
        text
    })
}

proptest! {
    #[test]
    fn prop_parse_never_panics_on_arbitrary_text(
        text in prop_oneof![
            "(?s).{0,200}",
            "---\r?\n(?s).{0,200}",
            "\u{feff}?---\r?\n(?s).{0,120}\r?\n---\r?\n(?s).{0,40}",
        ]
    ) {
        // Never a panic, and an error always names the file and a line.
        if let Err(err) = parse(&text) {
            prop_assert!(err.line >= 1 && err.to_string().starts_with("agents/x.md:"), "{}", err);
        }
    }

    #[test]
    fn prop_parse_never_panics_on_front_matter_garbage(text in yaml_garbage()) {
        match parse(&text) {
            Ok(file) => prop_assert!(file.warnings.iter().all(|w| w.line >= 2)),
            Err(err) => prop_assert!(err.line >= 1 && err.to_string().starts_with("agents/x.md:")),
        }
    }
}

#[test]
fn builtin_kinds_are_accepted_in_any_case() {
    let k = |kind: &str| {
        parse(&format!(
            "---\nname: scout\ndescription: d\ntype: {kind}\n---\n"
        ))
        .unwrap()
        .definition
        .agent_type
    };
    assert_eq!(k("Explore"), AgentType::Explore);
    assert_eq!(k("PLAN"), AgentType::Plan);
    assert_eq!(k("Verification"), AgentType::Verification);
    assert_eq!(k("General-Purpose"), AgentType::GeneralPurpose);
    let file = parse("---\nname: scout\ndescription: d\nagentType: Explore\n---\n").unwrap();
    assert_eq!(file.definition.agent_type, AgentType::Explore);
    // Custom kinds are agent names: lowercase only.
    assert_eq!(k("reviewer").to_string(), "reviewer");
    let err = parse("---\nname: scout\ndescription: d\ntype: Reviewer\n---\n").unwrap_err();
    assert_eq!(err.line, 4);
}

#[test]
fn non_finite_floats_under_unknown_keys_are_kept_as_strings() {
    let file = parse(
        "---\nname: a\ndescription: d\nweird: .nan\nbig: .inf\nsmall: -.Inf\nnested: [1.5, .NaN]\n---\n",
    )
    .unwrap();
    let values: Vec<_> = file.extras.iter().map(|e| e.value.clone()).collect();
    assert_eq!(
        values,
        [
            serde_json::json!(".nan"),
            serde_json::json!(".inf"),
            serde_json::json!("-.inf"),
            serde_json::json!([1.5, ".nan"]),
        ]
    );
    assert_eq!(file.warnings.len(), 4);
    // Under a known key it is a wrong value, said plainly.
    let err = parse("---\nname: a\ndescription: d\nmaxTurns: .inf\n---\n").unwrap_err();
    assert_eq!(err.line, 4);
    assert!(
        err.to_string()
            .contains("'maxTurns' must be a positive integer"),
        "{err}"
    );
}

#[test]
fn a_duplicate_key_says_what_to_do() {
    let err = parse("---\nname: a\ndescription: d\nname: b\n---\n").unwrap_err();
    assert_eq!(err.line, 4);
    assert_eq!(
        err.to_string(),
        "agents/x.md:4: invalid YAML in the front matter (column 1): duplicate key 'name'; remove one of them"
    );
    let err = parse("---\nname: a\ndescription: d\nx:\n  y: 1\n  y: 2\n---\n").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("duplicate key 'y'; remove one of them"),
        "{text}"
    );
    assert!(!text.contains("Options"), "{text}");
}

#[test]
fn generic_front_matter_keeps_keys_lines_and_values() {
    let text = "\u{feff}---\r\nname: pdf\r\n\r\nmetadata:\r\n  v: 1\r\n---\r\n\r\nBody.\r\n";
    let fm = parse_front_matter(Path::new("skills/pdf/SKILL.md"), text).unwrap();
    let keys: Vec<(&str, usize)> = fm
        .entries
        .iter()
        .map(|e| (e.key.as_str(), e.line))
        .collect();
    assert_eq!(keys, [("name", 2), ("metadata", 4)]);
    assert_eq!(
        fm.get("metadata").unwrap().value,
        serde_json::json!({"v": 1})
    );
    assert_eq!(fm.body, "Body.");
    assert!(fm.get("license").is_none());
    // The same structural errors as agent files, with their lines.
    let err = parse_front_matter(Path::new("s.md"), "---\na: [\n---\n").unwrap_err();
    assert!(
        matches!(err.problem, AgentFileProblem::Yaml { .. }),
        "{err}"
    );
    assert_eq!(err.line, 2, "{err}");
    let err = parse_front_matter(Path::new("s.md"), "---\n\n- a\n---\n").unwrap_err();
    assert!(
        matches!(err.problem, AgentFileProblem::NotAMapping { .. }),
        "{err}"
    );
    assert_eq!(err.line, 3, "{err}");
    let err = parse_front_matter(Path::new("s.md"), "no\n").unwrap_err();
    assert_eq!(err.problem, AgentFileProblem::NoFrontMatter);
    let empty = parse_front_matter(Path::new("s.md"), "---\n---\n").unwrap();
    assert!(empty.entries.is_empty());
}

mod lenient;

#[test]
fn an_output_schema_is_a_yaml_mapping_read_as_json() {
    let file = parse(
        "---\nname: a\ndescription: d\noutputSchema:\n  type: object\n  properties:\n    count: {type: integer}\n  required: [count]\n---\n",
    )
    .unwrap();
    assert_eq!(
        file.definition.output_schema,
        Some(
            serde_json::json!({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]})
        )
    );
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let snake =
        parse("---\nname: a\ndescription: d\noutput_schema: {type: string}\n---\n").unwrap();
    assert_eq!(
        snake.definition.output_schema,
        Some(serde_json::json!({"type": "string"}))
    );
    let err = parse("---\nname: a\ndescription: d\noutputSchema: object\n---\n").unwrap_err();
    assert_eq!(err.line, 4);
    assert!(err.to_string().contains("a JSON Schema"), "{err}");
    let err = parse(
        "---\nname: a\ndescription: d\noutputSchema: {type: object}\noutput_schema: {type: object}\n---\n",
    )
    .unwrap_err();
    assert_eq!(err.line, 5);
}

#[test]
fn agent_with_types_in_tools_gives_task_and_restricts_the_types_it_may_start() {
    let file = parse(
        "---\nname: lead\ndescription: d\ntools: Read, Agent(worker, researcher), Task(reviewer)\nmaxDepth: 2\n---\n",
    )
    .unwrap();
    let d = &file.definition;
    let allowed: Vec<String> = d
        .capabilities
        .allowed_tools
        .as_ref()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(allowed, ["Read", "Task"]);
    assert_eq!(
        d.spawn_types(),
        Some(vec!["worker", "researcher", "reviewer"])
    );
    assert_eq!(d.max_depth, Some(2));
    // Without a restriction, any type; maxDepth 0 is read (cannot delegate).
    let file = parse("---\nname: a\ndescription: d\ntools: Task\nmaxDepth: 0\n---\n").unwrap();
    assert_eq!(file.definition.spawn_types(), None);
    assert_eq!(file.definition.max_depth, Some(0));
}

#[test]
fn a_negative_max_depth_names_the_line() {
    let err = parse("---\nname: a\ndescription: d\nmaxDepth: -1\n---\n").unwrap_err();
    assert_eq!(err.line, 4, "{err}");
    assert!(err.to_string().contains("'maxDepth'"), "{err}");
}

#[test]
fn inline_mcp_servers_in_every_form_claude_code_reads() {
    // A list mixing names and {name: definition} objects.
    let file = parse(
        "---\nname: x\ndescription: d\nmcpServers:\n  - github\n  - local-db:\n      command: node\n      args: [db.js]\n      env: {DB: x}\n---\nb",
    )
    .unwrap();
    let names: Vec<&str> = file
        .definition
        .mcp_servers
        .as_deref()
        .unwrap()
        .iter()
        .map(zr_types::ServerName::as_str)
        .collect();
    assert_eq!(names, ["github", "local-db"]);
    assert_eq!(file.inline_servers.len(), 1);
    assert_eq!(file.inline_servers[0].name.as_str(), "local-db");
    assert_eq!(file.inline_servers[0].line, 6);
    assert_eq!(
        file.inline_servers[0].config,
        serde_json::json!({"command": "node", "args": ["db.js"], "env": {"DB": "x"}})
    );
    // The object form.
    let file = parse(
        "---\nname: x\ndescription: d\nmcpServers:\n  web: {type: sse, url: 'http://127.0.0.1:1/sse'}\n---\nb",
    )
    .unwrap();
    assert_eq!(file.inline_servers[0].name.as_str(), "web");
    assert_eq!(file.inline_servers[0].config["type"], "sse");
    // Names only, as before.
    let file = parse("---\nname: x\ndescription: d\nmcpServers: a, b\n---\nb").unwrap();
    assert_eq!(file.definition.mcp_servers.as_ref().unwrap().len(), 2);
    assert!(file.inline_servers.is_empty());
    // A definition that is not a mapping names the line.
    let err = parse("---\nname: x\ndescription: d\nmcpServers:\n  - web: 3\n---\nb").unwrap_err();
    assert_eq!(err.line, 5, "{err}");
}

#[test]
fn memory_initial_prompt_and_preloaded_skills() {
    let file = parse(
        "---\nname: x\ndescription: d\nmemory: project\ninitialPrompt: Start with the tests.\nskills: [a, b]\n---\nb",
    )
    .unwrap();
    assert_eq!(
        file.definition.memory,
        Some(crate::definition::MemoryScope::Project)
    );
    assert_eq!(
        file.definition.initial_prompt.as_deref(),
        Some("Start with the tests.")
    );
    let preload: Vec<&str> = file
        .definition
        .preload_skills
        .iter()
        .map(zr_types::SkillName::as_str)
        .collect();
    assert_eq!(preload, ["a", "b"]);
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    // An unknown scope is a warning; the file loads, without memory.
    let file = parse("---\nname: x\ndescription: d\nmemory: team\n---\nb").unwrap();
    assert_eq!(file.definition.memory, None);
    assert_eq!(file.memory.as_deref(), Some("team"));
    assert_eq!(file.warnings[0].line, 4);
    assert!(file.warnings[0].message.contains("user, project, local"));
}

#[test]
fn memory_grants_the_file_tools_only_for_its_folder_and_never_narrows_a_whole_grant() {
    let rules = |file: &ParsedAgentFile| -> Vec<String> {
        file.definition
            .tool_rules
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let allowed = |file: &ParsedAgentFile| -> Vec<String> {
        file.definition
            .capabilities
            .allowed_tools
            .iter()
            .flatten()
            .map(ToString::to_string)
            .collect()
    };
    // Reading whole already (Grep); Write and Edit added for the folder.
    let file =
        parse("---\nname: keeper\ndescription: d\ntools: Grep, Bash\nmemory: project\n---\nb")
            .unwrap();
    assert_eq!(allowed(&file), ["Grep", "Bash", "Write", "Edit"]);
    assert_eq!(rules(&file), ["Edit(/.claude/agent-memory/keeper/**)"]);
    assert!(file.definition.writes_only_memory());
    // Writing whole already (Write): nothing of the Edit family changes,
    // so Write is not narrowed; Read is added for the folder.
    let file =
        parse("---\nname: keeper\ndescription: d\ntools: Write\nmemory: local\n---\nb").unwrap();
    assert_eq!(allowed(&file), ["Write", "Read"]);
    assert_eq!(
        rules(&file),
        ["Read(/.claude/agent-memory-local/keeper/**)"]
    );
    assert!(!file.definition.writes_only_memory());
    // A narrowed Write gets the folder beside its own rule; a denied Edit
    // is not added; the user scope is under ~.
    let file = parse(
        "---\nname: keeper\ndescription: d\ntools: Read, Write(docs/**)\ndisallowedTools: Edit\nmemory: user\n---\nb",
    )
    .unwrap();
    assert_eq!(
        rules(&file),
        ["Write(docs/**)", "Edit(~/.claude/agent-memory/keeper/**)"]
    );
    assert!(!file.definition.writes_only_memory());
    assert!(!allowed(&file).contains(&"Edit".to_owned()));
    // Without `tools` (every builtin) nothing changes.
    let file = parse("---\nname: keeper\ndescription: d\nmemory: local\n---\nb").unwrap();
    assert!(file.definition.tool_rules.is_empty());
    assert_eq!(file.definition.capabilities.allowed_tools, None);
}
