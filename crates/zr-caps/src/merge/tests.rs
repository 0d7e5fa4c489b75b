//! Tests of the root merge (C1) and derivation (C2).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use proptest::prelude::*;
use zr_types::{ServerName, SkillName, ToolDefinition, ToolName, ToolOrigin};

use super::*;
use crate::pattern::ToolPattern;

fn custom(name: &str, description: &str) -> Arc<ToolDefinition> {
    Arc::new(ToolDefinition::new(
        name.parse().unwrap(),
        description,
        ToolOrigin::Custom,
    ))
}

fn mcp(server: &str, tool: &str, description: &str) -> Arc<ToolDefinition> {
    let server: ServerName = server.parse().unwrap();
    Arc::new(ToolDefinition::new(
        ToolName::mcp(&server, tool).unwrap(),
        description,
        ToolOrigin::Connection { server },
    ))
}

fn patterns(list: &[&str]) -> Vec<ToolPattern> {
    list.iter().map(|p| p.parse().unwrap()).collect()
}

fn skills(list: &[&str]) -> Vec<SkillName> {
    list.iter().map(|s| s.parse().unwrap()).collect()
}

/// `name:description` of each tool, to compare pools by value and position.
fn shown(tools: &[Arc<ToolDefinition>]) -> Vec<String> {
    tools
        .iter()
        .map(|t| format!("{}:{}", t.name, t.description))
        .collect()
}

fn full(tag: &str) -> AgentCapabilities {
    AgentCapabilities {
        connection_tools: Some(vec![mcp("srv", tag, tag)]),
        custom_tools: Some(vec![custom(tag, tag)]),
        skills: Some(skills(&[tag])),
        allowed_tools: Some(patterns(&[tag])),
        disallowed_tools: Some(patterns(&[tag])),
    }
}

#[test]
fn c1_override_replaces_each_field_and_unset_falls_back() {
    let options = AgentOptions::default();
    let constructor = full("ctor");
    let over = full("query");
    // Everything overridden.
    let all = merge_root(&options, &constructor, Some(&over));
    assert_eq!(shown(&all.custom_tools), ["query:query"]);
    assert_eq!(shown(&all.connection_tools), ["mcp__srv__query:query"]);
    assert_eq!(all.skills, SkillView::Only(skills(&["query"])));
    assert_eq!(all.allowed_tools, Some(patterns(&["query"])));
    assert_eq!(all.disallowed_tools, patterns(&["query"]));
    // One field at a time: only that field changes.
    let fields: [fn(&mut AgentCapabilities); 5] = [
        |c| c.connection_tools = None,
        |c| c.custom_tools = None,
        |c| c.skills = None,
        |c| c.allowed_tools = None,
        |c| c.disallowed_tools = None,
    ];
    for (index, unset) in fields.iter().enumerate() {
        let mut partial = over.clone();
        unset(&mut partial);
        let got = merge_root(&options, &constructor, Some(&partial));
        let from_ctor = |b: bool| if b { "ctor" } else { "query" };
        assert_eq!(
            shown(&got.connection_tools),
            [format!("mcp__srv__{0}:{0}", from_ctor(index == 0))]
        );
        assert_eq!(
            shown(&got.custom_tools),
            [format!("{0}:{0}", from_ctor(index == 1))]
        );
        assert_eq!(
            got.skills,
            SkillView::Only(skills(&[from_ctor(index == 2)]))
        );
        assert_eq!(got.allowed_tools, Some(patterns(&[from_ctor(index == 3)])));
        assert_eq!(got.disallowed_tools, patterns(&[from_ctor(index == 4)]));
    }
    // No override at all is the constructor's definition.
    assert_eq!(
        merge_root(&options, &constructor, None),
        merge_root(&options, &constructor, Some(&AgentCapabilities::default()))
    );
}

#[test]
fn c1_an_empty_override_list_is_set_not_unset() {
    let over = AgentCapabilities {
        skills: Some(vec![]),
        allowed_tools: Some(vec![]),
        ..AgentCapabilities::default()
    };
    let got = merge_root(&AgentOptions::default(), &full("ctor"), Some(&over));
    assert_eq!(got.skills, SkillView::Only(vec![]));
    assert_eq!(got.allowed_tools, Some(vec![]));
}

#[test]
fn c1_tool_sources_are_unions_top_level_first_and_same_name_replaces_in_place() {
    let options = AgentOptions {
        custom_tools: vec![custom("a", "top"), custom("b", "top"), custom("c", "top")],
        mcp_tools: vec![mcp("gh", "x", "top"), mcp("gh", "y", "top")],
        ..AgentOptions::default()
    };
    let caps = AgentCapabilities {
        custom_tools: Some(vec![custom("b", "caps"), custom("d", "caps")]),
        connection_tools: Some(vec![mcp("db", "q", "caps"), mcp("gh", "x", "caps")]),
        ..AgentCapabilities::default()
    };
    let got = merge_root(&options, &caps, None);
    // Concatenated, top level first; the resolver's R1 then replaces `b`
    // and `mcp__gh__x` in place and records it (see zr-resolve's
    // `c1_caps_custom_tool_replaces_options_custom` scenario).
    assert_eq!(
        shown(&got.custom_tools),
        ["a:top", "b:top", "c:top", "b:caps", "d:caps"]
    );
    assert_eq!(
        shown(&got.connection_tools),
        [
            "mcp__gh__x:top",
            "mcp__gh__y:top",
            "mcp__db__q:caps",
            "mcp__gh__x:caps"
        ]
    );
    // Unset capability lists fall back to the top level alone.
    let bare = merge_root(&options, &AgentCapabilities::default(), None);
    assert_eq!(shown(&bare.custom_tools), ["a:top", "b:top", "c:top"]);
    assert_eq!(bare.connection_tools.len(), 2);
}

#[test]
fn c1_skills_when_set_replace_the_registry_view() {
    let options = AgentOptions::default();
    let none = merge_root(&options, &AgentCapabilities::default(), None);
    assert_eq!(none.skills, SkillView::All);
    let some = AgentCapabilities {
        skills: Some(skills(&["review", "pdf"])),
        ..AgentCapabilities::default()
    };
    assert_eq!(
        merge_root(&options, &some, None).skills,
        SkillView::Only(skills(&["review", "pdf"]))
    );
}

#[test]
fn c1_allow_list_replaces_top_level_and_deny_lists_accumulate() {
    let options = AgentOptions {
        allowed_tools: Some(patterns(&["Read"])),
        disallowed_tools: Some(patterns(&["Bash"])),
        ..AgentOptions::default()
    };
    let fallback = merge_root(&options, &AgentCapabilities::default(), None);
    assert_eq!(fallback.allowed_tools, Some(patterns(&["Read"])));
    assert_eq!(fallback.disallowed_tools, patterns(&[]));
    assert_eq!(fallback.session_disallowed_tools, patterns(&["Bash"]));

    let caps = AgentCapabilities {
        allowed_tools: Some(patterns(&["Grep", "Glob"])),
        disallowed_tools: Some(patterns(&["Write"])),
        ..AgentCapabilities::default()
    };
    // The query override replaces the constructor's deny list, yet the
    // session-wide list still holds: a capability never lifts a top-level deny.
    let over = AgentCapabilities {
        disallowed_tools: Some(vec![]),
        ..AgentCapabilities::default()
    };
    let got = merge_root(&options, &caps, None);
    assert_eq!(got.allowed_tools, Some(patterns(&["Grep", "Glob"])));
    assert_eq!(got.disallowed_tools, patterns(&["Write"]));
    assert_eq!(got.session_disallowed_tools, patterns(&["Bash"]));
    let lifted = merge_root(&options, &caps, Some(&over));
    assert_eq!(lifted.disallowed_tools, patterns(&[]));
    assert_eq!(lifted.session_disallowed_tools, patterns(&["Bash"]));
}

#[test]
fn c2_unset_resolves_to_empty_and_allow_unset_to_no_constraint() {
    let options = AgentOptions {
        custom_tools: vec![custom("top", "top")],
        mcp_tools: vec![mcp("gh", "x", "top")],
        allowed_tools: Some(patterns(&["Read"])),
        disallowed_tools: Some(patterns(&["Bash"])),
    };
    let got = derive(&options, &AgentCapabilities::default());
    assert!(got.custom_tools.is_empty());
    assert!(got.connection_tools.is_empty());
    assert_eq!(got.skills, SkillView::Only(vec![]));
    assert_eq!(got.allowed_tools, None);
    assert!(got.disallowed_tools.is_empty());
    // Only the session-wide deny list reaches a subagent.
    assert_eq!(got.session_disallowed_tools, patterns(&["Bash"]));
}

#[test]
fn c2_a_subagent_gets_exactly_its_definition() {
    let def = full("own");
    let got = derive(&AgentOptions::default(), &def);
    assert_eq!(shown(&got.custom_tools), ["own:own"]);
    assert_eq!(shown(&got.connection_tools), ["mcp__srv__own:own"]);
    assert_eq!(got.skills, SkillView::Only(skills(&["own"])));
    assert_eq!(got.allowed_tools, Some(patterns(&["own"])));
    assert_eq!(got.disallowed_tools, patterns(&["own"]));
}

fn tool_names() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-e]{1,2}", 0..6)
}

proptest! {
    /// C2: derive takes no parent, and the top level's tool sources, allow
    /// list and skills never reach a subagent, whatever they hold.
    #[test]
    fn prop_derive_never_sees_top_level_tools(top in tool_names(), own in tool_names()) {
        let options = AgentOptions {
            custom_tools: top.iter().map(|n| custom(&format!("top{n}"), "top")).collect(),
            mcp_tools: top.iter().map(|n| mcp("top", n, "top")).collect(),
            allowed_tools: Some(patterns(&["Read"])),
            disallowed_tools: None,
        };
        let def = AgentCapabilities {
            custom_tools: Some(own.iter().map(|n| custom(n, "own")).collect()),
            ..AgentCapabilities::default()
        };
        let got = derive(&options, &def);
        prop_assert!(got.custom_tools.iter().all(|t| t.description == "own"));
        prop_assert!(got.connection_tools.is_empty());
        prop_assert_eq!(got.allowed_tools, None);
        prop_assert_eq!(got.custom_tools.len(), own.len());
    }

    /// C1: the merged custom source is the top level's tools, then the
    /// capability's, each list in its own order (R1 resolves same names).
    #[test]
    fn prop_union_is_top_level_then_capabilities(top in tool_names(), own in tool_names()) {
        let options = AgentOptions {
            custom_tools: top.iter().map(|n| custom(n, "top")).collect(),
            ..AgentOptions::default()
        };
        let caps = AgentCapabilities {
            custom_tools: Some(own.iter().map(|n| custom(n, "own")).collect()),
            ..AgentCapabilities::default()
        };
        let got = merge_root(&options, &caps, None);
        let expected: Vec<String> = top.iter().map(|n| format!("{n}:top")).chain(own.iter().map(|n| format!("{n}:own"))).collect();
        prop_assert_eq!(shown(&got.custom_tools), expected);
    }
}
