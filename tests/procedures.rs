//! Stored procedures (issue 26): the documented samples unchanged, with the documented results
//! (`docs/design/server-side-js-research.md`, section 6); transactions in one logical partition;
//! the same logic as a procedure and as a transactional batch; hostile scripts.

use std::sync::Arc;

use cosmoql::storage::{BatchOperation, Container, ContainerSettings, PartitionKeyDefinition};
use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{ContainerClient, Error, PartitionKey, ProcedureOptions, QueryOptions};

fn json(text: &str) -> Value {
    parse_json(text).unwrap()
}

fn container() -> Arc<Container> {
    Arc::new(Container::new(
        "c",
        PartitionKeyDefinition::hash("/pk").unwrap(),
        ContainerSettings { initial_partitions: 3, ..ContainerSettings::default() },
    ))
}

fn client() -> ContainerClient {
    ContainerClient::from_container(container())
}

fn key(text: &str) -> PartitionKey {
    PartitionKey::from_values(&[Value::from(text)]).unwrap()
}

fn ids(c: &ContainerClient, pk: &str) -> Vec<String> {
    let options = QueryOptions { partition_key: Some(key(pk)), ..QueryOptions::default() };
    let mut ids: Vec<String> = c
        .query_pages::<Value>("SELECT VALUE c.id FROM c", options)
        .collect_all()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// The bulk import sample (azure-cosmos-dotnet-v2 `BulkImport.js`), unchanged but for comments,
/// as `examples/scripts/` keeps it.
const BULK_IMPORT: &str = include_str!("../examples/scripts/bulk_import.js");

/// The bulk delete sample (azure-cosmosdb-js-server `bulkDelete.js`), unchanged but for comments.
const BULK_DELETE: &str = r#"function bulkDeleteSproc(query) {
    var collection = getContext().getCollection();
    var collectionLink = collection.getSelfLink();
    var response = getContext().getResponse();
    var responseBody = {
        deleted: 0,
        continuation: true
    };
    if (!query) throw new Error("The query is undefined or null.");
    tryQueryAndDelete();
    function tryQueryAndDelete(continuation) {
        var requestOptions = {continuation: continuation};
        var isAccepted = collection.queryDocuments(collectionLink, query, requestOptions, function (err, retrievedDocs, responseOptions) {
            if (err) throw err;
            if (retrievedDocs.length > 0) {
                tryDelete(retrievedDocs);
            } else if (responseOptions.continuation) {
                tryQueryAndDelete(responseOptions.continuation);
            } else {
                responseBody.continuation = false;
                response.setBody(responseBody);
            }
        });
        if (!isAccepted) {
            response.setBody(responseBody);
        }
    }
    function tryDelete(documents) {
        if (documents.length > 0) {
            var isAccepted = collection.deleteDocument(documents[0]._self, {}, function (err, responseOptions) {
                if (err) throw err;
                responseBody.deleted++;
                documents.shift();
                tryDelete(documents);
            });
            if (!isAccepted) {
                response.setBody(responseBody);
            }
        } else {
            tryQueryAndDelete();
        }
    }
}"#;

fn docs(pk: &str, n: usize) -> Value {
    Value::from((0..n).map(|i| json(&format!(r#"{{"id":"d{i:04}","pk":"{pk}","n":{i}}}"#))).collect::<Vec<_>>())
}

#[test]
fn bulk_import_imports_everything_then_continues_where_it_stopped() {
    let c = client();
    c.create_stored_procedure("bulkImport", BULK_IMPORT).unwrap();
    let small =
        c.execute_stored_procedure("bulkImport", &key("a"), &[docs("a", 25)], &ProcedureOptions::default()).unwrap();
    assert_eq!(small.body, json("25"));
    assert_eq!(ids(&c, "a").len(), 25);
    assert!(small.request_charge > 25.0, "{}", small.request_charge);
    // An empty array: 0, nothing written.
    let empty =
        c.execute_stored_procedure("bulkImport", &key("e"), &[json("[]")], &ProcedureOptions::default()).unwrap();
    assert_eq!(empty.body, json("0"));

    // More than an invocation accepts: the client calls again with the rest, as the sample says.
    let options = ProcedureOptions { max_operations: 40, ..ProcedureOptions::default() };
    let Value::Array(all) = docs("b", 100) else { unreachable!() };
    let mut done = 0;
    let mut calls = 0;
    while done < all.len() {
        let rest = Value::from(all[done..].to_vec());
        let r = c.execute_stored_procedure("bulkImport", &key("b"), &[rest], &options).unwrap();
        done += r.body.as_f64().unwrap() as usize;
        calls += 1;
    }
    assert_eq!((done, calls), (100, 3));
    assert_eq!(ids(&c, "b").len(), 100);
}

#[test]
fn bulk_delete_deletes_what_its_query_finds_with_continuation() {
    let c = client();
    c.create_stored_procedure("bulkImport", BULK_IMPORT).unwrap();
    c.create_stored_procedure("bulkDelete", BULK_DELETE).unwrap();
    c.execute_stored_procedure("bulkImport", &key("a"), &[docs("a", 60)], &ProcedureOptions::default()).unwrap();
    let query = Value::from("SELECT c._self FROM c WHERE c.n >= 10");
    let options = ProcedureOptions { max_operations: 30, ..ProcedureOptions::default() };
    let mut deleted = 0.0;
    loop {
        let r = c.execute_stored_procedure("bulkDelete", &key("a"), std::slice::from_ref(&query), &options).unwrap();
        deleted += r.body.get("deleted").as_f64().unwrap();
        if r.body.get("continuation") == &Value::Bool(false) {
            break;
        }
    }
    assert_eq!(deleted, 50.0);
    assert_eq!(ids(&c, "a"), (0..10).map(|i| format!("d{i:04}")).collect::<Vec<_>>());
}

#[test]
fn a_throw_after_writes_rolls_all_of_them_back() {
    let c = client();
    // Creates items one after another and throws at the third: nothing is written.
    let body = r#"function createThenThrow(items) {
        var collection = getContext().getCollection();
        var link = collection.getSelfLink();
        var created = 0;
        next();
        function next() {
            if (created === 2) throw new Error(409, "third item refused on purpose");
            collection.createDocument(link, items[created], function (err, doc) {
                if (err) throw err;
                created++;
                next();
            });
        }
    }"#;
    c.create_stored_procedure("createThenThrow", body).unwrap();
    let e = c.execute_stored_procedure("createThenThrow", &key("a"), &[docs("a", 5)], &ProcedureOptions::default());
    let Err(Error::Script(failure)) = e else { panic!("{e:?}") };
    assert_eq!((failure.status, failure.substatus), (400, 409));
    assert_eq!(
        failure.message,
        "Encountered exception while executing function. Exception = Error: third item refused on purpose"
    );
    assert!(ids(&c, "a").is_empty());
}

#[test]
fn reads_see_the_scripts_own_writes_and_errors_reach_the_callback() {
    let c = client();
    c.create_item(&json(r#"{"id":"x","pk":"a","v":1}"#)).unwrap();
    let body = r#"function rw() {
        var coll = getContext().getCollection(), link = coll.getAltLink(), out = [];
        coll.createDocument(link, {id: "y", pk: "a", v: 2}, function (err) {
            coll.readDocument(link + "/docs/y", function (err, doc) { out.push(doc.v); });
            coll.createDocument(link, {id: "x", pk: "a"}, function (err) { out.push(err.number); });
            coll.readDocument(link + "/docs/nope", function (err) { out.push(err.number); });
            coll.deleteDocument(link + "/docs/x", function (err, options) {
                out.push(err === undefined ? "deleted" : err.number);
                coll.readDocument(link + "/docs/x", function (err) {
                    out.push(err.number);
                    getContext().getResponse().setBody(out);
                });
            });
        });
    }"#;
    c.create_stored_procedure("rw", body).unwrap();
    let r = c.execute_stored_procedure("rw", &key("a"), &[], &ProcedureOptions::default()).unwrap();
    assert_eq!(r.body, json(r#"[2, 409, 404, "deleted", 404]"#));
    assert_eq!(ids(&c, "a"), ["y"]);
}

#[test]
fn a_write_to_another_logical_partition_fails_as_the_service_fails_it() {
    let c = client();
    let body = r#"function other() {
        var coll = getContext().getCollection();
        coll.createDocument(coll.getSelfLink(), {id: "1", pk: "b"}, function (err) { if (err) throw err; });
    }"#;
    c.create_stored_procedure("other", body).unwrap();
    let e = c.execute_stored_procedure("other", &key("a"), &[], &ProcedureOptions::default()).unwrap_err();
    assert_eq!(e.status(), Some(400));
    assert!(
        e.to_string().contains(
            "Requests originating from scripts cannot reference partition keys other than the one for which client \
             request was submitted."
        ),
        "{e}"
    );
    assert!(ids(&c, "b").is_empty());
}

#[test]
fn the_response_body_logging_and_the_sdk_tests_scripts() {
    let c = client();
    // The SDKs' tests (research, 6.7): setBody/getBody in a loop gives 999; appendValue builds a string.
    c.create_stored_procedure(
        "loop",
        "function () { for (var i = 0; i < 1000; i++) { var item = getContext().getResponse().getBody(); \
         if (i > 0 && item != i - 1) throw 'body mismatch'; getContext().getResponse().setBody(i); } }",
    )
    .unwrap();
    c.create_stored_procedure(
        "append",
        "function () { for (var i = 0; i < 10; i++) { getContext().getResponse().appendValue('Body', i); } }",
    )
    .unwrap();
    c.create_stored_procedure("input", "function (input) { getContext().getResponse().setBody('a' + input.temp); }")
        .unwrap();
    c.create_stored_procedure("log", r#"function () { console.log("The value of %s is %s.", "x", 1); }"#).unwrap();
    let run = |id: &str, args: &[Value], logging: bool| {
        let options = ProcedureOptions { script_logging: logging, ..ProcedureOptions::default() };
        c.execute_stored_procedure(id, &key("a"), args, &options).unwrap()
    };
    assert_eq!(run("loop", &[], false).body, json("999"));
    assert_eq!(run("append", &[], false).body, json(r#""0123456789""#));
    assert_eq!(run("input", &[json(r#"{"temp":"so"}"#)], false).body, json(r#""aso""#));
    assert_eq!(run("log", &[], true).log, "The value of x is 1.");
    assert_eq!(run("log", &[], false).log, "");
    // No body set: null.
    assert_eq!(run("log", &[], false).body, Value::Null);
}

#[test]
fn the_javascript_query_api_and_an_async_script() {
    let c = client();
    for (id, n) in [("a", 3), ("b", 1), ("c", 2)] {
        c.create_item(&json(&format!(r#"{{"id":"{id}","pk":"p","n":{n}}}"#))).unwrap();
    }
    c.create_stored_procedure(
        "chain",
        "function () { __.chain().filter(function (d) { return d.n > 1; }).sortBy(function (d) { return d.n; })\
         .pluck('id').value(function (err, ids) { getContext().getResponse().setBody(ids); }); }",
    )
    .unwrap();
    let r = c.execute_stored_procedure("chain", &key("p"), &[], &ProcedureOptions::default()).unwrap();
    assert_eq!(r.body, json(r#"["c", "a"]"#));
    // The docs' async/await form: a promise around queryDocuments.
    let body = r#"async function asyncCount() {
        var coll = getContext().getCollection();
        function query(q) {
            return new Promise(function (resolve, reject) {
                var ok = coll.queryDocuments(coll.getSelfLink(), q, {}, function (err, docs) {
                    if (err) reject(err); else resolve(docs);
                });
                if (!ok) reject(new Error(429, "not accepted"));
            });
        }
        var docs = await query("SELECT VALUE COUNT(1) FROM c");
        var more = await query({query: "SELECT VALUE c.id FROM c WHERE c.n = @n", parameters: [{name: "@n", value: 2}]});
        getContext().getResponse().setBody({count: docs[0], ids: more});
    }"#;
    c.create_stored_procedure("asyncCount", body).unwrap();
    let r = c.execute_stored_procedure("asyncCount", &key("p"), &[], &ProcedureOptions::default()).unwrap();
    assert_eq!(r.body, json(r#"{"count": 3, "ids": ["c"]}"#));
}

/// The same multi-item logic as a procedure and as a transactional batch leaves the same state.
#[test]
fn a_procedure_and_a_batch_of_the_same_writes_leave_the_same_state() {
    let batch_container = container();
    let (by_procedure, by_batch) = (client(), ContainerClient::from_container(Arc::clone(&batch_container)));
    for c in [&by_procedure, &by_batch] {
        for i in 0..5 {
            c.create_item(&json(&format!(r#"{{"id":"i{i}","pk":"k","n":{i}}}"#))).unwrap();
        }
    }
    let body = r#"function apply(ops) {
        var coll = getContext().getCollection(), link = coll.getAltLink();
        ops.forEach(function (op) {
            var done = function (err) { if (err) throw err; };
            if (op.kind === "create") coll.createDocument(link, op.item, done);
            else if (op.kind === "upsert") coll.upsertDocument(link, op.item, done);
            else if (op.kind === "replace") coll.replaceDocument(link + "/docs/" + op.item.id, op.item, done);
            else if (op.kind === "delete") coll.deleteDocument(link + "/docs/" + op.id, done);
            else if (op.kind === "patch") coll.patchDocument(link + "/docs/" + op.id, op.operations, done);
        });
    }"#;
    by_procedure.create_stored_procedure("apply", body).unwrap();
    let ops = json(
        r#"[{"kind":"create","item":{"id":"new","pk":"k","n":10}},
            {"kind":"upsert","item":{"id":"i1","pk":"k","n":11}},
            {"kind":"replace","item":{"id":"i2","pk":"k","n":12,"extra":true}},
            {"kind":"delete","id":"i3"},
            {"kind":"patch","id":"i4","operations":[{"op":"incr","path":"/n","value":100}]}]"#,
    );
    by_procedure.execute_stored_procedure("apply", &key("k"), &[ops], &ProcedureOptions::default()).unwrap();
    batch_container
        .execute_batch(
            &key("k"),
            &[
                BatchOperation::Create { item: json(r#"{"id":"new","pk":"k","n":10}"#) },
                BatchOperation::Upsert { item: json(r#"{"id":"i1","pk":"k","n":11}"#), if_match: None },
                BatchOperation::Replace {
                    id: "i2".into(),
                    item: json(r#"{"id":"i2","pk":"k","n":12,"extra":true}"#),
                    if_match: None,
                },
                BatchOperation::Delete { id: "i3".into(), if_match: None },
                BatchOperation::Patch {
                    id: "i4".into(),
                    operations: vec![cosmoql::storage::PatchOperation::Increment { path: "/n".into(), by: 100.0 }],
                    if_match: None,
                },
            ],
        )
        .unwrap();
    let state = |c: &ContainerClient| {
        let mut items: Vec<String> = c
            .query_pages::<Value>("SELECT c.id, c.n, c.extra FROM c", QueryOptions::default())
            .collect_all()
            .unwrap()
            .iter()
            .map(|v| to_json_string(v).unwrap())
            .collect();
        items.sort();
        items
    };
    assert_eq!(state(&by_procedure), state(&by_batch));
    assert_eq!(state(&by_batch).len(), 5);
}

#[test]
fn hostile_procedures_end_with_a_clear_error_and_write_nothing() {
    let c = client();
    let cases = [
        ("an endless loop", "function () { var coll = getContext().getCollection(); coll.createDocument(coll.getSelfLink(), {id: '1', pk: 'a'}); while (true) {} }", 408),
        ("recursion", "function f() { return f() + 1; }", 400),
        ("a 1 GB string", "function () { var s = 'x'; while (true) s = s + s; }", 400),
        ("a throw inside a callback", "function () { var coll = getContext().getCollection(); coll.queryDocuments(coll.getSelfLink(), 'SELECT * FROM c', function () { throw new Error('inside'); }); }", 400),
        ("a host object", "function () { return require('fs'); }", 400),
    ];
    for (what, body, status) in cases {
        c.create_stored_procedure("hostile", body).unwrap();
        let e = c.execute_stored_procedure("hostile", &key("a"), &[], &ProcedureOptions::default()).unwrap_err();
        assert_eq!(e.status(), Some(status), "{what}: {e}");
        c.delete_stored_procedure("hostile").unwrap();
        assert!(ids(&c, "a").is_empty(), "{what}");
    }
    c.create_stored_procedure("fine", "function () { getContext().getResponse().setBody('ok'); }").unwrap();
    assert_eq!(
        c.execute_stored_procedure("fine", &key("a"), &[], &ProcedureOptions::default()).unwrap().body,
        json(r#""ok""#)
    );
}

#[test]
fn procedures_are_kept_listed_replaced_and_deleted() {
    let c = client();
    c.create_stored_procedure("p", "function () { getContext().getResponse().setBody(1); }").unwrap();
    assert_eq!(c.create_stored_procedure("p", "function () {}").unwrap_err().status(), Some(409));
    c.replace_stored_procedure("p", "function () { getContext().getResponse().setBody(2); }").unwrap();
    assert_eq!(c.execute_stored_procedure("p", &key("a"), &[], &ProcedureOptions::default()).unwrap().body, json("2"));
    assert_eq!(c.list_stored_procedures().len(), 1);
    c.delete_stored_procedure("p").unwrap();
    let e = c.execute_stored_procedure("p", &key("a"), &[], &ProcedureOptions::default()).unwrap_err();
    assert_eq!(e.status(), Some(404));
}

#[test]
fn a_procedures_query_may_call_a_udf() {
    let c = client();
    c.create_item(&json(r#"{"id":"1","pk":"a","n":20}"#)).unwrap();
    c.create_user_defined_function("half", "function (x) { return x / 2; }").unwrap();
    let body = r#"function () {
        var coll = getContext().getCollection();
        coll.queryDocuments(coll.getSelfLink(), "SELECT VALUE udf.half(c.n) FROM c", function (err, docs) {
            if (err) throw err;
            getContext().getResponse().setBody(docs);
        });
    }"#;
    c.create_stored_procedure("halves", body).unwrap();
    let r = c.execute_stored_procedure("halves", &key("a"), &[], &ProcedureOptions::default()).unwrap();
    assert_eq!(r.body, json("[10]"));
}

#[test]
fn read_documents_pages_with_continuation_and_the_query_api_maps_sorts_and_flattens() {
    let c = client();
    for (id, n) in [("a", 3), ("b", 1), ("c", 2), ("d", 5), ("e", 4)] {
        c.create_item(&json(&format!(r#"{{"id":"{id}","pk":"p","n":{n},"tags":["{id}1","{id}2"]}}"#))).unwrap();
    }
    // readDocuments, two at a time, following the continuation; readDocument with ifNoneMatch of
    // the current etag answers "not modified" (no document).
    let body = r#"function () {
        var coll = getContext().getCollection(), link = coll.getSelfLink(), ids = [];
        page();
        function page(continuation) {
            coll.readDocuments(link, {pageSize: 2, continuation: continuation}, function (err, docs, options) {
                if (err) throw err;
                docs.forEach(function (d) { ids.push(d.id); });
                if (options.continuation) return page(options.continuation);
                coll.readDocument(coll.getAltLink() + "/docs/a", function (err, a) {
                    coll.readDocument(coll.getAltLink() + "/docs/a", {ifNoneMatch: a._etag}, function (err, same, o) {
                        getContext().getResponse().setBody({ids: ids.sort(), notModified: o.notModified === true && same === undefined});
                    });
                });
            });
        }
    }"#;
    c.create_stored_procedure("pages", body).unwrap();
    let r = c.execute_stored_procedure("pages", &key("p"), &[], &ProcedureOptions::default()).unwrap();
    assert_eq!(r.body, json(r#"{"ids": ["a", "b", "c", "d", "e"], "notModified": true}"#));
    // __.map, __.sortByDescending and __.flatten, with callbacks; without a callback the result is
    // appended to the response body, as the service does.
    let body = r#"function () {
        var out = {};
        __.map(function (d) { return d.n * 10; }, function (err, tens) { out.tens = tens.sort(function (x, y) { return x - y; }); });
        __.sortByDescending(function (d) { return d.n; }, function (err, docs) {
            out.order = docs.map(function (d) { return d.id; });
        });
        __.chain().pluck("tags").flatten().value(function (err, tags) {
            out.tags = tags.length;
            getContext().getResponse().setBody(out);
        });
    }"#;
    c.create_stored_procedure("api", body).unwrap();
    let r = c.execute_stored_procedure("api", &key("p"), &[], &ProcedureOptions::default()).unwrap();
    assert_eq!(r.body, json(r#"{"tens": [10, 20, 30, 40, 50], "order": ["d", "e", "a", "c", "b"], "tags": 10}"#));
    c.create_stored_procedure("appended", "function () { __.pluck('id', {}); }").unwrap();
    let r = c.execute_stored_procedure("appended", &key("p"), &[], &ProcedureOptions::default()).unwrap();
    let ids: Vec<String> = parse_json(r.body.as_str().unwrap())
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 5);
}
