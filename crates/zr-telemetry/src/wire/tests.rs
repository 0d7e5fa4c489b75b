//! Each kind of attribute value decodes, with `prost` and the generated
//! OTLP messages, to the `KeyValue` it stands for; entries are found by
//! key.

use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, ArrayValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

use super::*;

fn string(s: &str) -> Option<AnyValue> {
    Some(AnyValue {
        value: Some(Any::StringValue(s.to_owned())),
    })
}

#[test]
fn every_value_kind_decodes_to_its_key_value() {
    let long = "x".repeat(300);
    let cases: Vec<(&str, AttrValue<'_>, Option<AnyValue>)> = vec![
        ("s", AttrValue::Str("naïve ✓"), string("naïve ✓")),
        ("empty", AttrValue::Str(""), string("")),
        ("long", AttrValue::Str(&long), string(&long)),
        (
            "t",
            AttrValue::Bool(true),
            Some(AnyValue {
                value: Some(Any::BoolValue(true)),
            }),
        ),
        (
            "f",
            AttrValue::Bool(false),
            Some(AnyValue {
                value: Some(Any::BoolValue(false)),
            }),
        ),
        (
            "zero",
            AttrValue::I64(0),
            Some(AnyValue {
                value: Some(Any::IntValue(0)),
            }),
        ),
        (
            "neg",
            AttrValue::I64(-3),
            Some(AnyValue {
                value: Some(Any::IntValue(-3)),
            }),
        ),
        (
            "big",
            AttrValue::I64(i64::MAX),
            Some(AnyValue {
                value: Some(Any::IntValue(i64::MAX)),
            }),
        ),
        (
            "x",
            AttrValue::F64(0.25),
            Some(AnyValue {
                value: Some(Any::DoubleValue(0.25)),
            }),
        ),
        (
            "list",
            AttrValue::StrArray(&["end_turn", "tool_use", ""]),
            Some(AnyValue {
                value: Some(Any::ArrayValue(ArrayValue {
                    values: vec![
                        string("end_turn").unwrap(),
                        string("tool_use").unwrap(),
                        string("").unwrap(),
                    ],
                })),
            }),
        ),
    ];
    let mut bytes = Vec::new();
    let mut expected = Vec::new();
    for (key, value, any) in cases {
        let at = key_value(&mut bytes, 9, key, value);
        if let Some((start, len)) = at {
            let AnyValue {
                value: Some(Any::StringValue(s)),
            } = any.clone().unwrap()
            else {
                panic!("only strings have a range");
            };
            assert_eq!(&bytes[start..start + len], s.as_bytes(), "{key}");
        }
        expected.push(KeyValue {
            key: key.to_owned(),
            value: any,
            ..KeyValue::default()
        });
    }
    // A sequence of field 9 is a `Span` with those attributes alone.
    let span = Span::decode(bytes.as_slice()).expect("valid protobuf");
    assert_eq!(span.attributes, expected);
    let decoded_again = Span {
        attributes: expected,
        ..Span::default()
    };
    assert_eq!(
        bytes,
        decoded_again.encode_to_vec(),
        "the same bytes as prost's"
    );

    let keys: Vec<&[u8]> = entries(&bytes).map(|(_, key)| key).collect();
    assert_eq!(keys.len(), 10);
    assert_eq!(keys[2], b"long");
    let (range, _) = entries(&bytes).nth(2).unwrap();
    assert!(range.len() > 300);
}
