//! The agent-type registry on real folders: built-ins, replacement,
//! first-use files, precedence, broken files, hot reload.

use std::fs;
use std::sync::Arc;

use zr_caps::AgentType;
use zr_skills::{AgentRegistry, AgentSource, Roots, Scope, Severity};

use crate::Project;

/// A registry over the project's roots (no home folder, no first-use
/// files).
fn registry(p: &Project) -> AgentRegistry {
    AgentRegistry::new(Roots::agents(&p.path(), None))
}

fn names(view: &zr_skills::AgentTypesView) -> Vec<String> {
    view.types().iter().map(|t| t.name().to_string()).collect()
}

fn agent(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\ntools: Read, Grep\n---\nYou are {name}.\n"
    )
}

const BUILTINS: [&str; 5] = [
    "explore",
    "general-purpose",
    "guide",
    "plan",
    "verification",
];

#[test]
fn the_built_ins_exist_without_files_each_with_a_prompt() {
    let p = Project::new();
    let view = registry(&p).view();
    assert_eq!(names(&view), BUILTINS);
    assert!(view.diagnostics().is_empty());
    for entry in view.types() {
        assert_eq!(entry.source, AgentSource::Builtin);
        assert!(entry.definition.prompt.len() > 300, "{}", entry.name());
        assert!(!entry.definition.description.is_empty());
    }
    let kind = |name: &str| view.get(name).unwrap().definition.agent_type.clone();
    assert_eq!(kind("explore"), AgentType::Explore);
    assert_eq!(kind("plan"), AgentType::Plan);
    assert_eq!(kind("verification"), AgentType::Verification);
    assert_eq!(kind("general-purpose"), AgentType::GeneralPurpose);
    assert_eq!(kind("guide"), AgentType::Explore);
    assert!(
        view.get("verification")
            .unwrap()
            .definition
            .prompt
            .contains("try to break it")
    );
}

#[test]
fn a_file_with_a_built_in_name_replaces_it() {
    let p = Project::new();
    let file = p.write(
        "project/.zr/agents/my-explore.md",
        &agent("explore", "mine"),
    );
    let view = registry(&p).view();
    assert_eq!(names(&view), BUILTINS);
    let explore = view.get("explore").unwrap();
    assert_eq!(explore.definition.description, "mine");
    assert_eq!(explore.definition.prompt, "You are explore.");
    assert_eq!(
        explore.source,
        AgentSource::File {
            path: file,
            scope: Scope::Project
        }
    );
    // No diagnostic: replacing a built-in is what the file is for.
    assert!(view.diagnostics().is_empty());
}

#[test]
fn first_use_writes_a_readme_and_a_template_that_copying_enables() {
    let p = Project::new();
    let registry = AgentRegistry::for_project(&p.path(), None);
    let dir = p.path().join(".zr/agents");
    assert!(!dir.exists(), "nothing is written before the first view");
    let view = registry.view();
    assert_eq!(names(&view), BUILTINS, "README and template are not types");
    assert!(view.diagnostics().is_empty());
    let readme = fs::read_to_string(dir.join("README.md")).unwrap();
    assert_eq!(readme, zr_skills::AGENTS_README);
    assert!(readme.contains("example.md.template"));
    let template = fs::read_to_string(dir.join("example.md.template")).unwrap();
    fs::copy(dir.join("example.md.template"), dir.join("reviewer.md")).unwrap();
    let view = registry.view();
    let reviewer = view.get("reviewer").expect("the copied template is a type");
    assert!(template.contains(&reviewer.definition.prompt[..20]));
    assert!(view.diagnostics().is_empty(), "{:?}", view.diagnostics());
    // Deleting the README does not bring it back, now or in a new registry
    // (the folder exists).
    fs::remove_file(dir.join("README.md")).unwrap();
    let _ = registry.view();
    let _ = AgentRegistry::for_project(&p.path(), None).view();
    assert!(!dir.join("README.md").exists());
}

#[test]
fn an_existing_agents_folder_is_never_written_to() {
    let p = Project::new();
    p.write("project/.zr/agents/x.md", &agent("x", "d"));
    let view = AgentRegistry::for_project(&p.path(), None).view();
    assert_eq!(view.get("x").unwrap().definition.description, "d");
    let mut entries: Vec<_> = fs::read_dir(p.path().join(".zr/agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    entries.sort();
    assert_eq!(entries, ["x.md"]);
}

#[test]
fn a_scaffold_that_cannot_be_written_is_a_diagnostic() {
    let p = Project::new();
    p.write("project/.zr", "a file where the folder should be");
    let view = AgentRegistry::for_project(&p.path(), None).view();
    assert_eq!(names(&view), BUILTINS);
    let shown = p.shown(view.diagnostics());
    assert_eq!(
        shown,
        [
            "project/.zr/agents: error: could not create the agents folder's README.md and example.md.template: not a directory",
            "project/.zr/agents: error: could not read the agents folder: not a directory",
        ]
    );
}

#[test]
fn roots_have_a_fixed_precedence_and_duplicates_are_reported() {
    let p = Project::new();
    p.write("project/.zr/agents/a.md", &agent("reviewer", "zr"));
    p.write("project/.zr/agents/b.md", &agent("reviewer", "zr again"));
    p.write(
        "project/.claude/agents/reviewer.md",
        &agent("reviewer", "claude"),
    );
    p.write(
        "project/.claude/agents/tester.md",
        &agent("tester", "claude"),
    );
    p.write("home/.zr/agents/tester.md", &agent("tester", "user"));
    p.write("home/.zr/agents/writer.md", &agent("writer", "user"));
    let view = AgentRegistry::new(Roots::agents(&p.path(), Some(&p.home()))).view();
    let get = |n: &str| view.get(n).unwrap().definition.description.clone();
    assert_eq!(get("reviewer"), "zr");
    assert_eq!(get("tester"), "claude");
    assert_eq!(get("writer"), "user");
    assert!(matches!(
        view.get("writer").unwrap().source,
        AgentSource::File {
            scope: Scope::User,
            ..
        }
    ));
    let shown = p.shown(view.diagnostics());
    assert_eq!(
        shown,
        [
            "home/.zr/agents/tester.md: warning: agent type 'tester' is also defined in project/.claude/agents/tester.md, which takes precedence; this one is ignored",
            "project/.claude/agents/reviewer.md: warning: agent type 'reviewer' is also defined in project/.zr/agents/a.md, which takes precedence; this one is ignored",
            "project/.zr/agents/b.md: warning: agent type 'reviewer' is also defined in project/.zr/agents/a.md, which takes precedence; this one is ignored",
        ]
    );
}

#[test]
fn broken_files_are_diagnostics_with_lines_and_the_rest_loads() {
    let p = Project::new();
    p.write("project/.zr/agents/good.md", &agent("good", "fine"));
    p.write(
        "project/.zr/agents/bad-yaml.md",
        "---\nname: x\ndescription: [\n---\n",
    );
    p.write(
        "project/.zr/agents/no-desc.md",
        "---\nname: x\n---\nprompt\n",
    );
    p.write(
        "project/.zr/agents/wrong-type.md",
        "---\nname: x\ndescription: d\nmaxTurns: ten\n---\n",
    );
    p.write(
        "project/.zr/agents/extra.md",
        "---\nname: extra\ndescription: d\nfavourite: blue\n---\n",
    );
    fs::create_dir_all(p.path().join(".zr/agents/folder.md")).unwrap();
    p.write("project/.zr/agents/notes.txt", "not an agent");
    let view = registry(&p).view();
    assert_eq!(view.get("good").unwrap().definition.description, "fine");
    // The unknown key is kept (and warned about below).
    let extras = &view.get("extra").unwrap().extras;
    assert_eq!(extras.len(), 1, "{extras:?}");
    assert_eq!(
        (extras[0].key.as_str(), &extras[0].value, extras[0].line),
        ("favourite", &serde_json::json!("blue"), 4)
    );
    let shown = p.shown(view.diagnostics());
    assert_eq!(shown.len(), 4, "{shown:#?}");
    assert!(
        shown[0].starts_with("project/.zr/agents/bad-yaml.md:3: error: invalid YAML"),
        "{}",
        shown[0]
    );
    assert!(
        shown[1].starts_with("project/.zr/agents/extra.md:4: warning: unknown key 'favourite'"),
        "{}",
        shown[1]
    );
    assert!(
        shown[2].starts_with(
            "project/.zr/agents/no-desc.md:1: error: required key 'description' is missing"
        ),
        "{}",
        shown[2]
    );
    assert_eq!(
        shown[3],
        "project/.zr/agents/wrong-type.md:4: error: 'maxTurns' must be a positive integer, found the string \"ten\""
    );
    assert_eq!(view.diagnostics()[1].severity, Severity::Warning);
}

#[test]
fn an_invalid_output_schema_is_an_error_at_its_line_and_the_file_is_left_out() {
    let p = Project::new();
    p.write(
        "project/.zr/agents/counter.md",
        "---\nname: counter\ndescription: d\noutputSchema:\n  type: objekt\n---\nCount.\n",
    );
    p.write(
        "project/.zr/agents/fine.md",
        "---\nname: fine\ndescription: d\noutputSchema:\n  type: object\n---\nCount.\n",
    );
    let view = registry(&p).view();
    assert!(view.get("counter").is_none(), "{:?}", names(&view));
    assert!(view.get("fine").is_some(), "{:?}", names(&view));
    let shown = p.shown(view.diagnostics());
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert!(
        shown[0].starts_with(
            "project/.zr/agents/counter.md:4: error: 'outputSchema' is not a valid JSON Schema: "
        ),
        "{}",
        shown[0]
    );
    assert_eq!(view.diagnostics()[0].severity, Severity::Error);
}

#[test]
fn hot_reload_sees_added_edited_and_deleted_files() {
    let p = Project::new();
    p.write("project/.zr/agents/a.md", &agent("alpha", "one"));
    p.write("project/.zr/agents/b.md", &agent("beta", "two"));
    p.write("project/.claude/agents/c.md", &agent("gamma", "three"));
    p.age();
    let registry = registry(&p);
    let first = registry.view();
    assert_eq!(names(&first).len(), 8);
    assert_eq!(registry.last_scan().files_parsed, 3);
    let again = registry.view();
    assert!(Arc::ptr_eq(&first, &again));
    let scan = registry.last_scan();
    assert_eq!(
        (scan.stat_calls, scan.dirs_listed, scan.files_parsed),
        (5, 0, 0)
    );

    p.write("project/.zr/agents/d.md", &agent("delta", "four"));
    p.write("project/.zr/agents/b.md", &agent("beta", "TWO"));
    fs::remove_file(p.path().join(".claude/agents/c.md")).unwrap();
    let second = registry.view();
    assert!(second.get("gamma").is_none());
    assert_eq!(second.get("beta").unwrap().definition.description, "TWO");
    assert_eq!(second.get("delta").unwrap().definition.description, "four");
    assert_eq!(registry.last_scan().files_parsed, 2);
    assert!(Arc::ptr_eq(
        first.get("alpha").unwrap(),
        second.get("alpha").unwrap()
    ));
    // Deleting a replacement brings the built-in back.
    p.write("project/.zr/agents/plan.md", &agent("plan", "custom plan"));
    assert!(matches!(
        registry.view().get("plan").unwrap().source,
        AgentSource::File { .. }
    ));
    fs::remove_file(p.path().join(".zr/agents/plan.md")).unwrap();
    assert_eq!(
        registry.view().get("plan").unwrap().source,
        AgentSource::Builtin
    );
}

#[test]
fn hidden_files_such_as_editor_locks_are_not_agent_types() {
    let p = Project::new();
    p.write(
        "project/.zr/agents/reviewer.md",
        &agent("reviewer", "reviews"),
    );
    // Emacs locks a file it edits with a dangling link `.#NAME`; macOS
    // leaves `._NAME` resource files on some drives.
    std::os::unix::fs::symlink(
        "user@host.1234:1700000000",
        p.path().join(".zr/agents/.#reviewer.md"),
    )
    .unwrap();
    fs::write(
        p.path().join(".zr/agents/._reviewer.md"),
        b"\x00\x05\x16\x07\xff",
    )
    .unwrap();
    let view = registry(&p).view();
    assert_eq!(
        view.get("reviewer").unwrap().definition.description,
        "reviews"
    );
    assert!(view.diagnostics().is_empty(), "{:#?}", view.diagnostics());
}

#[test]
fn a_fifo_named_like_an_agent_file_is_a_diagnostic_not_a_hang() {
    let p = Project::new();
    p.write(
        "project/.zr/agents/reviewer.md",
        &agent("reviewer", "reviews"),
    );
    let status = std::process::Command::new("mkfifo")
        .arg(p.path().join(".zr/agents/pipe.md"))
        .status()
        .unwrap();
    assert!(status.success());
    let registry = registry(&p);
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(registry.view());
    });
    let view = receive
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the view blocked");
    assert_eq!(
        view.get("reviewer").unwrap().definition.description,
        "reviews"
    );
    let shown = p.shown(view.diagnostics());
    assert_eq!(
        shown,
        ["project/.zr/agents/pipe.md: error: pipe.md is not a regular file; make it one"]
    );
}

#[test]
fn a_root_linked_to_another_root_is_read_once_without_warnings() {
    let p = Project::new();
    p.write(
        "project/.zr/agents/reviewer.md",
        &agent("reviewer", "reviews"),
    );
    fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink("../.zr/agents", p.path().join(".claude/agents")).unwrap();
    let view = registry(&p).view();
    // Found under the first root, not again under the linked one.
    assert_eq!(
        view.get("reviewer").unwrap().source,
        AgentSource::File {
            path: p.path().join(".zr/agents/reviewer.md"),
            scope: Scope::Project,
        }
    );
    assert!(view.diagnostics().is_empty(), "{:#?}", view.diagnostics());
}
