//! Tests of name validation and MCP name shortening.

use proptest::prelude::*;

use super::*;

#[test]
fn tool_names_follow_the_alphabet() {
    assert!("Read".parse::<ToolName>().is_ok());
    assert!("mcp__gh__create_issue".parse::<ToolName>().is_ok());
    assert!("a-b_C9".parse::<ToolName>().is_ok());
    let err = "Rea d".parse::<ToolName>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool name 'Rea d' contains ' ' at position 3; allowed: ASCII letters, digits, '_' and '-'"
    );
    assert!(matches!(
        "".parse::<ToolName>(),
        Err(NameError::Empty { .. })
    ));
    assert!(matches!(
        "x".repeat(65).parse::<ToolName>(),
        Err(NameError::TooLong { len: 65, .. })
    ));
    assert!("x".repeat(64).parse::<ToolName>().is_ok());
    assert!("Wr*".parse::<ToolName>().is_err());
}

#[test]
fn server_names_refuse_the_separator() {
    assert!("github".parse::<ServerName>().is_ok());
    assert!("my_server".parse::<ServerName>().is_ok());
    let err = "a__b".parse::<ServerName>().unwrap_err();
    assert!(err.to_string().contains("'__' separates"), "{err}");
}

#[test]
fn skill_names_follow_agent_skills_rules() {
    assert!("pdf-review".parse::<SkillName>().is_ok());
    assert!("v2".parse::<SkillName>().is_ok());
    for bad in ["Pdf", "-pdf", "pdf-", "pd--f", "pdf_review", ""] {
        assert!(bad.parse::<SkillName>().is_err(), "{bad} should be refused");
    }
    assert!("a".repeat(65).parse::<SkillName>().is_err());
}

#[test]
fn agent_names_take_a_dot_between_letters_or_digits_only() {
    for good in ["dotnet-framework-4.8-expert", "a.b", "v1.2.3", "reviewer"] {
        assert!(good.parse::<AgentName>().is_ok(), "{good} should load");
    }
    for bad in [".x", "x.", "a..b", "a.-b", "a-.b", "../x", "A.b", "a_b", ""] {
        assert!(bad.parse::<AgentName>().is_err(), "{bad} should be refused");
    }
    let err = "a..b".parse::<AgentName>().unwrap_err().to_string();
    assert!(
        err.contains("'.'") && err.contains("between two letters or digits"),
        "{err}"
    );
    // Skills keep the Agent Skills rules.
    assert!("a.b".parse::<SkillName>().is_err());
}

#[test]
fn mcp_names_are_namespaced_and_shortened_stably() {
    let gh: ServerName = "gh".parse().unwrap();
    assert_eq!(ToolName::mcp(&gh, "x").unwrap().as_str(), "mcp__gh__x");
    let dotted = ToolName::mcp(&gh, "files.read").unwrap();
    assert!(
        dotted.as_str().starts_with("mcp__gh__files_read_"),
        "{dotted}"
    );
    let long = ToolName::mcp(&gh, &"y".repeat(80)).unwrap();
    assert_eq!(long.as_str().len(), MAX_TOOL_NAME_LEN);
    // Known value: stable across runs and machines.
    assert_eq!(long, ToolName::mcp(&gh, &"y".repeat(80)).unwrap());
    assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(stable_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert!(ToolName::mcp(&gh, "").is_err());
}

#[test]
fn mcp_distinct_names_tell_apart_pairs_that_make_one_mcp_name() {
    let (a, b): (ServerName, ServerName) =
        ("trusted_".parse().unwrap(), "trusted".parse().unwrap());
    assert_eq!(
        ToolName::mcp(&a, "x").unwrap(),
        ToolName::mcp(&b, "_x").unwrap()
    );
    let (da, db) = (
        ToolName::mcp_distinct(&a, "x").unwrap(),
        ToolName::mcp_distinct(&b, "_x").unwrap(),
    );
    assert_ne!(da, db);
    assert!(db.as_str().starts_with("mcp__trusted___x_"), "{db}");
    assert_eq!(db.as_str().len(), "mcp__trusted___x_".len() + 8);
    // Stable, and within the limit for a long tool.
    assert_eq!(db, ToolName::mcp_distinct(&b, "_x").unwrap());
    let long = ToolName::mcp_distinct(&b, &"y".repeat(80)).unwrap();
    assert_eq!(long.as_str().len(), MAX_TOOL_NAME_LEN);
    assert!(ToolName::mcp_distinct(&b, "").is_err());
}

proptest! {
    #[test]
    fn prop_mcp_names_always_valid_and_distinct(a in "\\PC{1,90}", b in "\\PC{1,90}") {
        let s: ServerName = "srv".parse().unwrap();
        let na = ToolName::mcp(&s, &a).unwrap();
        let nb = ToolName::mcp(&s, &b).unwrap();
        prop_assert!(na.as_str().parse::<ToolName>().is_ok());
        prop_assert!(na.as_str().starts_with("mcp__srv__"));
        if a != b {
            prop_assert_ne!(na, nb);
        }
    }
}

proptest! {
    /// The inline head changes no answer: `starts_with` and `is` agree
    /// with the text's own, on either side of the 16 inline bytes.
    #[test]
    fn prop_inline_head_agrees_with_the_text(name in "[A-Za-z0-9_-]{1,40}", cut in 0usize..40, other in "[A-Za-z0-9_-]{0,40}") {
        let tool: ToolName = name.parse().unwrap();
        let prefix = &name[..cut.min(name.len())];
        prop_assert!(tool.starts_with(prefix));
        prop_assert!(tool.is(&name));
        prop_assert_eq!(tool.starts_with(&other), name.starts_with(other.as_str()));
        prop_assert_eq!(tool.is(&other), name == other);
        let longer = format!("{name}x");
        prop_assert!(!tool.starts_with(&longer));
        prop_assert!(!tool.is(&longer));
    }
}
