//! `zr init`: the files it creates, keeps and overwrites, and its errors.

use crate::support::{TempProject, stderr, stdout};

const CREATED: &str = "\
created   zr.toml
created   .mcp.json
created   .zr/agents/reviewer.md
created   .zr/agents/README.md
created   .zr/agents/example.md.template
created   .zr/skills/release-notes/SKILL.md
created   .zr/sessions/
created   .gitignore
Next: set ANTHROPIC_API_KEY or OPENAI_API_KEY, then `zr run \"PROMPT\"`.
";

#[test]
fn init_creates_every_file_of_a_project() {
    let project = TempProject::new();
    let out = project.zr(&["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), CREATED);
    assert_eq!(stderr(&out), "");
    let read = |rel: &str| std::fs::read_to_string(project.path().join(rel)).unwrap();
    assert!(read("zr.toml").starts_with("# zr.toml: this project's settings"));
    assert_eq!(read(".mcp.json"), "{\n  \"mcpServers\": {}\n}\n");
    assert!(read(".zr/agents/reviewer.md").starts_with("---\nname: reviewer\n"));
    assert_eq!(read(".zr/agents/README.md"), zr_skills::AGENTS_README);
    assert_eq!(
        read(".zr/agents/example.md.template"),
        zr_skills::AGENTS_TEMPLATE
    );
    assert!(read(".zr/skills/release-notes/SKILL.md").starts_with("---\nname: release-notes\n"));
    assert!(project.path().join(".zr/sessions").is_dir());
    assert_eq!(
        read(".gitignore"),
        "# zr: transcripts, worktrees and scheduled prompts\n.zr/sessions/\n.zr/worktrees/\n.zr/cron.json\n"
    );
    // The new project runs: its files load without a warning.
    project.write(
        "script.json",
        r#"{"agents": {"root": [{"turns": [{"text": "hi"}]}]}}"#,
    );
    let run = project.zr(&["run", "--script", "script.json", "hello"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(stdout(&run), "hi\n");
    assert!(!stderr(&run).contains("warning"), "{}", stderr(&run));
}

#[test]
fn init_keeps_existing_files_and_force_overwrites_them() {
    let project = TempProject::new();
    project.write("zr.toml", "[model]\nname = \"mine\"\n");
    project.write(".gitignore", "target/\n/.zr/sessions");
    project.write(".zr/agents/README.md", "# Our agents\n");
    let out = project.zr(&["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("init_keeps", stdout(&out));
    let read = |rel: &str| std::fs::read_to_string(project.path().join(rel)).unwrap();
    assert_eq!(read("zr.toml"), "[model]\nname = \"mine\"\n");
    assert_eq!(read(".zr/agents/README.md"), "# Our agents\n");
    assert_eq!(
        read(".zr/agents/example.md.template"),
        zr_skills::AGENTS_TEMPLATE
    );
    assert_eq!(
        read(".gitignore"),
        "target/\n/.zr/sessions\n# zr: transcripts, worktrees and scheduled prompts\n.zr/worktrees/\n.zr/cron.json\n"
    );

    let again = project.zr(&["init"]);
    assert_eq!(again.status.code(), Some(0));
    insta::assert_snapshot!("init_again", stdout(&again));

    let forced = project.zr(&["init", "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    insta::assert_snapshot!("init_force", stdout(&forced));
    assert!(read("zr.toml").starts_with("# zr.toml: this project's settings"));
    assert_eq!(read(".zr/agents/README.md"), zr_skills::AGENTS_README);
    assert!(read(".gitignore").starts_with("target/\n/.zr/sessions\n"));
}

#[test]
fn init_in_a_folder_it_cannot_write_names_the_path() {
    let project = TempProject::new();
    // A file where the .zr folder belongs: no folder can be created there
    // (whoever runs the test, root included).
    project.write(".zr", "not a folder");
    let out = project.zr(&["init"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let folder = project.path().join(".zr/agents");
    assert!(
        err.starts_with(&format!(
            "error: cannot create the folder {}: ",
            folder.display()
        )),
        "{err}"
    );
    // What could be written before the error was written.
    assert!(project.path().join("zr.toml").is_file());
}

#[test]
fn init_with_project_flag_creates_the_folder() {
    let project = TempProject::new();
    let out = project.zr(&["-C", "sub/proj", "init"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), CREATED);
    assert!(project.path().join("sub/proj/zr.toml").is_file());
}

#[test]
fn a_new_project_runs_without_telemetry() {
    // A listener on OTLP's default port (when it is free): a run of a
    // project `zr init` made must not connect to it.
    let listener = std::net::TcpListener::bind("127.0.0.1:4318").ok();
    if let Some(listener) = &listener {
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
    } else {
        eprintln!("127.0.0.1:4318 is taken: checking standard error only");
    }
    let project = TempProject::new();
    project.zr_ok(&["init"]);
    project.write(
        "script.json",
        r#"{"agents": {"root": [{"turns": [{"text": "hi"}]}]}}"#,
    );
    let mut run = crate::support::zr_process();
    for var in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_SDK_DISABLED",
    ] {
        run.env_remove(var);
    }
    let run = run
        .args(["run", "--script", "script.json", "hello"])
        .current_dir(project.path())
        .output()
        .expect("zr runs");
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(stdout(&run), "hi\n");
    assert!(
        !stderr(&run).to_lowercase().contains("telemetry"),
        "{}",
        stderr(&run)
    );
    if let Some(listener) = listener {
        match listener.accept() {
            Ok((_, from)) => panic!("zr connected to 127.0.0.1:4318 from {from}"),
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock, "{e}"),
        }
    }
}
