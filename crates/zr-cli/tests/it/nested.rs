//! Nested delegation through `zr`: with `[subagents] max_depth = 2` a
//! subagent delegates, and the grandchild shows in `zr run`'s tree, `zr
//! sessions show` and its HTML page.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use crate::support::{TempProject, stderr, stdout};

/// root -> lead (general-purpose) -> worker (general-purpose).
const CHAIN: &str = r#"{"turns_from": "history", "agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "lead", "prompt": "lead the job", "subagent_type": "general-purpose"}}]},
    {"text": "root done"}]}],
  "general-purpose": [
    {"match": "lead the job", "turns": [
      {"tool_calls": [{"name": "Task", "input": {"description": "work", "prompt": "work on it", "subagent_type": "general-purpose"}}]},
      {"text": "lead done"}]},
    {"match": "work on it", "turns": [{"text": "worker done"}]}]}}"#;

const GRANDCHILD: &str = "root.0001-general-purpose.0002-general-purpose";

#[test]
fn at_max_depth_2_the_grandchild_runs_and_shows_in_the_tree_sessions_and_the_page() {
    let project = TempProject::new();
    project
        .write("zr.toml", "[subagents]\nmax_depth = 2\n")
        .write("chain.json", CHAIN);
    let out = project.zr(&["run", "--script", "chain.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "root done\n");
    // The live tree names the grandchild.
    assert!(stderr(&out).contains(GRANDCHILD), "{}", stderr(&out));
    let folder = project.path().join(".zr/sessions");
    let session = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| !n.starts_with('.'))
        .unwrap();
    assert!(
        folder
            .join(&session)
            .join(format!("{GRANDCHILD}.jsonl"))
            .is_file(),
        "the grandchild has its transcript"
    );
    let show = project.zr(&["sessions", "show", &session]);
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    let text = stdout(&show);
    // The grandchild is drawn below its parent, one level further in.
    assert!(text.contains("\n└─ root.0001-general-purpose "), "{text}");
    assert!(text.contains(&format!("\n   └─ {GRANDCHILD} ")), "{text}");
    assert!(
        text.contains(&format!("{GRANDCHILD}: worker done")),
        "{text}"
    );
    let page = project.path().join("run.html");
    let html = project.zr(&[
        "sessions",
        "show",
        &session,
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(html.status.code(), Some(0), "{}", stderr(&html));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(GRANDCHILD),
        "the page has a row for the grandchild"
    );
}

#[test]
fn at_the_default_depth_the_subagent_cannot_delegate() {
    let project = TempProject::new();
    project.write("chain.json", CHAIN);
    let out = project.zr(&["run", "--script", "chain.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(GRANDCHILD), "{}", stderr(&out));
}

/// Every response's usage in [`TREE`] (token counts the same in every
/// run).
const USAGE: &str = r#"{"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}"#;

/// A tree three levels deep: the root sends a lead and an explorer; the
/// lead hands a part to a worker, then has a reviewer check it; the
/// reviewer has a worker check a detail (1 s, so that a screen can be
/// read while it runs). `@U` is [`USAGE`]. The lead's first answer takes
/// 200 ms: the scripted model answers at once, and without a wait the
/// lead's subtree could take numbers before the explorer (ids are
/// numbered as agents start).
const TREE: &str = r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "MultiTask", "input": {"tasks": [
      {"description": "split the job", "prompt": "lead the job", "subagent_type": "lead"},
      {"description": "look around", "prompt": "look around", "subagent_type": "explore"}]}}], "usage": @U},
    {"text": "root done", "usage": @U}]}],
  "explore": [{"turns": [{"text": "looked around", "usage": @U}]}],
  "lead": [{"turns": [
    {"delay_ms": 200, "tool_calls": [{"name": "Task", "input": {"description": "first part", "prompt": "do the first part", "subagent_type": "worker"}}], "usage": @U},
    {"tool_calls": [{"name": "Task", "input": {"description": "review it", "prompt": "review the first part", "subagent_type": "reviewer"}}], "usage": @U},
    {"delay_ms": 300, "text": "lead done: the first part is done and reviewed", "usage": @U}]}],
  "reviewer": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "check a detail", "prompt": "check the detail", "subagent_type": "worker"}}], "usage": @U},
    {"text": "reviewed: the detail holds", "usage": @U}]}],
  "worker": [
    {"match": "check the detail", "turns": [{"delay_ms": 1000, "text": "the detail holds", "usage": @U}]},
    {"turns": [{"text": "first part done", "usage": @U}]}]}}"#;

/// The ids of [`TREE`]'s run, in tree order.
const LEAD: &str = "root.0001-lead";
const DEEP: &str = "root.0001-lead.0004-reviewer.0005-worker";

/// A project whose agents may nest three levels: `lead` may start workers
/// and reviewers, `reviewer` workers, `worker` nobody.
pub(crate) fn tree_project() -> TempProject {
    let project = TempProject::new();
    project
        .write("zr.toml", "[subagents]\nmax_depth = 3\n")
        .write(
            ".zr/agents/lead.md",
            "---\nname: lead\ndescription: Splits a job and hands the parts out\ntools: Read, Task(worker, reviewer)\n---\nYou lead.\n",
        )
        .write(
            ".zr/agents/reviewer.md",
            "---\nname: reviewer\ndescription: Reviews a part, checking details with workers\ntools: Read, Task(worker)\n---\nYou review.\n",
        )
        .write(
            ".zr/agents/worker.md",
            "---\nname: worker\ndescription: Does one part\ntools: Read\n---\nYou work.\n",
        )
        .write("tree.json", &TREE.replace("@U", USAGE));
    project
}

/// `zr sessions show`'s table cut to the columns that are the same in
/// every run (AGENT with its tree, TYPE, STATUS, TURNS, TOKENS, TOOLS),
/// then the conclusions.
fn stable_columns(show: &str) -> String {
    let mut lines = show.lines().skip_while(|l| !l.starts_with("AGENT"));
    let header = lines.next().expect("the table's header");
    let at = |name: &str| header.find(name).expect("a column");
    let cols = ["AGENT", "TYPE", "STATUS", "TURNS", "TOKENS", "CACHE READ"];
    // Byte offsets of the header are char offsets: it is ASCII.
    let starts: Vec<usize> = cols.iter().map(|c| at(c)).collect();
    let tools = at("TOOLS");
    let mut out = Vec::new();
    for line in std::iter::once(header).chain(lines.by_ref().take_while(|l| !l.is_empty())) {
        let chars: Vec<char> = line.chars().collect();
        let cell = |from: usize, to: usize| -> String {
            chars
                .get(from..to.min(chars.len()))
                .map(|c| c.iter().collect::<String>().trim_end().to_owned())
                .unwrap_or_default()
        };
        let mut row: Vec<String> = starts
            .windows(2)
            .map(|w| format!("{:width$}", cell(w[0], w[1]), width = w[1] - w[0]))
            .collect();
        row.push(cell(tools, chars.len()));
        out.push(row.concat().trim_end().to_owned());
    }
    out.push(String::new());
    out.extend(lines.map(|l| match l.split_whitespace().nth(3) {
        Some(id) if l.starts_with("`zr sessions show s-") => l.replace(id, "[session]"),
        _ => l.to_owned(),
    }));
    out.join("\n")
}

/// The one session of `project`.
fn only_session(project: &TempProject) -> String {
    crate::timeline::only_session(project)
}

#[test]
fn a_depth_3_tree_in_sessions_show_draws_each_agent_under_its_parent() {
    let project = tree_project();
    let out = project.zr_ok(&["run", "--script", "tree.json", "go"]);
    assert_eq!(stdout(&out), "root done\n");
    let session = only_session(&project);
    let show = stdout(&project.zr_ok(&["sessions", "show", &session]));
    let table = stable_columns(&show);
    insta::assert_snapshot!("depth_3_sessions_show", table);
    // The README's Delegation section shows this table up to TOKENS.
    let cut = table.lines().next().unwrap().find("TOOLS").unwrap();
    let readme: Vec<String> = table
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            l.chars()
                .take(cut)
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect();
    let (_, _, texts) = readme_delegation();
    assert_eq!(
        texts,
        [readme.join("\n") + "\n"],
        "README.md's sessions show block"
    );
    // The agent three levels down, by its id.
    let deep = stdout(&project.zr_ok(&["sessions", "show", &session, "--agent", DEEP]));
    assert!(deep.contains("check the detail"), "{deep}");
    assert!(deep.contains("the detail holds"), "{deep}");
}

/// The page of a depth-3 run: each row labelled by the last segment of
/// its id, one indent per level (the whole id its tooltip); in a real
/// browser, each child's bar lies within its parent's, a grandchild's
/// within its parent's.
#[test]
fn a_depth_3_tree_on_the_page_nests_each_bar_within_its_parents() {
    use crate::timeline::{COMPLETED, bars, screenshot};
    let project = tree_project();
    project.zr_ok(&["run", "--script", "tree.json", "go"]);
    let (page, html) = crate::timeline::written_page(&project);
    let labels: Vec<&str> = html
        .lines()
        .filter(|l| l.starts_with("<text x=") && l.contains("<title>"))
        .collect();
    insta::assert_snapshot!("depth_3_page_labels", labels.join("\n"));

    let image = screenshot(&page, &project.path().join("run.png"));
    // Rows in tree order: root, lead, its worker, its reviewer, the
    // reviewer's worker, the explorer.
    let done = bars(&image, COMPLETED, 14);
    assert_eq!(done.len(), 6, "a bar per agent: {done:?}");
    let within = |child: usize, parent: usize| {
        let (c, p) = (done[child], done[parent]);
        assert!(
            p.left <= c.left && c.right <= p.right + 1,
            "row {child}'s bar {c:?} is not within row {parent}'s {p:?}"
        );
    };
    for (child, parent) in [(1, 0), (2, 1), (3, 1), (4, 3), (5, 0)] {
        within(child, parent);
    }
    // The lead's worker began before its reviewer.
    assert!(done[2].left < done[3].left, "{done:?}");
}

/// `zr run` on a terminal while the worker three levels down runs: each
/// agent one indent under its parent, those that ended dim with their
/// status; then the summary, nested the same way.
#[test]
fn a_depth_3_tree_in_the_live_tree_indents_each_level() {
    use crate::tree::{Terminal, normalised};
    let project = tree_project();
    let mut term = Terminal::spawn_with(&project, &["run", "--script", "tree.json", "go"], &[]);
    let (running, _) = term.wait_for("the worker three levels down running", |rows| {
        rows.iter()
            .any(|r| r.starts_with("      ▸ worker  running"))
            && rows.iter().any(|r| r.starts_with("  ✓ explore"))
    });
    insta::assert_snapshot!("depth_3_live_tree", normalised(&running));
    let (rows, _) = term.finish(0);
    insta::assert_snapshot!("depth_3_live_tree_summary", normalised(&rows));
}

/// The plain progress lines (no terminal) name every agent by its id,
/// the one three levels down too. (The lead's subtree runs one agent at a
/// time, so its lines come in one order; the explorer's run beside them.)
#[test]
fn a_depth_3_tree_in_plain_progress_names_each_agent_by_its_id() {
    let project = tree_project();
    let out = project.zr_ok(&["run", "--script", "tree.json", "go"]);
    let err = stderr(&out);
    let lead: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with(&format!("[{LEAD}")))
        .collect();
    insta::assert_snapshot!("depth_3_plain_progress", lead.join("\n"));
    assert!(
        err.contains(&format!("[{DEEP}] started (worker): check a detail")),
        "{err}"
    );
}

/// The code blocks of the README's "Delegation" section: its `toml`
/// blocks (one `zr.toml`), its `markdown` blocks (agent files, by their
/// `name`) and its `text` blocks (output).
fn readme_delegation() -> (String, Vec<(String, String)>, Vec<String>) {
    let readme = std::fs::read_to_string(crate::support::repo().join("README.md")).unwrap();
    let start = readme
        .find("\n## Delegation\n")
        .expect("a Delegation section");
    let section = &readme[start + 1..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |i| i + 1)];
    let mut toml = String::new();
    let mut agents = Vec::new();
    let mut texts = Vec::new();
    let mut rest = section;
    while let Some(open) = rest.find("\n```") {
        let after = &rest[open + 4..];
        let (lang, body) = after.split_once('\n').unwrap();
        let end = body.find("\n```").expect("a closed block");
        let text = &body[..=end];
        match lang {
            "toml" => {
                toml.push_str(text);
                toml.push('\n');
            }
            "markdown" => {
                let name = text
                    .lines()
                    .find_map(|l| l.strip_prefix("name: "))
                    .expect("an agent file names its type");
                agents.push((name.to_owned(), text.to_owned()));
            }
            "text" => texts.push(text.to_owned()),
            other => panic!("a block of {other} in Delegation"),
        }
        rest = &body[end + 4..];
    }
    (toml, agents, texts)
}

/// Every example of the README's "Delegation" section is one working
/// project: its `zr.toml` blocks load (depth, budget, provider profile),
/// its agent files load without a warning, and a run goes root -> lead ->
/// worker, the worker (`model: local:fast`) on the `[providers.local]`
/// profile, here a loopback OpenAI Chat server, as `qwen3-8b`.
#[test]
fn the_readmes_delegation_examples_are_one_working_project() {
    let (toml, agents, _) = readme_delegation();
    assert!(toml.contains("max_depth = 2"), "{toml}");
    assert!(
        toml.contains("[budget]") && toml.contains("[providers.local]"),
        "{toml}"
    );
    let names: Vec<&str> = agents.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["lead", "researcher", "worker"]);
    let openai = zr_test_support::loopback::Server::start(zr_test_support::fixture::bytes(
        "openai/text.sse",
    ));
    let project = TempProject::new();
    project.write(
        "zr.toml",
        &toml.replace("http://127.0.0.1:8080/v1", &format!("{}/v1", openai.url)),
    );
    for (name, text) in &agents {
        project.write(
            &format!(".zr/agents/{name}.md"),
            &format!("{text}You are the {name}.\n"),
        );
    }
    let listed = project.zr_ok(&["agents"]);
    assert_eq!(
        stderr(&listed),
        "",
        "the agent files load without a warning"
    );
    project.write(
        "chain.json",
        r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "lead", "prompt": "lead the job", "subagent_type": "lead"}}]},
    {"text": "root done"}]}],
  "lead": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "legwork", "prompt": "do the legwork", "subagent_type": "worker"}}]},
    {"text": "lead done"}]}]}}"#,
    );
    let out = project.zr(&["run", "--script", "chain.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "root done\n");
    let requests = openai.requests();
    assert_eq!(requests.len(), 1, "the worker's request, on the profile");
    assert_eq!(requests[0].body["model"], "qwen3-8b");
    assert!(
        stderr(&out).contains("[root.0001-lead.0002-worker] finished: completed"),
        "{}",
        stderr(&out)
    );
}
