//! JSON objects read in file order, each key once.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};

/// Reads a JSON (or any serde) map as `(key, value)` pairs in the order the
/// file gives them, refusing a key that appears twice. For
/// `#[serde(deserialize_with = "zr_types::ordered_entries")]` on a
/// `Vec<(K, V)>` field: serde_json's own map type sorts its keys, and a
/// repeated key would otherwise silently replace the first.
///
/// ```
/// #[derive(Debug, serde::Deserialize)]
/// struct File {
///     #[serde(deserialize_with = "zr_types::ordered_entries")]
///     agents: Vec<(String, u32)>,
/// }
/// let file: File = serde_json::from_str(r#"{"agents": {"b": 1, "a": 2}}"#).unwrap();
/// assert_eq!(file.agents, [("b".to_owned(), 1), ("a".to_owned(), 2)]);
/// let twice = serde_json::from_str::<File>(r#"{"agents": {"a": 1, "a": 2}}"#);
/// assert!(twice.unwrap_err().to_string().starts_with("'a' appears twice"));
/// ```
///
/// # Errors
///
/// The deserializer's error for a repeated key, a malformed key or value,
/// or input that is not a map.
pub fn ordered_entries<'de, D, K, V>(d: D) -> Result<Vec<(K, V)>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + PartialEq + fmt::Display,
    V: Deserialize<'de>,
{
    struct Entries<K, V>(PhantomData<(K, V)>);

    impl<'de, K, V> Visitor<'de> for Entries<K, V>
    where
        K: Deserialize<'de> + PartialEq + fmt::Display,
        V: Deserialize<'de>,
    {
        type Value = Vec<(K, V)>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out: Vec<(K, V)> = Vec::new();
            while let Some(key) = map.next_key::<K>()? {
                if out.iter().any(|(k, _)| *k == key) {
                    return Err(A::Error::custom(format_args!("'{key}' appears twice")));
                }
                let value = map.next_value()?;
                out.push((key, value));
            }
            Ok(out)
        }
    }

    d.deserialize_map(Entries(PhantomData))
}
