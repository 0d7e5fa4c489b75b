//! `zr mcp login SERVER` and `zr mcp logout SERVER`: the OAuth browser flow for an HTTP server of `.mcp.json`, and forgetting its tokens.
//!
//! Tokens live in the user's store (`zr_mcp::TokenStore::for_user`:
//! `$ZR_CONFIG_DIR/mcp-auth`, else `$XDG_CONFIG_HOME/zr/mcp-auth`, else
//! `~/.config/zr/mcp-auth`), never in the project. Nothing here prints a
//! token: the login prints the authorization URL (a PKCE challenge and a
//! random state, no secret), the scopes granted and the file's path.

use std::io::Write as _;
use std::time::Duration;

use zr_mcp::{LoginOptions, McpError, ServerConfig, TokenStore, TransportConfig};

use crate::error::{CliError, EXIT_OK};
use crate::project::{MCP_FILE, Project, user_tokens};

/// `zr mcp login SERVER [--scope S]... [--timeout SECS]`.
///
/// # Errors
///
/// [`CliError::Usage`] for an unknown or stdio server or no user folder;
/// [`CliError::Mcp`] when the flow fails.
pub(crate) async fn login(
    project: &Project,
    server: &str,
    scopes: &[String],
    timeout: Duration,
) -> Result<u8, CliError> {
    let (config, url) = http_server(project, server)?;
    let tokens = store()?;
    let scopes: Vec<String> = scopes
        .iter()
        .flat_map(|s| s.split_whitespace())
        .map(str::to_owned)
        .collect();
    let options = LoginOptions::new("zr")
        .with_timeout(timeout)
        .with_scopes(scopes);
    let outcome = zr_mcp::login(
        config,
        &project.hub_options(),
        &tokens,
        &options,
        |prompt| {
            let mut out = std::io::stdout().lock();
            // The URL alone on its line, for a terminal that makes it a
            // link and for a script that reads it.
            let _ = writeln!(
                out,
                "To log in to MCP server '{server}' ({url}), open this URL in a browser:\n\n{}\n\nWaiting for the browser to come back to {} (up to {} s)...",
                prompt.url,
                prompt.redirect_uri,
                timeout.as_secs()
            );
            let _ = out.flush();
        },
    )
    .await
    .map_err(|e| CliError::Mcp(Box::new(e)))?;
    let scopes = if outcome.scopes.is_empty() {
        "the server did not say which scopes".to_owned()
    } else {
        format!("scopes: {}", outcome.scopes.join(" "))
    };
    println!(
        "Logged in to '{server}' ({scopes}); the tokens are in {} (readable only by you).",
        outcome.path.display()
    );
    Ok(EXIT_OK)
}

/// `zr mcp logout SERVER`.
///
/// # Errors
///
/// [`CliError::Usage`] for an unknown or stdio server;
/// [`CliError::Mcp`] when the file cannot be removed.
pub(crate) fn logout(project: &Project, server: &str) -> Result<u8, CliError> {
    let (config, url) = http_server(project, server)?;
    let removed = store()?
        .remove(&config.name, url)
        .map_err(|e: McpError| CliError::Mcp(Box::new(e)))?;
    if removed {
        println!("Logged out of '{server}': its tokens are deleted.");
    } else {
        println!("Not logged in to '{server}': nothing to delete.");
    }
    Ok(EXIT_OK)
}

fn store() -> Result<TokenStore, CliError> {
    user_tokens().ok_or_else(|| CliError::Usage {
        message: "cannot tell where to keep OAuth tokens: HOME is not set".to_owned(),
        help: "set HOME, XDG_CONFIG_HOME or ZR_CONFIG_DIR".to_owned(),
    })
}

fn http_server<'p>(
    project: &'p Project,
    server: &str,
) -> Result<(&'p ServerConfig, &'p str), CliError> {
    let Some(config) = project.mcp.get(server) else {
        let known: Vec<String> = project
            .mcp
            .servers()
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        return Err(CliError::Usage {
            message: format!("no MCP server named '{server}' in {MCP_FILE}"),
            help: if known.is_empty() {
                format!("add it to {MCP_FILE} first")
            } else {
                format!("the servers are: {}", known.join(", "))
            },
        });
    };
    match &config.transport {
        TransportConfig::Http(http) => Ok((config, http.url.as_str())),
        _ => Err(CliError::Usage {
            message: format!(
                "MCP server '{server}' is started as a command; OAuth applies only to HTTP servers"
            ),
            help: format!(
                "give it \"type\": \"http\" and a \"url\" in {MCP_FILE} if it is a remote server"
            ),
        }),
    }
}
