//! Input plumbing shared by every tool: JSON Schema generation and parsing
//! of the model's input with errors that say what to fix.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use zr_types::ToolOutput;

/// The JSON Schema of `T`, cleaned for models: no `$schema`, no `title`,
/// subschemas inlined, optional fields typed by their value (not `X | null`:
/// an absent field means "not given"), no Rust integer formats.
pub(crate) fn schema_for<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        // The tool's description says what the input is for; the Rust doc
        // of the input type would only repeat it.
        map.remove("title");
        map.remove("$schema");
        map.remove("description");
    }
    clean(&mut value);
    // Keys in alphabetical order at every level, whatever serde_json's
    // map type is in this build (with its `preserve_order` feature, which
    // any crate of a workspace build may switch on, a map keeps insertion
    // order, and the snapshots of the schemas would change with the build).
    value.sort_all_objects();
    value
}

fn clean(value: &mut Value) {
    match value {
        Value::Object(map) => {
            simplify_nullable(map);
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("uint") || f.starts_with("int"))
            {
                map.remove("format");
            }
            for v in map.values_mut() {
                clean(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(clean),
        _ => {}
    }
}

/// `"type": ["string", "null"]` becomes `"type": "string"`; `anyOf: [S,
/// {"type": "null"}]` becomes `S`.
fn simplify_nullable(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get("type") {
        let rest: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if rest.len() == 1 && rest.len() < types.len() {
            map.insert(
                "type".to_owned(),
                rest.into_iter().next().unwrap_or(Value::Null),
            );
        }
    }
    if let Some(Value::Array(options)) = map.get("anyOf") {
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        if options.len() == 2
            && options.iter().any(is_null)
            && let Some(Value::Object(other)) = options.iter().find(|v| !is_null(v)).cloned()
        {
            map.remove("anyOf");
            for (k, v) in other {
                map.entry(k).or_insert(v);
            }
        }
    }
}

/// Parses the model's input for `tool`. On failure the `Err` is the error
/// result to send back: where the input is wrong, what was expected, and the
/// fields the tool takes.
pub(crate) fn parse<T: DeserializeOwned + JsonSchema>(
    tool: &str,
    input: &Value,
) -> Result<T, ToolOutput> {
    if !input.is_object() {
        return Err(ToolOutput::error(format!(
            "{tool}: the input must be a JSON object. {}",
            fields_hint::<T>()
        )));
    }
    serde_path_to_error::deserialize::<_, T>(input).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        let place = if path == "." {
            String::new()
        } else {
            format!(" at '{path}'")
        };
        ToolOutput::error(format!(
            "{tool}: invalid input{place}: {inner}. {}",
            fields_hint::<T>()
        ))
    })
}

/// "one of \"a\", \"b\"" for a `oneOf` of constants (a documented enum).
fn one_of_consts(prop: &Value) -> Option<String> {
    let options = prop.get("oneOf")?.as_array()?;
    let consts: Option<Vec<String>> = options
        .iter()
        .map(|o| o.get("const").map(Value::to_string))
        .collect();
    Some(format!("one of {}", consts?.join(", ")))
}

/// "Fields: a (string, required), b (integer)." from `T`'s schema.
pub(crate) fn fields_hint<T: JsonSchema>() -> String {
    let schema = schema_for::<T>();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "The tool takes no fields.".to_owned();
    };
    let fields: Vec<String> = props
        .iter()
        .map(|(name, prop)| {
            let ty = prop
                .get("type")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| one_of_consts(prop))
                .or_else(|| {
                    prop.get("enum").and_then(Value::as_array).map(|e| {
                        let names: Vec<String> = e.iter().map(Value::to_string).collect();
                        format!("one of {}", names.join(", "))
                    })
                })
                .unwrap_or_else(|| "any".to_owned());
            if required.contains(&name.as_str()) {
                format!("{name} ({ty}, required)")
            } else {
                format!("{name} ({ty})")
            }
        })
        .collect();
    if fields.is_empty() {
        "The tool takes no fields.".to_owned()
    } else {
        format!("Fields: {}.", fields.join(", "))
    }
}

#[cfg(test)]
mod tests;
