//! Agent types in sub-folders (`agents/**/*.md`) and in the user's Claude
//! Code folder: what is walked, what is refused, precedence, hot reload.

use std::fs;
use std::os::unix::fs::symlink;

use zr_skills::{AgentRegistry, AgentSource, Roots, Scope};

use crate::Project;

fn agent(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nYou are {name}.\n")
}

/// The file types of a view (built-ins left out), with their sources.
fn files(view: &zr_skills::AgentTypesView, p: &Project) -> Vec<String> {
    let base = p.base();
    view.types()
        .iter()
        .filter_map(|t| match &t.source {
            AgentSource::Builtin => None,
            AgentSource::File { path, scope } => Some(format!(
                "{} {scope} {}",
                t.name(),
                path.strip_prefix(&base).unwrap().display()
            )),
        })
        .collect()
}

#[test]
fn sub_folders_are_read_and_readmes_and_hidden_folders_are_not() {
    let p = Project::new();
    p.write(
        "project/.claude/agents/languages/rust-pro.md",
        &agent("rust-pro", "Rust"),
    );
    p.write(
        "project/.claude/agents/languages/dotnet/dotnet-framework-4.8-expert.md",
        &agent("dotnet-framework-4.8-expert", ".NET"),
    );
    p.write(
        "project/.claude/agents/languages/README.md",
        "# Languages\n",
    );
    p.write("project/.claude/agents/README.md", "# Collection\n");
    p.write("project/.claude/agents/.git/HEAD.md", "not an agent");
    p.write(
        "project/.claude/agents/.drafts/draft.md",
        &agent("draft", "d"),
    );
    p.write("project/.zr/agents/top.md", &agent("top", "top"));
    let view = AgentRegistry::new(Roots::agents(&p.path(), None)).view();
    assert_eq!(
        files(&view, &p),
        [
            "dotnet-framework-4.8-expert project project/.claude/agents/languages/dotnet/dotnet-framework-4.8-expert.md",
            "rust-pro project project/.claude/agents/languages/rust-pro.md",
            "top project project/.zr/agents/top.md",
        ]
    );
    assert!(view.diagnostics().is_empty(), "{:#?}", view.diagnostics());
}

#[test]
fn user_claude_agents_load_after_the_project_and_zr_user_folders() {
    let p = Project::new();
    p.write(
        "home/.claude/agents/ops/deployer.md",
        &agent("deployer", "claude user"),
    );
    p.write(
        "home/.claude/agents/reviewer.md",
        &agent("reviewer", "claude user"),
    );
    p.write("home/.zr/agents/reviewer.md", &agent("reviewer", "zr user"));
    p.write("home/.zr/agents/tester.md", &agent("tester", "zr user"));
    p.write(
        "project/.claude/agents/qa/tester.md",
        &agent("tester", "project"),
    );
    let view = AgentRegistry::new(Roots::agents(&p.path(), Some(&p.home()))).view();
    let get = |n: &str| view.get(n).unwrap().definition.description.clone();
    assert_eq!(get("deployer"), "claude user");
    assert_eq!(get("reviewer"), "zr user");
    assert_eq!(get("tester"), "project");
    assert!(matches!(
        view.get("deployer").unwrap().source,
        AgentSource::File {
            scope: Scope::User,
            ..
        }
    ));
    assert_eq!(
        p.shown(view.diagnostics()),
        [
            "home/.claude/agents/reviewer.md: warning: agent type 'reviewer' is also defined in home/.zr/agents/reviewer.md, which takes precedence; this one is ignored",
            "home/.zr/agents/tester.md: warning: agent type 'tester' is also defined in project/.claude/agents/qa/tester.md, which takes precedence; this one is ignored",
        ]
    );
}

#[test]
fn inside_one_root_the_first_path_wins_a_duplicate_name() {
    let p = Project::new();
    p.write("project/.zr/agents/b/x.md", &agent("x", "b/x"));
    p.write("project/.zr/agents/a/z.md", &agent("x", "a/z"));
    p.write("project/.zr/agents/c.md", &agent("x", "c"));
    let view = AgentRegistry::new(Roots::agents(&p.path(), None)).view();
    assert_eq!(view.get("x").unwrap().definition.description, "a/z");
    assert_eq!(p.shown(view.diagnostics()).len(), 2);
}

#[test]
fn linked_folders_stay_inside_the_root_and_cannot_loop() {
    let p = Project::new();
    p.write("outside/stolen.md", &agent("stolen", "outside"));
    p.write(
        "project/.zr/agents/real/inner.md",
        &agent("inner", "inside"),
    );
    let root = p.path().join(".zr/agents");
    symlink(p.base().join("outside"), root.join("escape")).unwrap();
    symlink(&root, root.join("real/loop")).unwrap();
    symlink(root.join("real"), root.join("alias")).unwrap();
    let view = AgentRegistry::new(Roots::agents(&p.path(), None)).view();
    assert!(view.get("stolen").is_none());
    assert_eq!(
        view.get("inner").unwrap().source,
        AgentSource::File {
            path: root.join("alias/inner.md"),
            scope: Scope::Project,
        },
        "the first path in order wins; the same file by its other path is a duplicate"
    );
    assert_eq!(
        p.shown(view.diagnostics()),
        [
            "project/.zr/agents/escape: error: refused: it leads to outside outside the agents root project/.zr/agents; copy the files into the root instead of linking it",
            "project/.zr/agents/real/inner.md: warning: agent type 'inner' is also defined in project/.zr/agents/alias/inner.md, which takes precedence; this one is ignored",
        ]
    );
}

#[test]
fn folders_deeper_than_six_levels_are_reported_once() {
    let p = Project::new();
    p.write("project/.zr/agents/1/2/3/4/5/6/six.md", &agent("six", "d"));
    p.write(
        "project/.zr/agents/1/2/3/4/5/6/7/seven.md",
        &agent("seven", "d"),
    );
    p.write(
        "project/.zr/agents/1/2/3/4/5/6/8/eight.md",
        &agent("eight", "d"),
    );
    let view = AgentRegistry::new(Roots::agents(&p.path(), None)).view();
    assert!(view.get("six").is_some());
    assert!(view.get("seven").is_none());
    assert_eq!(
        p.shown(view.diagnostics()),
        [
            "project/.zr/agents/1/2/3/4/5/6/7: warning: folders nested deeper than 6 levels under the root are not searched for agent types"
        ]
    );
}

#[test]
fn hot_reload_sees_a_file_added_in_a_new_sub_folder() {
    let p = Project::new();
    p.write("project/.claude/agents/a/one.md", &agent("one", "d"));
    p.age();
    let registry = AgentRegistry::new(Roots::agents(&p.path(), None));
    let first = registry.view();
    let again = registry.view();
    assert!(std::sync::Arc::ptr_eq(&first, &again));
    assert_eq!(registry.last_scan().files_parsed, 0);
    p.write("project/.claude/agents/a/b/two.md", &agent("two", "d"));
    let second = registry.view();
    assert!(second.get("two").is_some());
    assert_eq!(registry.last_scan().files_parsed, 1);
    fs::remove_dir_all(p.path().join(".claude/agents/a/b")).unwrap();
    let third = registry.view();
    assert!(third.get("two").is_none());
    assert!(third.get("one").is_some());
}
