//! Tests of zr.toml parsing.

use std::path::Path;

use super::*;

#[test]
fn a_wrong_type_names_line_column_and_key() {
    let text = "[model]\nname = \"x\"\n\n[subagents]\nmax_concurrent = \"3\"\n";
    let err = ZrConfig::parse(Path::new("zr.toml"), text).unwrap_err();
    let CliError::Config {
        line, column, key, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*line, *column, key.as_str()),
        (5, 18, "subagents.max_concurrent")
    );
}

#[test]
fn an_unknown_key_is_refused() {
    let text = "[model]\nnmae = \"x\"\n";
    let err = ZrConfig::parse(Path::new("zr.toml"), text).unwrap_err();
    let CliError::Config {
        line,
        key,
        message,
        help,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((*line, key.as_str()), (2, "model.nmae"));
    assert_eq!(message, "unknown key `nmae`");
    assert!(help.starts_with("did you mean `name`?"), "{help}");
}
