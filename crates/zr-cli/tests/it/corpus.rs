//! The agent-file corpus (`tests/corpus`): hand-written agent types and
//! skills in the shapes Claude Code users have, loaded by `zr agents` and
//! `zr skills` with `$HOME` set to the corpus's user folders. The
//! snapshots are what a user sees: what loads, what warns (file and line),
//! what is refused and why.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{stderr, stdout, zr};

/// Copies `from` into `to`, byte for byte.
fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("folder");
    for entry in fs::read_dir(from).expect("corpus folder") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("file copied");
        }
    }
}

/// The corpus in a temporary folder: `project/`, `home/`, and a linked
/// folder in `.claude/agents` that leads out of its root, to `~/outside`.
struct Corpus {
    dir: tempfile::TempDir,
}

impl Corpus {
    fn new() -> Self {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
        let dir = tempfile::tempdir().expect("temporary folder");
        for part in ["project", "home"] {
            copy_dir(&source.join(part), &dir.path().join(part));
        }
        let corpus = Self { dir };
        symlink(
            corpus.home().join("outside"),
            corpus.project().join(".claude/agents/linked"),
        )
        .expect("link made");
        corpus
    }

    fn project(&self) -> PathBuf {
        self.dir
            .path()
            .join("project")
            .canonicalize()
            .expect("project")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home").canonicalize().expect("home")
    }

    /// `zr ARGS` in the project, with the corpus's home folder; must exit 0.
    fn zr(&self, args: &[&str]) -> std::process::Output {
        let out = zr()
            .args(args)
            .current_dir(self.project())
            .env("HOME", self.home())
            .output()
            .expect("the zr binary runs");
        assert_eq!(out.status.code(), Some(0), "zr {args:?}: {}", stderr(&out));
        out
    }

    /// `zr ARGS --format json`, checked to be JSON and to hold no path of
    /// the temporary folder (every path is project-relative or `~/`).
    fn json(&self, args: &[&str]) -> (String, Value) {
        let mut args = args.to_vec();
        args.extend(["--format", "json"]);
        let out = self.zr(&args);
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
        let text = stdout(&out);
        let temp = self.dir.path().display().to_string();
        assert!(!text.contains(&temp), "a temporary path leaked:\n{text}");
        let value = serde_json::from_str(&text).expect("valid JSON");
        (text, value)
    }
}

/// The names in `list` (`agents` or `skills`) of a JSON report.
fn names(report: &Value, list: &str) -> Vec<String> {
    report[list]
        .as_array()
        .expect("a list")
        .iter()
        .map(|a| a["name"].as_str().expect("a name").to_owned())
        .collect()
}

#[test]
fn corpus_agents_json() {
    let corpus = Corpus::new();
    let (text, report) = corpus.json(&["agents"]);
    // Every file that must load did, nested ones and the user's included.
    let loaded = names(&report, "agents");
    for name in [
        "all-tools",
        "bom-agent",
        "claude-names",
        "crlf-agent",
        "dotnet-framework-4.8-expert",
        "empty-tools",
        "git-helper",
        "helper",
        "migration-helper",
        "notes-taker",
        "planner",
        "python-pro",
        "reviewer",
        "rust-pro",
        "security-auditor",
        "style-checker",
    ] {
        assert!(loaded.iter().any(|n| n == name), "{name} did not load");
    }
    for name in ["stolen", "bad-yaml", "no-description", "latin1", "example"] {
        assert!(!loaded.iter().any(|n| n == name), "{name} loaded");
    }
    insta::assert_snapshot!(text);
}

#[test]
fn corpus_skills_json() {
    let corpus = Corpus::new();
    let (text, report) = corpus.json(&["skills"]);
    assert_eq!(
        names(&report, "skills"),
        [
            "changelog",
            "csv",
            "pdf",
            "release-notes",
            "shared",
            "user-skill",
            "zr-user-skill"
        ]
    );
    insta::assert_snapshot!(text);
}

#[test]
fn corpus_tables_show_the_source_and_every_diagnostic() {
    let corpus = Corpus::new();
    let agents = corpus.zr(&["agents"]);
    let skills = corpus.zr(&["skills"]);
    insta::assert_snapshot!(format!(
        "$ zr agents\n{}--- stderr\n{}\n$ zr skills\n{}--- stderr\n{}",
        stdout(&agents),
        stderr(&agents),
        stdout(&skills),
        stderr(&skills)
    ));
}

#[test]
fn the_readme_prints_the_claude_code_tool_table_row_for_row() {
    let readme = fs::read_to_string(crate::support::repo().join("README.md")).expect("README");
    let header = "| Claude Code | zr | why |\n| --- | --- | --- |\n";
    let start = readme.find(header).expect("the table's header") + header.len();
    let rows: Vec<&str> = readme[start..]
        .lines()
        .take_while(|l| l.starts_with('|'))
        .collect();
    let expected: Vec<String> = zr_caps::CLAUDE_CODE_TOOLS
        .iter()
        .map(|t| match t.zr {
            Some(zr) => format!("| `{}` | `{zr}` | {} |", t.name, t.why),
            None => format!("| `{}` | dropped | {} |", t.name, t.why),
        })
        .collect();
    assert_eq!(rows, expected);
}

#[test]
fn the_readme_prints_the_model_alias_table_row_for_row() {
    let readme = fs::read_to_string(crate::support::repo().join("README.md")).expect("README");
    let header = "| alias | Anthropic | OpenAI-compatible server |\n| --- | --- | --- |\n";
    let start = readme.find(header).expect("the table's header") + header.len();
    let rows: Vec<&str> = readme[start..]
        .lines()
        .take_while(|l| l.starts_with('|'))
        .collect();
    let mut expected: Vec<String> = zr_caps::MODEL_ALIASES
        .iter()
        .map(|a| {
            // `small` has a default on OpenAI's own API (zr-cli's).
            let openai = if a.alias == "small" {
                "`gpt-4.1-mini` on OpenAI's own API; else the session's model, with a warning"
            } else {
                "none: the session's model, with a warning"
            };
            format!("| `{}` | `{}` | {openai} |", a.alias, a.anthropic)
        })
        .collect();
    expected.push("| `inherit` | the parent's model | the parent's model |".to_owned());
    assert_eq!(rows, expected);
}
