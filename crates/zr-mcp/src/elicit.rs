//! Elicitation: a server's form request as plain fields, the host's [`Elicitor`] that answers it, and the reading of typed answers.
//!
//! A server asks (`elicitation/create`, form mode) while one of its calls
//! runs. zr-mcp turns the requested schema into [`FormField`]s and hands an
//! [`ElicitationRequest`] to the host's [`Elicitor`] (the CLI's terminal
//! prompt, an SDK embedder's callback). Nothing is asked, and the server
//! is answered `decline`, when no elicitor is set, when every call in
//! flight on the connection comes from a background agent, or for a URL
//! request (zr declares form mode only).

use std::fmt;

use serde_json::{Map, Value};
use zr_types::{AgentId, BoxFuture, ServerName};

/// The host side of elicitation: asks the user and says what they answered.
///
/// Called once per request, possibly from several connections at the same
/// time; an implementation that shares one terminal queues the questions
/// itself. The server waits for the answer within its call's time limit.
///
/// # Cancellation
///
/// The future is dropped when the connection closes; nothing is sent then.
pub trait Elicitor: Send + Sync + fmt::Debug {
    /// Asks `request` and returns the answer.
    fn elicit<'a>(&'a self, request: &'a ElicitationRequest) -> BoxFuture<'a, ElicitationAnswer>;
}

/// A server's question: a message and a form.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// The server that asks.
    pub server: ServerName,
    /// What it wants, in its words.
    pub message: String,
    /// The form's fields, in the order of the schema.
    pub fields: Vec<FormField>,
    /// The foreground agents with a call in flight on this server's
    /// connection (one of them caused the question); empty when the call
    /// did not come from an agent.
    pub agents: Vec<AgentId>,
}

impl ElicitationRequest {
    /// Every field's default, for a form accepted as it is offered; fields
    /// without a default are left out.
    #[must_use]
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.default.clone()?)))
            .collect()
    }
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Submitted: the values by field name.
    Accept(Map<String, Value>),
    /// Refused to answer; the server's operation goes on without it.
    Decline,
    /// Dismissed the question without choosing.
    Cancel,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FormField {
    /// The property name, the key of the answer.
    pub name: String,
    /// A title for people, when the schema has one.
    pub title: Option<String>,
    /// What the field is for.
    pub description: Option<String>,
    /// Whether the schema lists it as required.
    pub required: bool,
    /// What kind of value it takes.
    pub kind: FieldKind,
    /// The schema's default value (SEP-1034).
    pub default: Option<Value>,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FieldKind {
    /// A string, optionally of a format (`email`, `uri`, `date`,
    /// `date-time`) and length.
    Text {
        /// The format, as the schema names it.
        format: Option<String>,
        /// The fewest characters.
        min_length: Option<u64>,
        /// The most characters.
        max_length: Option<u64>,
    },
    /// A number; `integer` for whole numbers only.
    Number {
        /// Whole numbers only.
        integer: bool,
        /// The smallest value.
        minimum: Option<f64>,
        /// The largest value.
        maximum: Option<f64>,
    },
    /// Yes or no.
    Boolean,
    /// One of a list (`enum`, `oneOf`), or several (`type: array`).
    Choice {
        /// The options, in the schema's order.
        options: Vec<Choice>,
        /// Several may be picked.
        multiple: bool,
        /// The fewest picks (several only).
        min_items: Option<u64>,
        /// The most picks (several only).
        max_items: Option<u64>,
    },
}

/// One option of a [`FieldKind::Choice`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Choice {
    /// The value sent to the server.
    pub value: String,
    /// What people see (the value when the schema gives no title).
    pub label: String,
}

impl FormField {
    /// The value that a typed answer `text` gives this field: `Ok(None)`
    /// leaves it out (empty, not required, no default), an empty answer
    /// takes the default. A choice is picked by its number (from 1), its
    /// value or its label; several are separated by commas. A yes/no field
    /// takes `y`, `yes`, `true`, `n`, `no`, `false`.
    ///
    /// # Errors
    ///
    /// A sentence saying what is wrong with the answer, to show the user.
    pub fn read(&self, text: &str) -> Result<Option<Value>, String> {
        let text = text.trim();
        if text.is_empty() {
            return match (&self.default, self.required) {
                (Some(default), _) => Ok(Some(default.clone())),
                (None, true) => Err("an answer is required".to_owned()),
                (None, false) => Ok(None),
            };
        }
        match &self.kind {
            FieldKind::Text {
                format,
                min_length,
                max_length,
            } => read_text(text, format.as_deref(), *min_length, *max_length).map(Some),
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => read_number(text, *integer, *minimum, *maximum).map(Some),
            FieldKind::Boolean => match text.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Some(Value::Bool(true))),
                "n" | "no" | "false" => Ok(Some(Value::Bool(false))),
                _ => Err("answer yes or no".to_owned()),
            },
            FieldKind::Choice {
                options,
                multiple: false,
                ..
            } => pick(options, text).map(|v| Some(Value::String(v))),
            FieldKind::Choice {
                options,
                multiple: true,
                min_items,
                max_items,
            } => {
                let picked = text
                    .split(',')
                    .map(|part| pick(options, part.trim()).map(Value::String))
                    .collect::<Result<Vec<_>, _>>()?;
                let n = picked.len() as u64;
                if min_items.is_some_and(|min| n < min) || max_items.is_some_and(|max| n > max) {
                    return Err(format!(
                        "pick between {} and {}",
                        min_items.unwrap_or(0),
                        max_items.map_or_else(|| "any number".to_owned(), |m| m.to_string())
                    ));
                }
                Ok(Some(Value::Array(picked)))
            }
        }
    }
}

fn read_text(
    text: &str,
    format: Option<&str>,
    min: Option<u64>,
    max: Option<u64>,
) -> Result<Value, String> {
    let chars = text.chars().count() as u64;
    if min.is_some_and(|m| chars < m) {
        return Err(format!("at least {} characters", min.unwrap_or(0)));
    }
    if max.is_some_and(|m| chars > m) {
        return Err(format!("at most {} characters", max.unwrap_or(0)));
    }
    let ok = match format {
        Some("email") => text.split_once('@').is_some_and(|(a, b)| {
            !a.is_empty() && b.contains('.') && !text.contains(char::is_whitespace)
        }),
        Some("uri") => text
            .split_once(':')
            .is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.is_empty()),
        Some("date") => is_date(text),
        Some("date-time") => text.get(..10).is_some_and(is_date) && text.len() > 11,
        _ => true,
    };
    if ok {
        Ok(Value::String(text.to_owned()))
    } else {
        Err(format!("not a valid {}", format.unwrap_or("value")))
    }
}

/// `YYYY-MM-DD`.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

fn read_number(
    text: &str,
    integer: bool,
    min: Option<f64>,
    max: Option<f64>,
) -> Result<Value, String> {
    let value: Value = if integer {
        let n: i64 = text.parse().map_err(|_| "a whole number".to_owned())?;
        Value::from(n)
    } else {
        let n: f64 = text.parse().map_err(|_| "a number".to_owned())?;
        serde_json::Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| "a finite number".to_owned())?
    };
    let n = value.as_f64().unwrap_or_default();
    if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
        return Err(format!(
            "a number from {} to {}",
            min.map_or_else(|| "any".to_owned(), |m| m.to_string()),
            max.map_or_else(|| "any".to_owned(), |m| m.to_string())
        ));
    }
    Ok(value)
}

/// The value of the option `text` names: its number, value or label.
fn pick(options: &[Choice], text: &str) -> Result<String, String> {
    if let Ok(n) = text.parse::<usize>()
        && let Some(choice) = n.checked_sub(1).and_then(|i| options.get(i))
    {
        return Ok(choice.value.clone());
    }
    options
        .iter()
        .find(|c| c.value == text || c.label.eq_ignore_ascii_case(text))
        .map(|c| c.value.clone())
        .ok_or_else(|| format!("'{text}' is not one of the options"))
}

/// The fields of a requested schema (`{"type": "object", "properties":
/// ..., "required": [...]}`), in `order` when given (the wire order),
/// else the properties' order.
///
/// # Errors
///
/// A property that is not one of the primitive kinds the protocol allows,
/// named.
pub(crate) fn fields_of(
    schema: &Value,
    order: Option<&[String]>,
) -> Result<Vec<FormField>, String> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<&String> = match order {
        Some(order) if order.len() == properties.len() => order.iter().collect(),
        _ => properties.keys().collect(),
    };
    names
        .into_iter()
        .filter_map(|name| Some((name, properties.get(name)?)))
        .map(|(name, property)| {
            let kind = kind_of(property).ok_or_else(|| {
                format!("the form's field '{name}' is not a string, number, boolean or choice")
            })?;
            let text = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
            Ok(FormField {
                name: name.clone(),
                title: text("title"),
                description: text("description"),
                required: required.contains(&name.as_str()),
                kind,
                default: property.get("default").cloned(),
            })
        })
        .collect()
}

fn kind_of(property: &Value) -> Option<FieldKind> {
    let number = |key: &str| property.get(key).and_then(Value::as_f64);
    let count = |key: &str| property.get(key).and_then(Value::as_u64);
    if let Some(options) = options_of(property) {
        return Some(FieldKind::Choice {
            options,
            multiple: false,
            min_items: None,
            max_items: None,
        });
    }
    match property.get("type").and_then(Value::as_str)? {
        "string" => Some(FieldKind::Text {
            format: property
                .get("format")
                .and_then(Value::as_str)
                .map(str::to_owned),
            min_length: count("minLength"),
            max_length: count("maxLength"),
        }),
        kind @ ("number" | "integer") => Some(FieldKind::Number {
            integer: kind == "integer",
            minimum: number("minimum"),
            maximum: number("maximum"),
        }),
        "boolean" => Some(FieldKind::Boolean),
        "array" => Some(FieldKind::Choice {
            options: options_of(property.get("items")?)?,
            multiple: true,
            min_items: count("minItems"),
            max_items: count("maxItems"),
        }),
        _ => None,
    }
}

/// The options of `enum` (with the legacy `enumNames` as labels) or of
/// `oneOf`/`anyOf` (`{const, title}`).
fn options_of(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let value = v.as_str()?.to_owned();
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map_or_else(|| value.clone(), str::to_owned);
                    Some(Choice { value, label })
                })
                .collect(),
        );
    }
    let listed = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        listed
            .iter()
            .filter_map(|o| {
                let value = o.get("const")?.as_str()?.to_owned();
                let label = o
                    .get("title")
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_owned);
                Some(Choice { value, label })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests;
