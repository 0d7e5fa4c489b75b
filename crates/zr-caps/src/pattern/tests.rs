//! Tests of tool patterns: kinds, matching, MCP aliases and refused shapes.

use std::sync::Arc;

use zr_types::{ServerName, ToolDefinition, ToolName, ToolOrigin};

use super::*;

fn mcp(server: &str, tool: &str) -> Arc<ToolDefinition> {
    let server: ServerName = server.parse().unwrap();
    let name = ToolName::mcp(&server, tool).unwrap();
    Arc::new(ToolDefinition::new(
        name,
        "",
        ToolOrigin::Connection { server },
    ))
}

fn builtin(name: &str) -> ToolDefinition {
    ToolDefinition::new(name.parse().unwrap(), "", ToolOrigin::Builtin)
}

fn pattern(s: &str) -> ToolPattern {
    s.parse().unwrap()
}

#[test]
fn kinds() {
    assert_eq!(pattern("*").kind(), PatternKind::All);
    assert_eq!(pattern("mcp__gh").kind(), PatternKind::Server("gh"));
    assert_eq!(pattern("mcp__gh*").kind(), PatternKind::Prefix("mcp__gh"));
    assert_eq!(pattern("Wr*te").kind(), PatternKind::Exact("Wr*te"));
    assert_eq!(
        pattern("mcp__gh__x").kind(),
        PatternKind::Exact("mcp__gh__x")
    );
}

#[test]
fn server_patterns_match_by_origin_only() {
    assert!(pattern("mcp__gh").matches(&mcp("gh", "create")));
    assert!(!pattern("mcp__gh").matches(&mcp("ghx", "create")));
    assert!(pattern("mcp__gh*").matches(&mcp("ghx", "create")));
    // A shortened name still belongs to its server.
    assert!(pattern("mcp__gh").matches(&mcp("gh", &"x".repeat(90))));
}

#[test]
fn exact_mcp_patterns_also_match_the_shortened_name() {
    let dotted = mcp("fs", "read.file");
    assert_ne!(dotted.name.as_str(), "mcp__fs__read.file");
    assert!(pattern("mcp__fs__read.file").matches(&dotted));
    assert!(pattern(dotted.name.as_str()).matches(&dotted));
    let long_name = "l".repeat(70);
    let long = mcp("gh", &long_name);
    assert!(pattern(&format!("mcp__gh__{long_name}")).matches(&long));
    // The alias is the server's own: another server's tool is not hit.
    assert!(!pattern("mcp__fs__read.file").matches(&mcp("fs2", "read.file")));
    assert!(!pattern("mcp__fs__read.file").matches(&mcp("fs", "read.files")));
}

#[test]
fn exact_patterns_compare_whole_names() {
    assert!(pattern("Read").matches(&builtin("Read")));
    assert!(!pattern("Read").matches(&builtin("ReadAll")));
    assert!(!pattern("Wr*te").matches(&builtin("Write")));
}

#[test]
fn permission_rules_and_odd_characters_are_refused() {
    let err = "Bash(git:*)".parse::<ToolPattern>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool pattern 'Bash(git:*)' is a permission rule with an argument; zr patterns name whole tools: write 'Bash'"
    );
    assert!(matches!(
        "WebFetch(domain:x.com)".parse::<ToolPattern>(),
        Err(PatternError::PermissionRule { .. })
    ));
    assert!(matches!(
        "Read;".parse::<ToolPattern>(),
        Err(PatternError::InvalidChar { ch: ';', .. })
    ));
    assert!(matches!(
        "Re ad".parse::<ToolPattern>(),
        Err(PatternError::Whitespace { .. })
    ));
    assert!(matches!(
        "".parse::<ToolPattern>(),
        Err(PatternError::Empty)
    ));
    assert!("mcp__fs__read.file".parse::<ToolPattern>().is_ok());
}
