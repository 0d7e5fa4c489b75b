//! `examples/research-team` run exactly as the README's first command
//! says, in a copy of the example and of the repository's `crates` folder
//! (the explorers read `../../crates`), so that nothing is written into
//! the repository and nothing of the workspace's `.deps` is in reach: plain
//! progress, the answer, `--json` events, the transcripts, and a first run
//! without a warning or an error line.
//!
//! The example's filesystem server is `npx -y
//! @modelcontextprotocol/server-filesystem@VERSION` as a user writes it. The
//! runs here give zr a `$HOME` whose `.npmrc` names the npm cache `cargo
//! xtask deps` fetched that package into (`.deps/npm-cache`), with
//! `prefer-offline`, so that nothing is downloaded while the tests run.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{is_start_progress, raw_stderr, repo, stderr, stdout, zr};

/// The example's folder in the repository.
const EXAMPLE: &str = "examples/research-team";

/// The `zr` arguments of the README's first command (after `--`), read
/// from README.md so that the test and the README cannot drift apart.
fn readme_args() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md is readable");
    // The first command line of the first `sh` block.
    let line = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|block| {
            block
                .lines()
                .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        })
        .expect("README.md has a sh block with a command");
    assert!(
        line.starts_with("cargo run -p zr-cli -- "),
        "the README's first command runs zr: {line}"
    );
    split(line.trim_start_matches("cargo run -p zr-cli -- "))
}

/// Splits a command line on spaces, keeping "double-quoted" words whole.
fn split(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Copies `from` into `to`, leaving out what a run leaves behind.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("folder created");
    for entry in std::fs::read_dir(from).expect("folder readable") {
        let entry = entry.expect("folder entry");
        let name = entry.file_name();
        if ["sessions", "worktrees", "cron.json", "target"]
            .iter()
            .any(|n| name == *n)
        {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("file copied");
        }
    }
}

/// A temporary folder laid out like the repository as far as the example
/// needs: `examples/research-team` and `crates`.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    copy_dir(&repo().join(EXAMPLE), &dir.path().join(EXAMPLE));
    copy_dir(&repo().join("crates"), &dir.path().join("crates"));
    dir
}

/// A `$HOME` for zr (and the servers it starts, which get its `HOME`)
/// whose `.npmrc` makes `npx` use the npm cache `cargo xtask deps` filled
/// (`.deps/npm-cache`) without asking the registry first; no user-level
/// agent types or skills, like [`crate::support::empty_home`].
fn npm_home() -> PathBuf {
    static HOME: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let cache = zr_test_support::deps::dir().join("npm-cache");
        assert!(
            cache.is_dir(),
            "{} is missing: run `cargo xtask deps` first (or set ZR_DEPS_DIR)",
            cache.display()
        );
        let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("zr-cli-npm-home");
        std::fs::create_dir_all(&home).expect("home folder");
        let npmrc = format!(
            "cache={}\nprefer-offline=true\nupdate-notifier=false\nfund=false\naudit=false\n",
            cache.display()
        );
        std::fs::write(home.join(".npmrc"), npmrc).expect(".npmrc written");
        home
    })
    .clone()
}

/// The README's command (plus `extra` arguments) in `checkout`.
fn run_example(checkout: &Path, extra: &[&str]) -> Output {
    let mut args = readme_args();
    // Options go before the prompt.
    let prompt = args.pop().expect("the command has a prompt");
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.push(prompt);
    zr().args(&args)
        .current_dir(checkout)
        .env("HOME", npm_home())
        .env_remove("ZR_DEPS_DIR")
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .expect("the zr binary runs")
}

/// The root's last scripted reply, plus the newline `zr run` ends it with.
fn scripted_answer() -> String {
    let script = std::fs::read_to_string(repo().join(EXAMPLE).join("script.json"))
        .expect("script.json is readable");
    let script: Value = serde_json::from_str(&script).expect("script.json is JSON");
    let turns = script["agents"]["root"][0]["turns"]
        .as_array()
        .expect("the root has turns");
    format!(
        "{}\n",
        turns.last().expect("the root has a last turn")["text"]
            .as_str()
            .expect("its text")
    )
}

/// Lines of several agents that ran side by side interleave differently
/// from run to run: between two lines of the root (which waits for its
/// subagents), the subagents' lines are put in agent order, each agent's
/// own lines keeping theirs.
fn in_agent_order(lines: Vec<(String, String)>) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Vec<(String, String)> = Vec::new();
    for (agent, line) in lines {
        if agent == "root" || agent.is_empty() {
            block.sort_by(|a, b| a.0.cmp(&b.0));
            out.extend(block.drain(..).map(|(_, l)| l));
            out.push(line);
        } else {
            block.push((agent, line));
        }
    }
    block.sort_by(|a, b| a.0.cmp(&b.0));
    out.extend(block.into_iter().map(|(_, l)| l));
    out
}

/// Replaces the number before each of `units` with `N` (token counts
/// depend on what the tools read), and the summary's duration (`0.3 s` at
/// the end of a line).
fn without_numbers(line: &str, units: &[&str]) -> String {
    let mut out = line.to_owned();
    if let Some(head) = out.strip_suffix(" s") {
        let kept = head.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        out = format!("{kept}N s");
    }
    for unit in units {
        let mut result = String::new();
        let mut rest = out.as_str();
        while let Some(pos) = rest.find(unit) {
            let head = &rest[..pos];
            let number = head
                .trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
                .len();
            if number < head.len() {
                result.push_str(&head[..number]);
                result.push('N');
            } else {
                result.push_str(head);
            }
            result.push_str(unit);
            rest = &rest[pos + unit.len()..];
        }
        result.push_str(rest);
        out = result;
    }
    out
}

/// The session id on the last line of the plain output.
fn session_of(err: &str) -> String {
    let last = err.lines().last().unwrap_or_default();
    last.strip_prefix("session ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no session line at the end: {err}"))
        .to_owned()
}

/// Plain progress, normalised: agents in order, token counts and the
/// duration as `N`, the session id as `[session]`.
fn normalised_progress(err: &str, session: &str) -> String {
    let lines = err
        .lines()
        .map(|l| {
            let agent = l
                .strip_prefix('[')
                .and_then(|r| r.split(']').next())
                .unwrap_or("");
            let line = without_numbers(l, &[" tokens"]).replace(session, "[session]");
            (agent.to_owned(), line)
        })
        .collect();
    in_agent_order(lines).join("\n")
}

#[test]
fn the_example_runs_offline_with_plain_progress_and_the_answer() {
    let checkout = checkout();
    let out = run_example(checkout.path(), &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let session = session_of(&err);
    insta::assert_snapshot!("example_progress", normalised_progress(&err, &session));
    assert_eq!(stdout(&out), scripted_answer());
    insta::assert_snapshot!("example_answer", stdout(&out));

    // The transcripts: one per agent, in the example's .zr/sessions.
    let dir = checkout
        .path()
        .join(EXAMPLE)
        .join(".zr/sessions")
        .join(&session);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "root.0001-explore.jsonl",
            "root.0002-explore.jsonl",
            "root.0003-explore.jsonl",
            "root.0004-writer.jsonl",
            "root.jsonl"
        ]
    );
    // Nothing was written into the repository's copy of the example.
    assert!(
        !repo()
            .join(EXAMPLE)
            .join(".zr/sessions")
            .join(&session)
            .exists()
    );

    // `zr sessions show`: the tree, then the writer's conversation.
    let project = checkout.path().join(EXAMPLE);
    let show = |extra: &[&str]| {
        let out = zr()
            .arg("-C")
            .arg(&project)
            .args(["sessions", "show", &session])
            .args(extra)
            .output()
            .expect("the zr binary runs");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    insta::with_settings!({filters => vec![
        (r"s-[0-9a-f]{13}-[0-9a-f]{8}", "[session]"),
        (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "[date]"),
        (r"\d+\.\d+ s", "[t]"),
        (r"\d+ tokens", "N tokens"),
        (r"\d+ +(\d+ +\d+ +\$\d)", "N $1"),
        (r" {2,}", " "),
        (r"Folder: \S*/examples/", "Folder: [checkout]/examples/"),
    ]}, {
        insta::assert_snapshot!("example_show", show(&[]));
        insta::assert_snapshot!("example_show_writer", show(&["--agent", "root.0004-writer"]));
    });
}

/// One `--json` line, checked and reduced to what does not depend on the
/// repository's contents: agent, type, turn, tool or description, and status.
fn event_line(value: &Value) -> Option<(String, String)> {
    let agent = value["agent"].as_str().unwrap_or("").to_owned();
    let ty = value["type"].as_str().expect("every line has a type");
    let text = match ty {
        "subagent_started" => format!(
            "{agent} subagent_started {} ({})",
            value["description"].as_str().expect("a string field"),
            value["agent_type"].as_str().expect("a string field")
        ),
        "subagent_finished" => format!(
            "{agent} subagent_finished {}",
            value["result"]["status"].as_str().expect("a string field")
        ),
        "turn_finished" => format!(
            "{agent} turn_finished {} {}",
            value["turn"],
            value["stop_reason"].as_str().expect("a string field")
        ),
        "tool_call_started" => {
            format!(
                "{agent} tool_call_started {}",
                value["tool"].as_str().expect("a string field")
            )
        }
        "tool_call_finished" => format!(
            "{agent} tool_call_finished {} {}",
            value["tool"].as_str().expect("a string field"),
            if value["is_error"].as_bool().expect("a boolean field") {
                "error"
            } else {
                "ok"
            }
        ),
        "tool_failed" | "permission_denied" => {
            format!(
                "{agent} {ty} {}",
                value["tool"].as_str().expect("a string field")
            )
        }
        "result" => format!(
            "result {}",
            value["status"].as_str().expect("a string field")
        ),
        _ => return None,
    };
    Some((agent, text))
}

/// The read-only calls of one turn run side by side, so one may finish
/// before the next starts or after: in each run of an agent's
/// consecutive `tool_call_*` lines (one turn's calls: its `turn_finished`
/// line comes before them, the next one after), the starts (in call
/// order) come first, then the ends, sorted.
fn calls_in_order(lines: Vec<String>) -> Vec<String> {
    let call = |line: &str| {
        let mut words = line.split(' ');
        let agent = words.next().unwrap_or("").to_owned();
        let kind = words.next().unwrap_or("");
        kind.starts_with("tool_call_").then_some(agent)
    };
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let flush = |run: &mut Vec<String>, out: &mut Vec<String>| {
        let (starts, mut ends): (Vec<String>, Vec<String>) = run
            .drain(..)
            .partition(|l| l.contains(" tool_call_started "));
        ends.sort();
        out.extend(starts);
        out.extend(ends);
    };
    for line in lines {
        let agent = call(&line);
        if agent.is_none() || run.first().and_then(|l| call(l)) != agent {
            flush(&mut run, &mut out);
        }
        if agent.is_some() {
            run.push(line);
        } else {
            out.push(line);
        }
    }
    flush(&mut run, &mut out);
    out
}

#[test]
fn the_example_with_json_prints_every_event_as_ndjson() {
    let checkout = checkout();
    let out = run_example(checkout.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "nothing on standard error");
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let values: Vec<Value> = lines
        .iter()
        .map(|l| {
            assert!(l.starts_with("{\"type\":\""), "type comes first: {l}");
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))
        })
        .collect();
    for v in &values[..values.len() - 1] {
        for key in ["at_ms", "agent", "agent_type"] {
            assert!(v.get(key).is_some(), "no {key}: {v}");
        }
    }

    // The last line is the result, with the answer and the session.
    let result = values.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["status"], "completed");
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .starts_with("**Question**: How does zr resolve tool pools?"),
        "{result}"
    );
    let session = result["session"].as_str().unwrap();
    assert!(
        checkout
            .path()
            .join(EXAMPLE)
            .join(".zr/sessions")
            .join(session)
            .join("root.jsonl")
            .is_file()
    );

    // The MCP tool ran in the third explorer, and returned the crates.
    let mcp = values
        .iter()
        .find(|v| v["type"] == "tool_call_finished" && v["tool"] == "mcp__fs__list_directory")
        .expect("the filesystem server's tool was called");
    assert_eq!(mcp["agent"], "root.0003-explore");
    assert_eq!(mcp["is_error"], false, "{mcp}");
    assert!(
        mcp["summary"]
            .as_str()
            .unwrap()
            .contains("[DIR] zr-resolve"),
        "{mcp}"
    );
    // The writer loaded the skill.
    let skill = values
        .iter()
        .find(|v| v["type"] == "tool_call_finished" && v["tool"] == "Skill")
        .unwrap();
    assert_eq!(skill["agent"], "root.0004-writer");
    assert_eq!(skill["summary"], "loaded skill research-brief");

    let events = calls_in_order(in_agent_order(
        values.iter().filter_map(event_line).collect(),
    ));
    insta::assert_snapshot!("example_json_events", events.join("\n"));
}

/// Issue 41: the README's first command, in a checkout outside the
/// workspace (no `.deps` in reach, `ZR_DEPS_DIR` unset), says nothing but
/// its progress (the fs server's start may be announced) and answers.
#[test]
fn a_fresh_clone_runs_the_readme_command_without_a_warning_or_an_error() {
    let checkout = checkout();
    assert!(!checkout.path().join(".deps").exists());
    let out = run_example(checkout.path(), &[]);
    let err = raw_stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for line in err.lines().filter(|l| !is_start_progress(l)) {
        let lower = line.to_lowercase();
        assert!(
            !lower.contains("warning") && !lower.contains("error") && !lower.contains("denied"),
            "a warning, an error or a refusal on the first run: {line}\n{err}"
        );
        assert!(
            line.starts_with('[') || line.starts_with("session "),
            "only progress lines: {line}\n{err}"
        );
    }
    // The explorer that lists the crates with the fs server got its tool.
    assert!(
        err.contains("[root.0003-explore] mcp__fs__list_directory crates\n"),
        "{err}"
    );
    assert_eq!(stdout(&out), scripted_answer());
}

/// Every agent of the example resolves without a warning: its files say
/// nothing the resolver has to ignore (an MCP tool in `tools:` would be
/// one: the allow list constrains builtins only).
#[test]
fn the_example_resolves_without_warnings() {
    let out = zr()
        .args(["-C", EXAMPLE, "resolve", "--format", "json"])
        .current_dir(repo())
        .env("HOME", npm_home())
        .output()
        .expect("the zr binary runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let agents = report["agents"].as_array().expect("agents");
    let names: Vec<&str> = agents.iter().filter_map(|a| a["agent"].as_str()).collect();
    assert_eq!(
        names,
        [
            "root",
            "explore",
            "general-purpose",
            "guide",
            "plan",
            "verification",
            "writer",
            "fork"
        ]
    );
    for agent in agents {
        assert_eq!(
            agent["warnings"],
            Value::Array(vec![]),
            "{}",
            agent["agent"]
        );
    }
    let explore = &agents[1];
    let deferred: Vec<&str> = explore["deferred"]
        .as_array()
        .expect("deferred")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        deferred.contains(&"mcp__fs__list_directory"),
        "{deferred:?}"
    );
}
