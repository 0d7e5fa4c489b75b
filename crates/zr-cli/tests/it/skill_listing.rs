//! Skills reach the model: `zr run` against a loopback server speaking the
//! Anthropic Messages API, whose recorded request bodies show that each
//! agent's `Skill` description lists exactly its own skills (the root its
//! registry's, a typed subagent its file's `skills`, never a sibling's),
//! that an agent without skills has no `Skill` tool, and that a fork's
//! request repeats its parent's tools and system prompt byte for byte; a
//! skill written while the run goes on is listed from the root's next request.

use serde_json::{Value, json};

use crate::loopback::run_against;
use crate::support::{TempProject, stdout};
use zr_test_support::loopback::{Reply, Request, Server};

fn skill(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\n---\nThe body of {name} (never listed).\n"
    )
}

/// The `Skill` tool's description in `request`, if it has that tool.
fn skill_description(request: &Request) -> Option<String> {
    request.body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "Skill")
        .map(|t| t["description"].as_str().expect("a description").to_owned())
}

/// The skill names a description lists (`- name: ...` lines).
fn listed(description: &str) -> Vec<String> {
    description
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| l.split_once(':'))
        .map(|(name, _)| name.to_owned())
        .collect()
}

fn system(request: &Request) -> String {
    request.body["system"].to_string()
}

/// The body's bytes before `"messages"`: model, limits, system, tools.
fn head(request: &Request) -> &[u8] {
    let at = request
        .raw
        .windows(b"\"messages\"".len())
        .position(|w| w == b"\"messages\"")
        .expect("a messages field");
    &request.raw[..at]
}

#[test]
fn each_request_lists_its_own_agents_skills_and_a_fork_repeats_its_parents() {
    let task = |id: &str, ty: Option<&str>| {
        let mut input = json!({"description": id, "prompt": format!("Do {id}.")});
        if let Some(ty) = ty {
            input["subagent_type"] = Value::from(ty);
        }
        Reply::anthropic(None, &[(id, "Task", input)])
    };
    let server = Server::scripted(vec![
        task("toolu_helper", Some("helper")),
        Reply::anthropic(Some("helped"), &[]),
        task("toolu_plain", Some("plain")),
        Reply::anthropic(Some("plain done"), &[]),
        task("toolu_fork", None),
        Reply::anthropic(Some("forked"), &[]),
        Reply::anthropic(Some("All done."), &[]),
    ]);
    let project = TempProject::new();
    project
        .write("zr.toml", "[model]\nname = \"claude-test\"\n")
        .write(".zr/skills/alpha/SKILL.md", &skill("alpha", "Use for alpha work."))
        .write(".zr/skills/beta/SKILL.md", &skill("beta", "Use for beta work."))
        .write(".zr/skills/gamma/SKILL.md", &skill("gamma", "Use for gamma work."))
        .write(
            ".zr/agents/helper.md",
            "---\nname: helper\ndescription: Helps with beta.\nskills: [beta]\n---\nYou are the helper.\n",
        )
        .write(
            ".zr/agents/sibling.md",
            "---\nname: sibling\ndescription: Helps with gamma.\nskills: [gamma]\n---\nYou are the sibling.\n",
        )
        .write(
            ".zr/agents/plain.md",
            "---\nname: plain\ndescription: Has no skills.\n---\nYou are plain.\n",
        );
    let out = run_against(&project, &server, false, "go");
    assert_eq!(stdout(&out), "All done.\n");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        7,
        "root, helper, root, plain, root, fork, root"
    );

    let root = skill_description(&requests[0]).expect("the root has Skill");
    assert_eq!(listed(&root), ["alpha", "beta", "gamma"], "{root}");
    assert!(root.contains("- alpha: Use for alpha work."), "{root}");
    assert!(
        !root.contains("never listed"),
        "bodies are never listed: {root}"
    );

    assert!(system(&requests[1]).contains("You are the helper."));
    let helper = skill_description(&requests[1]).expect("the helper has Skill");
    assert_eq!(
        listed(&helper),
        ["beta"],
        "its own skill, not the sibling's gamma: {helper}"
    );

    assert!(system(&requests[3]).contains("You are plain."));
    assert_eq!(
        skill_description(&requests[3]),
        None,
        "no skills, no Skill tool"
    );

    // The fork (request 5) was started by the root's request 4.
    assert_eq!(
        skill_description(&requests[5]).as_deref(),
        Some(root.as_str())
    );
    assert_eq!(requests[5].body["tools"], requests[4].body["tools"]);
    assert_eq!(
        String::from_utf8_lossy(head(&requests[5])),
        String::from_utf8_lossy(head(&requests[4])),
        "the fork's body up to its messages equals its parent's"
    );
}

#[test]
fn a_skill_written_during_the_run_is_listed_in_the_roots_next_request() {
    let write_skill = "mkdir -p .zr/skills/late-skill && printf -- '---\\nname: late-skill\\ndescription: Came late.\\n---\\nLate body.\\n' > .zr/skills/late-skill/SKILL.md";
    let server = Server::scripted(vec![
        Reply::anthropic(
            None,
            &[("toolu_bash", "Bash", json!({"command": write_skill}))],
        ),
        Reply::anthropic(Some("Done."), &[]),
    ]);
    let project = TempProject::new();
    project
        .write(
            "zr.toml",
            "[model]\nname = \"claude-test\"\n\n[permissions]\nallow = [\"Bash\"]\n",
        )
        .write(
            ".zr/skills/alpha/SKILL.md",
            &skill("alpha", "Use for alpha work."),
        );
    run_against(&project, &server, false, "go");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let before = skill_description(&requests[0]).expect("Skill");
    assert_eq!(listed(&before), ["alpha"], "{before}");
    let after = skill_description(&requests[1]).expect("Skill");
    assert_eq!(listed(&after), ["alpha", "late-skill"], "{after}");
}

#[test]
fn with_two_hundred_user_skills_the_projects_come_first_and_every_skill_is_listed_or_findable() {
    let server = Server::scripted(vec![Reply::anthropic(Some("Done."), &[])]);
    let project = TempProject::new();
    project
        .write("zr.toml", "[model]\nname = \"claude-test\"\n")
        .write(
            ".zr/skills/zz-deploy/SKILL.md",
            &skill(
                "zz-deploy",
                "Deploy this project to staging with its own script.",
            ),
        )
        .write(
            ".claude/skills/zz-lint/SKILL.md",
            &skill("zz-lint", "Lint this project the way its CI does."),
        );
    // The user's ~/.claude/skills: 200 skills, each with a sentence, far
    // more than the listing's 7,000 characters hold in full.
    let home = tempfile::tempdir().expect("home");
    for i in 0..200 {
        let name = format!("user-skill-{i:03}");
        let folder = home.path().join(".claude/skills").join(&name);
        std::fs::create_dir_all(&folder).expect("skill folder");
        std::fs::write(
            folder.join("SKILL.md"),
            skill(
                &name,
                &format!("Use when the task is about chore {i}, which this long sentence describes at length so that the listing cannot hold every description in full."),
            ),
        )
        .expect("SKILL.md");
    }
    let out = crate::support::zr()
        .args(["run", "go"])
        .current_dir(project.path())
        .env("HOME", home.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("ANTHROPIC_BASE_URL", &server.url)
        .output()
        .expect("zr runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::support::stderr(&out)
    );
    let requests = server.requests();
    let description = skill_description(&requests[0]).expect("the root has Skill");
    let names: Vec<String> = description
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.split_once(':').map_or(l, |(name, _)| name).to_owned())
        .collect();
    assert_eq!(names.len(), 202, "every skill is listed: {description}");
    assert_eq!(names[..2], ["zz-deploy", "zz-lint"], "the project's first");
    assert_eq!(names[2], "user-skill-000");
    assert!(
        description.contains("Descriptions are shortened to fit the listing's 7000 characters"),
        "{description}"
    );
    assert!(!description.contains("not listed"), "{description}");
    let listing = description
        .split_once("\n\nYour skills")
        .expect("a listing")
        .1;
    assert!(
        listing.chars().count() < 7_300,
        "bounded: {} characters",
        listing.chars().count()
    );
}
