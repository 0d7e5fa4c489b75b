//! `/server:prompt` commands told apart from plain prompts.

use super::*;

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_slash_server_colon_prompt_is_a_command_with_its_words() {
    let command = parse("/every:args-prompt Austin", &words(&["state=TX"]))
        .unwrap()
        .unwrap();
    assert_eq!(
        command,
        PromptCommand {
            server: "every".into(),
            prompt: "args-prompt".into(),
            words: words(&["Austin", "state=TX"]),
        }
    );
}

#[test]
fn other_prompts_are_plain_and_stray_words_are_refused() {
    for plain in ["Summarise /src:main", "/tmp/x: why", "/:p", "/s:", "hello"] {
        assert_eq!(parse(plain, &[]).unwrap(), None, "{plain}");
    }
    let error = parse("hello", &words(&["world"])).unwrap_err().to_string();
    assert!(
        error.contains("zr run takes one prompt, and got 2 words"),
        "{error}"
    );
}
