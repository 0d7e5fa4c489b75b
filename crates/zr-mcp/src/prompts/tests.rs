//! Words bound to a prompt's declared arguments, and the errors.

use super::*;

fn prompt() -> McpPrompt {
    McpPrompt {
        name: "args-prompt".to_owned(),
        description: None,
        arguments: vec![
            PromptArgument {
                name: "city".to_owned(),
                description: None,
                required: true,
            },
            PromptArgument {
                name: "state".to_owned(),
                description: None,
                required: false,
            },
        ],
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn positional_and_named_words_fill_the_declared_arguments() {
    let server: ServerName = "every".parse().unwrap();
    let bound = prompt().bind(&server, &words(&["Paris"])).unwrap();
    assert_eq!(Value::Object(bound), serde_json::json!({"city": "Paris"}));
    let bound = prompt()
        .bind(&server, &words(&["state=TX", "Austin"]))
        .unwrap();
    assert_eq!(
        Value::Object(bound),
        serde_json::json!({"city": "Austin", "state": "TX"})
    );
    // `=` in a word that names no argument is a value.
    let bound = prompt().bind(&server, &words(&["a=b"])).unwrap();
    assert_eq!(Value::Object(bound), serde_json::json!({"city": "a=b"}));
}

#[test]
fn missing_extra_and_repeated_arguments_are_explained_with_the_usage() {
    let server: ServerName = "every".parse().unwrap();
    let error = |w: &[&str]| prompt().bind(&server, &words(w)).unwrap_err().to_string();
    assert_eq!(
        error(&[]),
        "prompt '/every:args-prompt': missing the required argument 'city'; usage: /every:args-prompt <city> [state]"
    );
    assert_eq!(
        error(&["a", "b", "c"]),
        "prompt '/every:args-prompt': 'c' is one argument too many (it takes 2); usage: /every:args-prompt <city> [state]"
    );
    assert_eq!(
        error(&["city=a", "city=b"]),
        "prompt '/every:args-prompt': 'city' is given twice; usage: /every:args-prompt <city> [state]"
    );
}
