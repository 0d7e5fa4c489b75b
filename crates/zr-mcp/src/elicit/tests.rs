//! Forms from schemas: kinds, defaults, typed answers checked.

use serde_json::json;

use super::*;

fn sep1034() -> Vec<FormField> {
    // The conformance suite's SEP-1034 form.
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": true}
    }, "required": []});
    let order: Vec<String> = ["name", "age", "score", "status", "verified"]
        .map(String::from)
        .to_vec();
    fields_of(&schema, Some(&order)).unwrap()
}

#[test]
fn every_primitive_kind_is_read_with_its_default_in_wire_order() {
    let fields = sep1034();
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "age", "score", "status", "verified"]);
    assert!(matches!(
        fields[1].kind,
        FieldKind::Number { integer: true, .. }
    ));
    assert!(matches!(
        fields[2].kind,
        FieldKind::Number { integer: false, .. }
    ));
    assert!(
        matches!(&fields[3].kind, FieldKind::Choice { options, multiple: false, .. } if options.len() == 3)
    );
    assert_eq!(fields[4].kind, FieldKind::Boolean);
    let request = ElicitationRequest {
        server: "s".parse().unwrap(),
        message: String::new(),
        fields,
        agents: Vec::new(),
    };
    assert_eq!(
        Value::Object(request.defaults()),
        json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
    );
}

#[test]
fn typed_answers_are_checked_against_the_field() {
    let fields = sep1034();
    let [name, age, score, status, verified] = &fields[..] else {
        panic!("five fields")
    };
    assert_eq!(name.read("").unwrap(), Some(json!("John Doe")));
    assert_eq!(name.read(" Ada ").unwrap(), Some(json!("Ada")));
    assert_eq!(age.read("41").unwrap(), Some(json!(41)));
    assert!(age.read("41.5").is_err());
    assert_eq!(score.read("1.25").unwrap(), Some(json!(1.25)));
    assert!(score.read("lots").is_err());
    assert_eq!(status.read("2").unwrap(), Some(json!("inactive")));
    assert_eq!(status.read("pending").unwrap(), Some(json!("pending")));
    assert!(status.read("4").is_err());
    assert_eq!(verified.read("n").unwrap(), Some(json!(false)));
    assert!(verified.read("maybe").is_err());
}

#[test]
fn formats_ranges_titled_and_multiple_choices() {
    let schema = json!({"type": "object", "properties": {
        "email": {"type": "string", "format": "email"},
        "born": {"type": "string", "format": "date"},
        "n": {"type": "integer", "minimum": 1, "maximum": 100},
        "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Batman"}]},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]},
        "fish": {"type": "array", "minItems": 1, "maxItems": 2,
                 "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}, {"const": "f3", "title": "Cod"}]}}
    }, "required": ["email"]});
    let fields = fields_of(&schema, None).unwrap();
    let field = |n: &str| fields.iter().find(|f| f.name == n).unwrap();
    assert!(field("email").required);
    assert_eq!(
        field("email").read("").unwrap_err(),
        "an answer is required"
    );
    assert!(field("email").read("not an address").is_err());
    assert_eq!(
        field("email").read("a@b.org").unwrap(),
        Some(json!("a@b.org"))
    );
    assert_eq!(field("born").read("").unwrap(), None);
    assert!(field("born").read("1/2/2000").is_err());
    assert_eq!(
        field("born").read("2000-02-01").unwrap(),
        Some(json!("2000-02-01"))
    );
    assert!(field("n").read("0").is_err());
    assert_eq!(field("hero").read("batman").unwrap(), Some(json!("hero-2")));
    assert_eq!(field("legacy").read("Beta").unwrap(), Some(json!("b")));
    assert_eq!(
        field("fish").read("1, Trout").unwrap(),
        Some(json!(["f1", "f2"]))
    );
    assert!(field("fish").read("1,2,3").is_err());
}

#[test]
fn a_field_of_no_primitive_kind_is_named() {
    let schema = json!({"type": "object", "properties": {"deep": {"type": "object"}}});
    assert_eq!(
        fields_of(&schema, None).unwrap_err(),
        "the form's field 'deep' is not a string, number, boolean or choice"
    );
}
