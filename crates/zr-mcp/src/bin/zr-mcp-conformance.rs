//! A small MCP client on zr-mcp for the MCP conformance suite's client scenarios.
//!
//! The suite runs `zr-mcp-conformance <server-url>` with the scenario name in
//! `MCP_CONFORMANCE_SCENARIO` (and, for some, credentials in
//! `MCP_CONFORMANCE_CONTEXT`). The client connects over streamable HTTP
//! through an [`McpHub`], lists the tools, and then:
//!
//! - `initialize`: nothing more;
//! - `tools_call`: calls `add_numbers` with `{"a": 2, "b": 3}`;
//! - `sse-retry`: calls `test_reconnection` (its answer arrives only after
//!   the client reconnects to the event stream);
//! - `auth/*`: calls every listed tool with `{}`;
//! - `elicitation-sep1034-client-defaults`: calls
//!   `test_client_elicitation_defaults`, whose server asks a form; the
//!   client's elicitor accepts it with every field's default (SEP-1034);
//! - any other scenario: calls nothing.
//!
//! OAuth goes through zr-mcp as `zr mcp login` does: a server that answers
//! 401 (or 403 `insufficient_scope`) is logged in to with [`login`], whose
//! "browser" here is an HTTP client that follows the authorization URL and
//! its redirect to the loopback listener, and the session starts again on a
//! new hub with the stored token; at most three logins (the suite's retry
//! limit). Tokens go to a temporary folder. The context's `client_id` and
//! `client_secret` become a pre-registered client, or with
//! `auth/client-credentials-*` a client-credentials grant (with
//! `private_key_pem`: a signed JWT).
//!
//! It exits with status 0 on success and 1 (with the error on stderr)
//! otherwise.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use serde_json::{Value, json};
use zr_mcp::{
    ElicitationAnswer, ElicitationRequest, Elicitor, HttpConfig, HubOptions, LoginOptions,
    McpConfig, McpError, McpHub, OAuthSettings, PrivateKey, ServerConfig, TokenStore,
    TransportConfig, login,
};
use zr_types::{BoxFuture, ServerName};

/// Accepts every form as offered: each field's default.
#[derive(Debug)]
struct AcceptDefaults;

impl Elicitor for AcceptDefaults {
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer> {
        let _ = writeln!(std::io::stderr(), "elicitation: {}", request.message);
        Box::pin(async move { ElicitationAnswer::Accept(request.defaults()) })
    }
}

/// The client metadata document URL the suite's `auth/basic-cimd` expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Logins after the first refusal, at most.
const MAX_LOGINS: usize = 3;

fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        let _ = writeln!(std::io::stderr(), "usage: zr-mcp-conformance <server-url>");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&url, &scenario, &context)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let message = zr_types::error_chain(&error);
            let _ = writeln!(
                std::io::stderr(),
                "zr-mcp-conformance ({scenario}): {message}"
            );
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str, context: &Value) -> Result<(), McpError> {
    let name: ServerName = "conformance".parse().map_err(|_| McpError::UnknownServer {
        server: "conformance".to_owned(),
    })?;
    let mut http = HttpConfig::new(url);
    if scenario.starts_with("auth/") {
        http = http.with_oauth(oauth_settings(scenario, context));
    }
    let server = ServerConfig::new(name, TransportConfig::Http(http));
    let folder = std::env::temp_dir().join(format!("zr-mcp-conformance-{}", std::process::id()));
    let tokens = TokenStore::new(folder.join("tokens"));
    let options = HubOptions::new(std::env::temp_dir())
        .with_client("zr-mcp-conformance", env!("CARGO_PKG_VERSION"))
        .with_connect_timeout(Duration::from_secs(10))
        .with_call_timeout(Duration::from_secs(20))
        .with_grace(Duration::ZERO)
        .with_tokens(Some(tokens.clone()));
    let outcome = with_logins(&server, &options, &tokens, scenario).await;
    let _ = std::fs::remove_dir_all(&folder);
    outcome
}

/// Runs the session, logging in (at most [`MAX_LOGINS`] times) whenever the
/// server asks for authorization, each time on a new hub.
async fn with_logins(
    server: &ServerConfig,
    options: &HubOptions,
    tokens: &TokenStore,
    scenario: &str,
) -> Result<(), McpError> {
    let mut logins = 0;
    loop {
        let hub = McpHub::new(McpConfig::from_servers([server.clone()]), options.clone());
        hub.set_elicitor(Some(Arc::new(AcceptDefaults)));
        match session(&hub, scenario).await {
            Err(McpError::AuthRequired { challenge, .. }) if logins < MAX_LOGINS => {
                logins += 1;
                let _ = writeln!(std::io::stderr(), "authorization required: login {logins}");
                let login_options = LoginOptions::new("zr-mcp-conformance")
                    .with_timeout(Duration::from_secs(20))
                    .with_challenge(challenge)
                    // The suite's path-based authorization servers write
                    // their origin as the issuer.
                    .with_origin_issuer(true);
                login(server, options, tokens, &login_options, |prompt| {
                    tokio::spawn(browse(prompt.url.clone()));
                })
                .await?;
            }
            outcome => return outcome,
        }
    }
}

/// The "browser": follows the authorization URL and its redirects, the
/// last one to the login's loopback listener.
async fn browse(url: String) {
    match reqwest::get(&url).await {
        Ok(response) => {
            let _ = writeln!(std::io::stderr(), "browser: {}", response.status());
        }
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "browser: {error}");
        }
    }
}

async fn session(hub: &McpHub, scenario: &str) -> Result<(), McpError> {
    let lease = hub.acquire("conformance").await?;
    let tools = lease.tools().await?;
    let has = |remote: &str| tools.iter().any(|t| t.handler.remote_name() == remote);
    let calls: Vec<(String, Value)> = match scenario {
        "tools_call" => vec![("add_numbers".to_owned(), json!({"a": 2, "b": 3}))],
        "sse-retry" => vec![("test_reconnection".to_owned(), json!({}))],
        "elicitation-sep1034-client-defaults" => {
            vec![("test_client_elicitation_defaults".to_owned(), json!({}))]
        }
        s if s.starts_with("auth/") => tools
            .iter()
            .map(|t| (t.handler.remote_name().to_owned(), json!({})))
            .collect(),
        _ => Vec::new(),
    };
    for (tool, arguments) in calls {
        if !has(&tool) {
            let _ = writeln!(
                std::io::stderr(),
                "warning: '{tool}' was not listed; calling it anyway"
            );
        }
        let output = lease.call(&tool, arguments).await?;
        let _ = writeln!(std::io::stderr(), "{tool}: {:?}", output.content);
    }
    Ok(())
}

/// The scenario's client: a client-credentials grant, a pre-registered
/// client, or (with nothing in the context) dynamic registration or the
/// client metadata document.
fn oauth_settings(scenario: &str, context: &Value) -> OAuthSettings {
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut settings = OAuthSettings::default();
    settings.client_metadata_url = Some(CLIENT_METADATA_URL.to_owned());
    settings.client_id = text("client_id");
    settings.client_secret = text("client_secret");
    if scenario.starts_with("auth/client-credentials") {
        settings.client_credentials = true;
        settings.private_key = text("private_key_pem").map(|pem| {
            PrivateKey::pem(
                pem,
                text("signing_algorithm").unwrap_or_else(|| "ES256".to_owned()),
            )
        });
    }
    settings
}
