//! Defects a demanding user found by trying every command: each test
//! failed before its fix.

use crate::support::{TempProject, stderr, stdout};

const OK_SCRIPT: &str = r#"{"agents": {"root": [{"turns": [{"text": "ok"}]}]}}"#;

/// The sessions recorded in the project (none when the folder is absent).
fn sessions(project: &TempProject) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(project.path().join(".zr/sessions")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .map(|e| {
            e.expect("a folder entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.starts_with("s-"))
        .collect();
    names.sort();
    names
}

/// An empty (or blank) prompt is a usage error: nothing runs, no session
/// is written, no model is asked (a real API would refuse the request
/// after the MCP servers were started, or bill an empty turn).
#[test]
fn an_empty_prompt_is_a_usage_error() {
    let project = TempProject::new();
    project.write("script.json", OK_SCRIPT);
    for prompt in ["", "  \n\t "] {
        let out = project.zr(&["run", "--script", "script.json", prompt]);
        assert_eq!(out.status.code(), Some(2), "{prompt:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "");
        assert_eq!(
            stderr(&out),
            "error: the prompt is empty\n  help: give the task in words: zr run \"PROMPT\" (or text on standard input with `zr run -`)\n",
            "{prompt:?}"
        );
    }
    assert_eq!(sessions(&project), Vec::<String>::new());

    // `zr resume SESSION ""` too (without a prompt it finishes an
    // interrupted run; an empty one is a mistake).
    let out = project.zr(&["run", "--script", "script.json", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = sessions(&project).pop().expect("one session");
    let out = project.zr(&["resume", "--script", "script.json", &session, " "]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: the prompt is empty\n  help: give the task in words: zr resume {session} \"PROMPT\", or no prompt to finish an interrupted run\n"
        )
    );
}

/// `-C` naming a folder that does not exist is a mistake on the command
/// line: exit 2 with what to do, as documented (it was exit 1, no help).
#[test]
fn a_missing_project_folder_is_a_usage_error() {
    let project = TempProject::new();
    for args in [
        &["-C", "nowhere", "run", "hi"][..],
        &["-C", "nowhere", "agents"][..],
        &["-C", "nowhere", "sessions"][..],
    ] {
        let out = project.zr(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error: --project {}: no such folder\n  help: pass an existing project folder, or create one with `zr -C nowhere init`\n",
                project.path().join("nowhere").display()
            ),
            "{args:?}"
        );
    }
}

/// A background agent the root started is not dropped when the root
/// answers: the run waits for it (its progress is shown, its work is done,
/// its transcript is written), then exits. (Before, the process exited at
/// once: no file, no transcript, no word of it.) The agent's model answers
/// after 1 s, well after the root's answer, so that its tool call comes
/// while zr waits.
#[test]
fn a_run_waits_for_its_background_agents() {
    let project = TempProject::new();
    project
        .write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write(
            "script.json",
            r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "slow job", "prompt": "write the file", "subagent_type": "general-purpose", "run_in_background": true}}]},
    {"text": "started it"}]}],
  "general-purpose": [{"turns": [
    {"delay_ms": 1000, "tool_calls": [{"name": "Bash", "input": {"command": "echo done > bg.txt"}}]},
    {"text": "wrote bg.txt"}]}]}}"#,
        );
    let out = project.zr(&["run", "--script", "script.json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "started it\n");
    let err = stderr(&out);
    assert!(
        err.contains("[root.0001-general-purpose] Bash echo done > bg.txt\n"),
        "{err}"
    );
    assert!(
        err.contains("[root.0001-general-purpose] finished: completed, 2 turns"),
        "{err}"
    );
    assert!(
        err.contains("waiting for 1 background agent: root.0001-general-purpose (slow job)"),
        "{err}"
    );
    // The final total counts the background agent's tokens, spent after
    // the root's answer.
    let number_before = |line_start: &str, word: &str| -> u64 {
        let line = err
            .lines()
            .find(|l| l.starts_with(line_start))
            .unwrap_or_else(|| panic!("no line {line_start}: {err}"));
        let (head, _) = line.split_once(word).expect("the count");
        head.rsplit(' ').next().unwrap().parse().expect("a number")
    };
    let background = number_before("[root.0001-general-purpose] finished:", " tokens");
    let total = number_before("[root] finished:", " tokens");
    assert!(
        total > background,
        "total {total}, background {background}: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("bg.txt")).expect("the agent's file"),
        "done\n"
    );
    let session = sessions(&project).pop().expect("one session");
    assert_background_transcript(&project, &session);
}

/// Ctrl-C while zr waits for a background agent: the root's answer is
/// still printed, the agent's shell is killed, its transcript is kept, and
/// the exit code is 130.
#[test]
fn ctrl_c_while_waiting_for_a_background_agent_keeps_the_answer() {
    use std::io::Read as _;
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    let project = TempProject::new();
    let marker = project.path().join("bg-started");
    let script = serde_json::json!({"agents": {
        "root": [{"turns": [
            {"tool_calls": [{"name": "Task", "input": {"description": "slow job", "prompt": "sleep", "subagent_type": "general-purpose", "run_in_background": true}}]},
            {"text": "the root's answer"}]}],
        "general-purpose": [{"turns": [
            {"tool_calls": [{"name": "Bash", "input": {"command": format!("touch {m}; exec -a {m} sleep 600", m = marker.display()), "timeout": 600_000}}]},
            {"text": "never reached"}]}]}});
    project
        .write("zr.toml", "[permissions]\nallow = [\"Bash\"]\n")
        .write("script.json", &script.to_string());
    let mut child = crate::support::zr_process()
        .args(["run", "--script", "script.json", "go"])
        .current_dir(project.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zr starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the background agent never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = i32::try_from(child.id()).expect("a pid");
    kill(Pid::from_raw(pid), Signal::SIGINT).expect("SIGINT sent");
    let status = child.wait().expect("zr ends");
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut out)
        .expect("stdout");
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut err)
        .expect("stderr");
    assert_eq!(status.code(), Some(130), "{err}");
    assert_eq!(out, "the root's answer\n", "{err}");
    assert!(
        err.contains("SIGINT: stopping the background agents and their processes"),
        "{err}"
    );
    // No `sleep 600` of this test is left (its argv[0] is the marker's
    // path) within a second of zr's exit: zr sends SIGKILL to the group
    // before it exits, but a loaded machine may take a moment to end the
    // killed process (a zombie's cmdline is empty, so it does not count).
    let needle = marker.display().to_string();
    let living = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(&needle))
            .collect()
    };
    let gone_by = Instant::now() + Duration::from_secs(1);
    let mut left = living();
    while !left.is_empty() && Instant::now() < gone_by {
        std::thread::sleep(Duration::from_millis(20));
        left = living();
    }
    assert_eq!(left, Vec::<String>::new());
    let session = sessions(&project).pop().expect("one session");
    // The root finished: the hint names the agent that can go on.
    assert!(
        err.ends_with(&format!(
            "interrupted; session {session} is saved. To continue its background agent: zr resume {session} --agent root.0001-general-purpose\n"
        )),
        "{err}"
    );
    assert_background_transcript(&project, &session);
}

/// A number above its bound is refused where it is written, naming the
/// bound (before, `max_concurrent = 2^61` passed and panicked at the first
/// Task).
#[test]
fn numbers_beyond_their_bound_are_refused_with_file_line_and_key() {
    let project = TempProject::new();
    project.write("script.json", OK_SCRIPT);
    for (toml, place, bound, found) in [
        (
            "[subagents]\nmax_concurrent = 2305843009213693952\n",
            "2:18: subagents.max_concurrent",
            "1024",
            "2305843009213693952",
        ),
        (
            "[subagents]\ntimeout_secs = 18446744073709551615\n",
            "2:16: subagents.timeout_secs",
            "604800",
            "18446744073709551615",
        ),
        (
            "[agent]\nmax_turns = 4294967295\n",
            "2:13: agent.max_turns",
            "100000",
            "4294967295",
        ),
        (
            "[model]\nmax_tokens = 4000000000\n",
            "2:14: model.max_tokens",
            "1000000",
            "4000000000",
        ),
    ] {
        project.write("zr.toml", toml);
        let out = project.zr(&["run", "--script", "script.json", "hi"]);
        assert_eq!(out.status.code(), Some(2), "{toml}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error: {}/zr.toml:{place}: must be at most {bound}, found {found}\n  help: fix the value or remove the key to use its default; `zr init` in an empty folder writes a zr.toml showing every key with its default\n",
                project.path().display()
            ),
            "{toml}"
        );
    }
    assert_eq!(sessions(&project), Vec::<String>::new());
}

/// A turn limit or a concurrency of 0 is refused where it is written
/// (before, `max_turns = 0` ran and failed with "no reply ... tools are
/// disabled", and `max_concurrent = 0` was taken silently).
#[test]
fn zero_limits_are_refused_with_file_line_and_key() {
    let project = TempProject::new();
    project.write("script.json", OK_SCRIPT);
    for (toml, place) in [
        ("[agent]\nmax_turns = 0\n", "2:13: agent.max_turns"),
        (
            "[subagents]\nmax_concurrent = 0\n",
            "2:18: subagents.max_concurrent",
        ),
        (
            "[subagents]\ntimeout_secs = 0\n",
            "2:16: subagents.timeout_secs",
        ),
    ] {
        project.write("zr.toml", toml);
        let out = project.zr(&["run", "--script", "script.json", "hi"]);
        assert_eq!(out.status.code(), Some(2), "{toml}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error: {}/zr.toml:{place}: must be at least 1, found 0\n  help: fix the value or remove the key to use its default; `zr init` in an empty folder writes a zr.toml showing every key with its default\n",
                project.path().display()
            ),
            "{toml}"
        );
    }
    assert_eq!(sessions(&project), Vec::<String>::new());

    project.write("zr.toml", "");
    let out = project.zr(&["run", "--script", "script.json", "--max-turns", "0", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("error: invalid value '0' for '--max-turns <N>': "),
        "{}",
        stderr(&out)
    );
    assert_eq!(sessions(&project), Vec::<String>::new());
}

/// An HTTP MCP server that is not there: `zr mcp list` says so in its
/// own words, without the MCP library's internal log line (`ERROR worker
/// quit with fatal: Transport channel closed, when Client(reqwest::Error
/// { ... })`) printed first.
#[test]
fn an_unreachable_http_server_has_no_raw_library_log_line() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.local_addr().expect("its address").port()
    };
    let project = TempProject::new();
    project.write(
        ".mcp.json",
        &format!(r#"{{"mcpServers": {{"web": {{"type": "http", "url": "http://127.0.0.1:{port}/mcp"}}}}}}"#),
    );
    let out = project.zr(&["mcp", "list"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "nothing but the listing");
    let listing = stdout(&out);
    assert!(
        listing.starts_with(&format!(
            "web: failed (http: http://127.0.0.1:{port}/mcp)\n"
        )),
        "{listing}"
    );
}

/// A script file that is not there is a mistake on the command line (or
/// in zr.toml): exit 2 with what to do, as for a script that does not
/// parse (it was exit 1 with no help).
#[test]
fn a_missing_script_is_a_usage_error() {
    let project = TempProject::new();
    let out = project.zr(&["run", "--script", "nope.json", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: cannot read script nope.json: No such file or directory (os error 2)\n  help: pass the path of a script file (relative to the current folder); see examples/research-team/script.json for the format\n"
    );
    project.write(
        "zr.toml",
        "[model]\nprovider = \"scripted\"\nscript = \"gone.json\"\n",
    );
    let out = project.zr(&["run", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: cannot read script {}/gone.json: No such file or directory (os error 2)\n  help: fix `script` under [model] in zr.toml (relative to the project folder); see examples/research-team/script.json for the format\n",
            project.path().display()
        )
    );
    assert_eq!(sessions(&project), Vec::<String>::new());
}

/// A project file that exists but cannot be read (here a folder where
/// zr.toml belongs, which fails for root too) is a project-file error:
/// exit 2, the file, and what to do (it was exit 1 with no help). An
/// unreadable .mcp.json says the same (checked by hand: the tests may run
/// as root, who reads every file).
#[test]
fn an_unreadable_project_file_is_a_project_file_error() {
    let project = TempProject::new();
    std::fs::create_dir(project.path().join("zr.toml")).expect("a folder");
    let out = project.zr(&["agents"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}/zr.toml: cannot read it: not a regular file (a folder)\n  help: make it a readable file, or remove it to use the defaults\n",
            project.path().display()
        )
    );
}

/// A background agent that finishes while the root still works: each of
/// its lines is shown once (its events come through the query's stream
/// and through zr's subscription to background events; the copies are
/// matched, whichever comes first).
#[test]
fn a_background_agent_that_ends_during_the_query_is_shown_once() {
    let project = TempProject::new();
    project.write("notes.txt", "hello\n").write(
        "script.json",
        r#"{"agents": {
  "root": [{"turns": [
    {"tool_calls": [{"name": "Task", "input": {"description": "bg1", "prompt": "quick", "subagent_type": "explore", "run_in_background": true}}]},
    {"delay_ms": 300, "tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
    {"delay_ms": 300, "text": "root end"}]}],
  "explore": [{"turns": [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
    {"text": "bg1 done"}]}]}}"#,
    );
    // A few runs: the order in which the two copies arrive varies.
    for _ in 0..5 {
        let out = project.zr(&["run", "--script", "script.json", "go"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(stdout(&out), "root end\n");
        let err = stderr(&out);
        // The token count depends on the temporary path's length.
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("[root.0001-explore]"))
            .map(|l| l.split(" turns, ").next().unwrap_or(l))
            .collect();
        assert_eq!(
            lines,
            [
                "[root.0001-explore] started in the background (explore): bg1",
                "[root.0001-explore] Read notes.txt",
                "[root.0001-explore] finished: completed, 2",
            ],
            "{err}"
        );
        assert!(!err.contains("waiting for"), "{err}");
    }
}

/// The background agent `root.0001-general-purpose` of `session` has its
/// transcript.
fn assert_background_transcript(project: &TempProject, session: &str) {
    let path = project
        .path()
        .join(".zr/sessions")
        .join(session)
        .join("root.0001-general-purpose.jsonl");
    assert!(
        path.is_file(),
        "the background agent's transcript {}",
        path.display()
    );
}
