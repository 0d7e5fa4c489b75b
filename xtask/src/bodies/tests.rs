//! The validator against bodies written by hand: it passes a valid one and
//! rejects a wrong field and an extra key, naming file and place.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::{REQUIRED, validator};

/// Where `cargo xtask deps` installed the virtual environment.
fn deps() -> PathBuf {
    std::env::var_os("ZR_DEPS_DIR").map_or_else(|| root().join(".deps"), PathBuf::from)
}

fn root() -> PathBuf {
    crate::project_root().expect("the workspace root")
}

/// A body as zr's Anthropic provider sends it.
const ANTHROPIC: &str = r#"{"model":"claude-test","max_tokens":1024,"stream":true,"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"Read","description":"Reads a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"path":"a"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"A"}],"is_error":false,"cache_control":{"type":"ephemeral"}}]}]}"#;

/// A body as zr's OpenAI provider sends it.
const OPENAI: &str = r#"{"model":"gpt-test","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\"path\":\"a\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"A"}],"max_completion_tokens":1024,"stream":true,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"Read","description":"Reads a file.","parameters":{"type":"object"}}}]}"#;

fn write(dir: &Path, wire: &str, name: &str, body: &str) {
    let folder = dir.join(wire);
    std::fs::create_dir_all(&folder).expect("a wire folder");
    std::fs::write(folder.join(name), body).expect("a body");
}

fn validate(dir: &Path, required: &[&str]) -> Output {
    validator(&root(), &deps(), dir, required)
        .expect("the virtual environment of `cargo xtask deps`")
        .output()
        .expect("the validator runs")
}

#[test]
fn valid_bodies_pass_and_are_counted_by_wire() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    write(dir.path(), "anthropic", "a.json", ANTHROPIC);
    write(dir.path(), "openai-chat", "b.json", OPENAI);
    let out = validate(dir.path(), &REQUIRED);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "validated 2 request bodies (1 anthropic, 1 openai chat, 0 openai responses)\n"
    );
}

#[test]
fn a_wrong_field_and_an_extra_key_are_rejected_with_file_and_place() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    write(dir.path(), "anthropic", "good.json", ANTHROPIC);
    let wrong = ANTHROPIC.replace(r#""max_tokens":1024"#, r#""max_tokens":"1024""#);
    assert_ne!(wrong, ANTHROPIC);
    write(dir.path(), "anthropic", "wrong-field.json", &wrong);
    // An extra key three levels down, inside a tool's function.
    let extra = OPENAI.replace(
        r#""name":"Read","description""#,
        r#""name":"Read","strictly":true,"description""#,
    );
    assert_ne!(extra, OPENAI);
    write(dir.path(), "openai-chat", "extra-key.json", &extra);
    let out = validate(dir.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "validated 1 request bodies (1 anthropic, 0 openai chat, 0 openai responses)\n"
    );
    let line_of = |file: &str| {
        let at = stderr
            .find(&format!("{file}: "))
            .unwrap_or_else(|| panic!("{file} is named: {stderr}"));
        stderr[at..].lines().take(2).collect::<Vec<_>>().join("\n")
    };
    let wrong = line_of("wrong-field.json");
    assert!(
        wrong.contains("max_tokens: Input should be a valid integer"),
        "{wrong}"
    );
    let extra = line_of("extra-key.json");
    assert!(
        extra.contains("tools.0.ChatCompletionFunctionToolParam.function.strictly: Extra inputs are not permitted"),
        "{extra}"
    );
    assert!(stderr.contains("2 problem(s)"), "{stderr}");
}

#[test]
fn a_required_wire_without_bodies_fails() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    write(dir.path(), "anthropic", "a.json", ANTHROPIC);
    let out = validate(dir.path(), &REQUIRED);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no openai chat request body was captured"),
        "{stderr}"
    );
}
