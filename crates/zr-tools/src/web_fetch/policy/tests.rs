//! The checks made without resolving: credentials, IP-literal hosts in
//! every spelling the URL parser accepts, and the policy's host matching.

use super::*;

fn url(s: &str) -> Url {
    Url::parse(s).expect("the tests give valid URLs")
}

fn refused(policy: &WebFetchPolicy, s: &str) -> Option<String> {
    check_url(policy, &url(s)).err().map(|e| e.to_string())
}

#[test]
fn the_url_parser_normalises_ipv4_spellings() {
    for (given, host) in [
        ("http://2130706433:8080/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
        ("http://LOCALHOST./", "localhost."),
    ] {
        assert_eq!(url(given).host_str(), Some(host), "{given}");
    }
}

#[test]
fn ip_literals_that_are_not_public_are_refused_by_default() {
    let policy = WebFetchPolicy::default();
    for s in [
        "http://127.0.0.1:8080/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0:22/",
        "http://[::]/",
        "http://10.0.0.1/",
        "https://192.168.1.1/",
        "http://100.64.0.1/",
        "http://[fe80::1]/",
        "http://[fd00::1]/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
    ] {
        assert!(refused(&policy, s).is_some(), "{s} was not refused");
    }
    assert_eq!(
        refused(&policy, "http://0x7f.1/").as_deref(),
        Some("127.0.0.1 is not a public internet address: it is a loopback address (this machine)")
    );
}

#[test]
fn public_literals_and_names_pass_the_check() {
    let policy = WebFetchPolicy::default();
    for s in [
        "http://8.8.8.8/",
        "https://[2606:4700:4700::1111]/",
        "https://docs.rs/",
        // Names are judged by the resolver, after resolution.
        "http://localhost:8080/",
    ] {
        assert_eq!(refused(&policy, s), None, "{s}");
    }
}

#[test]
fn credentials_are_refused_whatever_the_policy() {
    let open = WebFetchPolicy {
        allow_private: true,
        private_hosts: vec!["127.0.0.1".to_owned()],
    };
    for policy in [WebFetchPolicy::default(), open] {
        for s in [
            "http://user:pass@127.0.0.1:8080/",
            "http://user@example.com/",
            "https://:secret@example.com/",
        ] {
            let message = refused(&policy, s).unwrap_or_default();
            assert!(message.contains("user name or password"), "{s}: {message}");
            assert!(
                !message.contains("pass@") && !message.contains("secret"),
                "{message}"
            );
        }
    }
}

#[test]
fn allowed_hosts_open_only_themselves() {
    let policy = WebFetchPolicy {
        allow_private: false,
        private_hosts: vec![
            "127.0.0.1".to_owned(),
            "[::1]".to_owned(),
            "Wiki.Corp.".to_owned(),
        ],
    };
    assert_eq!(refused(&policy, "http://127.0.0.1:9/"), None);
    assert_eq!(refused(&policy, "http://2130706433:9/"), None);
    assert_eq!(refused(&policy, "http://[0:0:0:0:0:0:0:1]/"), None);
    assert!(refused(&policy, "http://127.0.0.2/").is_some());
    assert!(refused(&policy, "http://10.0.0.1/").is_some());
    assert!(policy.allows_private("wiki.corp"));
    assert!(policy.allows_private("WIKI.CORP."));
    assert!(!policy.allows_private("a.wiki.corp"));
    assert!(!policy.allows_private("localhost"));
    let all = WebFetchPolicy {
        allow_private: true,
        private_hosts: Vec::new(),
    };
    assert_eq!(refused(&all, "http://169.254.169.254/"), None);
}

#[test]
fn the_model_is_told_what_it_may_fetch() {
    let default = WebFetchPolicy::default().describe();
    assert!(
        default.starts_with("Only public internet addresses"),
        "{default}"
    );
    let some = WebFetchPolicy {
        allow_private: false,
        private_hosts: vec!["localhost".to_owned(), "wiki.corp".to_owned()],
    }
    .describe();
    assert!(
        some.ends_with(" Allowed beyond them: localhost, wiki.corp."),
        "{some}"
    );
    let all = WebFetchPolicy {
        allow_private: true,
        private_hosts: Vec::new(),
    }
    .describe();
    assert!(
        all.starts_with("Private and loopback addresses are allowed"),
        "{all}"
    );
}
