//! Triggers (issue 26): the documented validation pre-trigger and metadata post-trigger
//! unchanged, the SDKs' test triggers, the service's error for a trigger of another operation,
//! and a post-trigger's throw undoing the write (`docs/design/server-side-js-research.md`,
//! sections 3 and 6).

use std::sync::Arc;

use cosmoql::storage::{Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::value::{parse_json, Value};
use cosmoql::{ContainerClient, ItemOptions, PartitionKey, TriggerOperation, TriggerType};

fn json(text: &str) -> Value {
    parse_json(text).unwrap()
}

fn client() -> ContainerClient {
    let c = Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: 2, ..ContainerSettings::default() },
    );
    ContainerClient::from_container(Arc::new(c))
}

fn key(text: &str) -> PartitionKey {
    PartitionKey::from_values(&[Value::from(text)]).unwrap()
}

fn pre(name: &str) -> ItemOptions {
    ItemOptions { pre_triggers: vec![name.to_string()], ..ItemOptions::default() }
}

fn post(name: &str) -> ItemOptions {
    ItemOptions { post_triggers: vec![name.to_string()], ..ItemOptions::default() }
}

/// "How to write stored procedures, triggers, and UDFs": the validation pre-trigger, unchanged
/// but for comments (as `examples/scripts/` keeps it).
const VALIDATE: &str = include_str!("../examples/scripts/validate.js");

/// The same page's metadata post-trigger, unchanged but for comments.
const UPDATE_METADATA: &str = r#"function updateMetadata() {
    var context = getContext();
    var container = context.getCollection();
    var response = context.getResponse();
    var createdItem = response.getBody();
    var filterQuery = 'SELECT * FROM root r WHERE r.id = "_metadata"';
    var accept = container.queryDocuments(container.getSelfLink(), filterQuery,
        updateMetadataCallback);
    if(!accept) throw "Unable to update metadata, abort";
    function updateMetadataCallback(err, items, responseOptions) {
        if(err) throw new Error("Error" + err.message);
        if(items.length != 1) throw 'Unable to find metadata document';
        var metadataItem = items[0];
        metadataItem.createdItems += 1;
        metadataItem.createdNames += " " + createdItem.id;
        var accept = container.replaceDocument(metadataItem._self,
            metadataItem, function(err, itemReplaced) {
                    if(err) throw "Unable to update metadata, abort";
            });
        if(!accept) throw "Unable to update metadata, abort";
        return;
    }
}"#;

#[test]
fn the_documented_validation_pre_trigger_adds_a_timestamp() {
    let c = client();
    c.create_trigger("validateToDoItemTimestamp", VALIDATE, TriggerType::Pre, TriggerOperation::Create).unwrap();
    let created =
        c.create_item_with(&json(r#"{"id":"1","pk":"a","name":"x"}"#), &pre("validateToDoItemTimestamp")).unwrap();
    assert!(created.item.get("timestamp").as_f64().unwrap() > 1.7e12, "{:?}", created.item);
    // Stored as the trigger left it; an item with a timestamp keeps it.
    let read = c.read_item::<Value>(key("a"), "1").unwrap().item;
    assert_eq!(read.get("timestamp"), created.item.get("timestamp"));
    let kept =
        c.create_item_with(&json(r#"{"id":"2","pk":"a","timestamp":5}"#), &pre("validateToDoItemTimestamp")).unwrap();
    assert_eq!(kept.item.get("timestamp"), &json("5"));
    // Without naming it, it does not run.
    let plain = c.create_item(&json(r#"{"id":"3","pk":"a"}"#)).unwrap();
    assert_eq!(plain.item.get("timestamp"), &Value::Undefined);
}

#[test]
fn the_documented_metadata_post_trigger_updates_the_metadata_item() {
    let c = client();
    c.create_trigger("updateMetadata", UPDATE_METADATA, TriggerType::Post, TriggerOperation::Create).unwrap();
    c.create_item(&json(r#"{"id":"_metadata","pk":"a","createdItems":0,"createdNames":""}"#)).unwrap();
    c.create_item_with(&json(r#"{"id":"first","pk":"a"}"#), &post("updateMetadata")).unwrap();
    c.create_item_with(&json(r#"{"id":"second","pk":"a"}"#), &post("updateMetadata")).unwrap();
    let meta = c.read_item::<Value>(key("a"), "_metadata").unwrap().item;
    assert_eq!(meta.get("createdItems"), &json("2"));
    assert_eq!(meta.get("createdNames"), &json(r#"" first second""#));
    // No metadata item in another logical partition: the trigger throws, the create is undone.
    let e = c.create_item_with(&json(r#"{"id":"lonely","pk":"b"}"#), &post("updateMetadata")).unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert!(
        e.to_string()
            .contains("Encountered exception while executing Javascript. Exception = Unable to find metadata document"),
        "{e}"
    );
    assert_eq!(c.read_item::<Value>(key("b"), "lonely").unwrap_err().status(), Some(404));
}

#[test]
fn the_sdk_tests_triggers_see_the_request_and_the_response() {
    let c = client();
    // The SDKs' `t1`, `t3` and `response1` (research, sections 3 and 6.7).
    c.create_trigger(
        "t1",
        "function() { var item = getContext().getRequest().getBody(); item.id = item.id.toUpperCase() + 't1'; \
         getContext().getRequest().setBody(item); }",
        TriggerType::Pre,
        TriggerOperation::All,
    )
    .unwrap();
    c.create_trigger(
        "t3",
        "function() { var item = getContext().getRequest().getBody(); item.id = item.id.toLowerCase() + 't3'; \
         getContext().getRequest().setBody(item); }",
        TriggerType::Pre,
        TriggerOperation::All,
    )
    .unwrap();
    c.create_trigger(
        "response1",
        "function() { var prebody = getContext().getRequest().getBody(); \
         if (prebody.id != 'TESTING POST TRIGGERt1') throw 'name mismatch'; \
         var postbody = getContext().getResponse().getBody(); \
         if (postbody.id != 'TESTING POST TRIGGERt1') throw 'name mismatch'; }",
        TriggerType::Post,
        TriggerOperation::All,
    )
    .unwrap();
    assert_eq!(
        c.create_item_with(&json(r#"{"id":"doc1","pk":"a"}"#), &pre("t1")).unwrap().item.get("id"),
        &json(r#""DOC1t1""#)
    );
    assert_eq!(
        c.create_item_with(&json(r#"{"id":"Doc3","pk":"a"}"#), &pre("t3")).unwrap().item.get("id"),
        &json(r#""doc3t3""#)
    );
    let both = ItemOptions {
        pre_triggers: vec!["t1".into()],
        post_triggers: vec!["response1".into()],
        ..ItemOptions::default()
    };
    let created = c.create_item_with(&json(r#"{"id":"testing post trigger","pk":"a"}"#), &both).unwrap();
    assert_eq!(created.item.get("id"), &json(r#""TESTING POST TRIGGERt1""#));
    // The response carries the container's system properties, not the transaction copy's.
    let read = c.read_item::<Value>(key("a"), "TESTING POST TRIGGERt1").unwrap();
    assert_eq!(read.etag, created.etag);
}

#[test]
fn a_trigger_of_another_operation_or_type_is_refused_and_nothing_is_written() {
    let c = client();
    c.create_trigger("onDelete", "function () {}", TriggerType::Post, TriggerOperation::Delete).unwrap();
    c.create_trigger("before", "function () {}", TriggerType::Pre, TriggerOperation::Create).unwrap();
    let e = c.create_item_with(&json(r#"{"id":"1","pk":"a"}"#), &post("onDelete")).unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert!(
        e.to_string().contains(
            "Trigger 'onDelete' was defined with operation type 'Delete', and therefore is invalid for 'Create'."
        ),
        "{e}"
    );
    let e = c.create_item_with(&json(r#"{"id":"1","pk":"a"}"#), &post("before")).unwrap_err();
    assert_eq!(e.status(), Some(400), "{e}");
    let e = c.create_item_with(&json(r#"{"id":"1","pk":"a"}"#), &pre("missing")).unwrap_err();
    assert_eq!(e.status(), Some(404), "{e}");
    assert_eq!(c.read_item::<Value>(key("a"), "1").unwrap_err().status(), Some(404));
    // A delete trigger runs on a delete, and sees the request.
    c.create_item(&json(r#"{"id":"1","pk":"a"}"#)).unwrap();
    c.create_trigger(
        "audit",
        "function () { var coll = getContext().getCollection(); \
         coll.createDocument(coll.getSelfLink(), {id: 'audit', pk: 'a', op: getContext().getRequest().getOperationType()}); }",
        TriggerType::Pre,
        TriggerOperation::Delete,
    )
    .unwrap();
    c.delete_item_with(key("a"), "1", &pre("audit")).unwrap();
    assert_eq!(c.read_item::<Value>(key("a"), "audit").unwrap().item.get("op"), &json(r#""Delete""#));
    assert_eq!(c.read_item::<Value>(key("a"), "1").unwrap_err().status(), Some(404));
}

#[test]
fn triggers_run_on_replace_and_upsert_too() {
    let c = client();
    c.create_trigger(
        "upper",
        "function () { var r = getContext().getRequest(), item = r.getBody(); item.name = item.name.toUpperCase(); \
         r.setBody(item); }",
        TriggerType::Pre,
        TriggerOperation::All,
    )
    .unwrap();
    c.create_trigger("onlyReplace", "function () {}", TriggerType::Pre, TriggerOperation::Replace).unwrap();
    c.create_item(&json(r#"{"id":"1","pk":"a","name":"ann"}"#)).unwrap();
    let replaced =
        c.replace_item_with(key("a"), "1", &json(r#"{"id":"1","pk":"a","name":"bo"}"#), &pre("upper")).unwrap();
    assert_eq!(replaced.item.get("name"), &json(r#""BO""#));
    let upserted = c.upsert_item_with(&json(r#"{"id":"2","pk":"a","name":"cy"}"#), &pre("upper")).unwrap();
    assert_eq!(upserted.item.get("name"), &json(r#""CY""#));
    assert_eq!(c.read_item::<Value>(key("a"), "2").unwrap().item.get("name"), &json(r#""CY""#));
    c.replace_item_with(key("a"), "1", &json(r#"{"id":"1","pk":"a","name":"di"}"#), &pre("onlyReplace")).unwrap();
    let e = c.upsert_item_with(&json(r#"{"id":"1","pk":"a"}"#), &pre("onlyReplace")).unwrap_err();
    assert!(
        e.to_string().contains("was defined with operation type 'Replace', and therefore is invalid for 'Upsert'."),
        "{e}"
    );
}
