//! The skill registry on real folders: precedence, nesting, name rules,
//! escapes, broken files, hot reload.

use std::fs;
use std::os::unix::fs::symlink;
use std::sync::Arc;

use zr_skills::{Problem, Roots, Scope, Severity, SkillRegistry};

use crate::Project;

fn registry(p: &Project) -> SkillRegistry {
    SkillRegistry::new(Roots::skills(&p.path(), Some(&p.home())))
}

fn names(view: &zr_skills::SkillsView) -> Vec<String> {
    view.skills().iter().map(|s| s.name().to_string()).collect()
}

#[test]
fn the_standard_roots_are_the_documented_folders_in_order() {
    let (project, home) = (std::path::Path::new("/p"), std::path::Path::new("/h"));
    let shown = |roots: Roots| -> Vec<String> {
        roots
            .as_slice()
            .iter()
            .map(|r| format!("{} {}", r.scope, r.path.display()))
            .collect()
    };
    assert_eq!(
        shown(Roots::skills(project, Some(home))),
        [
            "project /p/.zr/skills",
            "project /p/.agents/skills",
            "project /p/.claude/skills",
            "user /h/.zr/skills",
            "user /h/.agents/skills",
            "user /h/.claude/skills",
        ]
    );
    assert_eq!(
        shown(Roots::agents(project, Some(home))),
        [
            "project /p/.zr/agents",
            "project /p/.claude/agents",
            "user /h/.zr/agents",
            "user /h/.claude/agents",
        ]
    );
    assert_eq!(
        shown(Roots::skills(project, None)),
        [
            "project /p/.zr/skills",
            "project /p/.agents/skills",
            "project /p/.claude/skills",
        ]
    );
    assert_eq!(
        shown(Roots::agents(project, None)),
        ["project /p/.zr/agents", "project /p/.claude/agents"]
    );
}

#[test]
fn roots_have_a_fixed_precedence_and_duplicates_are_reported() {
    let p = Project::new();
    p.skill("home/.zr/skills", "deploy", "user deploy");
    p.skill("project/.claude/skills", "deploy", "claude deploy");
    p.skill("project/.agents/skills", "deploy", "agents deploy");
    p.skill("project/.agents/skills", "lint", "agents lint");
    p.skill("project/.claude/skills", "lint", "claude lint");
    p.skill("home/.zr/skills", "notes", "user notes");
    let view = registry(&p).view();
    assert_eq!(names(&view), ["deploy", "lint", "notes"]);
    let deploy = view.get("deploy").unwrap();
    assert_eq!(deploy.definition.description, "agents deploy");
    assert_eq!(
        view.get("lint").unwrap().definition.description,
        "agents lint"
    );
    let notes = view.get("notes").unwrap();
    assert_eq!(notes.root.scope, Scope::User);
    assert_eq!(deploy.root.scope, Scope::Project);
    assert_eq!(
        p.shown(view.diagnostics()),
        [
            "home/.zr/skills/deploy/SKILL.md: warning: skill 'deploy' is also defined in project/.agents/skills/deploy/SKILL.md, which takes precedence; this one is ignored",
            "project/.claude/skills/deploy/SKILL.md: warning: skill 'deploy' is also defined in project/.agents/skills/deploy/SKILL.md, which takes precedence; this one is ignored",
            "project/.claude/skills/lint/SKILL.md: warning: skill 'lint' is also defined in project/.agents/skills/lint/SKILL.md, which takes precedence; this one is ignored",
        ]
    );
    // .zr beats .agents.
    p.skill("project/.zr/skills", "deploy", "zr deploy");
    let view = registry(&p).view();
    assert_eq!(
        view.get("deploy").unwrap().definition.description,
        "zr deploy"
    );
    assert_eq!(view.diagnostics().len(), 4);
    // Without a home folder the user root is not read.
    let view = SkillRegistry::new(Roots::skills(&p.path(), None)).view();
    assert!(view.get("notes").is_none());
}

#[test]
fn nested_skill_folders_are_found_but_not_inside_a_skill() {
    let p = Project::new();
    p.skill("project/.zr/skills/team/docs", "api-docs", "nested");
    p.skill("project/.zr/skills", "outer", "outer");
    // A folder inside a skill holds supporting files, not skills.
    p.skill("project/.zr/skills/outer/templates", "inner", "inner");
    // Hidden folders are skipped.
    p.skill("project/.zr/skills/.cache", "hidden", "hidden");
    // Deeper than six levels is not searched, and says so once.
    p.skill("project/.zr/skills/a/b/c/d/e", "deep-ok", "at depth 6");
    p.skill("project/.zr/skills/a/b/c/d/e/f", "too-deep", "at depth 7");
    let view = registry(&p).view();
    assert_eq!(names(&view), ["api-docs", "deep-ok", "outer"]);
    let nested = view.get("api-docs").unwrap();
    assert_eq!(
        nested.folder(),
        p.path().join(".zr/skills/team/docs/api-docs")
    );
    assert_eq!(
        p.shown(view.diagnostics()),
        [
            "project/.zr/skills/a/b/c/d/e/f/too-deep: warning: folders nested deeper than 6 levels under the root are not searched for skills"
        ]
    );
}

#[test]
fn name_rules_refuse_bad_names_and_keep_the_rest() {
    let p = Project::new();
    p.skill("project/.zr/skills", "good", "fine");
    p.write(
        "project/.zr/skills/Bad_Name/SKILL.md",
        "---\nname: Bad_Name\ndescription: d\n---\n",
    );
    p.write(
        "project/.zr/skills/mismatch/SKILL.md",
        "---\nname: other\ndescription: d\n---\n",
    );
    p.write(
        "project/.zr/skills/long/SKILL.md",
        &format!("---\nname: long\ndescription: {}\n---\n", "x".repeat(1025)),
    );
    p.write(
        "project/.zr/skills/SKILL.md",
        "---\nname: skills\ndescription: d\n---\n",
    );
    let view = registry(&p).view();
    // A name that differs from its folder loads under the name (warned).
    assert_eq!(names(&view), ["good", "other"]);
    assert_eq!(
        p.shown(view.diagnostics()),
        [
            "project/.zr/skills/Bad_Name/SKILL.md:2: error: 'name': skill name 'Bad_Name' contains 'B' at position 0; allowed: lowercase ASCII letters, digits and single '-' between them",
            "project/.zr/skills/SKILL.md: warning: a SKILL.md directly in the skills root is ignored; move it into a folder named like the skill",
            "project/.zr/skills/long/SKILL.md:3: error: 'description' is 1025 characters long; at most 1024 are allowed: shorten it",
            "project/.zr/skills/mismatch/SKILL.md:2: warning: 'name' is 'other' but the folder is 'mismatch'; the skill loads as 'other'; rename the folder or the name so that they match",
        ]
    );
}

#[test]
fn links_out_of_the_root_are_refused_and_dot_dot_names_never_resolve() {
    let p = Project::new();
    p.skill("outside", "evil", "outside the root");
    p.skill("outside", "secret", "outside the root");
    p.skill("project/.zr/skills", "good", "fine");
    let root = p.path().join(".zr/skills");
    // A linked skill folder, a linked SKILL.md, a linked group folder.
    symlink(p.base().join("outside/evil"), root.join("evil")).unwrap();
    fs::create_dir_all(root.join("secret")).unwrap();
    symlink(
        p.base().join("outside/secret/SKILL.md"),
        root.join("secret/SKILL.md"),
    )
    .unwrap();
    symlink(p.base().join("outside"), root.join("group")).unwrap();
    // A link back into the root is followed once, and cannot loop.
    symlink(&root, root.join("loop")).unwrap();
    // A name with '..' is not a name.
    p.write(
        "project/.zr/skills/dots/SKILL.md",
        "---\nname: ../outside/evil\ndescription: d\n---\n",
    );
    let view = registry(&p).view();
    assert_eq!(names(&view), ["good"]);
    let shown = p.shown(view.diagnostics());
    assert_eq!(shown.len(), 4, "{shown:#?}");
    assert!(shown[0].starts_with("project/.zr/skills/dots/SKILL.md:2: error: 'name': skill name '../outside/evil' contains '.'"), "{}", shown[0]);
    assert_eq!(
        shown[1],
        "project/.zr/skills/evil: error: refused: it leads to outside/evil outside the skills root project/.zr/skills; copy the skill into the root instead of linking it"
    );
    assert!(
        shown[2].starts_with("project/.zr/skills/group: error: refused: it leads to outside "),
        "{}",
        shown[2]
    );
    assert!(shown[3].starts_with("project/.zr/skills/secret/SKILL.md: error: refused: it leads to outside/secret/SKILL.md "), "{}", shown[3]);
    assert!(
        view.diagnostics()
            .iter()
            .all(|d| d.severity == Severity::Error)
    );
    assert!(view.get("../outside/evil").is_none());
    // A root written with '..' is the same folder.
    let odd = SkillRegistry::new(zr_skills::Roots::new(vec![zr_skills::Root::new(
        Scope::Custom,
        p.path().join(".zr/skills/../skills"),
    )]));
    assert_eq!(names(&odd.view()), ["good"]);
}

#[test]
fn broken_files_are_diagnostics_with_lines_and_the_rest_loads() {
    let p = Project::new();
    p.skill("project/.zr/skills", "fine", "works");
    p.write(
        "project/.zr/skills/bad-yaml/SKILL.md",
        "---\nname: bad-yaml\ndescription: [oops\n---\nbody\n",
    );
    p.write(
        "project/.zr/skills/no-desc/SKILL.md",
        "---\nname: no-desc\n---\nbody\n",
    );
    p.write(
        "project/.zr/skills/wrong-type/SKILL.md",
        "---\nname: wrong-type\ndescription: d\nallowed-tools: 42\n---\n",
    );
    p.write("project/.zr/skills/no-fence/SKILL.md", "# just markdown\n");
    p.write(
        "project/.zr/skills/unclosed/SKILL.md",
        "---\nname: unclosed\ndescription: d\n",
    );
    fs::create_dir_all(p.path().join(".zr/skills/binary")).unwrap();
    fs::write(
        p.path().join(".zr/skills/binary/SKILL.md"),
        b"---\nname: \xff\xfe\n---\n",
    )
    .unwrap();
    let view = registry(&p).view();
    assert_eq!(names(&view), ["fine"]);
    let shown = p.shown(view.diagnostics());
    assert_eq!(shown.len(), 6, "{shown:#?}");
    assert!(
        shown[0].starts_with("project/.zr/skills/bad-yaml/SKILL.md:"),
        "{}",
        shown[0]
    );
    assert!(shown[0].contains("invalid YAML"), "{}", shown[0]);
    assert_eq!(
        shown[1],
        "project/.zr/skills/binary/SKILL.md: error: the file is not UTF-8 text; save it as UTF-8"
    );
    assert!(
        shown[2].starts_with(
            "project/.zr/skills/no-desc/SKILL.md:1: error: required key 'description'"
        ),
        "{}",
        shown[2]
    );
    assert!(
        shown[3].starts_with(
            "project/.zr/skills/no-fence/SKILL.md:1: error: SKILL.md must start with a line '---'"
        ),
        "{}",
        shown[3]
    );
    assert!(shown[4].contains("never closed"), "{}", shown[4]);
    assert_eq!(
        shown[5],
        "project/.zr/skills/wrong-type/SKILL.md:4: error: 'allowed-tools' must be a list of tool names or one string of them separated by commas or spaces, found the number 42"
    );
}

#[test]
fn a_view_reads_front_matter_only() {
    let p = Project::new();
    // The body is not UTF-8: only a reader that reads it would notice.
    let mut text = b"---\nname: lazy\ndescription: d\n---\n".to_vec();
    text.extend_from_slice(&[0xff; 4096]);
    fs::create_dir_all(p.path().join(".zr/skills/lazy")).unwrap();
    fs::write(p.path().join(".zr/skills/lazy/SKILL.md"), text).unwrap();
    let view = registry(&p).view();
    assert_eq!(names(&view), ["lazy"]);
    assert!(view.diagnostics().is_empty());
}

#[test]
fn hot_reload_sees_added_edited_and_deleted_skills() {
    let p = Project::new();
    p.skill("project/.zr/skills", "alpha", "first");
    p.skill("project/.zr/skills", "beta", "second");
    p.skill("project/.zr/skills/group", "gamma", "third");
    p.age();
    let registry = registry(&p);
    let first = registry.view();
    assert_eq!(names(&first), ["alpha", "beta", "gamma"]);
    assert_eq!(registry.last_scan().files_parsed, 3);

    // Nothing changed: a few stats, no listing, no parsing, the same view.
    let again = registry.view();
    assert!(Arc::ptr_eq(&first, &again));
    let scan = registry.last_scan();
    assert_eq!((scan.dirs_listed, scan.files_parsed), (0, 0));
    assert_eq!(
        scan.stat_calls,
        2 + 3,
        "the root, the group folder, three SKILL.md"
    );

    // Add one, edit one (same size), delete one.
    p.skill("project/.zr/skills", "delta", "fourth");
    p.skill("project/.zr/skills", "beta", "SECOND");
    fs::remove_dir_all(p.path().join(".zr/skills/alpha")).unwrap();
    let second = registry.view();
    assert_eq!(names(&second), ["beta", "delta", "gamma"]);
    assert_eq!(second.get("beta").unwrap().definition.description, "SECOND");
    assert_eq!(registry.last_scan().files_parsed, 2, "beta and delta only");
    assert!(Arc::ptr_eq(
        first.get("gamma").unwrap(),
        second.get("gamma").unwrap()
    ));
    // The first view is a snapshot: it did not change.
    assert_eq!(names(&first), ["alpha", "beta", "gamma"]);

    // Breaking a file removes it and says why; fixing it brings it back.
    p.write("project/.zr/skills/beta/SKILL.md", "---\nname: beta\n---\n");
    let broken = registry.view();
    assert_eq!(names(&broken), ["delta", "gamma"]);
    assert_eq!(broken.diagnostics().len(), 1);
    p.skill("project/.zr/skills", "beta", "back");
    p.age();
    let fixed = registry.view();
    assert_eq!(names(&fixed), ["beta", "delta", "gamma"]);
    assert!(fixed.diagnostics().is_empty());
    assert!(Arc::ptr_eq(&fixed, &registry.view()));
}

#[test]
fn an_edit_within_the_same_clock_tick_is_not_missed() {
    let p = Project::new();
    let file = p.skill("project/.zr/skills", "quick", "aaaa");
    let registry = registry(&p);
    assert_eq!(
        registry.view().get("quick").unwrap().definition.description,
        "aaaa"
    );
    // Same size, written right away: the stamp may well be identical.
    let stamp = fs::metadata(&file).unwrap().modified().unwrap();
    p.skill("project/.zr/skills", "quick", "bbbb");
    let _ = fs::File::open(&file).unwrap().set_modified(stamp);
    assert_eq!(
        registry.view().get("quick").unwrap().definition.description,
        "bbbb"
    );
}

#[test]
fn a_root_that_is_a_file_is_a_diagnostic() {
    let p = Project::new();
    p.write("project/.zr/skills", "not a folder");
    p.skill("project/.claude/skills", "fine", "works");
    let view = registry(&p).view();
    assert_eq!(names(&view), ["fine"]);
    assert!(matches!(view.diagnostics()[0].problem, Problem::Io { .. }));
    assert_eq!(
        p.shown(view.diagnostics()),
        ["project/.zr/skills: error: could not read the folder: not a directory"]
    );
}

#[test]
fn views_from_several_threads_while_files_change_stay_consistent() {
    let p = Project::new();
    for i in 0..20 {
        p.skill("project/.zr/skills", &format!("s{i:02}"), "stable");
    }
    let registry = Arc::new(registry(&p));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let registry = Arc::clone(&registry);
            std::thread::spawn(move || {
                for _ in 0..30 {
                    let view = registry.view();
                    // Every view is whole: the 20 stable skills are always there.
                    let stable = view
                        .skills()
                        .iter()
                        .filter(|s| s.definition.description == "stable")
                        .count();
                    assert_eq!(stable, 20);
                }
            })
        })
        .collect();
    for round in 0..30 {
        p.skill("project/.zr/skills", "churn", &format!("round {round}"));
        if round % 3 == 0 {
            fs::remove_dir_all(p.path().join(".zr/skills/churn")).unwrap();
        }
    }
    for reader in readers {
        reader.join().unwrap();
    }
    p.skill("project/.zr/skills", "churn", "last");
    assert_eq!(
        registry.view().get("churn").unwrap().definition.description,
        "last"
    );
}

/// Loads the skill `victim` from inside the project, lets `swap` replace
/// part of it with a link to `outside/` (out of the root) and put back the
/// modification time of the folder it changed, as `touch -d` lets anyone
/// do, then checks that the next view refuses the link: a stamp must not
/// rest on the modification time alone.
fn assert_outside_swap_is_refused(swap: impl FnOnce(&Project)) {
    let p = Project::new();
    p.skill("project/.zr/skills", "victim", "inside");
    p.skill("outside", "victim", "from outside");
    p.write(
        "outside/SKILL.md",
        "---\nname: victim\ndescription: from outside\n---\nsecret\n",
    );
    p.age();
    let registry = registry(&p);
    assert_eq!(
        registry
            .view()
            .get("victim")
            .unwrap()
            .definition
            .description,
        "inside"
    );
    swap(&p);
    let view = registry.view();
    assert!(view.get("victim").is_none(), "{:#?}", view.skills());
    assert!(
        matches!(view.diagnostics()[0].problem, Problem::EscapesRoot { .. }),
        "{:#?}",
        view.diagnostics()
    );
}

/// Runs `change` on `dir`, then sets its modification time back to what
/// it was.
fn keeping_mtime(dir: &std::path::Path, change: impl FnOnce()) {
    let mtime = fs::metadata(dir).unwrap().modified().unwrap();
    change();
    fs::File::open(dir).unwrap().set_modified(mtime).unwrap();
}

#[test]
fn a_skill_file_swapped_for_an_outside_link_is_refused_even_with_a_forged_mtime() {
    assert_outside_swap_is_refused(|p| {
        let folder = p.path().join(".zr/skills/victim");
        keeping_mtime(&folder, || {
            fs::remove_file(folder.join("SKILL.md")).unwrap();
            symlink(p.base().join("outside/SKILL.md"), folder.join("SKILL.md")).unwrap();
        });
    });
}

#[test]
fn a_skill_folder_swapped_for_an_outside_link_is_refused_even_with_a_forged_mtime() {
    assert_outside_swap_is_refused(|p| {
        let root = p.path().join(".zr/skills");
        keeping_mtime(&root, || {
            fs::remove_dir_all(root.join("victim")).unwrap();
            symlink(p.base().join("outside/victim"), root.join("victim")).unwrap();
        });
    });
}

#[test]
fn a_description_of_exactly_the_limit_in_a_block_scalar_loads() {
    let p = Project::new();
    // 1024 characters of 2 bytes each: the limit counts characters, and the
    // block scalar's closing line break is not part of the description.
    let text = "é".repeat(1024);
    p.write(
        "project/.zr/skills/block/SKILL.md",
        &format!("---\nname: block\ndescription: |\n  {text}\n---\nbody\n"),
    );
    p.write(
        "project/.zr/skills/plain/SKILL.md",
        &format!("---\nname: plain\ndescription: {text}\n---\nbody\n"),
    );
    let view = registry(&p).view();
    assert_eq!(
        names(&view),
        ["block", "plain"],
        "{:#?}",
        view.diagnostics()
    );
    assert_eq!(
        view.get("block")
            .unwrap()
            .definition
            .description
            .chars()
            .count(),
        1024
    );
}

#[test]
fn line_numbers_count_from_the_file_with_a_bom_and_crlf() {
    let p = Project::new();
    p.write(
        "project/.zr/skills/crlf/SKILL.md",
        "\u{feff}---\r\nname: crlf\r\n\r\ndescription: d\r\nallowed-tools: 42\r\n---\r\nbody\r\n",
    );
    p.write(
        "project/.zr/skills/yaml/SKILL.md",
        "\u{feff}---\r\nname: yaml\r\ndescription: d\r\n\r\nlicense: [oops\r\n---\r\n",
    );
    let view = registry(&p).view();
    let shown = p.shown(view.diagnostics());
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert!(
        shown[0].starts_with("project/.zr/skills/crlf/SKILL.md:5: error: 'allowed-tools'"),
        "{}",
        shown[0]
    );
    assert!(
        shown[1].starts_with("project/.zr/skills/yaml/SKILL.md:"),
        "{}",
        shown[1]
    );
    let line: usize = shown[1].split(':').nth(1).unwrap().parse().unwrap();
    assert!((5..=6).contains(&line), "{}", shown[1]);
}

#[test]
fn hot_reload_follows_roots_files_and_folders_that_come_and_go() {
    let p = Project::new();
    let registry = registry(&p);
    // No roots at all.
    assert!(registry.view().skills().is_empty());
    // A root created after the first view.
    p.skill("project/.claude/skills", "late", "created later");
    p.age();
    assert_eq!(names(&registry.view()), ["late"]);
    // A new nested skill folder in an existing group folder: only that
    // group is listed again.
    p.skill("project/.claude/skills/group", "first", "one");
    p.age();
    assert_eq!(names(&registry.view()), ["first", "late"]);
    p.skill("project/.claude/skills/group/sub", "second", "two");
    let view = registry.view();
    assert_eq!(names(&view), ["first", "late", "second"]);
    p.age();
    let _ = registry.view();
    p.skill("project/.claude/skills/group", "third", "three");
    let view = registry.view();
    assert_eq!(names(&view), ["first", "late", "second", "third"]);
    let scan = registry.last_scan();
    assert_eq!(scan.files_parsed, 1, "{scan:?}");
    assert!(
        scan.dirs_listed <= 2,
        "the group and the new folder: {scan:?}"
    );
    // A SKILL.md replaced by a folder.
    p.age();
    let _ = registry.view();
    let file = p.path().join(".claude/skills/late/SKILL.md");
    fs::remove_file(&file).unwrap();
    fs::create_dir(&file).unwrap();
    let view = registry.view();
    assert_eq!(names(&view), ["first", "second", "third"]);
    // The root deleted.
    fs::remove_dir_all(p.path().join(".claude/skills")).unwrap();
    let view = registry.view();
    assert!(view.skills().is_empty());
    assert!(view.diagnostics().is_empty(), "{:#?}", view.diagnostics());
}

/// Runs `f` on a thread and fails if it takes longer than a generous
/// bound (a view that blocks would hang every later view).
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    receive
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the view blocked")
}

#[test]
fn a_fifo_named_skill_md_is_a_diagnostic_not_a_hang() {
    let p = Project::new();
    p.skill("project/.zr/skills", "fine", "works");
    let folder = p.path().join(".zr/skills/pipe");
    fs::create_dir_all(&folder).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(folder.join("SKILL.md"))
        .status()
        .unwrap();
    assert!(status.success());
    let registry = Arc::new(registry(&p));
    let view = within_seconds(move || registry.view());
    assert_eq!(names(&view), ["fine"]);
    assert_eq!(
        p.shown(view.diagnostics()),
        ["project/.zr/skills/pipe/SKILL.md: error: SKILL.md is not a regular file; make it one"]
    );
}

#[test]
fn a_root_linked_to_another_root_is_read_once_without_warnings() {
    // A common setup: `.claude/skills` is a link to `.agents/skills`, so
    // that both tools see the same skills.
    let p = Project::new();
    p.skill("project/.agents/skills", "shared", "one copy");
    fs::create_dir_all(p.path().join(".claude")).unwrap();
    symlink("../.agents/skills", p.path().join(".claude/skills")).unwrap();
    // A genuine duplicate in a different folder is still reported.
    p.skill("project/.zr/skills", "own", "zr");
    p.skill("home/.zr/skills", "own", "user");
    let registry = registry(&p);
    let view = registry.view();
    assert_eq!(names(&view), ["own", "shared"]);
    assert_eq!(
        view.get("shared").unwrap().file(),
        p.path().join(".agents/skills/shared/SKILL.md")
    );
    assert_eq!(
        p.shown(view.diagnostics()),
        [
            "home/.zr/skills/own/SKILL.md: warning: skill 'own' is also defined in project/.zr/skills/own/SKILL.md, which takes precedence; this one is ignored"
        ]
    );
}
