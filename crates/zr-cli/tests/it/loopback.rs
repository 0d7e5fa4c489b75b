//! `zr run` against a [`Server`] of zr-test-support standing in for the
//! model API.

use zr_test_support::loopback::Server;

use crate::support::{TempProject, stderr};

/// `zr run PROMPT` in `project` with `server` as the model API
/// (`ANTHROPIC_BASE_URL`, or `OPENAI_BASE_URL` with `openai`); it must exit 0.
pub(crate) fn run_against(
    project: &TempProject,
    server: &Server,
    openai: bool,
    prompt: &str,
) -> std::process::Output {
    let mut cmd = crate::support::zr();
    cmd.args(["run", prompt]).current_dir(project.path());
    if openai {
        cmd.env("OPENAI_BASE_URL", format!("{}/v1", server.url));
    } else {
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("ANTHROPIC_BASE_URL", &server.url);
    }
    let out = cmd.output().expect("zr runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}
