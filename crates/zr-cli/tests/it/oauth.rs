//! `zr mcp login` end to end against a real OAuth-protected MCP server
//! (`oauth_server.mjs`: the TypeScript SDK's own authorization server and
//! bearer-token middleware on loopback ports). The "browser" is an HTTP
//! client here that follows the URL `zr mcp login` prints, through the
//! authorization server's redirect, to zr's loopback listener. Every zr
//! run has `ZR_LOG=trace`, and no token the server issued (nor the
//! authorization code the browser carried back) may appear in any output
//! or any file but the token file.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{TempProject, stderr, stdout, zr_process};

/// The test server; killed when dropped.
struct OAuthServer {
    child: Child,
    mcp: String,
    issuer: String,
    tokens: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OAuthServer {
    fn start(ttl_secs: u64) -> Self {
        let dir = tempfile::tempdir().expect("temporary folder");
        let tokens = dir.path().join("tokens.txt");
        std::fs::write(&tokens, "").expect("tokens file");
        let sdk = zr_test_support::deps::dir()
            .join("node/node_modules/@modelcontextprotocol/sdk/dist/esm");
        assert!(
            sdk.is_dir(),
            "{} is missing: run `cargo xtask deps`",
            sdk.display()
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/oauth_server.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .arg(&sdk)
            .arg(&tokens)
            .arg(ttl_secs.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the server's first line");
        let urls: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        Self {
            child,
            mcp: urls["mcp"].as_str().expect("mcp").to_owned(),
            issuer: urls["issuer"].as_str().expect("issuer").to_owned(),
            tokens,
            _dir: dir,
        }
    }

    /// Every token issued so far, and how many refresh grants there were.
    fn issued(&self) -> (Vec<String>, usize) {
        let text = std::fs::read_to_string(&self.tokens).expect("tokens file");
        let tokens = text
            .lines()
            .filter_map(|l| l.split_once(' ').map(|(_, t)| t.to_owned()))
            .collect();
        let refreshed = text.lines().filter(|l| l.starts_with("refreshed ")).count();
        (tokens, refreshed)
    }
}

/// A project using the server, and a user config folder of its own.
struct Setup {
    project: TempProject,
    config: tempfile::TempDir,
    outputs: Vec<String>,
    /// The authorization codes the browser carried to zr's listener.
    codes: Vec<String>,
}

impl Setup {
    fn new(server: &OAuthServer) -> Self {
        let project = TempProject::new();
        project
            .write(
                ".mcp.json",
                &format!(
                    r#"{{"mcpServers": {{"remote": {{"type": "http", "url": "{}"}}}}}}"#,
                    server.mcp
                ),
            )
            .write(
                "zr.toml",
                "[policy]\nlazy = \"never\"\n\n[permissions]\nallow = [\"mcp__remote__whoami\"]\n",
            );
        Self {
            project,
            config: tempfile::tempdir().expect("config folder"),
            outputs: Vec::new(),
            codes: Vec::new(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = zr_process();
        cmd.args(args)
            .current_dir(self.project.path())
            .env("ZR_CONFIG_DIR", self.config.path())
            .env("ZR_LOG", "trace")
            .env("RUST_LOG", "trace");
        cmd
    }

    fn zr(&mut self, args: &[&str]) -> Output {
        let out = self.command(args).output().expect("zr runs");
        self.outputs
            .push(format!("{}{}", stdout(&out), stderr(&out)));
        out
    }

    fn token_files(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.config.path().join("mcp-auth")) {
            Ok(entries) => entries.map(|e| e.expect("entry").path()).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// `zr mcp login remote`, with the browser following the printed URL.
    fn login(&mut self, issuer: &str) -> Output {
        let mut child = self
            .command(&["mcp", "login", "remote", "--timeout", "60"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("zr starts");
        let mut out = BufReader::new(child.stdout.take().expect("piped"));
        let mut printed = String::new();
        let url = loop {
            let mut line = String::new();
            assert!(
                out.read_line(&mut line).expect("zr's output") > 0,
                "zr mcp login ended without a URL: {printed}"
            );
            printed.push_str(&line);
            if line.starts_with(issuer) {
                break line.trim().to_owned();
            }
        };
        let landed = browse(&url);
        let code = landed
            .1
            .split(['?', '&'])
            .find_map(|pair| pair.strip_prefix("code="))
            .unwrap_or_else(|| panic!("no code in {}", landed.1));
        self.codes.push(code.to_owned());
        assert_eq!(
            landed.0, 200,
            "the browser ended on {}: {}",
            landed.1, landed.2
        );
        assert!(
            landed.2.contains("You can close this window"),
            "{}",
            landed.2
        );
        let mut rest = String::new();
        out.read_to_string(&mut rest).expect("zr's output");
        let mut output = child.wait_with_output().expect("zr exits");
        output.stdout = format!("{printed}{rest}").into_bytes();
        self.outputs
            .push(format!("{}{}", stdout(&output), stderr(&output)));
        output
    }

    /// No token in any output, nor in any file of the project or of the
    /// config folder other than the token file itself.
    fn assert_no_token_leaked(&self, server: &OAuthServer) {
        let (tokens, _) = server.issued();
        assert!(!tokens.is_empty(), "the server issued no token");
        // The logs were on: the search below read them.
        assert!(
            self.outputs
                .iter()
                .any(|o| o.contains("using the stored OAuth login")),
            "no debug log in any output"
        );
        let store = self.token_files();
        let mut texts: Vec<(String, String)> = self
            .outputs
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("output {i}"), t.clone()))
            .collect();
        for root in [self.project.path(), self.config.path()] {
            for file in files(root) {
                if !store.contains(&file) {
                    let text =
                        String::from_utf8_lossy(&std::fs::read(&file).expect("file")).into_owned();
                    texts.push((file.display().to_string(), text));
                }
            }
        }
        for token in &tokens {
            for (name, text) in &texts {
                assert!(
                    !text.contains(token.as_str()),
                    "a token appears in {name}:\n{text}"
                );
            }
        }
        assert!(!self.codes.is_empty(), "no login carried a code");
        for code in &self.codes {
            for (name, text) in &texts {
                assert!(
                    !text.contains(code.as_str()),
                    "the authorization code appears in {name}:\n{text}"
                );
            }
        }
    }
}

fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                folders.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// A minimal browser: `GET url`, following redirects; the last status,
/// URL and body.
fn browse(url: &str) -> (u16, String, String) {
    let mut url = url.to_owned();
    for _ in 0..5 {
        let rest = url.strip_prefix("http://").expect("an http URL");
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let mut stream = TcpStream::connect(host).expect("the browser connects");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        write!(
            stream,
            "GET {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n",
            if path.is_empty() { "/" } else { path }
        )
        .expect("request sent");
        let mut response = Vec::new();
        stream.read_to_end(&mut response).expect("response");
        let response = String::from_utf8_lossy(&response).into_owned();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let status: u16 = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status");
        let location = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("location")
                .then(|| value.trim().to_owned())
        });
        match location {
            Some(next) if (300..400).contains(&status) => url = next,
            _ => return (status, url, body.to_owned()),
        }
    }
    panic!("too many redirects from {url}");
}

#[test]
fn login_stores_a_private_token_that_list_and_run_use_and_refresh_and_logout_forgets() {
    let server = OAuthServer::start(2);
    let mut setup = Setup::new(&server);

    // Before: a server that wants a token needs a login, which is not an error.
    let out = setup.zr(&["mcp", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("remote: needs login (http: "), "{text}");
    assert!(text.contains("help: run `zr mcp login remote`"), "{text}");

    let out = setup.login(&server.issuer);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Logged in to 'remote' (scopes: mcp:tools)"),
        "{text}"
    );

    // The token file: private, in the user's folder, not the project's.
    let store = setup.token_files();
    assert_eq!(store.len(), 1, "{store:?}");
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&store[0]), 0o600);
    assert_eq!(mode(store[0].parent().expect("folder")), 0o700);
    let (tokens, refreshed) = server.issued();
    assert_eq!((tokens.len(), refreshed), (2, 0), "{tokens:?}");
    let saved = std::fs::read_to_string(&store[0]).expect("token file");
    assert!(tokens.iter().all(|t| saved.contains(t.as_str())));

    let out = setup.zr(&["mcp", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("remote: connected (http: "), "{text}");
    assert!(text.contains("mcp__remote__whoami"), "{text}");

    // The access token lives 2 s: the next connection refreshes it and
    // writes the new one back.
    std::thread::sleep(Duration::from_millis(2500));
    setup.project.write(
        "script.json",
        r#"{"agents": {"root": [{"turns": [
            {"tool_calls": [{"name": "mcp__remote__whoami", "input": {}}]},
            {"text": "done"}]}]}}"#,
    );
    let out = setup.zr(&["run", "--script", "script.json", "who am I?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
    let (_, refreshed) = server.issued();
    assert_eq!(refreshed, 1, "the expired token was not refreshed");
    let transcripts: String = files(&setup.project.path().join(".zr/sessions"))
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("transcript"))
        .collect();
    assert!(
        transcripts.contains("client "),
        "the tool did not run: {transcripts}"
    );

    setup.assert_no_token_leaked(&server);

    let out = setup.zr(&["mcp", "logout", "remote"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Logged out of 'remote'"));
    assert!(setup.token_files().is_empty());
    let out = setup.zr(&["mcp", "list"]);
    assert!(
        stdout(&out).contains("remote: needs login"),
        "{}",
        stdout(&out)
    );
    let out = setup.zr(&["mcp", "logout", "remote"]);
    assert!(stdout(&out).contains("Not logged in to 'remote'"));
}

#[test]
fn login_refuses_a_stdio_server_and_an_unknown_one() {
    let project = TempProject::new();
    project.write(
        ".mcp.json",
        r#"{"mcpServers": {"local": {"command": "true"}}}"#,
    );
    let out = project.zr(&["mcp", "login", "local"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("OAuth applies only to HTTP servers"),
        "{}",
        stderr(&out)
    );
    let out = project.zr(&["mcp", "login", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the servers are: local"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn login_waits_only_as_long_as_its_timeout() {
    let server = OAuthServer::start(3600);
    let setup = Setup::new(&server);
    let began = Instant::now();
    let out = setup
        .command(&["mcp", "login", "remote", "--timeout", "1"])
        .output()
        .expect("zr runs");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no authorization arrived at http://127.0.0.1:"),
        "{}",
        stderr(&out)
    );
    assert!(began.elapsed() < Duration::from_secs(20));
    assert!(setup.token_files().is_empty());
}
