//! The Skill tool: per-agent skills, bodies read at call time, bad input.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::sync::Arc;

use serde_json::{Value, json};
use zr_skills::{Roots, SkillRegistry, SkillTool};
use zr_types::{
    AgentId, SessionId, SkillDefinition, ToolCall, ToolContext, ToolHandler, ToolOutput,
    ToolResultContent,
};

use crate::{Project, ready};

fn ctx(agent: &AgentId) -> ToolContext {
    ToolContext::new(
        SessionId::from_parts(1, 2),
        agent.clone(),
        std::path::Path::new("/tmp"),
        BTreeMap::new(),
    )
}

fn call(tool: &SkillTool, agent: &AgentId, input: Value) -> ToolOutput {
    let call = ToolCall {
        id: "toolu_1".to_owned(),
        name: "Skill".to_owned(),
        input,
    };
    ready(tool.call(&call, ctx(agent))).unwrap()
}

fn text(output: &ToolOutput) -> &str {
    match &output.content[..] {
        [ToolResultContent::Text { text }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

/// A project with skills `pdf` (uses $ARGUMENTS) and `notes`, `secret`.
fn setup() -> (Project, Arc<zr_skills::SkillsView>) {
    let p = Project::new();
    p.write(
        "project/.zr/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms\nallowed-tools: Read Bash\n---\n\nRun `python scripts/fill.py $ARGUMENTS`.\nThen check $ARGUMENTS again.\n",
    );
    p.write("project/.zr/skills/pdf/scripts/fill.py", "print('hi')\n");
    p.skill("project/.zr/skills", "notes", "Take notes");
    p.skill("project/.zr/skills", "secret", "Only for the other agent");
    let view = SkillRegistry::new(Roots::skills(&p.path(), None)).view();
    assert_eq!(view.skills().len(), 3);
    (p, view)
}

fn pick(view: &zr_skills::SkillsView, names: &[&str]) -> Vec<Arc<SkillDefinition>> {
    names
        .iter()
        .map(|n| Arc::clone(&view.get(n).unwrap().definition))
        .collect()
}

#[test]
fn a_call_returns_the_body_with_arguments_and_the_folder() {
    let (p, view) = setup();
    let tool = SkillTool::with_roots(Roots::skills(&p.path(), None));
    let root = AgentId::root();
    tool.grant(root.clone(), pick(&view, &["pdf", "notes"]));
    let out = call(&tool, &root, json!({"skill": "pdf", "args": "form.pdf"}));
    assert!(!out.is_error);
    let folder = p.path().join(".zr/skills/pdf");
    assert_eq!(
        text(&out),
        format!(
            "Skill: pdf\nFolder: {} (paths in these instructions are relative to it; read its other files from there)\nAllowed tools: Read, Bash\n\nRun `python scripts/fill.py form.pdf`.\nThen check form.pdf again.",
            folder.display()
        )
    );
    assert_eq!(out.display.as_deref(), Some("loaded skill pdf"));
    // Without args the placeholder becomes empty; a body without a
    // placeholder gets the args appended.
    let out = call(&tool, &root, json!({"skill": "pdf"}));
    assert!(text(&out).contains("fill.py `."));
    let out = call(&tool, &root, json!({"skill": "notes", "args": "today"}));
    assert!(
        text(&out).ends_with("Instructions of notes.\n\nARGUMENTS: today"),
        "{}",
        text(&out)
    );
}

#[test]
fn the_body_is_read_at_call_time() {
    let (p, view) = setup();
    let tool = SkillTool::with_roots(Roots::skills(&p.path(), None));
    let root = AgentId::root();
    tool.grant(root.clone(), pick(&view, &["notes"]));
    p.write(
        "project/.zr/skills/notes/SKILL.md",
        "---\nname: notes\ndescription: Take notes\n---\nEdited after the view.\n",
    );
    assert!(
        text(&call(&tool, &root, json!({"skill": "notes"}))).ends_with("Edited after the view.")
    );
    // A vanished file is an error result, not a panic.
    fs::remove_dir_all(p.path().join(".zr/skills/notes")).unwrap();
    let out = call(&tool, &root, json!({"skill": "notes"}));
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("skill 'notes' could not be loaded from ")
            && text(&out).ends_with("could not open the file: entity not found"),
        "{}",
        text(&out)
    );
    // A file broken since the view: the error says what is wrong.
    let (p, view) = setup();
    tool.grant(root.clone(), pick(&view, &["pdf"]));
    p.write("project/.zr/skills/pdf/SKILL.md", "no front matter\n");
    let out = call(&tool, &root, json!({"skill": "pdf"}));
    assert!(out.is_error);
    assert!(
        text(&out).contains("must start with a line '---'"),
        "{}",
        text(&out)
    );
}

#[test]
fn an_unknown_skill_lists_only_the_callers_skills() {
    let (_p, view) = setup();
    let tool = SkillTool::new();
    let root = AgentId::root();
    let child = root.child(1, "explore");
    tool.grant(root.clone(), pick(&view, &["pdf", "notes"]));
    tool.grant(child.clone(), pick(&view, &["secret"]));
    // The root cannot load the child's skill, and is not told it exists.
    let out = call(&tool, &root, json!({"skill": "secret"}));
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "unknown skill 'secret'. No skill of this agent has a name or description close to it; call Skill with another name or other words of what the skill does."
    );
    let out = call(&tool, &child, json!({"skill": "pdf"}));
    assert_eq!(
        text(&out),
        "unknown skill 'pdf'. No skill of this agent has a name or description close to it; call Skill with another name or other words of what the skill does."
    );
    assert!(!call(&tool, &child, json!({"skill": "secret"})).is_error);
    // An agent without a grant, or after revoke, has no skills.
    let stranger = root.child(2, "plan");
    let out = call(&tool, &stranger, json!({"skill": "pdf"}));
    assert_eq!(text(&out), "unknown skill 'pdf'. This agent has no skills.");
    tool.revoke(&child);
    assert!(tool.granted(&child).is_empty());
    assert!(call(&tool, &child, json!({"skill": "secret"})).is_error);
    // Names are matched exactly: paths never resolve.
    let out = call(&tool, &root, json!({"skill": "../pdf"}));
    assert!(text(&out).starts_with("unknown skill '../pdf'."));
}

#[test]
fn an_unknown_name_is_answered_with_the_closest_skills_by_name_or_by_words() {
    let tool = SkillTool::new();
    let root = AgentId::root();
    let mut skills: Vec<SkillDefinition> = (0..200)
        .map(|i| {
            SkillDefinition::inline(
                format!("user-skill-{i:03}").parse().unwrap(),
                format!("Helps with chore number {i}"),
                "body",
            )
        })
        .collect();
    skills.push(SkillDefinition::inline(
        "release-notes".parse().unwrap(),
        "Write the changelog for a release",
        "body",
    ));
    tool.grant(root.clone(), skills.into_iter().map(Arc::new));
    // A name a few letters off.
    let out = call(&tool, &root, json!({"skill": "relase-notes"}));
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "unknown skill 'relase-notes'. The closest of this agent's 201 skills (call Skill again with one of these names):\n- release-notes: Write the changelog for a release"
    );
    // Words of what it does.
    let out = call(&tool, &root, json!({"skill": "update the CHANGELOG"}));
    assert!(
        text(&out).ends_with("names):\n- release-notes: Write the changelog for a release"),
        "{}",
        text(&out)
    );
    // Many matches: at most ten, never the whole collection.
    let out = call(&tool, &root, json!({"skill": "chore"}));
    assert_eq!(text(&out).matches("\n- ").count(), 10, "{}", text(&out));
}

#[test]
fn bad_input_says_what_to_fix() {
    let (_p, view) = setup();
    let tool = SkillTool::new();
    let root = AgentId::root();
    tool.grant(root.clone(), pick(&view, &["pdf"]));
    for (input, expected) in [
        (
            json!({}),
            "Skill: 'skill' (the skill's name, a string) is required",
        ),
        (
            json!({"skill": ""}),
            "Skill: 'skill' (the skill's name, a string) is required",
        ),
        (
            json!({"skill": 3}),
            "Skill: 'skill' must be a string (the skill's name), found the number 3",
        ),
        (
            json!({"skill": "pdf", "args": ["a"]}),
            "Skill: 'args' must be a string, found a list",
        ),
        (
            json!("pdf"),
            "Skill: the input must be an object like {\"skill\": \"NAME\", \"args\": \"...\"}, found the string \"pdf\"",
        ),
    ] {
        let out = call(&tool, &root, input);
        assert!(out.is_error);
        assert_eq!(text(&out), expected);
    }
}

#[test]
fn inline_skills_and_the_definition() {
    let tool = SkillTool::new();
    let root = AgentId::root();
    let inline = SkillDefinition::inline(
        "hello".parse().unwrap(),
        "Greets",
        "Say hello to $ARGUMENTS.",
    );
    tool.grant(root.clone(), [Arc::new(inline)]);
    let out = call(&tool, &root, json!({"skill": "hello", "args": "Ada"}));
    assert_eq!(text(&out), "Skill: hello\n\nSay hello to Ada.");
    let definition = SkillTool::definition();
    assert_eq!(definition.name.as_str(), "Skill");
    assert!(definition.is_read_only());
    assert_eq!(definition.input_schema["required"], json!(["skill"]));
}

#[test]
fn a_skill_swapped_for_a_link_out_of_its_root_after_the_view_is_not_read() {
    let (p, view) = setup();
    let root = AgentId::root();
    p.write(
        "outside/pdf/SKILL.md",
        "---\nname: pdf\ndescription: d\n---\nSECRET from outside the root.\n",
    );
    let tool = SkillTool::with_roots(Roots::skills(&p.path(), None));
    tool.grant(root.clone(), pick(&view, &["pdf", "notes", "secret"]));
    // The SKILL.md replaced by a link out of the root.
    let notes = p.path().join(".zr/skills/notes/SKILL.md");
    fs::remove_file(&notes).unwrap();
    symlink(p.base().join("outside/pdf/SKILL.md"), &notes).unwrap();
    // The skill folder replaced by a link out of the root.
    let pdf = p.path().join(".zr/skills/pdf");
    fs::remove_dir_all(&pdf).unwrap();
    symlink(p.base().join("outside/pdf"), &pdf).unwrap();
    for name in ["notes", "pdf"] {
        let out = call(&tool, &root, json!({"skill": name}));
        assert!(out.is_error, "{}", text(&out));
        assert!(!text(&out).contains("SECRET"), "{}", text(&out));
        assert!(
            text(&out).contains("refused: it leads to ")
                && text(&out).contains("outside the skills root"),
            "{}",
            text(&out)
        );
    }
    // A link that stays inside the root is still read.
    let secret = p.path().join(".zr/skills/secret/SKILL.md");
    fs::remove_file(&secret).unwrap();
    p.write(
        "project/.zr/skills/shared/secret.md",
        "---\nname: secret\ndescription: d\n---\nShared inside the root.\n",
    );
    symlink(p.path().join(".zr/skills/shared/secret.md"), &secret).unwrap();
    let out = call(&tool, &root, json!({"skill": "secret"}));
    assert!(!out.is_error, "{}", text(&out));
    assert!(text(&out).ends_with("Shared inside the root."));
    // A skill the host defined outside every root is read as given.
    let host = SkillDefinition {
        body: zr_types::SkillBody::File(p.base().join("outside/pdf/SKILL.md")),
        ..(*pick(&view, &["pdf"])[0]).clone()
    };
    tool.grant(root.clone(), [Arc::new(host)]);
    assert!(!call(&tool, &root, json!({"skill": "pdf"})).is_error);
}

#[test]
fn a_huge_or_odd_body_file_is_an_error_result() {
    let (p, view) = setup();
    let root = AgentId::root();
    let tool = Arc::new(SkillTool::with_roots(Roots::skills(&p.path(), None)));
    tool.grant(root.clone(), pick(&view, &["pdf", "notes"]));
    // A body over the limit: the view only read the front matter, the
    // call refuses to load it.
    let huge = format!(
        "---\nname: pdf\ndescription: Fill PDF forms\n---\n{}",
        "x".repeat(2 * 1024 * 1024)
    );
    fs::write(p.path().join(".zr/skills/pdf/SKILL.md"), huge).unwrap();
    let out = call(&tool, &root, json!({"skill": "pdf"}));
    assert!(out.is_error);
    assert!(
        text(&out)
            .ends_with("the file is 2097198 bytes long; at most 1048576 are read; shorten it"),
        "{}",
        text(&out)
    );
    // A named pipe where SKILL.md was: an error at once, not a blocked call.
    let notes = p.path().join(".zr/skills/notes/SKILL.md");
    fs::remove_file(&notes).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&notes)
            .status()
            .unwrap()
            .success()
    );
    let (send, receive) = std::sync::mpsc::channel();
    let caller = Arc::clone(&tool);
    std::thread::spawn(move || {
        let _ = send.send(call(&caller, &root, json!({"skill": "notes"})));
    });
    let out = receive
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the call blocked");
    assert!(out.is_error);
    assert!(
        text(&out).ends_with("SKILL.md is not a regular file; make it one"),
        "{}",
        text(&out)
    );
}
