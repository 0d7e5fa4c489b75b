//! Which instruction files are read, in which order, what imports reach,
//! and hot reload.

use std::sync::Arc;

use super::imports::{Import, imports};
use super::*;

/// A home folder and a repository (`repo/.git`) with the project in
/// `repo/app`.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let setup = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        setup.mkdir("home/.claude");
        setup.mkdir("repo/.git");
        setup.mkdir("repo/app");
        setup
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().canonicalize().unwrap().join(rel)
    }

    fn mkdir(&self, rel: &str) {
        std::fs::create_dir_all(self.dir.path().join(rel)).unwrap();
    }

    fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    fn registry(&self) -> InstructionRegistry {
        InstructionRegistry::new(&self.path("repo/app"), Some(&self.path("home")))
    }

    /// The files of the view as shown, with their kind.
    fn listed(&self) -> Vec<String> {
        let view = self.registry().view();
        view.files()
            .iter()
            .map(|f| format!("{} ({})", view.shown(&f.path), f.kind.describe()))
            .collect()
    }
}

#[test]
fn user_then_each_folder_from_the_top_down_then_local_after_its_folder() {
    let s = Setup::new();
    s.write("home/.claude/CLAUDE.md", "user")
        .write("repo/CLAUDE.md", "repo")
        .write("repo/CLAUDE.local.md", "repo local")
        .write("repo/app/AGENTS.md", "agents")
        .write("repo/app/CLAUDE.md", "app")
        .write("repo/app/.claude/CLAUDE.md", "app dot-claude")
        .write("repo/app/CLAUDE.local.md", "app local")
        // Above the repository's top: not read.
        .write("CLAUDE.md", "above");
    assert_eq!(
        s.listed(),
        [
            "~/.claude/CLAUDE.md (the user's instructions for every project)",
            "../CLAUDE.md (project instructions, checked in)",
            "../CLAUDE.local.md (the user's own instructions for this project, not checked in)",
            "CLAUDE.md (project instructions, checked in)",
            ".claude/CLAUDE.md (project instructions, checked in)",
            "AGENTS.md (project instructions, checked in)",
            "CLAUDE.local.md (the user's own instructions for this project, not checked in)",
        ]
    );
}

#[test]
fn outside_a_repository_only_the_project_folder_is_read() {
    let s = Setup::new();
    std::fs::remove_dir(s.path("repo/.git")).unwrap();
    s.write("repo/CLAUDE.md", "parent")
        .write("repo/app/CLAUDE.md", "app");
    assert_eq!(s.listed(), ["CLAUDE.md (project instructions, checked in)"]);
}

#[test]
fn imports_follow_their_file_relative_to_it_and_once() {
    let s = Setup::new();
    s.write(
        "repo/app/CLAUDE.md",
        "See @docs/style.md and @../shared.md.\nAgain: @docs/style.md\n",
    )
    .write("repo/app/docs/style.md", "Style. @../CLAUDE.md @extra.md")
    .write("repo/app/docs/extra.md", "Extra.")
    .write("repo/shared.md.", "dot")
    .write("repo/shared.md", "Shared.")
    .write("home/.claude/mine.md", "Mine.")
    .write("repo/app/AGENTS.md", "@~/.claude/mine.md");
    let view = s.registry().view();
    let shown: Vec<String> = view
        .files()
        .iter()
        .map(|f| match &f.kind {
            InstructionKind::Import { by, line } => {
                format!("{} <- {}:{line}", view.shown(&f.path), view.shown(by))
            }
            _ => view.shown(&f.path),
        })
        .collect();
    // `@../shared.md.` names the file with the dot (a path ends at white
    // space, as in Claude Code).
    assert_eq!(
        shown,
        [
            "CLAUDE.md",
            "docs/style.md <- CLAUDE.md:1",
            "docs/extra.md <- docs/style.md:1",
            "../shared.md. <- CLAUDE.md:1",
            "AGENTS.md",
            "~/.claude/mine.md <- AGENTS.md:1",
        ]
    );
    assert!(view.skipped().is_empty(), "{:?}", view.skipped());
}

#[test]
fn an_import_outside_the_repository_and_home_claude_is_skipped() {
    let s = Setup::new();
    s.write("secret.txt", "TOKEN")
        .write("home/.ssh/id", "KEY")
        .write(
            "repo/app/CLAUDE.md",
            "@../../secret.txt\n@~/.ssh/id\n@link/x\n@nobody\n",
        );
    std::os::unix::fs::symlink(s.path("home/.ssh"), s.path("repo/app/link")).unwrap();
    std::fs::write(s.path("home/.ssh/x"), "LINKED").unwrap();
    let view = s.registry().view();
    assert_eq!(view.files().len(), 1);
    let prompt = view.prompt().unwrap();
    for secret in ["TOKEN", "KEY", "LINKED"] {
        assert!(!prompt.contains(secret), "{prompt}");
    }
    let skipped: Vec<(String, usize, bool)> = view
        .skipped()
        .iter()
        .map(|s| {
            (
                s.written.clone(),
                s.by.as_ref().unwrap().1,
                s.reason == SkipReason::Outside,
            )
        })
        .collect();
    assert_eq!(
        skipped,
        [
            ("../../secret.txt".to_owned(), 1, true),
            ("~/.ssh/id".to_owned(), 2, true),
            ("link/x".to_owned(), 3, true),
            ("nobody".to_owned(), 4, false),
        ]
    );
    assert!(!view.skipped()[3].is_warning(), "an @mention is no warning");
}

#[test]
fn imports_stop_five_hops_deep_and_cycles_add_nothing() {
    let s = Setup::new();
    s.write("repo/app/CLAUDE.md", "@d1.md");
    for i in 1..=6 {
        s.write(
            &format!("repo/app/d{i}.md"),
            &format!("depth {i} @d{}.md", i + 1),
        );
    }
    s.write("repo/app/d7.md", "seven @CLAUDE.md");
    let view = s.registry().view();
    let names: Vec<String> = view.files().iter().map(|f| view.shown(&f.path)).collect();
    assert_eq!(
        names,
        ["CLAUDE.md", "d1.md", "d2.md", "d3.md", "d4.md", "d5.md"]
    );
    assert_eq!(view.skipped().len(), 1);
    assert_eq!(view.skipped()[0].written, "d6.md");
    assert_eq!(view.skipped()[0].reason, SkipReason::TooDeep);

    let s = Setup::new();
    s.write("repo/app/CLAUDE.md", "a @b.md")
        .write("repo/app/b.md", "b @CLAUDE.md @b.md");
    let view = s.registry().view();
    assert_eq!(view.files().len(), 2);
    assert!(view.skipped().is_empty());
}

#[test]
fn a_linked_or_identical_file_is_included_once() {
    let s = Setup::new();
    s.write("repo/app/AGENTS.md", "Shared rules.")
        .write("repo/CLAUDE.md", "Shared rules.");
    std::os::unix::fs::symlink("AGENTS.md", s.path("repo/app/CLAUDE.md")).unwrap();
    assert_eq!(
        s.listed(),
        ["../CLAUDE.md (project instructions, checked in)"]
    );
}

#[test]
fn at_signs_in_code_and_prose_are_not_imports() {
    let text = "\
Mail me at a@b.com, or @alice.
```sh
cat @not-this.md
```
Use `@neither.md` here, but @this.md there.
~~~
@nor-this.md
~~~
  @indented.md and @path\\ with\\ spaces.md
@(x) @#y @//z @/abs.md
";
    let found: Vec<Import> = imports(text);
    let paths: Vec<(&str, usize)> = found.iter().map(|i| (i.path.as_str(), i.line)).collect();
    assert_eq!(
        paths,
        [
            ("alice.", 1),
            ("this.md", 5),
            ("indented.md", 9),
            ("path with spaces.md", 9),
            ("/abs.md", 10),
        ]
    );
}

#[test]
fn the_prompt_names_each_file_and_where_it_comes_from() {
    let s = Setup::new();
    s.write("home/.claude/CLAUDE.md", "Answer in English.\n")
        .write(
            "repo/app/CLAUDE.md",
            "# App\nRun `cargo test`. See @docs/t.md\n",
        )
        .write("repo/app/docs/t.md", "Tests live in tests/.\n")
        .write("repo/app/CLAUDE.local.md", "   \n");
    let prompt = s.registry().view().prompt().unwrap();
    insta::assert_snapshot!(prompt);
}

#[test]
fn no_file_no_prompt() {
    let s = Setup::new();
    let view = s.registry().view();
    assert!(view.files().is_empty());
    assert_eq!(view.prompt(), None);
}

#[test]
fn a_view_is_the_same_until_a_file_is_added_or_changed() {
    let s = Setup::new();
    s.write("repo/app/CLAUDE.md", "one @docs/x.md");
    // Older than the racy window: a trusted stamp.
    let old = SystemTime::now() - std::time::Duration::from_secs(10);
    std::fs::File::options()
        .write(true)
        .open(s.path("repo/app/CLAUDE.md"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let registry = s.registry();
    let first = registry.view();
    assert!(Arc::ptr_eq(&first, &registry.view()), "nothing changed");
    assert_eq!(first.files().len(), 1);
    // The same text written again: the same view.
    s.write("repo/app/CLAUDE.md", "one @docs/x.md");
    assert!(Arc::ptr_eq(&first, &registry.view()), "the same text");
    // An import that appears, then a new file in a folder.
    s.write("repo/app/docs/x.md", "x");
    assert_eq!(registry.view().files().len(), 2);
    s.write("repo/app/CLAUDE.local.md", "local");
    assert_eq!(registry.view().files().len(), 3);
}
