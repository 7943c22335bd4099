//! A client of any Cosmos DB for NoSQL endpoint (the service, an emulator, `cosmoql serve`):
//! what `cosmoql test SUITE --endpoint URL --key KEY` runs a query suite with.
//!
//! It speaks the REST API as the SDKs do (`../shared/research/gateway-python.md`): master-key
//! signatures ([`crate::auth::authorization_header`]), JSON bodies, continuation headers. A query
//! scoped to a partition key goes whole to that partition. A cross-partition query goes whole
//! first, as the Python SDK sends it; when the endpoint answers 400/1004 (the service does for
//! what only a client-side merge gives), or always with [`QueryRequest::client_merge`] (the
//! JavaScript and Rust SDKs' way), the client asks for the query plan: a plan with nothing to
//! merge sends the query whole; otherwise each partition key range runs the plan's rewritten query
//! and [`merge`] combines the pages as an SDK's pipeline would. Everything is read
//! in full (a suite compares whole results), with bounds: a response body at most
//! [`MAX_RESPONSE_BYTES`], at most [`MAX_PAGES`] pages per query, a timeout per request.

mod merge;

use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use cosmoql::value::{parse_json, to_json_string, Map};
use cosmoql::{PartitionKey, PartitionKeyDefinition, QueryError, QueryErrorKind, Value};

use crate::auth::authorization_header;

pub use merge::merge;

/// The largest response body read (the service's pages are at most 4 MB).
pub const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

/// Pages read for one query at most (a server that never stops paging is an error).
pub const MAX_PAGES: usize = 100_000;
/// How many times a throttled request is sent again (the SDKs' default,
/// `MaxRetryAttemptsOnThrottledRequests`).
pub const MAX_THROTTLE_RETRIES: usize = 9;
/// The most a request waits in all for throttling to pass (the SDKs' default,
/// `MaxRetryWaitTimeOnThrottledRequests`).
pub const MAX_THROTTLE_WAIT: Duration = Duration::from_secs(30);

/// Time one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// What went wrong talking to the endpoint (not a query's own refusal).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteError(pub String);

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A response: status, the headers the client reads, the body as JSON (`Undefined` when empty).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub substatus: u32,
    pub continuation: Option<String>,
    pub body: Value,
}

/// An account at an endpoint, with its master key.
pub struct Account {
    base: String,
    key: Vec<u8>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account").field("base", &self.base).finish_non_exhaustive()
    }
}

impl Account {
    /// The account at `endpoint` (`https://host:port/` or `http://...`) with `key` (base64);
    /// `ca_pem` adds a certificate to trust (`cosmoql serve --tls --cert-out FILE`, an emulator's).
    pub fn connect(endpoint: &str, key: &str, ca_pem: Option<&[u8]>) -> Result<Account, RemoteError> {
        let key = STANDARD.decode(key.trim()).map_err(|_| RemoteError("the key is not base64".into()))?;
        let base = endpoint.trim_end_matches('/').to_string();
        if !base.starts_with("http://") && !base.starts_with("https://") {
            return Err(RemoteError(format!("{endpoint}: the endpoint must start with http:// or https://")));
        }
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(pem) = ca_pem {
            let mut certs = Vec::new();
            for item in ureq::tls::parse_pem(pem) {
                if let Ok(ureq::tls::PemItem::Certificate(cert)) = item {
                    certs.push(cert);
                }
            }
            if certs.is_empty() {
                return Err(RemoteError("the CA file holds no PEM certificate".into()));
            }
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
        }
        let config = ureq::Agent::config_builder()
            .tls_config(tls.build())
            .http_status_as_error(false)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .build();
        Ok(Account { base, key, agent: config.into() })
    }

    /// Sends a signed request: `path` like `/dbs/d/colls/c/docs` (names percent-encoded as
    /// sent; signed decoded), `headers` besides the date, signature and version.
    ///
    /// A request the endpoint throttles (429) is sent again after the wait its
    /// `x-ms-retry-after-ms` asks for, as the SDKs' default retry policy does: at most
    /// [`MAX_THROTTLE_RETRIES`] times and [`MAX_THROTTLE_WAIT`] of waiting in all, after which the
    /// 429 is the answer.
    pub fn call(
        &self,
        verb: &str,
        path: &str,
        headers: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Answer, RemoteError> {
        let (mut retries, mut waited) = (0, Duration::ZERO);
        loop {
            let (answer, retry_after) = self.call_once(verb, path, headers, body)?;
            let wait = retry_after.unwrap_or(Duration::from_millis(100));
            if answer.status != 429 || retries == MAX_THROTTLE_RETRIES || waited + wait > MAX_THROTTLE_WAIT {
                return Ok(answer);
            }
            std::thread::sleep(wait);
            (retries, waited) = (retries + 1, waited + wait);
        }
    }

    /// One attempt of [`Account::call`]: the answer, and the wait a 429 asks for.
    fn call_once(
        &self,
        verb: &str,
        path: &str,
        headers: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<(Answer, Option<Duration>), RemoteError> {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned();
        let auth = authorization_header(&self.key, verb, &decoded, &date);
        let url = format!("{}{path}", self.base);
        let mut request = ureq::http::Request::builder()
            .method(verb)
            .uri(&url)
            .header("x-ms-date", &date)
            .header("authorization", auth)
            .header("x-ms-version", "2020-07-15")
            .header("accept", "application/json");
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        let text = body.map(|b| to_json_string(b).unwrap_or_default()).unwrap_or_default();
        let request = request.body(text).map_err(|e| RemoteError(format!("{url}: {e}")))?;
        let mut response = self.agent.run(request).map_err(|e| RemoteError(format!("{verb} {url}: {e}")))?;
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        let status = response.status().as_u16();
        let substatus = header("x-ms-substatus").and_then(|s| s.parse().ok()).unwrap_or(0);
        let continuation = header("x-ms-continuation").filter(|c| !c.is_empty());
        let retry_after = header("x-ms-retry-after-ms").and_then(|ms| ms.parse().ok()).map(Duration::from_millis);
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_vec()
            .map_err(|e| RemoteError(format!("{verb} {url}: reading the response: {e}")))?;
        let body = if bytes.is_empty() {
            Value::Undefined
        } else {
            let text = String::from_utf8(bytes).map_err(|_| RemoteError(format!("{verb} {url}: a body not UTF-8")))?;
            parse_json(&text).map_err(|e| RemoteError(format!("{verb} {url}: a body not JSON: {e}")))?
        };
        Ok((Answer { status, substatus, continuation, body }, retry_after))
    }

    /// `call`, requiring a 2xx.
    fn ok(
        &self,
        verb: &str,
        path: &str,
        headers: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Answer, RemoteError> {
        let answer = self.call(verb, path, headers, body)?;
        if !(200..300).contains(&answer.status) {
            return Err(RemoteError(format!("{verb} {path}: {} {}", answer.status, message_of(&answer.body))));
        }
        Ok(answer)
    }

    /// Creates database `id`.
    pub fn create_database(&self, id: &str) -> Result<(), RemoteError> {
        self.ok("POST", "/dbs", &[], Some(&Value::object([("id", Value::from(id))]))).map(|_| ())
    }

    /// Deletes database `id` (and everything in it).
    pub fn delete_database(&self, id: &str) -> Result<(), RemoteError> {
        self.ok("DELETE", &format!("/dbs/{}", encode(id)), &[], None).map(|_| ())
    }

    /// Creates a container from its properties (`id`, `partitionKey`, `indexingPolicy`, ...) with
    /// `throughput` RU/s.
    pub fn create_container(&self, database: &str, properties: &Value, throughput: u32) -> Result<(), RemoteError> {
        let headers = [("x-ms-offer-throughput", throughput.to_string())];
        self.ok("POST", &format!("/dbs/{}/colls", encode(database)), &headers, Some(properties)).map(|_| ())
    }

    /// Registers a user-defined function on a container (`POST .../udfs`, the service's
    /// resource: `id` and `body`).
    pub fn create_user_defined_function(
        &self,
        collection: &Collection,
        id: &str,
        body: &str,
    ) -> Result<(), RemoteError> {
        let resource = Value::object([("id", Value::from(id)), ("body", Value::from(body))]);
        self.ok("POST", &format!("{}/udfs", collection.path()), &[], Some(&resource)).map(|_| ())
    }

    /// Upserts `item` into a container keyed by `definition`.
    pub fn upsert(&self, collection: &Collection, item: &Value) -> Result<(), RemoteError> {
        let key = key_header(&collection.definition, item);
        let headers = [("x-ms-documentdb-is-upsert", "True".to_string()), ("x-ms-documentdb-partitionkey", key)];
        self.ok("POST", &format!("{}/docs", collection.path()), &headers, Some(item)).map(|_| ())
    }
}

/// A container of a database, and how it is keyed.
#[derive(Debug, Clone)]
pub struct Collection {
    pub database: String,
    pub id: String,
    pub definition: PartitionKeyDefinition,
}

impl Collection {
    fn path(&self) -> String {
        format!("/dbs/{}/colls/{}", encode(&self.database), encode(&self.id))
    }
}

/// A query request.
#[derive(Debug, Clone, Default)]
pub struct QueryRequest {
    pub sql: String,
    /// Parameters, each name with its `@`.
    pub parameters: Vec<(String, Value)>,
    pub partition_key: Option<PartitionKey>,
    pub page_size: Option<usize>,
    /// Plan every cross-partition query and merge on the client (the JavaScript and Rust SDKs'
    /// way), rather than sending it whole first and planning only when the endpoint asks for it
    /// with a 400/1004 (the Python SDK's).
    pub client_merge: bool,
}

impl QueryRequest {
    fn body(&self, sql: &str) -> Value {
        let parameters = self
            .parameters
            .iter()
            .map(|(name, value)| Value::object([("name", Value::from(name.as_str())), ("value", value.clone())]));
        Value::object([("query", Value::from(sql)), ("parameters", Value::array(parameters))])
    }
}

impl Account {
    /// Runs a query to its end: `Ok(Err)` for the endpoint's refusal of the query.
    pub fn query(
        &self,
        collection: &Collection,
        request: &QueryRequest,
    ) -> Result<Result<Vec<Value>, QueryError>, RemoteError> {
        let mut headers = vec![
            ("x-ms-documentdb-isquery", "True".to_string()),
            ("content-type", "application/query+json".to_string()),
        ];
        if let Some(n) = request.page_size {
            headers.push(("x-ms-max-item-count", n.to_string()));
        }
        if let Some(key) = &request.partition_key {
            headers.push(("x-ms-documentdb-partitionkey", key_values_header(&key.to_values())));
            return self.drain(collection, &headers, &request.body(&request.sql), &request.sql);
        }
        headers.push(("x-ms-documentdb-query-enablecrosspartition", "True".to_string()));
        if !request.client_merge {
            // Whole first, as the Python SDK sends it: the endpoint answers, or refuses with
            // 400/1004 what only a client-side merge can give (the service does for ORDER BY,
            // aggregates, DISTINCT, GROUP BY, TOP and OFFSET across ranges).
            match self.drain(collection, &headers, &request.body(&request.sql), &request.sql)? {
                Err(e) if e.status == 400 && e.substatus == 1004 => {}
                answer => return Ok(answer),
            }
        }
        let plan = {
            let mut plan_headers = headers.clone();
            plan_headers.push(("x-ms-cosmos-is-query-plan-request", "True".to_string()));
            plan_headers.push(("x-ms-cosmos-supported-query-features", SUPPORTED_FEATURES.to_string()));
            plan_headers.push(("x-ms-cosmos-query-version", "1.4".to_string()));
            let answer = self.call(
                "POST",
                &format!("{}/docs", collection.path()),
                &plan_headers,
                Some(&request.body(&request.sql)),
            )?;
            if answer.status != 200 {
                return Ok(Err(query_error(&answer, &request.sql)));
            }
            answer.body
        };
        let hybrid = plan.get("hybridSearchQueryInfo");
        if matches!(hybrid, Value::Object(_)) {
            return self.hybrid(collection, request, &headers, hybrid);
        }
        let info = plan.get("queryInfo");
        if !merge::needs_merge(info) {
            return self.drain(collection, &headers, &request.body(&request.sql), &request.sql);
        }
        let rewritten = match info.get("rewrittenQuery").as_str() {
            Some(text) if !text.is_empty() => text.replace(crate::rewrite::ORDER_BY_FILTER, "true"),
            _ => request.sql.clone(),
        };
        let ranges = self.range_ids(collection)?;
        let per_range = match self.per_range(collection, request, &headers, &ranges, &rewritten)? {
            Ok(rows) => rows,
            Err(e) => return Ok(Err(e)),
        };
        Ok(merge(info, per_range).map_err(|m| QueryError::new(QueryErrorKind::Internal, m, None)))
    }

    /// The ids of the collection's partition key ranges.
    fn range_ids(&self, collection: &Collection) -> Result<Vec<String>, RemoteError> {
        let ranges = self.ok("GET", &format!("{}/pkranges", collection.path()), &[], None)?;
        Ok(match ranges.body.get("PartitionKeyRanges") {
            Value::Array(list) => list.iter().filter_map(|r| r.get("id").as_str().map(str::to_string)).collect(),
            _ => Vec::new(),
        })
    }

    /// `sql` run on each of the partition key ranges `ranges` (with the request's parameters):
    /// each range's rows.
    fn per_range(
        &self,
        collection: &Collection,
        request: &QueryRequest,
        headers: &[(&str, String)],
        ranges: &[String],
        sql: &str,
    ) -> Result<Result<Vec<Vec<Value>>, QueryError>, RemoteError> {
        let mut per_range = Vec::new();
        for id in ranges {
            let mut range_headers = headers.to_vec();
            range_headers.push(("x-ms-documentdb-partitionkeyrangeid", id.clone()));
            match self.drain(collection, &range_headers, &request.body(sql), sql)? {
                Ok(rows) => per_range.push(rows),
                Err(e) => return Ok(Err(e)),
            }
        }
        Ok(Ok(per_range))
    }

    /// A hybrid search plan run as the SDKs run it: the statistics query on every range, each
    /// component's query with the statistics written in on every range, the fusion
    /// ([`merge::hybrid`]).
    fn hybrid(
        &self,
        collection: &Collection,
        request: &QueryRequest,
        headers: &[(&str, String)],
        info: &Value,
    ) -> Result<Result<Vec<Value>, QueryError>, RemoteError> {
        // One list of ranges for the statistics and every component, as the SDKs take it.
        let ranges = self.range_ids(collection)?;
        let mut statistics = Vec::new();
        if info.get("requiresGlobalStatistics") == &Value::Bool(true) {
            let sql = info.get("globalStatisticsQuery").as_str().unwrap_or_default();
            match self.per_range(collection, request, headers, &ranges, sql)? {
                Ok(rows) => statistics = rows.into_iter().flatten().collect::<Vec<_>>(),
                Err(e) => return Ok(Err(e)),
            }
        }
        let Value::Array(components) = info.get("componentQueryInfos") else {
            return Ok(Err(QueryError::new(QueryErrorKind::Internal, "a hybrid search plan without components", None)));
        };
        let mut per_component = Vec::new();
        for component in components.iter() {
            let text = component.get("rewrittenQuery").as_str().unwrap_or_default();
            let sql = merge::hybrid_component_query(text, &statistics, components.len());
            match self.per_range(collection, request, headers, &ranges, &sql)? {
                Ok(rows) => per_component.push(rows),
                Err(e) => return Ok(Err(e)),
            }
        }
        Ok(merge::hybrid(info, per_component).map_err(|m| QueryError::new(QueryErrorKind::Internal, m, None)))
    }

    /// Every page of a query request (results as they come, system properties kept).
    fn drain(
        &self,
        collection: &Collection,
        headers: &[(&str, String)],
        body: &Value,
        sql: &str,
    ) -> Result<Result<Vec<Value>, QueryError>, RemoteError> {
        let mut rows = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut page_headers = headers.to_vec();
            if let Some(t) = &token {
                page_headers.push(("x-ms-continuation", t.clone()));
            }
            let answer = self.call("POST", &format!("{}/docs", collection.path()), &page_headers, Some(body))?;
            if answer.status != 200 {
                return Ok(Err(query_error(&answer, sql)));
            }
            if let Value::Array(docs) = answer.body.get("Documents") {
                rows.extend(docs.iter().cloned());
            }
            match answer.continuation {
                Some(next) => token = Some(next),
                None => return Ok(Ok(rows)),
            }
        }
        Err(RemoteError(format!("the query did not end within {MAX_PAGES} pages")))
    }
}

/// The merge features a client declares it runs (the JavaScript SDK's list, less
/// `HybridSearchSkipOrderByRewrite`: hybrid search's components come merged across ranges, as
/// the .NET and Python SDKs take them).
const SUPPORTED_FEATURES: &str = "NonValueAggregate, Aggregate, Distinct, MultipleOrderBy, OffsetAndLimit, OrderBy, \
                                  Top, CompositeAggregate, GroupBy, MultipleAggregates, CountIf, HybridSearch";

/// A path segment as a URL carries it.
fn encode(name: &str) -> String {
    percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The partition key header of `item` under `definition` (`[]` without a key, `{}` for a
/// missing value, as the SDKs send them).
fn key_header(definition: &PartitionKeyDefinition, item: &Value) -> String {
    let values: Vec<Value> = definition.paths().iter().map(|path| path.value_in(item).clone()).collect();
    key_values_header(&values)
}

fn key_values_header(values: &[Value]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::Undefined => "{}".to_string(),
            v => to_json_string(v).unwrap_or_else(|| "{}".into()),
        })
        .collect();
    format!("[{}]", parts.join(","))
}

/// The `message` of an error body (the service's `{"code", "message"}`).
fn message_of(body: &Value) -> String {
    body.get("message").as_str().map(str::to_string).unwrap_or_else(|| to_json_string(body).unwrap_or_default())
}

/// A query refusal as the engine would report it: a syntax error (`SC1xxx`) or a binding error
/// (the other codes, and a 400 without one) at its location (UTF-16 offsets in the service's
/// errors), anything else by status.
fn query_error(answer: &Answer, sql: &str) -> QueryError {
    let message = message_of(&answer.body);
    // `Message: {"errors":[{"severity","location","code","message"}]}` then, from the service,
    // more lines (ActivityId, ...).
    let detail = message
        .strip_prefix("Message: ")
        .and_then(|rest| rest.lines().next())
        .and_then(|json| parse_json(json).ok())
        .map(|v| v.get("errors").clone());
    let kind = match answer.status {
        400 => QueryErrorKind::Bind,
        408 | 429 => QueryErrorKind::Resource,
        500.. => QueryErrorKind::Internal,
        _ => QueryErrorKind::Storage,
    };
    if let Some(Value::Array(errors)) = detail {
        if let Some(first) = errors.first() {
            let code = first.get("code").as_str().unwrap_or_default();
            let kind = if code.starts_with("SC1") { QueryErrorKind::Syntax } else { kind };
            let text = first.get("message").as_str().unwrap_or_default().to_string();
            let span = match (first.get("location").get("start").as_f64(), first.get("location").get("end").as_f64()) {
                (Some(start), Some(end)) => Some(byte_span(sql, start as usize, end as usize)),
                _ => None,
            };
            let mut error = QueryError::new(kind, text, span);
            error.status = answer.status;
            error.substatus = answer.substatus;
            return error;
        }
    }
    let mut error = QueryError::new(kind, message.lines().next().unwrap_or_default().to_string(), None);
    error.status = answer.status;
    error.substatus = answer.substatus;
    error
}

/// A span from UTF-16 offsets into `sql`.
fn byte_span(sql: &str, start: usize, end: usize) -> cosmoql::parser::Span {
    let mut units = 0;
    let mut at = |target: usize| {
        units = 0;
        for (byte, c) in sql.char_indices() {
            if units >= target {
                return byte;
            }
            units += c.len_utf16();
        }
        sql.len()
    };
    let (start, end) = (at(start), at(end));
    cosmoql::parser::Span::new(start, end.max(start))
}

/// Container properties for the service: the fixture's, as JSON.
pub fn container_properties(
    id: &str,
    definition: &PartitionKeyDefinition,
    indexing: Option<Value>,
    vectors: Option<Value>,
) -> Value {
    let mut m = Map::default();
    m.insert("id".into(), Value::from(id));
    if !definition.is_none() {
        m.insert("partitionKey".into(), definition.to_json());
    }
    if let Some(policy) = indexing {
        m.insert("indexingPolicy".into(), policy);
    }
    if let Some(policy) = vectors {
        m.insert("vectorEmbeddingPolicy".into(), policy);
    }
    Value::from(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A server on a loopback socket answering each request with `answer(n)` (n counts from 0):
    /// (status, x-ms-retry-after-ms). Returns its address and the count of requests.
    fn server(answer: fn(usize) -> (u16, Option<u64>)) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let count = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let (status, retry) = answer(seen.fetch_add(1, Ordering::SeqCst));
                let retry = retry.map(|ms| format!("x-ms-retry-after-ms: {ms}\r\n")).unwrap_or_default();
                let reply = format!(
                    "HTTP/1.1 {status} S\r\n{retry}content-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}"
                );
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        (address, count)
    }

    fn account(address: &str) -> Account {
        Account::connect(address, "AAAA", None).unwrap()
    }

    #[test]
    fn a_throttled_request_is_sent_again_after_the_wait_the_429_asks_for() {
        let (address, count) = server(|n| if n < 2 { (429, Some(30)) } else { (200, None) });
        let started = std::time::Instant::now();
        let answer = account(&address).call("GET", "/dbs", &[], None).unwrap();
        assert_eq!((answer.status, count.load(Ordering::SeqCst)), (200, 3));
        assert!(started.elapsed() >= Duration::from_millis(60), "{:?}", started.elapsed());
    }

    #[test]
    fn throttling_that_lasts_ends_with_the_429_after_the_sdks_retry_budget() {
        let (address, count) = server(|_| (429, Some(1)));
        let answer = account(&address).call("GET", "/dbs", &[], None).unwrap();
        assert_eq!((answer.status, count.load(Ordering::SeqCst)), (429, MAX_THROTTLE_RETRIES + 1));
        // A wait past the budget is not waited for.
        let (address, count) = server(|_| (429, Some(MAX_THROTTLE_WAIT.as_millis() as u64 + 1)));
        let answer = account(&address).call("GET", "/dbs", &[], None).unwrap();
        assert_eq!((answer.status, count.load(Ordering::SeqCst)), (429, 1));
    }
}
