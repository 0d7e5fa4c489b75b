//! Tests of parsing .mcp.json: transports, expansion, errors that name the server and key.
use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;

use super::expand::{ExpandError, expand};
use super::*;

fn vars(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("s3cret".to_owned()),
        "EMPTY" => Some(String::new()),
        "HOST" => Some("example.invalid".to_owned()),
        _ => None,
    }
}

fn parse(text: &str) -> Result<McpConfig, ConfigError> {
    McpConfig::parse(text, &vars)
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn stdio_and_http_servers_keep_file_order_and_every_field() {
    let config = parse(
        r#"{"mcpServers": {
            "zeta": {"command": "srv", "args": ["-v", "x"], "env": {"A": "1", "T": "${TOKEN}"},
                     "cwd": "sub", "deferred": false, "timeout_ms": 2500},
            "alpha": {"type": "http", "url": "https://${HOST}/mcp",
                      "headers": {"Authorization": "Bearer ${TOKEN}"}, "deferred": true}
        }}"#,
    )
    .unwrap();
    let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha"]);

    let zeta = config.get("zeta").unwrap();
    let TransportConfig::Stdio(stdio) = &zeta.transport else {
        panic!("zeta is stdio: {zeta:?}");
    };
    assert_eq!(stdio.command, "srv");
    assert_eq!(stdio.args, ["-v", "x"]);
    assert_eq!(
        stdio.env,
        BTreeMap::from([("A".into(), "1".into()), ("T".into(), "s3cret".into())])
    );
    assert_eq!(stdio.cwd.as_deref(), Some(std::path::Path::new("sub")));
    assert_eq!(zeta.deferred, Some(false));
    assert_eq!(zeta.timeout, Some(Duration::from_millis(2500)));

    let alpha = config.get("alpha").unwrap();
    let TransportConfig::Http(http) = &alpha.transport else {
        panic!("alpha is http: {alpha:?}");
    };
    assert_eq!(http.url, "https://example.invalid/mcp");
    assert_eq!(http.headers["Authorization"], "Bearer s3cret");
    assert_eq!(alpha.deferred, Some(true));
    assert_eq!(alpha.timeout, None);
}

#[test]
fn type_stdio_is_explicit_or_implied_by_command() {
    let config =
        parse(r#"{"mcpServers": {"a": {"type": "stdio", "command": "x"}, "b": {"command": "y"}}}"#)
            .unwrap();
    assert!(matches!(
        config.get("a").unwrap().transport,
        TransportConfig::Stdio(_)
    ));
    assert!(matches!(
        config.get("b").unwrap().transport,
        TransportConfig::Stdio(_)
    ));
}

#[test]
fn a_url_without_type_is_http() {
    let config = parse(r#"{"mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp"}}}"#).unwrap();
    assert!(matches!(
        config.get("a").unwrap().transport,
        TransportConfig::Http(_)
    ));
}

#[test]
fn errors_name_the_server_and_the_key() {
    let cases = [
        (
            r#"{"mcpServers": {"s": {}}}"#,
            "MCP server 's': 'command' is required",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "  "}}}"#,
            "MCP server 's': 'command' is required",
        ),
        (
            r#"{"mcpServers": {"s": {"type": "http"}}}"#,
            "MCP server 's': 'url' is required",
        ),
        (
            r#"{"mcpServers": {"s": {"command": 3}}}"#,
            "MCP server 's': 'command' must be a string",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "args": ["a", 1]}}}"#,
            "MCP server 's': 'args' must be an array of strings",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "env": {"K": 1}}}}"#,
            "MCP server 's': 'env.K' must be a string",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "env": ["K"]}}}"#,
            "MCP server 's': 'env' must be an object of strings",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "env": {"K": "${NOPE}"}}}}"#,
            "MCP server 's': 'env.K' uses ${NOPE}, which is not set",
        ),
        (
            r#"{"mcpServers": {"s": {"url": "u", "headers": {"X-Key": "${TOKEN"}}}}"#,
            "MCP server 's': 'headers.X-Key' has a malformed '${...}' reference",
        ),
        (
            r#"{"mcpServers": {"s": {"url": "u", "headers": {"bad header": "v"}}}}"#,
            "MCP server 's': 'headers.bad header' is not a valid HTTP header",
        ),
        (
            r#"{"mcpServers": {"s": {"type": "websocket", "url": "u"}}}"#,
            "MCP server 's': 'type' is 'websocket'; supported are 'stdio' (a command), 'http' (streamable HTTP) and 'sse' (HTTP with server-sent events)",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "url": "u"}}}"#,
            "MCP server 's': 'url' does not apply to a stdio server",
        ),
        (
            r#"{"mcpServers": {"s": {"type": "http", "url": "u", "args": []}}}"#,
            "MCP server 's': 'args' does not apply to a http server",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "deferred": "yes"}}}"#,
            "MCP server 's': 'deferred' must be true or false",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "timeout_ms": 0}}}"#,
            "MCP server 's': 'timeout_ms' must be a positive integer (milliseconds)",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "timeout_ms": 1.5}}}"#,
            "MCP server 's': 'timeout_ms' must be a positive integer (milliseconds)",
        ),
        (
            r#"{"mcpServers": {"s": 3}}"#,
            "MCP server 's': the entry must be an object",
        ),
        (
            r#"{"mcpServers": {"a__b": {"command": "x"}}}"#,
            "invalid MCP server name 'a__b'",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(err(text), expected, "for {text}");
    }
}

fn stdio_of(text: &str) -> StdioConfig {
    match parse(text).unwrap().servers()[0].transport.clone() {
        TransportConfig::Stdio(stdio) => stdio,
        other => panic!("not stdio: {other:?}"),
    }
}

fn url_of(text: &str) -> String {
    match parse(text).unwrap().servers()[0].transport.clone() {
        TransportConfig::Http(http) => http.url,
        other => panic!("not http: {other:?}"),
    }
}

#[test]
fn command_is_expanded_with_defaults() {
    let stdio = stdio_of(r#"{"mcpServers": {"s": {"command": "/opt/${TOKEN}/bin/srv"}}}"#);
    assert_eq!(stdio.command, "/opt/s3cret/bin/srv");
    let stdio = stdio_of(r#"{"mcpServers": {"s": {"command": "${NOPE:-srv}"}}}"#);
    assert_eq!(stdio.command, "srv");
    let stdio = stdio_of(r#"{"mcpServers": {"s": {"command": "${EMPTY:-srv} $x $$"}}}"#);
    assert_eq!(stdio.command, "srv $x $$");
}

#[test]
fn every_args_element_is_expanded_with_defaults() {
    let stdio = stdio_of(
        r#"{"mcpServers": {"s": {"command": "x",
            "args": ["--root", "${TOKEN}", "${NOPE:-/srv}", "${EMPTY:-d}", "$HOME", "a$${TOKEN}"]}}}"#,
    );
    assert_eq!(
        stdio.args,
        ["--root", "s3cret", "/srv", "d", "$HOME", "a$s3cret"]
    );
}

#[test]
fn url_is_expanded_with_defaults() {
    assert_eq!(
        url_of(r#"{"mcpServers": {"s": {"url": "${NOPE:-http://127.0.0.1:9}/mcp"}}}"#),
        "http://127.0.0.1:9/mcp"
    );
    assert_eq!(
        url_of(r#"{"mcpServers": {"s": {"type": "http", "url": "https://${HOST}/${TOKEN}"}}}"#),
        "https://example.invalid/s3cret"
    );
}

#[test]
fn expansion_errors_name_the_key_path() {
    let cases = [
        (
            r#"{"mcpServers": {"s": {"command": "${NOPE}"}}}"#,
            "MCP server 's': 'command' uses ${NOPE}, which is not set",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "args": ["a", "${NOPE}"]}}}"#,
            "MCP server 's': 'args[1]' uses ${NOPE}, which is not set",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "args": ["${TOKEN}", "b", "--root=${NOPE}"]}}}"#,
            "MCP server 's': 'args[2]' uses ${NOPE}, which is not set",
        ),
        (
            r#"{"mcpServers": {"s": {"url": "https://${NOPE}/mcp"}}}"#,
            "MCP server 's': 'url' uses ${NOPE}, which is not set",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "x", "args": ["${TOKEN"]}}}"#,
            "MCP server 's': 'args[0]' has a malformed '${...}' reference",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "${}"}}}"#,
            "MCP server 's': 'command' has a malformed '${...}' reference",
        ),
        (
            r#"{"mcpServers": {"s": {"url": "http://h/${1X}"}}}"#,
            "MCP server 's': 'url' has a malformed '${...}' reference",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "${EMPTY}"}}}"#,
            "MCP server 's': 'command' is empty after expanding its '${...}' references",
        ),
        (
            r#"{"mcpServers": {"s": {"url": " ${EMPTY:-} "}}}"#,
            "MCP server 's': 'url' is empty after expanding its '${...}' references",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(err(text), expected, "for {text}");
    }
}

#[test]
fn the_connection_key_is_computed_from_expanded_values() {
    let with = |token: &'static str| move |name: &str| (name == "TOKEN").then(|| token.to_owned());
    let text = r#"{"mcpServers": {"s": {"command": "${TOKEN}", "args": ["${TOKEN}"]},
                                   "h": {"url": "http://${TOKEN}/mcp"}}}"#;
    let one = McpConfig::parse(text, &with("a")).unwrap();
    let two = McpConfig::parse(text, &with("b")).unwrap();
    let literal = McpConfig::parse(
        r#"{"mcpServers": {"s": {"command": "a", "args": ["a"]}, "h": {"url": "http://a/mcp"}}}"#,
        &vars,
    )
    .unwrap();
    for name in ["s", "h"] {
        let key = |c: &McpConfig| c.get(name).unwrap().connection_key();
        assert_ne!(key(&one), key(&two), "{name}");
        assert_eq!(key(&one), key(&literal), "{name}");
    }
}

#[test]
fn bad_outer_shape_and_duplicates_are_json_errors_with_positions() {
    let missing = err(r#"{"servers": {}}"#);
    assert!(missing.contains("missing field `mcpServers`"), "{missing}");
    let twice = err(r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#);
    assert!(twice.contains("'a' appears twice"), "{twice}");
    let broken = err("{\n  \"mcpServers\": {\n");
    // The position of the problem: the text ends inside line 3.
    assert!(broken.ends_with("at line 3 column 0"), "{broken}");
}

#[test]
fn unknown_keys_are_ignored() {
    let config =
        parse(r#"{"mcpServers": {"s": {"command": "x", "description": "kept quiet"}}}"#).unwrap();
    let expected = ServerConfig::new(
        "s".parse().unwrap(),
        TransportConfig::Stdio(StdioConfig::new("x")),
    );
    assert_eq!(config.servers(), [expected]);
}

#[test]
fn load_reads_a_real_file_and_names_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".mcp.json");
    let text = r#"{"mcpServers": {"s": {"command": "${TOKEN}"}}}"#;
    std::fs::write(&path, text).unwrap();
    let config = McpConfig::load(&path, &vars).unwrap();
    // The file's text, parsed (and expanded) as `parse` does.
    let expected = ServerConfig::new(
        "s".parse().unwrap(),
        TransportConfig::Stdio(StdioConfig::new("s3cret")),
    );
    assert_eq!(config.servers(), [expected]);
    let missing = McpConfig::load(&dir.path().join("nope.json"), &vars).unwrap_err();
    assert!(missing.to_string().contains("nope.json"), "{missing}");
}

#[test]
fn the_connection_key_depends_on_the_transport_only() {
    let a: ServerName = "a".parse().unwrap();
    let b: ServerName = "b".parse().unwrap();
    let stdio = TransportConfig::Stdio(StdioConfig::new("srv").with_args(["x"]));
    let one = ServerConfig::new(a.clone(), stdio.clone());
    let same = ServerConfig::new(b, stdio).with_deferred(Some(true));
    let other = ServerConfig::new(
        a,
        TransportConfig::Stdio(StdioConfig::new("srv").with_args(["y"])),
    );
    assert_eq!(one.connection_key(), same.connection_key());
    assert_ne!(one.connection_key(), other.connection_key());
    // Stable across runs and machines (FNV-1a of the canonical JSON).
    assert_eq!(one.connection_key(), one.clone().connection_key());
}

#[test]
fn from_servers_replaces_in_place() {
    let s = |name: &str, cmd: &str| {
        ServerConfig::new(
            name.parse().unwrap(),
            TransportConfig::Stdio(StdioConfig::new(cmd)),
        )
    };
    let config = McpConfig::from_servers([s("a", "1"), s("b", "2"), s("a", "3")]);
    let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(config.get("a").unwrap(), &s("a", "3"));
}

#[test]
fn expansion_rules() {
    assert_eq!(
        expand("plain $HOME $ {x}", &vars).unwrap(),
        "plain $HOME $ {x}"
    );
    assert_eq!(expand("${TOKEN}-${TOKEN}", &vars).unwrap(), "s3cret-s3cret");
    assert_eq!(expand("${NOPE:-fallback}", &vars).unwrap(), "fallback");
    assert_eq!(expand("${EMPTY:-fallback}", &vars).unwrap(), "fallback");
    assert_eq!(expand("${EMPTY}", &vars).unwrap(), "");
    assert_eq!(expand("${TOKEN:-x}", &vars).unwrap(), "s3cret");
    assert_eq!(
        expand("${NOPE}", &vars),
        Err(ExpandError::Unset("NOPE".into()))
    );
    assert_eq!(expand("${}", &vars), Err(ExpandError::Malformed));
    assert_eq!(expand("${1A}", &vars), Err(ExpandError::Malformed));
    assert_eq!(expand("${A B}", &vars), Err(ExpandError::Malformed));
    assert_eq!(expand("${TOKEN", &vars), Err(ExpandError::Malformed));
    assert_eq!(expand("ok ${TOKEN} ${", &vars), Err(ExpandError::Malformed));
    // No nesting; an unclosed reference before another is caught too.
    assert_eq!(
        expand("${NOPE:-${TOKEN}}", &vars),
        Err(ExpandError::Malformed)
    );
    assert_eq!(
        expand("${EMPTY:-${TOKEN}", &vars),
        Err(ExpandError::Malformed)
    );
    assert_eq!(expand("${NOPE:-$x}", &vars).unwrap(), "$x");
    // `$$` is no escape: both dollars are kept, and a reference after them
    // is still expanded.
    assert_eq!(expand("$$ $${TOKEN}", &vars).unwrap(), "$$ $s3cret");
    // Replacement text is not expanded again.
    let tricky = |_: &str| Some("${TOKEN}".to_owned());
    assert_eq!(expand("${X}", &tricky).unwrap(), "${TOKEN}");
}

proptest! {
    #[test]
    fn prop_expansion_never_panics_and_is_identity_without_references(text in "\\PC{0,40}") {
        let result = expand(&text, &vars);
        if !text.contains("${") {
            prop_assert_eq!(result, Ok(text));
        }
    }

    #[test]
    fn prop_parse_never_panics_on_arbitrary_text(text in "\\PC{0,60}") {
        let _ = McpConfig::parse(&text, &vars);
    }
}

/// Any JSON value, small: leaves that matter to the parser (strings with
/// `${...}` references, numbers of every sign and kind), nested twice.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6..1e6f64).prop_map(Value::from),
        prop_oneof![
            "\\PC{0,8}",
            "[a-z]{0,3}\\$\\{[A-Z_:-]{0,6}\\}?[a-z]{0,3}",
            Just("stdio".to_owned()),
            Just("http".to_owned()),
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[A-Za-z_ -]{0,5}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A server entry: mostly objects of the keys `.mcp.json` knows (plus one
/// it does not), with values of any type.
fn json_entry() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "deferred",
        "timeout_ms",
        "other",
    ]);
    prop_oneof![
        1 => json_value(),
        4 => prop::collection::btree_map(keys, json_value(), 0..6)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        2 => stdio_or_http_entry(),
    ]
}

/// A string that often holds `${...}` references, well formed or not, to
/// set, unset, empty or defaulted variables.
fn reference_string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z/$ -]{0,3}",
        prop::sample::select(vec!["TOKEN", "EMPTY", "HOST", "NOPE", "", "1A"])
            .prop_flat_map(|name| { (Just(name), prop::option::of("[a-z/$]{0,3}"), any::<bool>()) })
            .prop_map(|(name, default, closed)| {
                let default = default.map(|d| format!(":-{d}")).unwrap_or_default();
                let close = if closed { "}" } else { "" };
                format!("${{{name}{default}{close}")
            }),
    ];
    prop::collection::vec(piece, 0..4).prop_map(|pieces| pieces.concat())
}

/// A well-shaped stdio or HTTP entry whose `command`, `args` and `url`
/// (and `env`/`headers` values) are reference strings.
fn stdio_or_http_entry() -> impl Strategy<Value = Value> {
    prop_oneof![
        (
            reference_string(),
            prop::collection::vec(reference_string(), 0..4),
            prop::collection::btree_map("[A-Z]{1,3}", reference_string(), 0..2),
        )
            .prop_map(|(command, args, env)| {
                serde_json::json!({"command": command, "args": args, "env": env})
            }),
        (
            reference_string(),
            prop::collection::btree_map("[A-Za-z-]{1,4}", reference_string(), 0..2),
        )
            .prop_map(|(url, headers)| serde_json::json!({"url": url, "headers": headers})),
    ]
}

proptest! {
    #[test]
    fn prop_parse_never_panics_on_json_and_every_error_names_a_server(
        servers in prop::collection::btree_map(
            prop_oneof!["[a-z][a-z0-9_-]{0,5}", "\\PC{0,5}"],
            json_entry(),
            0..4,
        )
    ) {
        let names: Vec<String> = servers.keys().cloned().collect();
        let text = serde_json::json!({"mcpServers": servers}).to_string();
        match McpConfig::parse(&text, &vars) {
            Ok(config) => {
                let parsed: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
                prop_assert_eq!(parsed, names.iter().map(String::as_str).collect::<Vec<_>>());
            }
            Err(error @ ConfigError::Json { .. }) => {
                prop_assert!(false, "the outer shape is right: {}", error);
            }
            Err(error) => {
                let message = error.to_string();
                prop_assert!(
                    names.iter().any(|n| message.contains(&format!("'{n}'"))),
                    "{} names no server of {:?}", message, names
                );
            }
        }
    }
}

proptest! {
    #[test]
    fn prop_expanded_command_args_and_url_hold_no_reference(entry in stdio_or_http_entry()) {
        let text = serde_json::json!({"mcpServers": {"s": entry}}).to_string();
        match McpConfig::parse(&text, &vars) {
            Ok(config) => {
                let strings: Vec<String> = match config.servers()[0].transport.clone() {
                    TransportConfig::Stdio(stdio) => {
                        std::iter::once(stdio.command).chain(stdio.args).collect()
                    }
                    TransportConfig::Http(http) | TransportConfig::Sse(http) => vec![http.url],
                };
                for s in strings {
                    prop_assert!(!s.contains("${"), "left unexpanded: {}", s);
                }
            }
            Err(error) => {
                let message = error.to_string();
                prop_assert!(message.starts_with("MCP server 's': '"), "{}", message);
            }
        }
    }
}

#[test]
fn an_http_server_carries_its_oauth_settings_and_a_stdio_one_refuses_them() {
    let config = parse(
        r#"{"mcpServers": {"gh": {"type": "http", "url": "https://x.invalid/mcp",
            "oauth": {"clientId": "zr", "clientSecret": "${TOKEN}"}}}}"#,
    )
    .unwrap();
    let TransportConfig::Http(http) = &config.get("gh").unwrap().transport else {
        panic!("an HTTP server");
    };
    let oauth = http.oauth.as_ref().expect("oauth settings");
    assert_eq!(oauth.client_id.as_deref(), Some("zr"));
    assert_eq!(oauth.client_secret.as_deref(), Some("s3cret"));
    assert_eq!(
        err(r#"{"mcpServers": {"local": {"command": "x", "oauth": {}}}}"#),
        "MCP server 'local': 'oauth' does not apply to a stdio server"
    );
}
