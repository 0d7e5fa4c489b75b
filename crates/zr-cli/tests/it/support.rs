//! Helpers shared by the CLI tests: the `zr` command with a clean
//! environment, project folders, output as text.

use std::path::{Path, PathBuf};
use std::process::Output;

/// The repository's root.
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository exists")
}

/// An empty folder used as `$HOME`, so that no user-level agent types or
/// skills of the machine leak into a test.
pub(crate) fn empty_home() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("zr-cli-empty-home");
    std::fs::create_dir_all(&dir).expect("home folder");
    dir
}

/// The `zr` binary with a clean environment: no provider or model variables, no
/// `ZR_LOG`, `$HOME` an empty folder, no colour.
pub(crate) fn zr() -> assert_cmd::Command {
    assert_cmd::Command::from_std(zr_process())
}

/// `zr ARGS` run in the repository's root.
pub(crate) fn zr_in_repo(args: &[&str]) -> Output {
    zr().args(args)
        .current_dir(repo())
        .output()
        .expect("the zr binary runs")
}

/// A project folder in a temporary directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct TempProject {
    dir: tempfile::TempDir,
}

impl TempProject {
    /// An empty project folder.
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temporary folder"),
        }
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `text` to `rel` inside it, creating folders.
    pub(crate) fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("a file has a folder")).expect("folders");
        std::fs::write(&path, text).expect("file written");
        self
    }

    /// `zr ARGS` run inside it.
    pub(crate) fn zr(&self, args: &[&str]) -> Output {
        zr().args(args)
            .current_dir(self.path())
            .output()
            .expect("the zr binary runs")
    }

    /// `zr ARGS` run inside it, which must exit with 0.
    pub(crate) fn zr_ok(&self, args: &[&str]) -> Output {
        let out = self.zr(args);
        assert_eq!(out.status.code(), Some(0), "zr {args:?}: {}", stderr(&out));
        out
    }
}

/// Standard output as text.
pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 output")
}

/// Standard error as text, without the lines that say an MCP server is
/// slow to start (`starting MCP server 'X' ...`, `MCP server 'X' started
/// (N s)`): whether they appear depends on the machine's speed, and
/// `mcp_start.rs` tests them on [`raw_stderr`].
pub(crate) fn stderr(out: &Output) -> String {
    raw_stderr(out)
        .split_inclusive('\n')
        .filter(|line| !is_start_progress(line.trim_end()))
        .collect()
}

/// Standard error exactly as written.
pub(crate) fn raw_stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("utf-8 output")
}

/// A line saying an MCP server is slow to start, or that it started.
pub(crate) fn is_start_progress(line: &str) -> bool {
    (line.starts_with("starting MCP server '") && line.ends_with("' ..."))
        || (line.starts_with("MCP server '")
            && line.contains("' started (")
            && line.ends_with(" s)"))
}

/// The `zr` binary as a [`std::process::Command`] with the clean
/// environment of [`zr`], for tests that spawn it and signal it while it
/// runs.
pub(crate) fn zr_process() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_zr"));
    for var in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "ANTHROPIC_DEFAULT_OPUS_MODEL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ZR_LOG",
        "RUST_LOG",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", empty_home()).env("NO_COLOR", "1");
    cmd
}

/// `zr ARGS` started in `project` with its standard output and error
/// piped, for tests that watch or signal it while it runs.
pub(crate) fn spawn_zr(project: &TempProject, args: &[&str]) -> std::process::Child {
    zr_process()
        .args(args)
        .current_dir(project.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the zr binary starts")
}

/// server-everything's entry point.
pub(crate) fn everything_js() -> PathBuf {
    zr_test_support::deps::installed(
        "node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    )
}

/// Every transcript of `project`'s sessions, one after the other, as text
/// (what the model was sent and answered, tool results included).
pub(crate) fn transcripts(project: &TempProject) -> String {
    transcripts_at(project.path())
}

/// [`transcripts`] of the project folder `project`.
pub(crate) fn transcripts_at(project: &Path) -> String {
    let mut all = String::new();
    let sessions = project.join(".zr/sessions");
    for session in std::fs::read_dir(sessions).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(session.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            all.push_str(&std::fs::read_to_string(file.path()).unwrap_or_default());
        }
    }
    all
}
