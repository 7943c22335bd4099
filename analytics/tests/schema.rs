//! The analytical schema against the rules and examples Azure Cosmos DB documents
//! (`docs/design/analytical-store-research.md`, section 1; each test names the rule it checks).

use cosmoql_analytics::{ColumnType, Observed, Schema, SchemaMode, MAX_NESTING, MAX_PROPERTIES};
use std::sync::Arc;

use cosmoql_value::{parse_json, Map, Value};

fn json(text: &str) -> Value {
    parse_json(text).unwrap()
}

fn schema_of(mode: SchemaMode, items: &[&str]) -> (Schema, Vec<Observed>) {
    let mut schema = Schema::new(mode);
    let observed = items.iter().map(|text| schema.observe(&json(text))).collect();
    (schema, observed)
}

fn column(schema: &Schema, name: &str) -> ColumnType {
    schema.columns().get(name).unwrap_or_else(|| panic!("no column {name}")).ty.clone()
}

#[test]
fn the_first_non_null_type_is_the_column_s_and_a_value_of_another_is_dropped_not_its_item() {
    // "`{"id": "1", "code":123}` / `{"id": "2", "code": "123"}` ... the second document will
    // still be included in analytical store, but its `"code"` property won't."
    let (schema, observed) =
        schema_of(SchemaMode::WellDefined, &[r#"{"id":"1","code":123}"#, r#"{"id":"2","code":"123"}"#]);
    assert_eq!(observed, [Observed::Included { dropped: 0 }, Observed::Included { dropped: 1 }]);
    assert_eq!(column(&schema, "code"), ColumnType::Int64);
    assert_eq!(column(&schema, "id"), ColumnType::String);
    assert_eq!(schema.dropped().type_mismatches, 1);
    // "The condition above doesn't apply for `NULL` properties": null fits, and does not fix a type.
    let (schema, observed) = schema_of(SchemaMode::WellDefined, &[r#"{"a":null}"#, r#"{"a":123}"#, r#"{"a":null}"#]);
    assert!(observed.iter().all(|o| *o == Observed::Included { dropped: 0 }));
    assert_eq!(column(&schema, "a"), ColumnType::Int64);
}

#[test]
fn integers_and_other_numbers_are_one_family() {
    // "From `float` to `integer`" and "From `integer` to `float`": "All documents are represented".
    let (schema, observed) = schema_of(SchemaMode::WellDefined, &[r#"{"n":1}"#, r#"{"n":1.5}"#, r#"{"n":2}"#]);
    assert!(observed.iter().all(|o| *o == Observed::Included { dropped: 0 }));
    assert_eq!(column(&schema, "n"), ColumnType::Float64);
    let (schema, _) = schema_of(SchemaMode::WellDefined, &[r#"{"n":-0.0}"#, r#"{"big":1e300}"#]);
    assert_eq!((column(&schema, "n"), column(&schema, "big")), (ColumnType::Float64, ColumnType::Float64));
}

#[test]
fn an_item_with_a_mixed_type_array_is_not_represented() {
    // "`{"a": ["str",12]}` isn't a well-defined schema ... those items won't be included".
    let (schema, observed) = schema_of(
        SchemaMode::WellDefined,
        &[r#"{"id":"1","a":["str",12]}"#, r#"{"id":"2","b":{"c":[[1,2],[true]]}}"#, r#"{"id":"3","a":[1,2.5,null]}"#],
    );
    assert_eq!(observed[0], Observed::Excluded { path: "/a".into() });
    assert_eq!(observed[1], Observed::Excluded { path: "/b/c".into() });
    assert_eq!(observed[2], Observed::Included { dropped: 0 });
    assert_eq!(schema.dropped().items, 2);
    // The excluded items added nothing.
    assert_eq!(schema.columns().fields().len(), 2);
    assert_eq!(column(&schema, "a"), ColumnType::Array(Box::new(ColumnType::Float64)));
    assert!(schema.columns().get("b").is_none());
}

#[test]
fn names_are_compared_without_case() {
    // "`{"id": 1, "Name": "fred", "name": "john"}` ... Only `"Name": "fred"` will be represented".
    let (schema, observed) = schema_of(SchemaMode::WellDefined, &[r#"{"id":1,"Name":"fred","name":"john"}"#]);
    assert_eq!(observed, [Observed::Included { dropped: 1 }]);
    assert_eq!(schema.dropped().case_duplicates, 1);
    assert_eq!(schema.columns().fields().len(), 2);
    // "In different documents: ... represented within the same column, using the name format of
    // the first occurrence."
    let (schema, _) = schema_of(SchemaMode::WellDefined, &[r#"{"id":1,"Name":"fred"}"#, r#"{"id":2,"name":"john"}"#]);
    let names: Vec<&str> = schema.columns().fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "Name"]);
    assert!(schema.columns().get("NAME").is_some());
}

#[test]
fn nested_values_stay_in_their_column_and_objects_merge() {
    // The documented `myArray` example: two columns, `id` and `myArray`; four properties.
    let (schema, _) = schema_of(
        SchemaMode::WellDefined,
        &[
            r#"{"id":"1","myArray":[{"nested1":"abc","nested2":"cde"}]}"#,
            r#"{"id":"2","myArray":[{"nested3":1}],"o":{"x":{"y":true}}}"#,
        ],
    );
    let names: Vec<&str> = schema.columns().fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "myArray", "o"]);
    let ColumnType::Array(element) = column(&schema, "myArray") else { panic!("not an array") };
    let ColumnType::Object(inner) = *element else { panic!("not objects") };
    let inner_names: Vec<&str> = inner.fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(inner_names, ["nested1", "nested2", "nested3"]);
    assert_eq!(schema.properties(), 8);
    // An object value where the column holds strings is dropped whole; its siblings stay.
    let mut schema = schema;
    assert_eq!(
        schema.observe(&json(r#"{"id":{"x":1},"o":{"x":{"y":false,"z":1}}}"#)),
        Observed::Included { dropped: 1 }
    );
    let ColumnType::Object(o) = column(&schema, "o") else { panic!("not an object") };
    let ColumnType::Object(x) = o.get("x").unwrap().ty.clone() else { panic!("not an object") };
    assert_eq!(x.get("z").map(|f| f.ty.clone()), Some(ColumnType::Int64));
}

#[test]
fn past_a_thousand_properties_or_127_levels_nothing_is_represented() {
    // "If your document's first level has 2000 properties, the sync process will represent the
    // first 1000 of them."
    let fields: Vec<String> = (0..2000).map(|i| format!(r#""p{i}":{i}"#)).collect();
    let (schema, observed) = schema_of(SchemaMode::WellDefined, &[&format!("{{{}}}", fields.join(","))]);
    assert_eq!(schema.columns().fields().len(), MAX_PROPERTIES);
    assert_eq!(observed, [Observed::Included { dropped: 1000 }]);
    assert_eq!(schema.columns().fields()[999].name, "p999");
    // Levels: the root's properties are level 1; each object is one more.
    // (Built as a value: JSON text this deep is past the parser's recursion limit.)
    let mut nested = Value::Number(1.0);
    for _ in 0..MAX_NESTING + 3 {
        let mut map = Map::default();
        map.insert("d".to_string(), nested);
        nested = Value::Object(Arc::new(map));
    }
    let mut schema = Schema::new(SchemaMode::WellDefined);
    let observed = [schema.observe(&nested)];
    assert_eq!(observed, [Observed::Included { dropped: 1 }]);
    assert_eq!(schema.dropped().over_nesting, 1);
    let mut depth = 0;
    let mut ty = column(&schema, "d");
    while let ColumnType::Object(o) = ty {
        depth += 1;
        ty = o.get("d").map_or(ColumnType::Null, |f| f.ty.clone());
    }
    assert_eq!(depth, MAX_NESTING, "levels 1..=127 hold the property `d`, the last one an empty object");
}

#[test]
fn full_fidelity_keeps_every_value_under_its_type() {
    // The training module's example: `productID` 123, then "124": in full fidelity both stay.
    let (schema, observed) = schema_of(
        SchemaMode::FullFidelity,
        &[r#"{"productID":123}"#, r#"{"productID":"124"}"#, r#"{"productID":1.5,"a":["str",12,{"x":1}]}"#],
    );
    assert!(observed.iter().all(|o| *o == Observed::Included { dropped: 0 }));
    let ColumnType::Variants(children) = column(&schema, "productID") else { panic!("not variants") };
    let names: Vec<&str> = children.iter().map(ColumnType::name).collect();
    // "`float` and `integer` values are represented as `num`": one child for numbers.
    assert_eq!(names, ["float64", "string"]);
    let ColumnType::Variants(a) = column(&schema, "a") else { panic!("not variants") };
    let ColumnType::Array(element) = &a[0] else { panic!("not an array") };
    let ColumnType::Variants(element) = &**element else { panic!("not variants") };
    let names: Vec<&str> = element.iter().map(ColumnType::name).collect();
    assert_eq!(names, ["string", "float64", "object"]);
    // Each type of each property counts toward the limit.
    assert_eq!(schema.properties(), 4);
}

#[test]
fn describe_shows_the_tree_and_what_was_dropped() {
    let (schema, _) = schema_of(
        SchemaMode::WellDefined,
        &[r#"{"id":"1","code":123,"loc":{"city":"Redmond"},"tags":["a"]}"#, r#"{"id":"2","code":"x","a":[1,"b"]}"#],
    );
    assert_eq!(
        schema.describe(),
        "id: string\ncode: int64\nloc: object\n  city: string\ntags: array of string\n5 properties; not represented: items \
         with a mixed-type array 1, values of another type than their property's 0, names repeated but for case 0, \
         properties past 1000 0, values past 127 levels 0\n"
    );
    let (schema, _) = schema_of(SchemaMode::FullFidelity, &[r#"{"p":1}"#, r#"{"p":"x"}"#, r#"{"p":{"q":true}}"#]);
    assert_eq!(
        schema.describe(),
        "p: {num, string, object}\n  .object object\n    q: {bool}\n4 properties; not represented: items with a \
         mixed-type array 0, values of another type than their property's 0, names repeated but for case 0, properties \
         past 1000 0, values past 127 levels 0\n"
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-5i32..5).prop_map(|n| Value::Number(f64::from(n))),
            Just(Value::Number(0.5)),
            "[a-c]{0,2}".prop_map(|s| Value::String(s.into())),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|v| Value::Array(Arc::new(v))),
                prop::collection::vec(("[aAbB]{1,2}", inner), 0..4).prop_map(|entries| {
                    let mut map = Map::default();
                    for (k, v) in entries {
                        map.insert(k, v);
                    }
                    Value::Object(Arc::new(map))
                }),
            ]
        })
    }

    fn names(schema: &Schema) -> Vec<String> {
        schema.columns().fields().iter().map(|f| f.name.clone()).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Observing a sequence in two halves at once (the second into a copy of the schema as
        /// it was) and absorbing the second gives the schema observing it in order gives, and
        /// the same items represented; or the absorb declines and changes nothing.
        #[test]
        fn two_halves_absorbed_are_the_sequence_in_order(
            items in prop::collection::vec(value(), 0..14),
            prefix in 0usize..4,
            cut in 0usize..14,
        ) {
            let prefix = prefix.min(items.len());
            let cut = cut.clamp(prefix, items.len());
            let mut serial = Schema::new(SchemaMode::WellDefined);
            let in_order: Vec<Observed> = items.iter().map(|i| serial.observe(i)).collect();
            let mut base = Schema::new(SchemaMode::WellDefined);
            for item in &items[..prefix] {
                base.observe(item);
            }
            let (mut first, mut later) = (base.clone(), base.clone());
            for item in &items[prefix..cut] {
                first.observe(item);
            }
            let halves: Vec<Observed> = items[cut..].iter().map(|i| later.observe(i)).collect();
            let before = first.clone();
            if first.absorb(&later, &base) {
                prop_assert_eq!(&first, &serial);
                let kinds = |o: &[Observed]| o.iter().map(|o| matches!(o, Observed::Included { .. })).collect::<Vec<_>>();
                prop_assert_eq!(kinds(&halves), kinds(&in_order[cut..]));
            } else {
                prop_assert_eq!(&first, &before);
            }
        }

        /// The schema only grows: columns keep their names, places and (well-defined) their
        /// first non-null type's family; full fidelity never drops a value under the limits.
        #[test]
        fn the_schema_only_grows(items in prop::collection::vec(value(), 1..12), full in any::<bool>()) {
            let mode = if full { SchemaMode::FullFidelity } else { SchemaMode::WellDefined };
            let mut schema = Schema::new(mode);
            for item in &items {
                let before = schema.clone();
                let observed = schema.observe(item);
                let (old, new) = (names(&before), names(&schema));
                prop_assert_eq!(&new[..old.len()], &old[..]);
                prop_assert!(schema.properties() >= before.properties() && schema.properties() <= MAX_PROPERTIES);
                for field in before.columns().fields() {
                    let now = &schema.columns().get(&field.name).unwrap().ty;
                    let widened = matches!((&field.ty, now), (ColumnType::Int64, ColumnType::Float64));
                    prop_assert!(field.ty == ColumnType::Null || field.ty.name() == now.name() || widened);
                }
                if full {
                    let excluded = matches!(observed, Observed::Excluded { .. });
                    prop_assert!(!excluded || !item.is_object(), "full fidelity left out {:?}", item);
                    prop_assert_eq!(schema.dropped().type_mismatches, 0);
                }
            }
        }
    }
}

/// Two halves of items whose properties each keep one type family are absorbed (the fast path
/// of a mirror's first build is taken), and equal the items observed in order.
#[test]
fn halves_of_one_type_a_property_are_absorbed() {
    let items: Vec<Value> = (0..40)
        .map(|i| {
            let extra = if i >= 20 { format!(r#","late{}":{{"x":[{i}]}}"#, i % 3) } else { String::new() };
            let number = if i % 2 == 0 { format!("{i}") } else { format!("{i}.5") };
            json(&format!(
                r#"{{"id":"{i}","n":{number},"tags":["a"],"at":{{"city":"c{i}"}},"Maybe":{},"mixed":{}{extra}}}"#,
                if i < 30 { "null".to_string() } else { "true".to_string() },
                if i == 35 { r#"[1,"x"]"# } else { "[]" },
            ))
        })
        .collect();
    let mut serial = Schema::new(SchemaMode::WellDefined);
    for item in &items {
        serial.observe(item);
    }
    let base = Schema::new(SchemaMode::WellDefined);
    let (mut first, mut later) = (base.clone(), base.clone());
    for item in &items[..20] {
        first.observe(item);
    }
    for item in &items[20..] {
        later.observe(item);
    }
    assert!(first.absorb(&later, &base));
    assert_eq!(first, serial);
    assert_eq!(first.dropped().items, 1, "the item with a mixed-type array, from the second half");
    assert_eq!(column(&first, "n"), ColumnType::Float64);
    assert_eq!(column(&first, "Maybe"), ColumnType::Bool);
}

/// The documented `"code"` example split across the halves: the second half's first type is
/// not the column's, so absorbing declines (observing in order drops the string).
#[test]
fn halves_whose_types_differ_are_not_absorbed() {
    let base = Schema::new(SchemaMode::WellDefined);
    let (mut first, mut later) = (base.clone(), base.clone());
    first.observe(&json(r#"{"id":"1","code":123}"#));
    later.observe(&json(r#"{"id":"2","code":"123"}"#));
    let before = first.clone();
    assert!(!first.absorb(&later, &base));
    assert_eq!(first, before);
    // A spelling of the other half makes the property inexact, as observing it in order does.
    let mut later = base.clone();
    later.observe(&json(r#"{"id":"2","CODE":5}"#));
    assert!(first.absorb(&later, &base));
    assert!(!first.columns().get("code").unwrap().exact);
    assert_eq!(first.columns().get("CODE").unwrap().name, "code");
}
