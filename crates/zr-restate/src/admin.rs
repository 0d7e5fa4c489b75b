//! The client side of a durable session beyond submitting it: its turns
//! and journal as the server's SQL introspection (`POST {admin}/query`,
//! tables `sys_invocation` and `sys_journal`) shows them, a turn sent
//! without waiting (`/send`) and attached to later.

use serde::Deserialize;
use serde_json::Value;
use zr_types::SessionId;

use crate::error::RestateError;
use crate::http::{DEFAULT_TIMEOUT, authority, get, post_json};
use crate::object::{SESSION_OBJECT, TurnAnswer, TurnRequest};

/// One turn of a durable session: its invocation as the server knows it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct DurableTurn {
    /// The session id (the virtual object's key).
    #[serde(rename = "target_service_key")]
    pub session: String,
    /// The invocation id (`inv_...`).
    #[serde(rename = "id")]
    pub invocation: String,
    /// Restate's status: `pending`, `scheduled`, `ready`, `running`,
    /// `backing-off`, `suspended`, `paused` or `completed`.
    pub status: String,
    /// When the turn was submitted (RFC 3339).
    pub created_at: String,
    /// Journal entries so far.
    #[serde(default)]
    pub journal_size: u32,
}

impl DurableTurn {
    /// Whether the turn ended (with an answer or a failure).
    pub fn ended(&self) -> bool {
        self.status == "completed"
    }
}

/// One entry of a turn's journal, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalEntry {
    /// A step began: `model root #N`, `tool CALL_ID`, `subagent ...`.
    Step {
        /// Its completion id (the notification that ends it names it).
        completion: u64,
        /// Its name.
        name: String,
    },
    /// A child invocation was called (a subagent on any worker).
    Call {
        /// `Object/key/handler`.
        target: String,
    },
    /// A child invocation was sent one way (a background agent on any
    /// worker; the turn attaches to it for its end).
    Send {
        /// `Object/key/handler`.
        target: String,
        /// The child's invocation id.
        invocation: String,
    },
    /// The turn attached to a child invocation for its end (a background
    /// agent's): the notification with this completion id ends it.
    Attach {
        /// Its completion id.
        completion: u64,
        /// The child's invocation id.
        invocation: String,
    },
    /// The step with this completion id ended.
    Done {
        /// The step's completion id.
        completion: u64,
        /// Whether it failed.
        failed: bool,
    },
    /// Anything else (the input, the output, a sleep, a state access).
    Other,
}

/// Quotes `text` as an SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The rows of `sql` run by the admin API at `admin`.
async fn query(admin: &str, sql: &str) -> Result<Vec<Value>, RestateError> {
    let failed = |message: String| RestateError::Admin {
        admin: admin.to_owned(),
        message,
    };
    authority(admin)?;
    let body = serde_json::json!({ "query": sql });
    let answer = post_json(admin, "/query", &body, DEFAULT_TIMEOUT)
        .await
        .map_err(|source| RestateError::AdminCall {
            admin: admin.to_owned(),
            source,
        })?;
    match answer {
        (200, body) => {
            let mut value: Value =
                serde_json::from_str(&body).map_err(|e| failed(format!("{e}: {body}")))?;
            match value.get_mut("rows").map(Value::take) {
                Some(Value::Array(rows)) => Ok(rows),
                _ => Err(failed(format!("no rows in {body}"))),
            }
        }
        (status, body) => Err(failed(format!("HTTP {status}: {body}"))),
    }
}

const TURN_COLUMNS: &str = "id, target_service_key, status, created_at, journal_size";

fn turns_of(rows: Vec<Value>, admin: &str) -> Result<Vec<DurableTurn>, RestateError> {
    rows.into_iter()
        .map(|row| {
            serde_json::from_value(row.clone()).map_err(|e| RestateError::Admin {
                admin: admin.to_owned(),
                message: format!("{e}: {row}"),
            })
        })
        .collect()
}

/// The last turn of every durable session the server at `admin` holds,
/// newest first.
///
/// # Errors
///
/// [`RestateError::Url`], or [`RestateError::Admin`] when the API cannot
/// be reached or answers otherwise than expected.
pub async fn sessions(admin: &str) -> Result<Vec<DurableTurn>, RestateError> {
    let sql = format!(
        "SELECT {TURN_COLUMNS} FROM sys_invocation WHERE target_service_name = {} ORDER BY created_at DESC",
        literal(SESSION_OBJECT)
    );
    let mut seen = std::collections::BTreeSet::new();
    let mut turns = turns_of(query(admin, &sql).await?, admin)?;
    turns.retain(|turn| seen.insert(turn.session.clone()));
    Ok(turns)
}

/// The last turn of `session`, if the server holds one.
///
/// # Errors
///
/// As [`sessions`].
pub async fn last_turn(
    admin: &str,
    session: &SessionId,
) -> Result<Option<DurableTurn>, RestateError> {
    let sql = format!(
        "SELECT {TURN_COLUMNS} FROM sys_invocation WHERE target_service_name = {} AND target_service_key = {} ORDER BY created_at DESC LIMIT 1",
        literal(SESSION_OBJECT),
        literal(session.as_str())
    );
    Ok(turns_of(query(admin, &sql).await?, admin)?
        .into_iter()
        .next())
}

/// How many journal entries the server holds for `session`: its turns'
/// and its child invocations' (`ZrAgent/{session}/...`), over all turns.
///
/// # Errors
///
/// As [`sessions`].
pub async fn journal_entries(admin: &str, session: &SessionId) -> Result<u64, RestateError> {
    let sql = format!(
        "SELECT CAST(sum(journal_size) AS BIGINT) AS entries FROM sys_invocation WHERE target_service_key = {} OR target_service_key LIKE {}",
        literal(session.as_str()),
        literal(&format!("{session}/%"))
    );
    let rows = query(admin, &sql).await?;
    Ok(rows
        .first()
        .and_then(|row| row["entries"].as_u64())
        .unwrap_or(0))
}

/// The journal of the invocation `invocation`, in order.
///
/// # Errors
///
/// As [`sessions`].
pub async fn journal(admin: &str, invocation: &str) -> Result<Vec<JournalEntry>, RestateError> {
    let sql = format!(
        "SELECT index, entry_type, name, invoked_target, entry_lite_json FROM sys_journal WHERE id = {} ORDER BY index",
        literal(invocation)
    );
    Ok(query(admin, &sql).await?.iter().map(entry).collect())
}

/// What a `sys_journal` row says.
fn entry(row: &Value) -> JournalEntry {
    let kind = row["entry_type"].as_str().unwrap_or_default();
    let lite: Value = row["entry_lite_json"]
        .as_str()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    match kind {
        "Command: Run" => match lite
            .pointer("/Command/Run/completion_id")
            .and_then(Value::as_u64)
        {
            Some(completion) => JournalEntry::Step {
                completion,
                name: row["name"].as_str().unwrap_or_default().to_owned(),
            },
            None => JournalEntry::Other,
        },
        // restate-server 1.7 leaves `invoked_target` empty on these rows
        // too; the lite entry holds the target.
        "Command: Call" => JournalEntry::Call {
            target: row["invoked_target"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .or_else(|| lite.pointer("/Command/Call/invocation_target").map(target))
                .unwrap_or_default(),
        },
        // Its row has no `invoked_target` (restate-server 1.7).
        "Command: OneWayCall" => JournalEntry::Send {
            target: lite
                .pointer("/Command/OneWayCall/invocation_target")
                .map(target)
                .unwrap_or_default(),
            invocation: text(&lite, "/Command/OneWayCall/invocation_id"),
        },
        "Command: AttachInvocation" => match lite
            .pointer("/Command/AttachInvocation/completion_id")
            .and_then(Value::as_u64)
        {
            Some(completion) => JournalEntry::Attach {
                completion,
                invocation: text(&lite, "/Command/AttachInvocation/target/InvocationId"),
            },
            None => JournalEntry::Other,
        },
        _ if kind.starts_with("Notification") => {
            match lite
                .pointer("/Notification/id/CompletionId")
                .and_then(Value::as_u64)
            {
                Some(completion) => JournalEntry::Done {
                    completion,
                    failed: lite.pointer("/Notification/result") != Some(&Value::from("Success")),
                },
                None => JournalEntry::Other,
            }
        }
        _ => JournalEntry::Other,
    }
}

/// The string at `pointer` in `value`, or an empty one.
fn text(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// `Object/key/handler` of a journaled invocation target
/// (`{"VirtualObject": {"name", "key", "handler", ...}}`, or a service's
/// without a key).
fn target(value: &Value) -> String {
    let Some((_, fields)) = value.as_object().and_then(|kinds| kinds.iter().next()) else {
        return String::new();
    };
    ["name", "key", "handler"]
        .iter()
        .filter_map(|field| fields[*field].as_str())
        .collect::<Vec<_>>()
        .join("/")
}

/// Sends one turn of `session` through the ingress at `ingress` without
/// waiting for it (`POST /ZrSession/{session}/run/send`): its invocation
/// id, for [`attach`] and [`journal`].
///
/// # Errors
///
/// [`RestateError::Url`]; [`RestateError::Turn`] when the ingress cannot
/// be reached or refuses the turn.
pub async fn send(
    ingress: &str,
    session: &SessionId,
    prompt: &str,
) -> Result<String, RestateError> {
    let failed = |message: String| RestateError::Turn {
        ingress: ingress.to_owned(),
        session: session.to_string(),
        message,
    };
    authority(ingress)?;
    let path = format!("/{SESSION_OBJECT}/{session}/run/send");
    let body = serde_json::to_value(TurnRequest {
        prompt: prompt.to_owned(),
    })
    .map_err(|e| failed(e.to_string()))?;
    let answer = post_json(ingress, &path, &body, DEFAULT_TIMEOUT)
        .await
        .map_err(|source| RestateError::TurnCall {
            ingress: ingress.to_owned(),
            session: session.to_string(),
            source,
        })?;
    match answer {
        (200..300, body) => serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["invocationId"].as_str().map(str::to_owned))
            .ok_or_else(|| failed(format!("no invocation id in {body}"))),
        (status, body) => Err(failed(format!("HTTP {status}: {body}"))),
    }
}

/// Waits for the invocation `invocation` of `session` to end
/// (`GET /restate/invocation/{id}/attach`) and returns its answer.
///
/// # Errors
///
/// [`RestateError::Url`]; [`RestateError::Turn`] when the ingress cannot
/// be reached or the turn failed.
pub async fn attach(
    ingress: &str,
    session: &SessionId,
    invocation: &str,
) -> Result<TurnAnswer, RestateError> {
    let failed = |message: String| RestateError::Turn {
        ingress: ingress.to_owned(),
        session: session.to_string(),
        message,
    };
    authority(ingress)?;
    let path = format!("/restate/invocation/{invocation}/attach");
    // No limit but the connection's: a turn takes as long as it takes.
    let answer = get(ingress, &path, None)
        .await
        .map_err(|source| RestateError::TurnCall {
            ingress: ingress.to_owned(),
            session: session.to_string(),
            source,
        })?;
    match answer {
        (200, body) => serde_json::from_str(&body).map_err(|e| failed(format!("{e}: {body}"))),
        (status, body) => Err(failed(format!("HTTP {status}: {body}"))),
    }
}

#[cfg(test)]
mod tests;
