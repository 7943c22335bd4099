//! Which handler answers a request: the path's resource and the verb (with a POST on documents
//! told apart by its headers, in the order the service and the peers check them: batch, query
//! plan, query, then upsert or create).
//!
//! Paths (`../shared/research/gateway-python.md` §3.1) end in `/`, carry percent-encoded UTF-8
//! ids, and address databases and containers by name or by `_rid`.

use hyper::http::Method;
use percent_encoding::percent_decode_str;

use crate::account::account_document;
use crate::errors::{self, WireError};
use crate::resources::{not_found, Gateway};
use crate::wire::{Reply, Request};
use crate::{changefeed, items, offers, pkranges, plan, query, scripts};

/// The longest path accepted (ids are at most 255 characters; rids and names add little).
pub const MAX_PATH_BYTES: usize = 4096;

/// The decoded segments of a request path; `None` when it is too long or a segment is not
/// UTF-8 after decoding.
pub fn segments(path: &str) -> Option<Vec<String>> {
    if path.len() > MAX_PATH_BYTES {
        return None;
    }
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_decode_str(s).decode_utf8().ok().map(|s| s.into_owned()))
        .collect()
}

/// Whether a POST is a query (the read-only key may run it).
pub fn is_query(request_method: &Method, content_type: Option<&str>, flag: impl Fn(&str) -> bool) -> bool {
    request_method == Method::POST
        && (flag("x-ms-documentdb-isquery")
            || flag("x-ms-cosmos-is-query-plan-request")
            || content_type.is_some_and(|c| c.starts_with("application/query+json")))
}

/// Answers a request.
pub fn dispatch(gateway: &Gateway, request: &Request) -> Reply {
    match route(gateway, request) {
        Ok(reply) => reply,
        Err(error) => Reply::error(error),
    }
}

fn route(gateway: &Gateway, request: &Request) -> Result<Reply, WireError> {
    let s: Vec<&str> = request.segments.iter().map(String::as_str).collect();
    let m = &request.method;
    let not_allowed = || {
        errors::refusal(
            405,
            0,
            &format!("The requested verb {m} is not supported on this resource."),
            &request.activity_id,
        )
    };
    match s.as_slice() {
        [] if m == Method::GET => Ok(Reply::json(200, &account_document(&request.endpoint))),
        ["dbs"] if m == Method::GET => Ok(offers::list("", "Databases", gateway.database_documents())),
        ["dbs"] if m == Method::POST && is_query_request(request) => {
            offers::query("", "Databases", gateway.database_documents(), request)
        }
        ["dbs"] if m == Method::POST => gateway.create_database(request),
        ["dbs", db] if m == Method::GET => {
            let (_, props) = gateway.database(db, request)?;
            Ok(Reply::json(200, &gateway.database_document(&props)))
        }
        ["dbs", db] if m == Method::DELETE => gateway.delete_database(db, request),
        ["dbs", db, "colls"] if m == Method::GET => {
            let (rid, docs) = gateway.container_documents(db, request)?;
            Ok(offers::list(&rid, "DocumentCollections", docs))
        }
        ["dbs", db, "colls"] if m == Method::POST && is_query_request(request) => {
            let (rid, docs) = gateway.container_documents(db, request)?;
            offers::query(&rid, "DocumentCollections", docs, request)
        }
        ["dbs", db, "colls"] if m == Method::POST => gateway.create_container(db, request),
        ["offers"] if m == Method::GET => Ok(offers::list("", "Offers", gateway.offers(request))),
        ["offers"] if m == Method::POST && is_query_request(request) => {
            offers::query("", "Offers", gateway.offers(request), request)
        }
        ["offers", rid] if m == Method::GET => gateway.read_offer(rid, request),
        ["offers", rid] if m == Method::PUT => gateway.replace_offer(rid, request),
        ["dbs", db, "colls", c] if m == Method::GET => {
            let container = gateway.container(db, c, request)?;
            Ok(Reply::json(200, &gateway.container_document(&container)))
        }
        ["dbs", db, "colls", c] if m == Method::PUT => gateway.replace_container(db, c, request),
        ["dbs", db, "colls", c] if m == Method::DELETE => gateway.delete_container(db, c, request),
        ["dbs", db, "colls", c, "pkranges"] if m == Method::GET => {
            let container = gateway.container(db, c, request)?;
            let ranges = gateway.ranges.ranges(&container.rid, &container.listed_partitions());
            Ok(pkranges::reply(&container.rid, &ranges, request))
        }
        ["dbs", db, "colls", c, "docs"] if m == Method::GET => {
            let container = gateway.container(db, c, request)?;
            if changefeed::is_change_feed(request) {
                changefeed::read(&container, &gateway.ranges, request)
            } else {
                query::read_feed(&container, &gateway.ranges, request)
            }
        }
        ["dbs", db, "colls", c, "docs"] if m == Method::POST => {
            let container = gateway.container(db, c, request)?;
            if request.flag("x-ms-cosmos-is-batch-request") {
                items::batch(&container, request)
            } else if request.flag("x-ms-cosmos-is-query-plan-request") {
                plan::query_plan(&container, request)
            } else if is_query_request(request) {
                query::query_documents(&container, &gateway.ranges, request)
            } else {
                items::create(&container, request)
            }
        }
        ["dbs", db, "colls", c, "docs", id] => {
            let container = gateway.container(db, c, request)?;
            // Addressed by `_self` (`dbs/<rid>/colls/<rid>/docs/<rid>`): the item with that rid.
            let by_rid = cosmoql::rid::python_reads_as_rid(&format!("dbs/{db}"));
            let resolved = if by_rid { items::id_of_rid(&container, id, request)? } else { None };
            let id = resolved.as_deref().unwrap_or(id);
            match *m {
                Method::GET => items::read(&container, id, request),
                Method::PUT => items::replace(&container, id, request),
                Method::PATCH => items::patch(&container, id, request),
                Method::DELETE => items::delete(&container, id, request),
                _ => Err(not_allowed()),
            }
        }
        ["dbs", db, "colls", c, kind] if scripts::kind_of(kind).is_some() => {
            let container = gateway.container(db, c, request)?;
            let kind = scripts::kind_of(kind).ok_or_else(not_allowed)?;
            match *m {
                Method::GET => Ok(scripts::list(&container, kind)),
                Method::POST if is_query_request(request) => scripts::query(&container, kind, request),
                Method::POST => scripts::create(&container, kind, request),
                _ => Err(not_allowed()),
            }
        }
        ["dbs", db, "colls", c, kind, id] if scripts::kind_of(kind).is_some() => {
            let container = gateway.container(db, c, request)?;
            let kind = scripts::kind_of(kind).ok_or_else(not_allowed)?;
            match *m {
                Method::POST if kind == cosmoql::ScriptKind::StoredProcedure => {
                    scripts::execute(&container, id, request)
                }
                _ => scripts::one(&container, kind, id, request),
            }
        }
        ["dbs", db, "colls", c, "operations", "partitionkeydelete"] if m == Method::POST => {
            let container = gateway.container(db, c, request)?;
            items::delete_partition(&container, request)
        }
        []
        | ["dbs"]
        | ["dbs", _]
        | ["dbs", _, "colls"]
        | ["dbs", _, "colls", _]
        | ["dbs", _, "colls", _, _]
        | ["offers"]
        | ["offers", _] => Err(not_allowed()),
        _ => Err(not_found(request, "Resource Not Found: the path names no resource this server keeps.")),
    }
}

fn is_query_request(request: &Request) -> bool {
    is_query(&request.method, request.header("content-type"), |name| request.flag(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_decode_to_segments() {
        assert_eq!(
            segments("/dbs/shop/colls/items/docs/a%20b%2B%C3%A9/").unwrap(),
            ["dbs", "shop", "colls", "items", "docs", "a b+é"]
        );
        assert_eq!(segments("/").unwrap(), Vec::<String>::new());
        assert_eq!(segments("//dbs//"), Some(vec!["dbs".to_string()]));
        assert_eq!(segments("/dbs/%FF/"), None);
        assert_eq!(segments(&"a/".repeat(MAX_PATH_BYTES)), None);
    }
}
