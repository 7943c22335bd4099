//! `cosmoql serve` on a real socket, spoken to byte by byte: what a hostile or broken client gets
//! (a missing, wrong or stale signature, a write with the read-only key, a body over the limit,
//! malformed JSON, a forged continuation, a client that never finishes its headers, its body or
//! its TLS handshake, connections past the bound) and the
//! service's answers the SDKs rely on (429 with its retry-after, 304 on an unchanged range set).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use cosmoql::CosmosClient;
use cosmoql_gateway::auth::{authorization_header, Keys, EMULATOR_KEY};
use cosmoql_gateway::{RunningServer, ServerConfig};

const READ_ONLY_KEY: &str = "cmVhZC1vbmx5LWtleS1mb3ItY29zbW9xbC10ZXN0cw==";

fn server() -> RunningServer {
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        keys: Keys::new(EMULATOR_KEY, Some(READ_ONLY_KEY)).unwrap(),
        header_timeout: Duration::from_secs(1),
        max_body_bytes: 64 * 1024,
        ..ServerConfig::default()
    };
    RunningServer::start(CosmosClient::new(), config).unwrap()
}

/// A response: status, headers (lower-cased names), body.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Sends raw request bytes on a new connection and reads the whole response.
fn exchange(server: &RunningServer, request: &[u8]) -> Response {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(request).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Response { status, headers, body: body.to_string() }
}

/// A signed request as an SDK sends it (with `key`, dated `date`), plus `extra` headers.
fn signed(
    server: &RunningServer,
    key: &str,
    date: SystemTime,
    (verb, path): (&str, &str),
    extra: &[(&str, &str)],
    body: &str,
) -> Response {
    let date = httpdate::fmt_http_date(date);
    let key = STANDARD.decode(key).unwrap();
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned();
    let auth = authorization_header(&key, verb, &decoded, &date);
    let mut request = format!(
        "{verb} {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\nx-ms-date: {date}\r\nauthorization: {auth}\r\n\
         content-length: {}\r\n",
        server.addr(),
        body.len()
    );
    for (name, value) in extra {
        request += &format!("{name}: {value}\r\n");
    }
    request += "\r\n";
    request += body;
    exchange(server, request.as_bytes())
}

fn call(server: &RunningServer, verb: &str, path: &str, extra: &[(&str, &str)], body: &str) -> Response {
    signed(server, EMULATOR_KEY, SystemTime::now(), (verb, path), extra, body)
}

fn setup(server: &RunningServer, throughput: Option<&str>) {
    assert_eq!(call(server, "POST", "/dbs", &[], r#"{"id":"db"}"#).status, 201);
    let offer: Vec<(&str, &str)> = throughput.map(|t| vec![("x-ms-offer-throughput", t)]).unwrap_or_default();
    let body = r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#;
    assert_eq!(call(server, "POST", "/dbs/db/colls", &offer, body).status, 201);
}

#[test]
fn signatures_dates_and_the_read_only_key_are_checked() {
    let server = server();
    // No signature at all.
    let r =
        exchange(&server, format!("GET / HTTP/1.1\r\nhost: {}\r\nconnection: close\r\n\r\n", server.addr()).as_bytes());
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["code"], "Unauthorized");
    assert!(r.json()["message"].as_str().unwrap().starts_with("Required Header authorization is missing."));
    // Signed with another key.
    let other = STANDARD.encode(b"some other key of the right form!");
    let r = signed(&server, &other, SystemTime::now(), ("GET", "/dbs"), &[], "");
    assert_eq!(r.status, 401);
    assert!(r.json()["message"]
        .as_str()
        .unwrap()
        .contains("Server used the following payload to sign: 'get\\ndbs\\n\\n"));
    // Dated 20 minutes ago: outside the token's 15 minutes.
    let stale = SystemTime::now() - Duration::from_secs(20 * 60);
    let r = signed(&server, EMULATOR_KEY, stale, ("GET", "/dbs"), &[], "");
    assert_eq!(r.status, 403);
    assert!(r.json()["message"]
        .as_str()
        .unwrap()
        .starts_with("The authorization token is not valid at the current time."));
    // The read-only key reads and queries, and may not write.
    setup(&server, None);
    let read_only = |verb, path, extra: &[(&str, &str)], body| {
        signed(&server, READ_ONLY_KEY, SystemTime::now(), (verb, path), extra, body)
    };
    assert_eq!(read_only("GET", "/dbs/db/colls/c", &[], "").status, 200);
    let query = [("x-ms-documentdb-isquery", "True"), ("content-type", "application/query+json")];
    assert_eq!(read_only("POST", "/dbs/db/colls/c/docs", &query, r#"{"query":"SELECT * FROM c"}"#).status, 200);
    let write = read_only(
        "POST",
        "/dbs/db/colls/c/docs",
        &[("x-ms-documentdb-partitionkey", r#"["a"]"#)],
        r#"{"id":"1","pk":"a"}"#,
    );
    assert_eq!(write.status, 403);
    assert_eq!(
        call(&server, "GET", "/dbs/db/colls/c/docs/1", &[("x-ms-documentdb-partitionkey", r#"["a"]"#)], "").status,
        404
    );
}

#[test]
fn malformed_requests_are_refused_as_the_service_refuses_them() {
    let server = server();
    setup(&server, None);
    let key = [("x-ms-documentdb-partitionkey", r#"["a"]"#)];
    // Not JSON.
    let r = call(&server, "POST", "/dbs/db/colls/c/docs", &key, r#"{"id": "1", "pk": "#);
    assert_eq!((r.status, r.json()["code"].as_str()), (400, Some("BadRequest")));
    // A key header that is not a JSON array, and one that differs from the body's key.
    assert_eq!(
        call(
            &server,
            "POST",
            "/dbs/db/colls/c/docs",
            &[("x-ms-documentdb-partitionkey", "a")],
            r#"{"id":"1","pk":"a"}"#
        )
        .status,
        400
    );
    let r = call(&server, "POST", "/dbs/db/colls/c/docs", &key, r#"{"id":"1","pk":"b"}"#);
    assert_eq!((r.status, r.header("x-ms-substatus")), (400, Some("1001")));
    // A body over the limit is refused from its declared length, before it is read.
    let r = exchange(
        &server,
        format!(
            "POST /dbs HTTP/1.1\r\nhost: {}\r\nconnection: close\r\ncontent-length: 10000000\r\n\r\n",
            server.addr()
        )
        .as_bytes(),
    );
    assert_eq!(r.status, 413);
    // A path that does not decode to UTF-8.
    assert_eq!(call(&server, "GET", "/dbs/%FF", &[], "").status, 400);
    // A query that does not parse: the service's errors, with the location.
    let query = [("x-ms-documentdb-isquery", "True"), ("content-type", "application/query+json")];
    let r = call(&server, "POST", "/dbs/db/colls/c/docs", &query, r#"{"query":"SELECT * FROM c WHERE"}"#);
    assert_eq!(r.status, 400);
    assert!(r.json()["message"]
        .as_str()
        .unwrap()
        .starts_with(r#"Message: {"errors":[{"severity":"Error","location":"#));
    // A continuation token that was edited or made up.
    for i in 0..5 {
        let body = format!(r#"{{"id":"{i}","pk":"a"}}"#);
        assert_eq!(call(&server, "POST", "/dbs/db/colls/c/docs", &key, &body).status, 201);
    }
    let paged = [query[0], query[1], ("x-ms-max-item-count", "2")];
    let first = call(&server, "POST", "/dbs/db/colls/c/docs", &paged, r#"{"query":"SELECT * FROM c"}"#);
    let token = first.header("x-ms-continuation").expect("a continuation").to_string();
    let mut forged = token.clone().into_bytes();
    let middle = forged.len() / 2;
    forged[middle] = if forged[middle] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    for bad in [forged.as_str(), "made-up"] {
        let headers = [query[0], query[1], ("x-ms-max-item-count", "2"), ("x-ms-continuation", bad)];
        let r = call(&server, "POST", "/dbs/db/colls/c/docs", &headers, r#"{"query":"SELECT * FROM c"}"#);
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
    }
    let headers = [query[0], query[1], ("x-ms-max-item-count", "2"), ("x-ms-continuation", token.as_str())];
    assert_eq!(call(&server, "POST", "/dbs/db/colls/c/docs", &headers, r#"{"query":"SELECT * FROM c"}"#).status, 200);
}

#[test]
fn a_client_that_never_finishes_its_headers_is_let_go() {
    let server = server();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n").unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    // Closed by the server after its header timeout (1 s here), long before the client's 10 s.
    assert!(started.elapsed() < Duration::from_secs(5), "held for {:?}", started.elapsed());
}

/// After a split, a request for the retired range answers for the span it had (the default) or,
/// with `RetiredRanges::Gone`, 410/1002 as the service does; the range list then names the
/// children with the retired range as their parent.
#[test]
fn a_retired_range_answers_transparently_or_gone() {
    for retired in [cosmoql_gateway::RetiredRanges::Transparent, cosmoql_gateway::RetiredRanges::Gone] {
        let client = CosmosClient::new();
        let config = ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), retired, ..ServerConfig::default() };
        let server = RunningServer::start(client.clone(), config).unwrap();
        setup(&server, Some("400"));
        for i in 0..20 {
            let key = format!("[\"k{i}\"]");
            let body = format!(r#"{{"id":"{i}","pk":"k{i}"}}"#);
            assert_eq!(
                call(&server, "POST", "/dbs/db/colls/c/docs", &[("x-ms-documentdb-partitionkey", &key)], &body).status,
                201
            );
        }
        let ranges = call(&server, "GET", "/dbs/db/colls/c/pkranges", &[], "");
        let before = ranges.json()["PartitionKeyRanges"][0]["id"].as_str().unwrap().to_string();
        // Raising the throughput past 10,000 RU/s per partition splits the partition.
        let container = client.database_client("db").container_client("c").unwrap();
        container.replace_throughput(cosmoql::Provisioned::Manual(40_000.0)).unwrap();
        let after = call(&server, "GET", "/dbs/db/colls/c/pkranges", &[], "").json();
        let listed = after["PartitionKeyRanges"].as_array().unwrap();
        assert!(listed.len() > 1 && listed.iter().all(|r| r["id"] != before.as_str()), "{after}");
        assert!(listed.iter().any(|r| r["parents"].as_array().is_some_and(|p| p.iter().any(|x| x == before.as_str()))));
        let query = [
            ("x-ms-documentdb-isquery", "True"),
            ("content-type", "application/query+json"),
            ("x-ms-documentdb-partitionkeyrangeid", before.as_str()),
        ];
        let r = call(&server, "POST", "/dbs/db/colls/c/docs", &query, r#"{"query":"SELECT VALUE c.id FROM c"}"#);
        match retired {
            cosmoql_gateway::RetiredRanges::Transparent => {
                assert_eq!(r.status, 200, "{}", r.body);
                assert_eq!(r.json()["_count"], 20);
            }
            cosmoql_gateway::RetiredRanges::Gone => {
                assert_eq!((r.status, r.header("x-ms-substatus")), (410, Some("1002")), "{}", r.body);
            }
        }
    }
}

/// A body that stops arriving is answered 408 after the body timeout, and the connection is let
/// go; with the connection bound reached, the next client waits (in the kernel's backlog) until
/// one closes, then is served.
#[test]
fn a_stalled_body_gets_408_and_connections_past_the_bound_wait_their_turn() {
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        body_timeout: Duration::from_secs(1),
        max_connections: 2,
        ..ServerConfig::default()
    };
    let server = RunningServer::start(CosmosClient::new(), config).unwrap();
    // Signed headers announcing 100 bytes, then 10 and silence.
    let date = httpdate::fmt_http_date(SystemTime::now());
    let auth = authorization_header(&STANDARD.decode(EMULATOR_KEY).unwrap(), "POST", "/dbs", &date);
    let head = format!(
        "POST /dbs HTTP/1.1\r\nhost: x\r\nx-ms-date: {date}\r\nauthorization: {auth}\r\ncontent-length: 100\r\n\r\n{{\"id\": \"db"
    );
    let started = std::time::Instant::now();
    let mut stalled = TcpStream::connect(server.addr()).unwrap();
    stalled.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stalled.write_all(head.as_bytes()).unwrap();
    let mut answer = vec![0u8; 512];
    let n = stalled.read(&mut answer).unwrap_or(0);
    let answer = String::from_utf8_lossy(&answer[..n]).into_owned();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "held for {:?}", started.elapsed());
    drop(stalled);

    // Two idle connections hold the bound; a third is served only once one of them closes.
    let idle: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(server.addr()).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut third = TcpStream::connect(server.addr()).unwrap();
    third.set_read_timeout(Some(Duration::from_millis(700))).unwrap();
    third.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
    let mut first = [0u8; 16];
    assert!(third.read(&mut first).is_err(), "served past the connection bound");
    drop(idle);
    third.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut rest = Vec::new();
    let _ = third.read_to_end(&mut rest);
    // Unsigned: the 401 says it was read and answered.
    assert!(String::from_utf8_lossy(&rest).starts_with("HTTP/1.1 401"), "{}", String::from_utf8_lossy(&rest));
}

/// With `--tls`, a client that opens a connection and never completes the handshake is let go
/// after the header timeout too, and plain http sent to the https port is closed (no answer, no
/// harm); the server goes on serving.
#[test]
fn a_tls_handshake_is_bounded_and_plain_http_to_https_is_closed() {
    let tls = cosmoql_gateway::tls::Tls::self_signed("127.0.0.1".parse().unwrap()).unwrap();
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        header_timeout: Duration::from_secs(1),
        tls: Some(tls),
        ..ServerConfig::default()
    };
    let server = RunningServer::start(CosmosClient::new(), config).unwrap();
    let started = std::time::Instant::now();
    let mut silent = TcpStream::connect(server.addr()).unwrap();
    silent.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut rest = Vec::new();
    let _ = silent.read_to_end(&mut rest);
    assert!(started.elapsed() < Duration::from_secs(5), "held for {:?}", started.elapsed());
    for _ in 0..3 {
        let mut plain = TcpStream::connect(server.addr()).unwrap();
        plain.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        plain.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        let mut answer = Vec::new();
        let _ = plain.read_to_end(&mut answer);
        assert!(!answer.starts_with(b"HTTP/"), "{}", String::from_utf8_lossy(&answer));
    }
    assert!(server.endpoint().starts_with("https://"));
}

#[test]
fn throttled_writes_get_429_with_retry_after_and_ranges_answer_304_when_unchanged() {
    let server = server();
    setup(&server, Some("400"));
    let key = [("x-ms-documentdb-partitionkey", r#"["a"]"#)];
    let mut throttled = None;
    for i in 0..2000 {
        let body = format!(r#"{{"id":"{i}","pk":"a","pad":"{}"}}"#, "x".repeat(2000));
        let r = call(&server, "POST", "/dbs/db/colls/c/docs", &key, &body);
        if r.status == 429 {
            throttled = Some(r);
            break;
        }
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = throttled.expect("400 RU/s throttles a burst of writes");
    assert_eq!(r.json()["code"], "TooManyRequests");
    assert!(r.header("x-ms-retry-after-ms").and_then(|ms| ms.parse::<u64>().ok()).is_some(), "{:?}", r.headers);
    // The range set, then a 304 for its etag.
    let ranges = call(&server, "GET", "/dbs/db/colls/c/pkranges", &[], "");
    assert_eq!(ranges.status, 200);
    assert_eq!(ranges.json()["PartitionKeyRanges"][0]["minInclusive"], "");
    let etag = ranges.header("etag").unwrap().to_string();
    let again =
        call(&server, "GET", "/dbs/db/colls/c/pkranges", &[("a-im", "Incremental feed"), ("if-none-match", &etag)], "");
    assert_eq!((again.status, again.header("etag")), (304, Some(etag.as_str())));
}

#[test]
fn items_by_self_link_moves_deletes_by_key_and_sessions_ahead_of_the_server() {
    let server = server();
    setup(&server, None);
    let key = [("x-ms-documentdb-partitionkey", r#"["a"]"#)];
    let created = call(&server, "POST", "/dbs/db/colls/c/docs", &key, r#"{"id":"1","pk":"a","from":{"x":1}}"#);
    assert_eq!(created.status, 201);
    // By `_self`: the link is signed by the item's rid, and names the item.
    let link = format!("/{}", created.json()["_self"].as_str().unwrap());
    let read = call(&server, "GET", &link, &key, "");
    assert_eq!((read.status, read.json()["id"].as_str()), (200, Some("1")), "{}", read.body);
    // A patch's move: the value leaves `from` for `path`.
    let moved = call(
        &server,
        "PATCH",
        "/dbs/db/colls/c/docs/1",
        &key,
        r#"{"operations":[{"op":"move","from":"/from","path":"/to"}]}"#,
    );
    assert_eq!(moved.status, 200, "{}", moved.body);
    assert_eq!((moved.json().get("from"), &moved.json()["to"]), (None, &serde_json::json!({"x": 1})));
    // A session token ahead of the server: the service's 404/1002.
    let ahead = call(&server, "GET", "/dbs/db/colls/c/docs/1", &[key[0], ("x-ms-session-token", "0:-1#999999")], "");
    assert_eq!((ahead.status, ahead.header("x-ms-substatus")), (404, Some("1002")));
    let token = read.header("x-ms-session-token").unwrap().to_string();
    let behind = call(&server, "GET", "/dbs/db/colls/c/docs/1", &[key[0], ("x-ms-session-token", &token)], "");
    assert_eq!(behind.status, 200, "{token}: {}", behind.body);
    // Delete by partition key: the logical partition empties, the others stay.
    assert_eq!(call(&server, "POST", "/dbs/db/colls/c/docs", &key, r#"{"id":"2","pk":"a"}"#).status, 201);
    let other = [("x-ms-documentdb-partitionkey", r#"["b"]"#)];
    assert_eq!(call(&server, "POST", "/dbs/db/colls/c/docs", &other, r#"{"id":"3","pk":"b"}"#).status, 201);
    let emptied = call(&server, "POST", "/dbs/db/colls/c/operations/partitionkeydelete", &key, "");
    assert_eq!(emptied.status, 200, "{}", emptied.body);
    assert_eq!(call(&server, "GET", "/dbs/db/colls/c/docs/2", &key, "").status, 404);
    assert_eq!(call(&server, "GET", "/dbs/db/colls/c/docs/3", &other, "").status, 200);
}

#[test]
fn a_client_of_a_container_created_again_gets_1024_and_the_change_feed_starts_at_a_time() {
    let server = server();
    setup(&server, None);
    let old = call(&server, "GET", "/dbs/db/colls/c", &[], "").json()["_rid"].as_str().unwrap().to_string();
    assert_eq!(call(&server, "DELETE", "/dbs/db/colls/c", &[], "").status, 204);
    let body = r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#;
    assert_eq!(call(&server, "POST", "/dbs/db/colls", &[], body).status, 201);
    // A client that cached the container before: the service's 400/1024 (it reads it again).
    let key = ("x-ms-documentdb-partitionkey", r#"["a"]"#);
    let stale = call(
        &server,
        "POST",
        "/dbs/db/colls/c/docs",
        &[key, ("x-ms-cosmos-intended-collection-rid", &old)],
        r#"{"id":"1","pk":"a"}"#,
    );
    assert_eq!((stale.status, stale.header("x-ms-substatus")), (400, Some("1024")), "{}", stale.body);
    // The change feed from a point in time: what was written at or after it.
    assert_eq!(call(&server, "POST", "/dbs/db/colls/c/docs", &[key], r#"{"id":"before","pk":"a"}"#).status, 201);
    std::thread::sleep(Duration::from_millis(2100));
    let since = httpdate::fmt_http_date(SystemTime::now());
    assert_eq!(call(&server, "POST", "/dbs/db/colls/c/docs", &[key], r#"{"id":"after","pk":"a"}"#).status, 201);
    let feed = call(
        &server,
        "GET",
        "/dbs/db/colls/c/docs",
        &[("a-im", "Incremental feed"), ("if-modified-since", &since)],
        "",
    );
    let documents = feed.json();
    let ids: Vec<&str> = documents["Documents"].as_array().unwrap().iter().filter_map(|d| d["id"].as_str()).collect();
    assert_eq!((feed.status, ids), (200, vec!["after"]), "{}", feed.body);
    // Read to the end: a 304 with the etag to resume from.
    let etag = feed.header("etag").unwrap().to_string();
    let again =
        call(&server, "GET", "/dbs/db/colls/c/docs", &[("a-im", "Incremental feed"), ("if-none-match", &etag)], "");
    assert_eq!((again.status, again.header("etag")), (304, Some(etag.as_str())));
}

#[test]
fn http2_with_prior_knowledge_is_served_on_the_same_port() {
    // What the Rust SDK tries first on an http endpoint: the HTTP/2 connection preface, then an
    // empty SETTINGS frame, with no upgrade. The server answers with HTTP/2 frames (its own
    // SETTINGS first), not with an HTTP/1.1 response.
    let server = server();
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    // A frame header: 24-bit length 0, type 0x4 (SETTINGS), flags 0, stream 0.
    stream.write_all(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]).unwrap();
    let mut header = [0u8; 9];
    stream.read_exact(&mut header).unwrap();
    assert_eq!(header[3], 0x4, "the first frame is SETTINGS: {header:?}");
    assert_eq!(&header[5..9], &[0, 0, 0, 0], "on stream 0");
}
