//! The process's table of property names (`doc/names.rs`): keys it holds take a number in
//! memory, the rest stay inline, the portable form spells every key out, and a full table only
//! stops the saving. One test, in a process of its own: it fills the table.

use cosmoql_storage::doc::{Doc, DocRef, MAX_NAMES, MAX_NAME_LEN};
use cosmoql_value::{parse_json, to_json_string};

/// `text` encoded, checked against the parser and read back from its portable form.
fn checked(text: &str) -> Doc {
    let doc = Doc::from_json_str(text).unwrap();
    let value = parse_json(text).unwrap();
    assert_eq!(doc.to_value(), value, "{text}");
    assert_eq!(doc.to_json_string(), to_json_string(&value), "{text}");
    let portable = doc.to_bytes();
    assert_eq!(portable.len(), doc.len(), "{text}: len() is the portable size");
    assert_eq!(Doc::from_bytes(&portable).unwrap(), doc, "{text}");
    assert!(DocRef::new(doc.as_bytes()).is_ok(), "{text}");
    for (key, _) in value.as_object().unwrap().iter() {
        assert!(doc.get(key).is_some(), "{text}: {key}");
    }
    doc
}

fn holds(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn names_by_number_inline_keys_and_a_full_table() {
    // The empty name first, while this thread's cache is empty (an empty slot must not match it).
    checked(r#"{"":1,"a":{"":[2,{"":3}]}}"#);

    // Short plain names take a number: in memory the document does not spell them.
    let doc = checked(r#"{"deviceId":"dev-1","location":{"city":"Redmond","zip":"98052"},"é":1}"#);
    assert!(!holds(doc.as_bytes(), b"deviceId") && !holds(doc.as_bytes(), b"location"));
    assert!(holds(&doc.to_bytes(), b"deviceId") && holds(&doc.to_bytes(), b"city"));
    assert!(doc.as_bytes().len() < doc.len());

    // Names JSON escapes, and names over the longest the table takes, stay in the document.
    let long = "n".repeat(MAX_NAME_LEN + 1);
    let text = format!(r#"{{"a\"b":1,"tab\t":2,"{long}":3,"back\\slash":[{{"{long}":4}}]}}"#);
    let doc = checked(&text);
    assert!(
        holds(doc.as_bytes(), b"a\"b") && holds(doc.as_bytes(), b"tab\t") && holds(doc.as_bytes(), long.as_bytes())
    );
    assert_eq!(doc.to_json_string().as_deref(), Some(&*to_json_string(&parse_json(&text).unwrap()).unwrap()));

    // The portable size is counted as the document is read: keys across the varint boundaries
    // of both forms, containers whose payload crosses 128 bytes in one form and not the other,
    // and a repeated key (its dropped entry measured when sealed).
    for len in [1, 62, 63, 64, 65, 100, 127, 128, 200] {
        let key = "q".repeat(len);
        checked(&format!(r#"{{"{key}":1,"b":{{"{key}":[{{"{key}":"x"}}]}}}}"#));
    }
    for n in [10, 20, 30, 40, 41, 42, 43, 60, 64, 100] {
        let fields: Vec<String> = (0..n).map(|i| format!(r#""f{}":{i}"#, i % 7)).collect();
        checked(&format!(r#"{{"a":{{{}}},"z":[{{"deviceId":1}}]}}"#, fields.join(",")));
        let fields: Vec<String> = (0..n).map(|i| format!(r#""g{i}":{i}"#)).collect();
        checked(&format!(r#"{{"a":{{{}}}}}"#, fields.join(",")));
    }
    checked(r#"{"a":1,"b":{"c":2,"c":[3,4],"d":5},"a":{"x":"y"}}"#);

    // A number the table does not hold is refused by validation, and read as nothing.
    let unknown = [0x09, 1, 4, 0xFF, 0xFF, 0x03, 0x80];
    assert!(DocRef::new(&unknown).is_err());
    assert!(DocRef::trusted(&unknown).get("a").is_none());
    // In the portable form the same header is a length (and here runs past the object).
    assert!(Doc::from_bytes(&unknown).is_err());

    // Fill the table: the first names keep their numbers, later ones stay inline.
    for i in 0..MAX_NAMES {
        Doc::from_json_str(&format!(r#"{{"k{i}":{i}}}"#)).unwrap();
    }
    let fresh = checked(r#"{"a fresh name":1,"deviceId":2}"#);
    assert!(holds(fresh.as_bytes(), b"a fresh name"));
    assert!(!holds(fresh.as_bytes(), b"deviceId"));
    let again = checked(r#"{"a fresh name":1,"deviceId":2}"#);
    assert_eq!(again, fresh, "one key, one encoding");
}
