//! The change feed, `GET .../docs` with `A-IM`: `Incremental feed` (each changed item once, in its
//! latest version) or `Full-Fidelity Feed` (every create, replace and delete within the
//! container's retention). Where it starts (`../shared/research/gateway-python.md` §3.3,
//! `gateway-rust-sdk.md` §2.2): `If-None-Match` carries the etag of the previous page (resume
//! there) or `*` (from now); `If-Modified-Since` a point in time; neither, the beginning. Which
//! items: the key header's logical partition, a range (`x-ms-documentdb-partitionkeyrangeid`,
//! cut to `x-ms-start-epk`/`x-ms-end-epk`), or the whole container. A page with no changes is a
//! 304 carrying the same etag: the SDKs' loops stop on it.

use cosmoql::{ChangeFeedStart, FeedRange, Value};

use crate::errors::{self, WireError};
use crate::items::{header_key, session_headers};
use crate::pkranges::RangeHistory;
use crate::query::{page_size, scope};
use crate::resources::Container;
use crate::wire::{charge_text, Reply, Request};

/// Whether a `GET .../docs` asks for the change feed.
pub fn is_change_feed(request: &Request) -> bool {
    request.header("a-im").is_some()
}

/// One page of the change feed.
pub fn read(container: &Container, ranges: &RangeHistory, request: &Request) -> Result<Reply, WireError> {
    let mode = request.header("a-im").unwrap_or_default().trim().to_ascii_lowercase();
    let all_versions = match mode.as_str() {
        "incremental feed" => false,
        "full-fidelity feed" => true,
        _ => return Err(request.bad_request(&format!("Invalid value '{mode}' for header A-IM."))),
    };
    let scope = scope(container, ranges, request)?;
    let key = header_key(container, request)?;
    let range = match (&key, &scope) {
        (Some(key), _) => FeedRange::Key(key.clone()),
        (None, Some((_, (lo, hi)))) => FeedRange::Epk(lo.clone(), hi.clone()),
        (None, None) => FeedRange::All,
    };
    let etag = request.header("if-none-match").map(|t| t.trim().trim_matches('"').to_string());
    let (start, continuation) = match etag.as_deref() {
        Some("*") => (ChangeFeedStart::Now, None),
        Some(token) if !token.is_empty() => (ChangeFeedStart::Beginning, Some(token.to_string())),
        _ => match request.header("if-modified-since") {
            Some(date) => {
                let time = httpdate::parse_http_date(date.trim()).map_err(|_| {
                    request.bad_request(&format!("Invalid value '{date}' for header If-Modified-Since."))
                })?;
                let seconds = time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
                (ChangeFeedStart::Time(seconds), None)
            }
            None => (ChangeFeedStart::Beginning, None),
        },
    };
    let size = page_size(request)?;
    let fail = |e: cosmoql::Error| errors::from_error(&e, &request.activity_id);
    let (items, next, charge) = if all_versions {
        let page = container
            .client
            .read_change_feed_all_versions(&range, start, continuation.as_deref(), size)
            .map_err(fail)?;
        (page.items, page.continuation, page.request_charge)
    } else {
        let page =
            container.client.read_change_feed::<Value>(&range, start, continuation.as_deref(), size).map_err(fail)?;
        (page.items, page.continuation, page.request_charge)
    };
    let etag = format!("\"{next}\"");
    let reply = if items.is_empty() {
        Reply::empty(304)
    } else {
        let texts: Vec<String> = items.iter().filter_map(cosmoql::value::to_json_string).collect();
        Reply::feed(&container.rid, "Documents", &texts)
    };
    let reply = reply.with("etag", etag).with("x-ms-request-charge", charge_text(charge));
    let serving = match (&scope, &key) {
        (Some((id, _)), _) => Some(*id),
        (None, Some(key)) => container.range_of(key),
        (None, None) => None,
    };
    Ok(match serving {
        Some(range) => session_headers(container, range, reply),
        None => reply,
    })
}
