//! `zr sessions` (status, turns, tokens, cost), `zr sessions show`'s
//! cache reads and writes per agent, and `zr resume`'s
//! answers: after a finished run with a new prompt, `--agent`, and every
//! error with its exit code and help.

#![allow(clippy::unwrap_used, reason = "test helpers")]

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use serde_json::json;

use crate::support::{TempProject, repo, spawn_zr, stderr, stdout, zr};
use zr_test_support::loopback::{Reply, Server};

/// Known usage on every reply, so that the cost can be worked out by hand.
const PRICED: &str = r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "look", "prompt": "look around", "subagent_type": "explore"}}],
     "usage": {"input_tokens": 1000000, "output_tokens": 100000, "cache_read_input_tokens": 2000000, "cache_creation_input_tokens": 400000}},
    {"text": "All done.", "usage": {"input_tokens": 1200000, "output_tokens": 10000}}]}],
  "explore": [{"turns": [
    {"text": "found it", "usage": {"input_tokens": 500000, "output_tokens": 50000}}]}]}}"#;

/// The root's first request never gets its answer.
const HANGING: &str =
    r#"{"agents": {"root": [{"turns": [{"delay_ms": 600000, "text": "late"}]}]}}"#;

/// The session folders of `project`, oldest first.
fn session_ids(project: &TempProject) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(project.path().join(".zr/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    ids.sort();
    ids
}

/// A completed run with the priced script and model `claude-sonnet-4-5`;
/// its session id.
fn priced_run(project: &TempProject) -> String {
    project.write("priced.json", PRICED);
    let before = session_ids_or_none(project);
    let out = project.zr(&[
        "run",
        "--script",
        "priced.json",
        "--model",
        "claude-sonnet-4-5",
        "find the thing\nand more",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "All done.\n");
    new_session(project, &before)
}

fn session_ids_or_none(project: &TempProject) -> Vec<String> {
    if project.path().join(".zr/sessions").is_dir() {
        session_ids(project)
    } else {
        Vec::new()
    }
}

fn new_session(project: &TempProject, before: &[String]) -> String {
    let mut new: Vec<String> = session_ids(project)
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    assert_eq!(new.len(), 1, "one new session: {new:?}");
    new.remove(0)
}

/// A run interrupted by Ctrl-C while the model is thinking; its session
/// id.
fn interrupted_run(project: &TempProject) -> String {
    project.write("hanging.json", HANGING);
    let before = session_ids_or_none(project);
    let mut child = spawn_zr(
        project,
        &["run", "--script", "hanging.json", "wait forever"],
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    let id = loop {
        let ids = session_ids_or_none(project);
        let prompt_written = ids.iter().find(|id| !before.contains(id)).filter(|id| {
            std::fs::read_to_string(
                project
                    .path()
                    .join(".zr/sessions")
                    .join(id)
                    .join("root.jsonl"),
            )
            .is_ok_and(|t| t.contains("wait forever"))
        });
        if let Some(id) = prompt_written {
            break id.clone();
        }
        assert!(Instant::now() < deadline, "the run wrote its prompt");
        std::thread::sleep(Duration::from_millis(50));
    };
    kill(
        Pid::from_raw(i32::try_from(child.id()).unwrap()),
        Signal::SIGINT,
    )
    .unwrap();
    // Bounded: a zr that ignored Ctrl-C must fail the test, not hang it.
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("zr did not exit after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    id
}

/// `text` with each id replaced by its name, and every
/// `YYYY-MM-DD HH:MM:SS` by `[TIME]`.
fn redact(text: &str, ids: &[(&str, &str)]) -> String {
    let mut text = text.to_owned();
    for (id, name) in ids {
        text = text.replace(id, name);
    }
    let is_time = |s: &[u8]| {
        s.len() == 19
            && s.iter().enumerate().all(|(i, &b)| match i {
                4 | 7 => b == b'-',
                10 => b == b' ',
                13 | 16 => b == b':',
                _ => b.is_ascii_digit(),
            })
    };
    let mut out = String::new();
    let mut rest = text.as_str();
    while !rest.is_empty() {
        if rest.len() >= 19 && rest.is_char_boundary(19) && is_time(&rest.as_bytes()[..19]) {
            // Same width, so that the columns stay as they are.
            out.push_str("[TIME-------------]");
            rest = &rest[19..];
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[test]
fn sessions_lists_runs_newest_first_with_status_turns_tokens_and_cost() {
    let project = TempProject::new();
    let empty = project.zr(&["sessions"]);
    assert_eq!(empty.status.code(), Some(0), "{}", stderr(&empty));
    assert_eq!(
        stdout(&empty),
        "no sessions yet (`zr run PROMPT` saves one in .zr/sessions)\n"
    );

    let done = priced_run(&project);
    let cut = interrupted_run(&project);
    let out = project.zr(&["sessions"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let ids = [
        (done.as_str(), "[COMPLETED-SESSION-----]"),
        (cut.as_str(), "[INTERRUPTED-SESSION---]"),
    ];
    insta::assert_snapshot!(redact(&stdout(&out), &ids));

    // Root: 2.2M input at $3, 110k output at $15, 2M cache reads at $0.30
    // and 400k cache writes at $3.75 = $10.35; explore, on the small
    // model (haiku: $1 and $5): 500k input and 50k output = $0.75.
    // Interrupted: no finished run, no tokens.
    let json = project.zr(&["sessions", "--format", "json"]);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["id"], cut.as_str());
    assert_eq!(rows[0]["status"], "interrupted");
    assert_eq!(rows[0]["tokens"], 0);
    assert_eq!(rows[0]["cost_usd"], 0.0);
    assert_eq!(rows[0]["prompt"], "wait forever");
    let row = &rows[1];
    assert_eq!(row["id"], done.as_str());
    assert_eq!(row["status"], "completed");
    assert_eq!(
        row["agents"],
        serde_json::json!(["root", "root.0001-explore"])
    );
    assert_eq!(row["turns"], 3);
    assert_eq!(
        row["usage"],
        serde_json::json!({"input_tokens": 2_700_000, "output_tokens": 160_000,
            "cache_read_input_tokens": 2_000_000, "cache_creation_input_tokens": 400_000})
    );
    assert_eq!(row["tokens"], 5_260_000);
    assert_eq!(
        row["models"],
        serde_json::json!(["claude-haiku-4-5", "claude-sonnet-4-5"])
    );
    let cost = row["cost_usd"].as_f64().unwrap();
    assert!((cost - 11.10).abs() < 1e-9, "{cost}");
    assert_eq!(row["prompt"], "find the thing\nand more");
}

#[test]
fn show_gives_each_agents_cache_reads_and_writes() {
    let project = TempProject::new();
    let id = priced_run(&project);
    let out = project.zr(&["sessions", "show", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("TURNS  TOKENS   CACHE READ  CACHE WRITE  COST"),
        "{text}"
    );
    let row = |agent: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().any(|w| w == agent))
            .unwrap_or_else(|| panic!("no row of {agent}: {text}"));
        line.split_whitespace()
            .filter(|w| *w != "└─")
            .map(str::to_owned)
            .collect()
    };
    // Root: 3.5M tokens in its first turn (2M of them read from the cache,
    // 400k written), 1.21M in its second; explore: no cache use.
    assert_eq!(
        row("root")[..7],
        [
            "root",
            "root",
            "completed",
            "2",
            "4710000",
            "2000000",
            "400000"
        ],
        "{text}"
    );
    assert_eq!(
        row("root.0001-explore")[..7],
        [
            "root.0001-explore",
            "explore",
            "completed",
            "1",
            "550000",
            "0",
            "0"
        ],
        "{text}"
    );
    let out = project.zr(&["sessions", "show", &id, "--agent", "root"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("4710000 tokens (2000000 cache read, 400000 cache write)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn sessions_warns_about_a_broken_transcript_and_lists_the_rest() {
    let project = TempProject::new();
    let id = "s-0000000000001-00000001";
    project.write(
        &format!(".zr/sessions/{id}/root.jsonl"),
        "{\"kind\":\"header\",\"version\":2,\"session\":\"s-0000000000001-00000001\",\"agent\":\"root\",\"agent_type\":\"root\",\"parent\":null,\"system_prompt\":\"p\",\"model\":\"gpt-4.1\",\"cwd\":\"/\",\"created_ms\":1,\"max_turns\":5}\n{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\nnot json\n{\"kind\":\"finished\",\"status\":\"completed\"}\n",
    );
    // A folder that is no session (not named by a session id) is not one.
    project.write(".zr/sessions/notes/root.jsonl", "");
    let out = project.zr(&["sessions"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "warning: .zr/sessions/{id}/root.jsonl:3: not a transcript record (expected ident at line 1 column 2); the rest of this file is ignored\n"
        )
    );
    assert!(
        stdout(&out).contains(&format!(
            "{id}  1970-01-01 00:00:00  interrupted  1       0      0       $0.0000  hi\n"
        )),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("notes"), "{}", stdout(&out));
}

#[test]
fn resume_continues_a_finished_session_and_reruns_a_subagent() {
    let project = TempProject::new();
    let id = priced_run(&project);
    project
        .write(
            "second.json",
            r#"{"agents": {"root": [{"turns": [{"text": "second answer"}]}]}}"#,
        )
        .write(
            "again.json",
            r#"{"agents": {"explore": [{"turns": [{"text": "looked again"}]}]}}"#,
        );
    let out = project.zr(&["resume", "--script", "second.json", &id, "another question"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "second answer\n");
    let root =
        std::fs::read_to_string(project.path().join(format!(".zr/sessions/{id}/root.jsonl")))
            .unwrap();
    assert!(
        root.contains("another question") && root.contains("second answer"),
        "{root}"
    );

    let out = project.zr(&[
        "resume",
        "--script",
        "again.json",
        &id,
        "--agent",
        "root.0001-explore",
        "look again",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "looked again\n");
    let explore = std::fs::read_to_string(
        project
            .path()
            .join(format!(".zr/sessions/{id}/root.0001-explore.jsonl")),
    )
    .unwrap();
    assert!(
        explore.contains("look again") && explore.contains("looked again"),
        "{explore}"
    );
}

#[test]
fn resume_errors_say_what_exists_and_exit_2() {
    let project = TempProject::new();
    let none = project.zr(&["resume", "s-0000000000000-00000000"]);
    assert_eq!(none.status.code(), Some(2));
    assert_eq!(
        stderr(&none),
        "error: no session s-0000000000000-00000000 in .zr/sessions\n  help: this project has no sessions yet; `zr run PROMPT` starts one\n"
    );

    let id = priced_run(&project);
    let prefix = &id[..8];
    let cases: [&[&str]; 6] = [
        &["resume", "nope"],
        &["resume", prefix],
        &["resume", "s-0000000000000-00000000"],
        &["resume", &id, "--agent", "root.0009-explore"],
        &["resume", &id, "--agent", "not an id"],
        &["resume", &id],
    ];
    let mut transcript = String::new();
    for args in cases {
        let out = project.zr(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "");
        transcript.push_str(&format!("$ zr {}\n{}\n", args.join(" "), stderr(&out)));
    }
    insta::assert_snapshot!(redact(
        &transcript,
        &[(id.as_str(), "[SESSION]"), (prefix, "[PREFIX]")]
    ));
}

/// A `.zr/sessions` that is a link out of the project is followed, and zr
/// says where the transcripts go.
#[test]
fn a_sessions_folder_linked_out_of_the_project_is_named() {
    let project = TempProject::new();
    let elsewhere = tempfile::tempdir().expect("a folder");
    std::fs::create_dir_all(project.path().join(".zr")).expect("folders");
    std::os::unix::fs::symlink(elsewhere.path(), project.path().join(".zr/sessions"))
        .expect("a link");
    project.write(
        "s.json",
        r#"{"agents": {"root": [{"turns": [{"text": "done"}]}]}}"#,
    );
    let out = project.zr_ok(&["run", "--script", "s.json", "go"]);
    let err = stderr(&out);
    let real = std::fs::canonicalize(elsewhere.path()).expect("a path");
    assert!(
        err.contains(&format!(
            "warning: {} is a link to {}, outside the project: transcripts are written there",
            project.path().join(".zr/sessions").display(),
            real.display()
        )),
        "{err}"
    );
    assert_eq!(err.matches("is a link to").count(), 1, "said once: {err}");
}

/// The sessions checked in under `crates/zr-cli/tests/transcripts`, one
/// per format version: `v1` as zr wrote it before version 2 (no
/// definition or permission mode in a subagent's header, no times on
/// messages), `v2` as a `zr run` of this format wrote it.
const OLD_SESSIONS: [(&str, &str); 2] = [
    ("v1", "s-018f2a9c1e000-0a1b2c3d"),
    ("v2", "s-001a252edae86-d7a2a345"),
];

/// A project holding the checked-in session `id` of format `version`.
fn project_with(version: &str, id: &str) -> TempProject {
    let project = TempProject::new();
    let from = repo().join(format!("crates/zr-cli/tests/transcripts/{version}/{id}"));
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        project.write(
            &format!(".zr/sessions/{id}/{name}"),
            &std::fs::read_to_string(entry.path()).unwrap(),
        );
    }
    project
}

#[test]
fn sessions_of_earlier_formats_are_listed_shown_and_resumed() {
    for (version, id) in OLD_SESSIONS {
        let project = project_with(version, id);
        let out = project.zr(&["sessions", "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{version}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{version}");
        let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let row = &rows[0];
        assert_eq!(row["id"], id, "{version}: {row}");
        assert_eq!(row["status"], "completed", "{version}: {row}");
        assert_eq!(
            row["agents"],
            json!(["root", "root.0001-explore"]),
            "{version}: {row}"
        );
        assert_eq!(row["turns"], 4, "{version}: {row}");
        assert!(
            row["tokens"].as_u64().is_some_and(|t| t > 0),
            "{version}: {row}"
        );

        // The subagent's conversation, its tool call and result included.
        let out = project.zr(&["sessions", "show", id, "--agent", "root.0001-explore"]);
        assert_eq!(out.status.code(), Some(0), "{version}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("-> Grep "), "{version}: {text}");
        assert!(text.contains("<- Grep ok"), "{version}: {text}");
        assert!(text.contains("run ended: completed"), "{version}: {text}");

        // Resuming sends the model the whole recorded conversation.
        let server = Server::answering(|_, _| Reply::anthropic(Some("resumed answer"), &[]));
        let out = zr()
            .args(["resume", id, "and the tests?"])
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("ANTHROPIC_BASE_URL", &server.url)
            .current_dir(project.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{version}: {}", stderr(&out));
        assert_eq!(stdout(&out), "resumed answer\n", "{version}");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{version}");
        let messages = requests[0].body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 5, "{version}: {messages:#?}");
        let sent = requests[0].body["messages"].to_string();
        for said in [
            "where is the config loaded?",
            "toolu_01",
            "config.rs reads zr.toml",
            "It is loaded in config.rs.",
            "and the tests?",
        ] {
            assert!(sent.contains(said), "{version}: {said} not in {sent}");
        }
    }
}
