//! Asking about a call: the host's handler within its timeout, then a
//! person (the handler's prompt or the ask-user service); a background
//! agent's question is denied or bubbled up.

use std::sync::Arc;
use std::time::Duration;

use zr_caps::PermissionMode;
use zr_tools::{BuiltinTools, Question, QuestionOption, ServiceError};
use zr_types::{ToolCall, ToolName};

use super::{Decision, Gate, PermissionHandler, PermissionRequest, denied};
use crate::error::{catch_panic, reason_of, seconds};
use crate::meta::AgentMeta;
use crate::policy::hooks::{AgentHooks, Notice, NoticeKind};

/// Asks the host about `call`: its handler, then a person. `crossing`:
/// the call crosses the effects boundary, so session grants do not apply
/// and without a handler it is refused.
pub(super) async fn ask(
    gate: &Gate<'_>,
    agent: &AgentMeta,
    name: &ToolName,
    call: &ToolCall,
    crossing: Option<String>,
    host: Option<&str>,
    hooks: &AgentHooks<'_>,
) -> Result<(), String> {
    let mode = agent.mode;
    let config = gate.config;
    let Some(handler) = &config.handler else {
        return match crossing {
            // The host has no policy and nobody to ask: a crossing needs a
            // yes from someone.
            Some(why) => Err(denied(
                name,
                format_args!("{why}; no permission handler is there to approve it"),
            )),
            None => Ok(()),
        };
    };
    let mut request = PermissionRequest {
        agent: agent.id.clone(),
        agent_type: agent.agent_type.to_string(),
        tool: name.clone(),
        input: call.input.clone(),
        mode,
        background: agent.background,
        bubbled: false,
        crossing: crossing.clone(),
    };
    let needs = crossing.as_deref().unwrap_or("this call needs approval");
    let and_why = crossing
        .as_deref()
        .map_or_else(String::new, |why| format!(", and {why}"));
    let decision = match ask_handler(handler, config.timeout, &request).await {
        Ok(Decision::Ask) if mode == PermissionMode::DontAsk => Err(denied(
            name,
            format_args!("agent {} is in dontAsk mode and {needs}", agent.id),
        )),
        Ok(Decision::Ask) if agent.background && config.bubble_background => {
            request.bubbled = true;
            match ask_handler(handler, config.timeout, &request).await {
                Ok(Decision::Ask) => Err(denied(
                    name,
                    "the host answered the bubbled request with Ask, and nobody else can be asked for a background agent",
                )),
                other => other,
            }
        }
        Ok(Decision::Ask) if agent.background => Err(denied(
            name,
            format_args!(
                "agent {} runs in the background, where permission prompts are unavailable{and_why}",
                agent.id
            ),
        )),
        Ok(Decision::Ask) => {
            let notice = Notice {
                kind: NoticeKind::PermissionPrompt,
                message: format!("zr needs your permission to use {name}"),
            };
            hooks.notification(&notice).await;
            match handler.prompt(&request) {
                Some(prompt) => match catch_panic(prompt).await {
                    Ok(Decision::Ask) => Err(denied(
                        name,
                        "the host's prompt answered Ask, and nobody else can be asked",
                    )),
                    Ok(decision) => Ok(decision),
                    Err(panic) => Err(denied(
                        name,
                        format_args!("the permission prompt panicked: {panic}"),
                    )),
                },
                None => ask_user(gate.tools, &request).await,
            }
        }
        other => other,
    }?;
    match decision {
        // A crossing is approved once: the next one is asked about again.
        Decision::AllowForSession if crossing.is_none() => {
            gate.grants.insert(&agent.id, name, host);
            Ok(())
        }
        Decision::Deny(reason) => Err(denied(name, reason_of(&reason, "host"))),
        // Ask was answered above; Allow.
        _ => Ok(()),
    }
}

/// The handler's decision within `timeout`; a panic or the timeout is a
/// denial.
async fn ask_handler(
    handler: &Arc<dyn PermissionHandler>,
    timeout: Duration,
    request: &PermissionRequest,
) -> Result<Decision, String> {
    let asked = catch_panic(async { handler.can_use_tool(request).await });
    match tokio::time::timeout(timeout, asked).await {
        Ok(Ok(decision)) => Ok(decision),
        Ok(Err(panic)) => Err(denied(
            &request.tool,
            format_args!("the permission handler panicked: {panic}"),
        )),
        Err(_) => {
            tracing::warn!(tool = %request.tool, "the permission handler timed out");
            Err(denied(
                &request.tool,
                format_args!(
                    "the permission handler did not answer within {} (its timeout)",
                    seconds(timeout)
                ),
            ))
        }
    }
}

const ALLOW: &str = "Allow";
const ALLOW_SESSION: &str = "Allow for this session";
const DENY: &str = "Deny";
/// The input shown to the user is cut after this many characters, with a
/// note saying how many were left out.
const SHOWN_INPUT: usize = 1_000;

/// Asks the user through the ask-user service.
async fn ask_user(tools: &BuiltinTools, request: &PermissionRequest) -> Result<Decision, String> {
    let tool = &request.tool;
    let Some(service) = tools.ask_user() else {
        return Err(denied(
            tool,
            "it needs the user's approval, and no ask-user service is configured to ask",
        ));
    };
    let mut input = request.input.to_string();
    let chars = input.chars().count();
    if chars > SHOWN_INPUT {
        input = input.chars().take(SHOWN_INPUT).collect();
        input.push_str(&format!(" ... ({} more characters)", chars - SHOWN_INPUT));
    }
    let option = |label: &str, description: &str| QuestionOption {
        label: label.to_owned(),
        description: description.to_owned(),
    };
    let question = Question {
        question: format!(
            "Agent {} ({}) wants to run {tool} with input {input}. Allow it?",
            request.agent, request.agent_type
        ),
        header: "Permission".to_owned(),
        options: vec![
            option(ALLOW, "Run this call"),
            option(
                ALLOW_SESSION,
                "Run it, and don't ask again about this tool for this agent",
            ),
            option(DENY, "Refuse; the agent is told"),
        ],
        multi_select: false,
    };
    let service = Arc::clone(service);
    let answers = catch_panic(async { service.ask(vec![question]).await })
        .await
        .map_err(|panic| denied(tool, format_args!("the ask-user service panicked: {panic}")))?;
    let answers = match answers {
        Ok(answers) => answers,
        Err(ServiceError::NoAnswer) => return Err(denied(tool, "the user did not answer")),
        Err(error) => {
            return Err(denied(
                tool,
                format_args!(
                    "the user could not be asked: {}",
                    zr_types::error_chain(&error)
                ),
            ));
        }
    };
    let words: Vec<&str> = answers
        .first()
        .map(|a| a.answers.iter().map(|s| s.trim()).collect())
        .unwrap_or_default();
    let is = |label: &str| words.iter().any(|w| w.eq_ignore_ascii_case(label));
    if is(ALLOW_SESSION) {
        Ok(Decision::AllowForSession)
    } else if is(ALLOW) || is("yes") || is("y") {
        Ok(Decision::Allow)
    } else if words.is_empty() || is(DENY) || is("no") || is("n") {
        Err(denied(tool, "the user said no"))
    } else {
        Err(denied(
            tool,
            format_args!("the user said no: {}", words.join("; ")),
        ))
    }
}
