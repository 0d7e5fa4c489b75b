//! `zr --help`, `zr run --help` and shell completions.

use crate::support::{TempProject, stderr, stdout};

fn help(args: &[&str]) -> String {
    let out = TempProject::new().zr(args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn zr_help() {
    insta::assert_snapshot!(help(&["--help"]));
}

#[test]
fn zr_run_help() {
    insta::assert_snapshot!(help(&["run", "--help"]));
}

#[test]
fn every_command_has_help_with_a_description() {
    for command in [
        "init",
        "run",
        "resume",
        "resolve",
        "agents",
        "skills",
        "mcp",
        "sessions",
        "completions",
    ] {
        let text = help(&[command, "--help"]);
        let first = text.lines().next().unwrap_or_default();
        assert!(first.len() > 20, "{command}: {first}");
        assert!(
            text.contains(&format!("Usage: zr {command}")),
            "{command}:\n{text}"
        );
    }
}

#[test]
fn completions_for_bash_zsh_and_fish_mention_the_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let text = help(&["completions", shell]);
        for command in [
            "init", "run", "resume", "resolve", "agents", "skills", "mcp", "sessions",
        ] {
            assert!(text.contains(command), "{shell} lacks {command}");
        }
        assert!(text.contains("--provider"), "{shell} lacks --provider");
    }
    assert!(help(&["completions", "bash"]).starts_with("_zr() {"));
    assert!(help(&["completions", "zsh"]).starts_with("#compdef zr"));
    assert!(help(&["completions", "fish"]).contains("complete -c zr "));
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = TempProject::new().zr(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid value 'tcsh'"),
        "{}",
        stderr(&out)
    );
}
