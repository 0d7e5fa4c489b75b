//! The front matter as a YAML tree whose nodes remember their line.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{MessageFormatter, NonFiniteFloatPolicy, Spanned};

/// A YAML node; every child carries its source location.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// `~`, `null` or nothing.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A floating-point number.
    Float(f64),
    /// A string (plain, quoted or block scalar).
    Str(String),
    /// A sequence.
    Seq(Vec<Spanned<Node>>),
    /// A mapping, in file order.
    Map(Vec<(Spanned<Node>, Spanned<Node>)>),
}

/// A node with its line in the parsed text (from 1; 0 when unknown).
pub(crate) type Located = Spanned<Node>;

/// The line of a located node, from 1 in the parsed text (0 when unknown).
pub(crate) fn line_of(node: &Located) -> usize {
    usize::try_from(node.referenced.line()).unwrap_or(usize::MAX)
}

/// Lines of the file before the front matter's first line: the opening
/// `---`.
pub(crate) const FRONT_MATTER_OFFSET: usize = 1;

/// The line of `node` in the whole file, or `fallback` when unknown.
pub(crate) fn file_line(node: &Located, fallback: usize) -> usize {
    match line_of(node) {
        0 => fallback,
        line => line.saturating_add(FRONT_MATTER_OFFSET),
    }
}

/// A YAML error reduced to what a diagnostic needs.
#[derive(Debug)]
pub(crate) struct YamlError {
    /// Line in the parsed text, from 1 (0 when unknown).
    pub(crate) line: usize,
    /// Column, from 1 (0 when unknown).
    pub(crate) column: usize,
    /// The parser's message, without location and control characters.
    pub(crate) message: String,
}

/// Parses `text` as one YAML document.
pub(crate) fn parse(text: &str) -> Result<Located, YamlError> {
    // Non-finite floats reach the visitor as floats; `Node::to_json` keeps
    // them as strings (JSON has no NaN), so they are never fatal.
    let options = serde_saphyr::options! {
        with_snippet: false,
        non_finite_float_policy: NonFiniteFloatPolicy::PassThrough,
    };
    serde_saphyr::from_str_with_options::<Located>(text, options).map_err(|e| {
        let (line, column) = e.location().map_or((0, 0), |l| {
            (
                usize::try_from(l.line()).unwrap_or(usize::MAX),
                usize::try_from(l.column()).unwrap_or(usize::MAX),
            )
        });
        let raw = message_for_users(&e);
        let message = raw
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        YamlError {
            line,
            column,
            message,
        }
    })
}

/// The parser's message, except where it gives advice meant for the
/// program (which option to set) rather than for the file's author.
fn message_for_users(error: &serde_saphyr::Error) -> String {
    let mut inner = error;
    while let serde_saphyr::Error::WithSnippet { error, .. }
    | serde_saphyr::Error::AliasError { error, .. } = inner
    {
        inner = error;
    }
    match inner {
        serde_saphyr::Error::DuplicateMappingKey { key: Some(key), .. } => {
            format!("duplicate key '{key}'; remove one of them")
        }
        serde_saphyr::Error::DuplicateMappingKey { key: None, .. } => {
            "a key appears twice in one mapping; remove one of them".to_owned()
        }
        _ => serde_saphyr::DefaultMessageFormatter
            .format_message(error)
            .into_owned(),
    }
}

/// A float as YAML spells it: `.nan`, `.inf` and `-.inf` for the
/// non-finite ones.
fn float_text(x: f64) -> String {
    if x.is_nan() {
        ".nan".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { ".inf" } else { "-.inf" }.to_owned()
    } else {
        x.to_string()
    }
}

impl Node {
    /// "a list", `the string "ten"`: what was found, for messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Null => "nothing".to_owned(),
            Self::Bool(b) => format!("the boolean {b}"),
            Self::Int(i) => format!("the number {i}"),
            Self::Float(x) => format!("the number {}", float_text(*x)),
            Self::Str(s) => {
                let shown: String = s.chars().take(60).collect();
                if shown.len() < s.len() {
                    format!("the string {:?}...", shown)
                } else {
                    format!("the string {shown:?}")
                }
            }
            Self::Seq(_) => "a list".to_owned(),
            Self::Map(_) => "a mapping".to_owned(),
        }
    }

    /// The text of a scalar used as a key.
    pub(crate) fn key_text(&self) -> String {
        match self {
            Self::Str(s) => s.clone(),
            Self::Null => "~".to_owned(),
            Self::Bool(b) => b.to_string(),
            Self::Int(i) => i.to_string(),
            Self::Float(x) => float_text(*x),
            Self::Seq(_) | Self::Map(_) => self.to_json().to_string(),
        }
    }

    /// The node as JSON (file order of nested mappings is not kept).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(*b),
            Self::Int(i) => i64::try_from(*i)
                .map(Value::from)
                .or_else(|_| u64::try_from(*i).map(Value::from))
                .unwrap_or_else(|_| Value::String(i.to_string())),
            Self::Float(x) => serde_json::Number::from_f64(*x)
                .map_or_else(|| Value::String(float_text(*x)), Value::Number),
            Self::Str(s) => Value::String(s.clone()),
            Self::Seq(items) => Value::Array(items.iter().map(|n| n.value.to_json()).collect()),
            Self::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.value.key_text(), v.value.to_json()))
                    .collect(),
            ),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Int(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        Ok(i128::try_from(v).map_or_else(|_| Node::Str(v.to_string()), Node::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_char<E: de::Error>(self, v: char) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Node, E> {
        Ok(Node::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Located>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Located>()? {
            let value = map.next_value::<Located>()?;
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }
}
