//! Items returned whole (`SELECT *`, `SELECT VALUE c`) stay their stored bytes until written
//! ([`Output::Whole`]): the JSON written from the bytes, the sizes the charges count, the pages
//! and their continuation tokens are exactly those of the same query run over a source that
//! decodes every item into a value first (the way results were produced before).

use cosmoql::executor::source::QuerySource;
use cosmoql::executor::{execute_plan_output, plan_query, Output, QueryOutput};
use cosmoql::storage::{Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{ContainerProperties, CosmosClient, JsonText, QueryOptions};
use proptest::prelude::*;

mod support;
use support::Seen;

/// A container whose whole items are decoded into values (the trait's default `whole`).
fn decoded(container: &Container) -> Seen<'_> {
    Seen { container, indexed: true, whole: false }
}

const QUERIES: &[&str] = &[
    "SELECT * FROM c",
    "SELECT VALUE c FROM c",
    "SELECT * FROM c WHERE c.pk = 'k1'",
    "SELECT * FROM c WHERE c.n > 2",
    "SELECT TOP 3 * FROM c ORDER BY c.n DESC",
    "SELECT * FROM c ORDER BY c.s OFFSET 2 LIMIT 4",
    "SELECT VALUE c FROM c WHERE c.pk = 'k0' ORDER BY c.n",
    "SELECT DISTINCT * FROM c",
    "SELECT DISTINCT VALUE c FROM c WHERE c.n > 0",
    "SELECT * FROM c WHERE c.o.deep.x = 1",
    "SELECT VALUE c FROM c JOIN t IN c.tags WHERE t = 'y'",
    "SELECT * FROM (SELECT * FROM c) d",
    "SELECT c.id, c FROM c",
    "SELECT VALUE c.o FROM c",
    "SELECT VALUE c.o.deep FROM c WHERE c.n > 0",
    "SELECT VALUE c.extra FROM c",
    "SELECT VALUE c.tags[0] FROM c",
    "SELECT VALUE c.s FROM c ORDER BY c.n",
    "SELECT VALUE c._rid FROM c",
    "SELECT VALUE c.missing FROM c",
    "SELECT DISTINCT VALUE c.o FROM c",
];

/// A random item: numbers of every shape, strings that need escaping, nesting, empty containers.
fn item() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        3 => (-1000..1000i64).prop_map(|n| n.to_string()),
        1 => prop::sample::select(vec![
            "-0", "0.1", "1e21", "1e-7", "123456789012345678901", "9007199254740993", "-2.5e-300", "1.7976931348623157e308",
        ])
        .prop_map(str::to_string),
        3 => "[a-c\"\\\\/é\u{1F600}\u{7f}\t\n]{0,6}".prop_map(|s| to_json_string(&Value::from(s)).unwrap()),
        1 => Just("null".to_string()),
        1 => prop::bool::ANY.prop_map(|b| b.to_string()),
    ];
    let nested = leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(("[a-z_]{1,3}", inner), 0..4).prop_map(|fields| {
                let mut seen = std::collections::HashSet::new();
                let body: Vec<String> = fields
                    .into_iter()
                    .filter(|(k, _)| seen.insert(k.clone()))
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    });
    let pk = (0..3u8).prop_map(|k| format!("k{k}"));
    let tags = prop::collection::vec(prop::sample::select(vec!["\"x\"", "\"y\"", "2"]), 0..3);
    (pk, -3..6i32, "[a-d]{0,2}", tags, prop::option::of(nested), prop::option::of(0..3i32)).prop_map(
        |(pk, n, s, tags, extra, deep)| {
            let mut fields = vec![format!("\"pk\":\"{pk}\""), format!("\"n\":{n}"), format!("\"s\":\"{s}\"")];
            fields.push(format!("\"tags\":[{}]", tags.join(",")));
            if let Some(extra) = extra {
                fields.push(format!("\"extra\":{extra}"));
            }
            if let Some(x) = deep {
                fields.push(format!("\"o\":{{\"deep\":{{\"x\":{x}}}}}"));
            }
            fields.join(",")
        },
    )
}

fn load(items: &[String], partitions: usize) -> Container {
    let settings =
        ContainerSettings { initial_partitions: partitions, split_max_items: 8, ..ContainerSettings::default() };
    let c = Container::new("c", PartitionKeyDefinition::hash("/pk").unwrap(), settings);
    for (i, fields) in items.iter().enumerate() {
        c.create(&parse_json(&format!("{{\"id\":\"i{i:03}\",{fields}}}")).unwrap()).unwrap();
    }
    c
}

/// One page, each result as its JSON text and as the value it stands for; whether the page
/// returned an item whole.
struct Page {
    texts: Vec<Option<String>>,
    values: Vec<Value>,
    whole: bool,
    continuation: Option<String>,
    charge: f64,
    output_bytes: u64,
    output_count: u64,
}

fn page(source: &dyn QuerySource, sql: &str, options: &QueryOptions) -> Result<Page, String> {
    let plan = plan_query(source, sql, options).map_err(|e| e.message)?;
    let out: QueryOutput<Output> = execute_plan_output(source, &plan, options).map_err(|e| e.message)?;
    for o in &out.items {
        // What a result is measured at (its charge) is what its value is measured at.
        assert_eq!(o.json_bytes(), cosmoql::executor::memory::json_value_bytes(&o.to_value()), "{sql}");
    }
    Ok(Page {
        texts: out.items.iter().map(Output::to_json_string).collect(),
        values: out.items.iter().map(Output::to_value).collect(),
        whole: out.items.iter().any(|o| matches!(o, Output::Whole(_) | Output::Part(_))),
        continuation: out.continuation,
        charge: out.metrics.request_charge,
        output_bytes: out.metrics.output_document_size,
        output_count: out.metrics.output_document_count,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn whole_items_from_bytes_are_the_decoded_items(
        items in prop::collection::vec(item(), 0..30),
        partitions in prop_oneof![Just(1usize), 2usize..5],
        page_size in prop::sample::select(vec![1usize, 3, 1000]),
    ) {
        let c = load(&items, partitions);
        for sql in QUERIES {
            // Each source resumes from its own tokens (a held page's token names its own results).
            let (mut token, mut decoded_token) = (None, None);
            loop {
                let options = |continuation: &Option<String>| QueryOptions {
                    max_item_count: Some(page_size),
                    continuation: continuation.clone(),
                    ..QueryOptions::default()
                };
                let bytes = page(&c, sql, &options(&token));
                let decoded = page(&decoded(&c), sql, &options(&decoded_token));
                let (bytes, decoded) = match (bytes, decoded) {
                    (Ok(b), Ok(d)) => (b, d),
                    (b, d) => {
                        prop_assert_eq!(b.err(), d.err(), "{}", sql);
                        break;
                    }
                };
                prop_assert!(!decoded.whole);
                // Written from the bytes: the text of the value; the value and its text are the
                // decoding source's.
                let expected: Vec<Option<String>> = decoded.values.iter().map(to_json_string).collect();
                prop_assert_eq!(&bytes.texts, &expected, "{}", sql);
                prop_assert_eq!(&decoded.texts, &expected, "{}", sql);
                prop_assert_eq!(&bytes.values, &decoded.values, "{}", sql);
                prop_assert_eq!(bytes.charge, decoded.charge, "{}", sql);
                prop_assert_eq!(bytes.output_bytes, decoded.output_bytes, "{}", sql);
                prop_assert_eq!(bytes.output_count, decoded.output_count, "{}", sql);
                prop_assert_eq!(bytes.continuation.is_some(), decoded.continuation.is_some(), "{}", sql);
                match (bytes.continuation, decoded.continuation) {
                    (Some(t), Some(d)) => (token, decoded_token) = (Some(t), Some(d)),
                    _ => break,
                }
            }
        }
    }
}

/// The queries that return stored items whole, or parts of them, return them undecoded; the
/// others do not.
#[test]
fn only_whole_items_and_their_parts_stay_bytes() {
    let c = load(&["\"pk\":\"k0\",\"n\":1,\"s\":\"a\",\"tags\":[]".to_string()], 1);
    let bytes = |sql: &str| page(&c, sql, &QueryOptions::default()).unwrap().whole;
    for sql in [
        "SELECT * FROM c",
        "SELECT VALUE c FROM c",
        "SELECT TOP 1 * FROM c ORDER BY c.n",
        "SELECT VALUE c.n FROM c",
        "SELECT VALUE c.tags FROM c",
    ] {
        assert!(bytes(sql), "{sql}");
    }
    for sql in [
        "SELECT DISTINCT * FROM c",
        "SELECT DISTINCT VALUE c.n FROM c",
        "SELECT c.id FROM c",
        "SELECT VALUE c._rid FROM c",
        "SELECT VALUE c.n + 1 FROM c",
        "SELECT * FROM (SELECT * FROM c) d",
    ] {
        assert!(!bytes(sql), "{sql}");
    }
}

/// `JsonText` results through the client are the JSON of the `Value` results, page by page and
/// streamed.
#[test]
fn json_text_results_are_the_values_json() {
    // One partition (results written by the caller) and four (by the parallel producers).
    for partitions in [1, 4] {
        json_text_results_with(partitions);
    }
}

fn json_text_results_with(partitions: usize) {
    let client = CosmosClient::new();
    let db = client.create_database("db").unwrap();
    let settings = ContainerSettings { initial_partitions: partitions, ..ContainerSettings::default() };
    let container = db.create_container(ContainerProperties::new("c", "/pk").unwrap().settings(settings)).unwrap();
    for i in 0..40 {
        let item = parse_json(&format!(
            r#"{{"id":"i{i}","pk":"k{}","n":{},"s":"tab\there \"q\" é","o":{{"a":[1,2.5,null,{{}}]}}}}"#,
            i % 4,
            i as f64 / 8.0
        ))
        .unwrap();
        container.create_item::<Value>(&item).unwrap();
    }
    for sql in [
        "SELECT * FROM c",
        "SELECT TOP 7 * FROM c ORDER BY c.n DESC",
        "SELECT c.n, c.o FROM c",
        "SELECT VALUE c.s FROM c",
    ] {
        for page_size in [None, Some(3)] {
            let options = || QueryOptions { max_item_count: page_size, ..QueryOptions::default() };
            let values = container.query_pages::<Value>(sql, options()).drain().unwrap();
            let texts = container.query_pages::<JsonText>(sql, options()).drain().unwrap();
            let expected: Vec<String> = values.items.iter().map(|v| to_json_string(v).unwrap()).collect();
            let got: Vec<String> = texts.items.into_iter().map(JsonText::into_string).collect();
            assert_eq!(got, expected, "{sql} {page_size:?} {partitions} partitions");
            // The same charge, whoever writes the text.
            assert_eq!(texts.metrics.request_charge, values.metrics.request_charge, "{sql}");
            assert_eq!(texts.metrics.output_document_size, values.metrics.output_document_size, "{sql}");
        }
    }
}

/// A caller's types, read from the bytes and from the value.
mod typed {
    use std::collections::HashMap;

    use serde::Deserialize;

    #[derive(Debug, PartialEq, Deserialize)]
    pub struct Item {
        pub id: String,
        pub pk: String,
        pub n: i64,
        pub s: String,
        pub tags: Vec<serde_json::Value>,
        pub extra: Option<serde_json::Value>,
        pub o: Option<Deep>,
        pub missing: Option<String>,
        pub _rid: String,
        pub _self: Option<String>,
        pub _etag: String,
        pub _attachments: String,
        pub _ts: u64,
    }

    /// The system properties as options, and one as an enum's variant name.
    #[derive(Debug, PartialEq, Deserialize)]
    pub struct Options {
        pub _rid: Option<String>,
        pub _ts: Option<u64>,
        pub _attachments: Option<Attachments>,
        pub pk: Option<Key>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    pub enum Attachments {
        #[serde(rename = "attachments/")]
        Default,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[allow(non_camel_case_types)]
    pub enum Key {
        k0,
        k1,
        k2,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    pub struct Deep {
        pub deep: HashMap<String, f64>,
    }

    /// Narrower than the data: fails on some items, the same way both ways.
    #[derive(Debug, PartialEq, Deserialize)]
    pub struct Narrow {
        pub n: u8,
        pub extra: Option<Shape>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    pub enum Shape {
        Number(f64),
        Text(String),
        List(Vec<Shape>),
        Map(HashMap<String, Shape>),
        Flag(bool),
        Nothing(()),
    }
}

/// `T` read from the bytes, and through the value as `from_value` reads it.
fn both<T: serde::de::DeserializeOwned>(item: &cosmoql::storage::WholeItem) -> (Result<T, String>, Result<T, String>) {
    let bytes = item.read::<T>().map_err(|e| e.to_string());
    let json = item.to_value().to_serde_json().unwrap_or(serde_json::Value::Null);
    let value = serde_json::from_value::<T>(json).map_err(|e| e.to_string());
    (bytes, value)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn typed_results_read_from_bytes_are_those_read_from_values(items in prop::collection::vec(item(), 1..12)) {
        let c = load(&items, 2);
        let plan = plan_query(&c, "SELECT * FROM c", &QueryOptions::default()).unwrap();
        for output in execute_plan_output(&c, &plan, &QueryOptions::default()).unwrap().items {
            let Output::Whole(item) = output else { panic!("SELECT * returns items whole") };
            let (bytes, value) = both::<serde_json::Value>(&item);
            prop_assert_eq!(bytes, value);
            let (bytes, value) = both::<typed::Item>(&item);
            prop_assert_eq!(bytes, value);
            let (bytes, value) = both::<typed::Options>(&item);
            prop_assert_eq!(bytes, value);
            let (bytes, value) = both::<typed::Narrow>(&item);
            prop_assert_eq!(bytes, value);
            let (bytes, value) = both::<std::collections::BTreeMap<String, serde_json::Value>>(&item);
            prop_assert_eq!(bytes, value);
        }
    }
}

/// Typed results through the client are read from the bytes, and are what the values give.
#[test]
fn typed_query_results_are_the_values_read_through_serde_json() {
    let client = CosmosClient::new();
    let db = client.create_database("db").unwrap();
    let container = db.create_container(ContainerProperties::new("c", "/pk").unwrap()).unwrap();
    for i in 0..20 {
        let item = parse_json(&format!(
            r#"{{"id":"i{i}","pk":"k{}","n":{i},"s":"x","tags":[],"o":{{"deep":{{"x":1.5}}}}}}"#,
            i % 3
        ))
        .unwrap();
        container.create_item::<Value>(&item).unwrap();
    }
    for sql in ["SELECT * FROM c", "SELECT VALUE c FROM c ORDER BY c.n DESC"] {
        let values = container.query_pages::<Value>(sql, QueryOptions::default()).collect_all().unwrap();
        let expected: Vec<serde_json::Value> = values.iter().map(|v| v.to_serde_json().unwrap()).collect();
        let json = container.query_pages::<serde_json::Value>(sql, QueryOptions::default()).collect_all().unwrap();
        assert_eq!(json, expected, "{sql}");
        let typed = container.query_pages::<typed::Item>(sql, QueryOptions::default()).collect_all().unwrap();
        let from_values: Vec<typed::Item> = expected.into_iter().map(|v| serde_json::from_value(v).unwrap()).collect();
        assert_eq!(typed, from_values, "{sql}");
    }
    // Parts of items, read from the bytes.
    let through_values = |sql: &str| -> Vec<serde_json::Value> {
        let values = container.query_pages::<Value>(sql, QueryOptions::default()).collect_all().unwrap();
        values.iter().map(|v| v.to_serde_json().unwrap()).collect()
    };
    let sql = "SELECT VALUE c.o FROM c";
    let deep = container.query_pages::<typed::Deep>(sql, QueryOptions::default()).collect_all().unwrap();
    let expected: Vec<typed::Deep> =
        through_values(sql).into_iter().map(|v| serde_json::from_value(v).unwrap()).collect();
    assert_eq!(deep, expected);
    let sql = "SELECT VALUE c.n FROM c";
    let numbers = container.query_pages::<i64>(sql, QueryOptions::default()).collect_all().unwrap();
    let expected: Vec<i64> = through_values(sql).into_iter().map(|v| serde_json::from_value(v).unwrap()).collect();
    assert_eq!(numbers, expected);
    let narrow = container.query_pages::<u8>("SELECT VALUE c.n - 30 FROM c", QueryOptions::default()).collect_all();
    assert!(narrow.is_err(), "a negative number is no u8, from the bytes or not");
    let narrow = container.query_pages::<u8>("SELECT VALUE c.n FROM c WHERE c.n > 300", QueryOptions::default());
    assert_eq!(narrow.collect_all().unwrap(), Vec::<u8>::new());
}

/// A point read hands the stored item to any type from its bytes: the value a query returns for
/// it, its JSON text, and what `serde_json` reads from that value, at the same charge.
#[test]
fn point_reads_hand_over_the_stored_item() {
    use cosmoql::PartitionKey;
    let client = CosmosClient::new();
    let db = client.create_database("db").unwrap();
    let container = db.create_container(ContainerProperties::new("c", "/pk").unwrap()).unwrap();
    for i in 0..10 {
        let item = format!(
            r#"{{"id":"i{i}","pk":"k{}","n":{},"s":"a\"b","o":{{"deep":{{"x":2.5}}}},"tags":[]}}"#,
            i % 3,
            i - 4
        );
        container.create_item::<Value>(&parse_json(&item).unwrap()).unwrap();
    }
    for i in 0..10 {
        let (key, id) = (PartitionKey::from(format!("k{}", i % 3).as_str()), format!("i{i}"));
        let value = container.read_item::<Value>(key.clone(), &id).unwrap();
        let sql = format!("SELECT * FROM c WHERE c.id = '{id}'");
        let queried = container.query_pages::<Value>(sql.as_str(), QueryOptions::default()).collect_all().unwrap();
        assert_eq!(queried, vec![value.item.clone()]);
        let text = container.read_item::<JsonText>(key.clone(), &id).unwrap();
        assert_eq!(text.item.as_str(), to_json_string(&value.item).unwrap());
        let json = container.read_item::<serde_json::Value>(key.clone(), &id).unwrap();
        assert_eq!(json.item, value.item.to_serde_json().unwrap());
        let typed = container.read_item::<typed::Item>(key.clone(), &id).unwrap();
        assert_eq!(typed.item, serde_json::from_value::<typed::Item>(value.item.to_serde_json().unwrap()).unwrap());
        for charge in [text.request_charge, json.request_charge, typed.request_charge] {
            assert_eq!(charge, value.request_charge);
        }
        assert_eq!((text.etag, text.status), (value.etag.clone(), 200));
    }
    let missing = container.read_item::<JsonText>(PartitionKey::from("k0"), "nope").unwrap_err();
    assert!(
        missing.to_string().contains("404") || missing.to_string().to_lowercase().contains("not found"),
        "{missing}"
    );
}
