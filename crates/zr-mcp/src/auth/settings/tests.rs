//! Tests of the `oauth` key: every field, and errors naming the server and the key.
use serde_json::json;

use super::{KeySource, parse};

fn vars(name: &str) -> Option<String> {
    (name == "SECRET").then(|| "s3cret".to_owned())
}

#[test]
fn every_key_is_read_and_secrets_are_expanded() {
    let settings = parse(
        "gh",
        &json!({"clientId": "zr", "clientSecret": "${SECRET}", "scopes": "read write",
                "callbackPort": 8976, "clientMetadataUrl": "https://zr.example/client.json"}),
        &vars,
    )
    .unwrap();
    assert_eq!(settings.client_id.as_deref(), Some("zr"));
    assert_eq!(settings.client_secret.as_deref(), Some("s3cret"));
    assert_eq!(settings.scopes, ["read", "write"]);
    assert_eq!(settings.callback_port, Some(8976));
    assert!(!settings.client_credentials);

    let machine = parse(
        "gh",
        &json!({"grant": "client_credentials", "clientId": "bot", "privateKeyFile": "k.pem",
                "signingAlgorithm": "RS256", "scopes": ["a"]}),
        &vars,
    )
    .unwrap();
    assert!(machine.client_credentials);
    let key = machine.private_key.unwrap();
    assert_eq!(key.algorithm, "RS256");
    assert_eq!(key.source, KeySource::File("k.pem".into()));
}

#[test]
fn mistakes_name_the_server_and_the_key() {
    let cases = [
        (json!("x"), "MCP server 'gh': 'oauth' must be an object"),
        (
            json!({"callbackPort": 70000}),
            "'oauth.callbackPort' must be a port number",
        ),
        (
            json!({"scopes": 3}),
            "'oauth.scopes' must be an array of strings",
        ),
        (json!({"grant": "password"}), "'oauth.grant' must be"),
        (
            json!({"grant": "client_credentials"}),
            "'oauth.clientId' is required",
        ),
        (
            json!({"grant": "client_credentials", "clientId": "b"}),
            "'oauth.clientSecret' is required",
        ),
        (
            json!({"signingAlgorithm": "HS256"}),
            "'oauth.signingAlgorithm' must be one of",
        ),
        (
            json!({"clientSecret": "${NOPE}"}),
            "'oauth.clientSecret' uses ${NOPE}, which is not set",
        ),
    ];
    for (value, message) in cases {
        let error = parse("gh", &value, &vars).unwrap_err().to_string();
        assert!(error.contains(message), "{value}: {error}");
    }
}
