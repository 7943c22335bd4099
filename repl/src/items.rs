//! Item operations from the shell: create, upsert, replace, read, delete and patch one item, as
//! the REPL's `.insert`, `.upsert`, `.replace`, `.get`, `.delete`, `.patch` and the one-shot
//! `cosmoql item ... --db DIR`. Each answers with the service's status and request charge, as a
//! query answers with its metrics; a refusal says the service's status, message and charge.

use std::path::PathBuf;

use cosmoql::value::{parse_json, to_json_string, Value};
use cosmoql::{ContainerClient, PartitionKey, PatchOperation, QueryOptions};

/// One item operation, with its arguments read.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemOp {
    /// With the triggers it names (`--pre-trigger NAME`, `--post-trigger NAME`).
    Insert(Value, Triggers),
    Upsert(Value, Triggers),
    /// With `if_match`, only while the stored item's etag is still that (else 412).
    Replace {
        item: Value,
        if_match: Option<String>,
    },
    /// Without a key: looked up by a query over every partition (a keyless container, or one
    /// keyed on `/id`, needs none: it is a point read).
    Get {
        id: String,
        key: Option<PartitionKey>,
    },
    /// Without a key only in a keyless container, or one keyed on `/id`.
    Delete {
        id: String,
        key: Option<PartitionKey>,
    },
    /// Without a key only in a keyless container, or one keyed on `/id`.
    Patch {
        id: String,
        key: Option<PartitionKey>,
        operations: Vec<PatchOperation>,
    },
}

/// The triggers a write names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Triggers {
    pub pre: Vec<String>,
    pub post: Vec<String>,
}

/// Leading `--pre-trigger NAME` and `--post-trigger NAME` options, and the text after them.
fn triggers_of(mut args: &str) -> Result<(Triggers, &str), String> {
    let mut triggers = Triggers::default();
    loop {
        args = args.trim_start();
        let (list, rest) = match (args.strip_prefix("--pre-trigger"), args.strip_prefix("--post-trigger")) {
            (Some(rest), _) => (&mut triggers.pre, rest),
            (_, Some(rest)) => (&mut triggers.post, rest),
            _ => return Ok((triggers, args)),
        };
        let rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        if end == 0 || rest.starts_with('{') {
            return Err("--pre-trigger and --post-trigger need the trigger's name".into());
        }
        list.push(rest[..end].to_string());
        args = &rest[end..];
    }
}

/// What an operation answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The items it returns (none for a delete; several for a `.get` by query that finds the id
    /// in several logical partitions).
    pub items: Vec<Value>,
    pub status: u16,
    pub charge: f64,
    /// How it was done, when it is worth saying (a lookup by query).
    pub note: Option<String>,
}

/// The REPL's usage lines of the item commands.
pub const USAGE: &str = "usage: .insert JSON | .upsert JSON | .replace JSON [--if-match ETAG] | .get ID [PK] | .delete ID [PK] | .patch ID [PK] OPERATIONS";

/// The name of a status as the service's reason phrase.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        404 => "Not Found",
        _ => "",
    }
}

/// `201 Created, 5.71 RU`.
pub fn status_line(status: u16, charge: f64) -> String {
    format!("{status} {}, {} RU", reason(status), cosmoql::value::format_number((charge * 100.0).round() / 100.0))
}

/// Reads one JSON value from the start of `text`: the value and what follows it.
fn leading_json<'a>(text: &'a str, what: &str) -> Result<(Value, &'a str), String> {
    let text = text.trim_start();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
    let end = match stream.next() {
        Some(Ok(_)) => stream.byte_offset(),
        Some(Err(e)) => {
            let hint = crate::statements::quote_hint(text.split_whitespace().next().unwrap_or(""))
                .map(|q| format!("; a string is quoted: {q}"))
                .unwrap_or_default();
            return Err(format!("{what} is {}{hint}", cosmoql::value::json::json_error_message(&e)));
        }
        None => return Err(format!("{what} is missing")),
    };
    let value = parse_json(&text[..end]).map_err(|e| format!("{what} is not JSON: {e}"))?;
    Ok((value, text[end..].trim()))
}

/// An id: a bare word, or a JSON string for one with spaces (`"my id"`); and what follows.
fn leading_id(text: &str) -> Result<(String, &str), String> {
    let text = text.trim_start();
    if text.starts_with('"') {
        let (value, rest) = leading_json(text, "the id")?;
        return Ok((value.as_str().ok_or("the id is a string")?.to_string(), rest));
    }
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    if end == 0 {
        return Err("the id is missing".into());
    }
    Ok((text[..end].to_string(), &text[end..]))
}

/// A partition key from JSON (`"dev-1"`, `42`, `["acme", "u1"]`, `null`), or the bare word
/// `undefined` for the items that lack the key's path.
fn key_of(value: &Value) -> Result<PartitionKey, String> {
    let text = to_json_string(value).unwrap_or_default();
    PartitionKey::parse_json(&text).map_err(|e| format!("the partition key {text}: {}", e.message))
}

/// An item: a JSON object.
fn item_of(text: &str) -> Result<Value, String> {
    let (value, rest) = leading_json(text, "the item")?;
    if !rest.is_empty() {
        return Err(format!("after the item's JSON: `{rest}` (one item per command)"));
    }
    object(value)
}

fn object(value: Value) -> Result<Value, String> {
    if !matches!(value, Value::Object(_)) {
        return Err("the item must be a JSON object, e.g. {\"id\": \"1\", \"deviceId\": \"d1\"}".into());
    }
    Ok(value)
}

/// Patch operations: one `{"op": ..., "path": ..., "value": ...}` or an array of them.
fn operations_of(text: &str) -> Result<Vec<PatchOperation>, String> {
    let (value, rest) = leading_json(text, "the patch operations")?;
    if !rest.is_empty() {
        return Err(format!("after the patch operations: `{rest}`"));
    }
    let list: Vec<Value> =
        match value {
            Value::Array(items) => items.iter().cloned().collect(),
            one @ Value::Object(_) => vec![one],
            _ => return Err(
                "the patch operations are a JSON array of {\"op\": \"set\", \"path\": \"/a\", \"value\": 1} objects"
                    .into(),
            ),
        };
    if list.is_empty() {
        return Err("no patch operations (the service takes 1 to 10)".into());
    }
    list.iter().map(|op| PatchOperation::from_json(op).map_err(|e| e.message)).collect()
}

/// Whether a REPL command line is an item command (it prints items, as a query prints results).
pub fn is_item_command(line: &str) -> bool {
    let name = line.split_whitespace().next().unwrap_or("");
    matches!(name, ".insert" | ".upsert" | ".replace" | ".get" | ".delete" | ".patch")
}

/// Reads the arguments of the REPL command `name` (`.insert`, ...): `None` when `name` is not an
/// item command.
pub fn parse(name: &str, args: &str) -> Option<Result<ItemOp, String>> {
    let usage = |u: &str| format!("usage: {u}");
    Some(match name {
        ".insert" => triggers_of(args)
            .and_then(|(t, json)| Ok(ItemOp::Insert(item_of(json)?, t)))
            .map_err(|e| with_usage(e, &usage(".insert [--pre-trigger NAME] [--post-trigger NAME] JSON"))),
        ".upsert" => triggers_of(args)
            .and_then(|(t, json)| Ok(ItemOp::Upsert(item_of(json)?, t)))
            .map_err(|e| with_usage(e, &usage(".upsert [--pre-trigger NAME] [--post-trigger NAME] JSON"))),
        ".replace" => (|| {
            let (item, rest) = leading_json(args, "the item")?;
            let if_match = match rest.strip_prefix("--if-match") {
                Some(etag) if !etag.trim().is_empty() => Some(etag_of(etag)),
                Some(_) => return Err("--if-match needs the etag (the item's _etag)".to_string()),
                None if rest.is_empty() => None,
                None => return Err(format!("after the item's JSON: `{rest}` (one item per command)")),
            };
            Ok(ItemOp::Replace { item: object(item)?, if_match })
        })()
        .map_err(|e| with_usage(e, &usage(".replace JSON [--if-match ETAG]"))),
        ".get" => (|| {
            let (id, rest) = leading_id(args)?;
            let key = if rest.trim().is_empty() { None } else { Some(whole_key(rest)?) };
            Ok(ItemOp::Get { id, key })
        })()
        .map_err(|e| with_usage(e, &usage(".get ID [PK]"))),
        ".delete" => (|| {
            let (id, rest) = leading_id(args)?;
            let key = if rest.trim().is_empty() { None } else { Some(whole_key(rest)?) };
            Ok(ItemOp::Delete { id, key })
        })()
        .map_err(|e| with_usage(e, &usage(".delete ID [PK]"))),
        ".patch" => (|| {
            let (id, rest) = leading_id(args)?;
            // `ID PK OPERATIONS`, or `ID OPERATIONS` where no key is needed.
            let (key, operations) = match leading_json(rest, "the patch operations") {
                Ok((_, "")) => (None, rest),
                _ => {
                    let (key, after) = leading_key(rest)?;
                    (Some(key), after)
                }
            };
            Ok(ItemOp::Patch { id, key, operations: operations_of(operations)? })
        })()
        .map_err(|e| with_usage(e, &usage(".patch ID PK [{\"op\": \"set\", \"path\": \"/a\", \"value\": 1}]"))),
        _ => return None,
    })
}

/// An etag as given after `--if-match`: as the item's `_etag` holds it, with its quotes (added
/// when left out).
fn etag_of(text: &str) -> String {
    let etag = text.trim();
    if etag.starts_with('"') {
        etag.to_string()
    } else {
        format!("\"{etag}\"")
    }
}

/// A key at the start of `text` (JSON; `undefined` for an item without the key's path, also as
/// a level of a hierarchical key: `["acme", undefined]`), and what follows it.
fn leading_key(text: &str) -> Result<(PartitionKey, &str), String> {
    let text = text.trim_start();
    if let Some(rest) = text.strip_prefix("undefined") {
        return Ok((PartitionKey::undefined(), rest.trim()));
    }
    if text.starts_with('[') {
        if let Some(end) = crate::statements::bracket_end(text).filter(|end| text[..*end].contains("undefined")) {
            let components = crate::statements::key_components(&text[..end])
                .map_err(|e| format!("the partition key {}: {e}", &text[..end]))?;
            return Ok((PartitionKey(components), text[end..].trim()));
        }
    }
    let (value, rest) = leading_json(text, "the partition key")?;
    Ok((key_of(&value)?, rest))
}

/// A key that is the whole rest of the text.
fn whole_key(text: &str) -> Result<PartitionKey, String> {
    let (key, rest) = leading_key(text)?;
    if !rest.is_empty() {
        return Err(format!("after the partition key: `{rest}`"));
    }
    Ok(key)
}

fn with_usage(error: String, usage: &str) -> String {
    format!("{error}\n{usage}")
}

/// The key of an item with id `id` in a container that needs no key to find it: a keyless one,
/// or one keyed on `/id`.
fn implied_key(client: &ContainerClient, id: &str) -> Option<PartitionKey> {
    let definition = client.partition_key_definition();
    let keyed_on_id = definition.paths().len() == 1
        && definition.synthetic_key().is_none()
        && definition.paths()[0].to_string() == "/id";
    if definition.is_none() || keyed_on_id {
        let doc = cosmoql::store::Doc::from_value(&Value::object([("id".to_string(), Value::from(id))])).ok()?;
        return definition.key_of(doc.root()).ok();
    }
    None
}

/// The key given, or the one a keyless container (or one keyed on `/id`) implies.
fn needed_key(client: &ContainerClient, key: Option<PartitionKey>, id: &str) -> Result<PartitionKey, String> {
    key.or_else(|| implied_key(client, id)).ok_or_else(|| {
        format!(
            "the container is keyed on {}: give the item's partition key as JSON after its id (`undefined` for an item without it)",
            crate::reports::describe_key(client.partition_key_definition())
        )
    })
}

/// The error of a refused operation: the service's status and message, and what it cost.
fn refused(e: &cosmoql::Error) -> String {
    format!("{e} ({} RU)", cosmoql::value::format_number((e.request_charge() * 100.0).round() / 100.0))
}

fn options(t: Triggers) -> cosmoql::ItemOptions {
    cosmoql::ItemOptions { pre_triggers: t.pre, post_triggers: t.post, ..cosmoql::ItemOptions::default() }
}

/// Runs `op` on `client`.
pub fn run(client: &ContainerClient, op: ItemOp) -> Result<Answer, String> {
    let answer = |r: cosmoql::ItemResponse<Value>| Answer {
        items: vec![r.item],
        status: r.status,
        charge: r.request_charge,
        note: None,
    };
    match op {
        ItemOp::Insert(item, t) => client.create_item_with(&item, &options(t)).map(answer).map_err(|e| refused(&e)),
        ItemOp::Upsert(item, t) => client.upsert_item_with(&item, &options(t)).map(answer).map_err(|e| refused(&e)),
        ItemOp::Replace { item, if_match } => {
            let id = item.get("id").as_str().ok_or("the item has no string `id` to say which item it replaces")?;
            let key = client.partition_key_of(&item).map_err(|e| e.to_string())?;
            client.replace_item(key, id, &item, if_match.as_deref()).map(answer).map_err(|e| refused(&e))
        }
        ItemOp::Get { id, key } => match key.or_else(|| implied_key(client, &id)) {
            Some(key) => client.read_item::<Value>(key, &id).map(answer).map_err(|e| refused(&e)),
            None => get_by_query(client, &id),
        },
        ItemOp::Delete { id, key } => client
            .delete_item(needed_key(client, key, &id)?, &id)
            .map(|r| Answer { items: Vec::new(), status: r.status, charge: r.request_charge, note: None })
            .map_err(|e| refused(&e)),
        ItemOp::Patch { id, key, operations } => client
            .patch_item::<Value>(needed_key(client, key, &id)?, &id, &operations)
            .map(answer)
            .map_err(|e| refused(&e)),
    }
}

/// `.get ID` on a container keyed on another path: the id looked up by a query over every
/// partition (the service has no point read without the key).
fn get_by_query(client: &ContainerClient, id: &str) -> Result<Answer, String> {
    let query = cosmoql::Query::from("SELECT * FROM c WHERE c.id = @id")
        .with_parameter("@id", id)
        .map_err(|e| e.to_string())?;
    let results = client.query_pages::<Value>(query, QueryOptions::default()).drain().map_err(|e| e.to_string())?;
    let charge = results.metrics.request_charge;
    let how = format!(
        "found by a query over every partition, as the key of {} was not given (with the key, a read is a point read)",
        crate::reports::describe_key(client.partition_key_definition())
    );
    if results.items.is_empty() {
        return Err(format!(
            "404 Not Found: no item with id `{}` in any logical partition ({} RU)",
            crate::text::printable(id),
            cosmoql::value::format_number((charge * 100.0).round() / 100.0)
        ));
    }
    Ok(Answer { items: results.items, status: 200, charge, note: Some(how) })
}

/// Options of `cosmoql item`.
#[derive(Debug, clap::Args)]
pub struct ItemArgs {
    /// The database directory.
    #[arg(long, value_name = "DIR", global = true)]
    db: Option<PathBuf>,
    /// The container (needed when the database has several).
    #[arg(long = "use", value_name = "CONTAINER", global = true)]
    use_container: Option<String>,
    #[command(subcommand)]
    op: ItemCommand,
}

/// One item operation. JSON arguments may be `-` to read them from standard input; a key is
/// JSON (`"dev-1"`, `42`, `["acme", "u1"]`, `[]` in a keyless container) or `undefined` for an
/// item without the key's path.
#[derive(Debug, clap::Subcommand)]
enum ItemCommand {
    /// Create an item (201; 409 when its id is taken in its logical partition).
    Insert {
        /// The item, a JSON object with an "id".
        json: String,
    },
    /// Create or replace an item (201 or 200).
    Upsert {
        /// The item, a JSON object with an "id".
        json: String,
    },
    /// Replace an item whole (200; 404 when there is none with its id and key; 412 when
    /// `--if-match` no longer holds).
    Replace {
        /// The item, a JSON object with an "id".
        json: String,
        /// Only while the stored item's etag is this (its `_etag`).
        #[arg(long = "if-match", value_name = "ETAG", allow_hyphen_values = true)]
        if_match: Option<String>,
    },
    /// Read an item (200; 404). Without PK the id is looked up by a query over every partition
    /// (unless the container is keyless or keyed on /id).
    Get {
        /// The item's id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        /// Its partition key.
        #[arg(allow_hyphen_values = true)]
        pk: Option<String>,
    },
    /// Delete an item (204; 404). PK may be left out in a keyless container or one keyed on /id.
    Delete {
        /// The item's id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        /// Its partition key.
        #[arg(allow_hyphen_values = true)]
        pk: Option<String>,
    },
    /// Patch an item in place (200): set, add, replace, remove, incr. PK may be left out in a
    /// keyless container or one keyed on /id.
    Patch {
        /// The item's id.
        #[arg(allow_hyphen_values = true)]
        id: String,
        /// [PK] OPERATIONS: its partition key, then the operations, e.g.
        /// '[{"op": "set", "path": "/status", "value": "done"}]'.
        #[arg(value_name = "[PK] OPERATIONS", num_args = 1..=2, required = true, allow_negative_numbers = true)]
        rest: Vec<String>,
    },
}

/// `-` reads standard input.
fn text_arg(text: &str) -> Result<String, String> {
    if text != "-" {
        return Ok(text.to_string());
    }
    let mut buf = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(buf)
}

/// `cosmoql item ...`: the item (or items) as JSON on standard output, the status and charge
/// on standard error; a refusal on standard error, exit 1.
pub fn run_command(args: &ItemArgs) -> Result<(), String> {
    let dir = args.db.as_deref().ok_or("cosmoql item needs --db DIR: the database directory to write to")?;
    let (name, rest) = match &args.op {
        ItemCommand::Insert { json } => (".insert", text_arg(json)?),
        ItemCommand::Upsert { json } => (".upsert", text_arg(json)?),
        ItemCommand::Replace { json, if_match } => {
            let etag = if_match.as_deref().map(|e| format!(" --if-match {e}")).unwrap_or_default();
            (".replace", format!("{}{etag}", text_arg(json)?))
        }
        ItemCommand::Get { id, pk } => (".get", format!("{} {}", quoted(id), pk.as_deref().unwrap_or(""))),
        ItemCommand::Delete { id, pk } => (".delete", format!("{} {}", quoted(id), pk.as_deref().unwrap_or(""))),
        ItemCommand::Patch { id, rest } => match rest.as_slice() {
            [operations] => (".patch", format!("{} {}", quoted(id), text_arg(operations)?)),
            [pk, operations] => (".patch", format!("{} {pk} {}", quoted(id), text_arg(operations)?)),
            _ => return Err("usage: cosmoql item patch ID [PK] OPERATIONS --db DIR".into()),
        },
    };
    // The REPL's usage line would mislead here: `--help` says this command's.
    let op = parse(name, &rest).unwrap_or_else(|| Err(USAGE.to_string())).map_err(|e| {
        let what = e.split("\nusage:").next().unwrap_or(&e).to_string();
        format!("{what} (cosmoql item {} --help)", &name[1..])
    })?;
    let (_account, client) = crate::query_cmd::open_container(dir, args.use_container.as_deref(), false)?;
    let answer = run(&client, op)?;
    // One item as one JSON object a line (several when a lookup by id finds several).
    for item in &answer.items {
        outln!("{}", to_json_string(item).unwrap_or_default());
    }
    if let Some(note) = &answer.note {
        errln!("{note}");
    }
    errln!("{}", status_line(answer.status, answer.charge));
    Ok(())
}

/// An id as the REPL's parser reads it: a JSON string.
fn quoted(id: &str) -> String {
    to_json_string(&Value::from(id)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_read_their_arguments() {
        let op = parse(".get", r#"r1 "dev-1""#).unwrap().unwrap();
        assert_eq!(op, ItemOp::Get { id: "r1".into(), key: Some(PartitionKey::from("dev-1")) });
        let op = parse(".get", r#""my id""#).unwrap().unwrap();
        assert_eq!(op, ItemOp::Get { id: "my id".into(), key: None });
        let op = parse(".delete", r#"r1 ["acme", 2]"#).unwrap().unwrap();
        let key = PartitionKey::parse_json(r#"["acme", 2]"#).unwrap();
        assert_eq!(op, ItemOp::Delete { id: "r1".into(), key: Some(key) });
        let op = parse(".delete", "r1 undefined").unwrap().unwrap();
        assert_eq!(op, ItemOp::Delete { id: "r1".into(), key: Some(PartitionKey::undefined()) });
        let op = parse(".patch", r#"r1 ["a", undefined] [{"op": "remove", "path": "/n"}]"#).unwrap().unwrap();
        let partial = PartitionKey::from_values(&[Value::from("a"), Value::Undefined]).unwrap();
        assert!(matches!(op, ItemOp::Patch { key: Some(ref k), .. } if *k == partial), "{op:?}");
        let op = parse(".patch", r#"r1 [{"op": "remove", "path": "/n"}]"#).unwrap().unwrap();
        assert!(matches!(op, ItemOp::Patch { key: None, .. }), "{op:?}");
        let op = parse(".replace", r#"{"id": "1"} --if-match 0000-1"#).unwrap().unwrap();
        assert_eq!(
            op,
            ItemOp::Replace { item: parse_json(r#"{"id": "1"}"#).unwrap(), if_match: Some("\"0000-1\"".into()) }
        );
        let op = parse(".patch", r#"r1 "d" [{"op": "incr", "path": "/n", "value": 1}]"#).unwrap().unwrap();
        assert!(matches!(op, ItemOp::Patch { operations, .. } if operations.len() == 1));
        let err = parse(".delete", "r1 dev-1").unwrap().unwrap_err();
        assert!(err.contains("a string is quoted: \"dev-1\""), "{err}");
        let err = parse(".insert", "[1]").unwrap().unwrap_err();
        assert!(err.contains("must be a JSON object"), "{err}");
        assert!(parse(".mode", "json").is_none());
    }
}
