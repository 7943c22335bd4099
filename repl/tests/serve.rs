//! `cosmoql serve DIR` as a process: it says where it listens, takes signed writes, and on SIGTERM
//! finishes the requests in flight and exits 0, with every acknowledged write on disk for the next
//! start.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use cosmoql_gateway::auth::{authorization_header, key_bytes, EMULATOR_KEY};

/// A running server on `dir` and its port.
fn serve(dir: &std::path::Path) -> (Child, u16) {
    serve_with(&[dir.as_os_str()])
}

/// A running server with `args` after `serve --port 0`, and its port.
fn serve_with(args: &[&std::ffi::OsStr]) -> (Child, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
        .args(["serve", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("a first line");
    let port = first
        .trim()
        .strip_prefix("cosmoql serve: listening on http://127.0.0.1:")
        .and_then(|rest| rest.trim_end_matches('/').parse().ok())
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
    (child, port)
}

/// One signed request on a new connection; the status, or `None` when the connection failed.
fn call(port: u16, verb: &str, path: &str, key: Option<&str>, body: &str) -> Option<u16> {
    let date = httpdate_now();
    let auth = authorization_header(&key_bytes(EMULATOR_KEY).unwrap(), verb, path, &date);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let key_header = key.map(|k| format!("x-ms-documentdb-partitionkey: [\"{k}\"]\r\n")).unwrap_or_default();
    let request = format!(
        "{verb} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\nx-ms-date: {date}\r\nauthorization: {auth}\r\n{key_header}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.split(' ').nth(1)?.parse().ok()
}

fn httpdate_now() -> String {
    httpdate::fmt_http_date(SystemTime::now())
}

#[test]
fn sigterm_finishes_in_flight_writes_and_every_acknowledged_one_is_there_after_a_restart() {
    let dir = std::env::temp_dir().join(format!("cosmoql-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (mut server, port) = serve(&dir);
    assert_eq!(call(port, "POST", "/dbs", None, r#"{"id":"db"}"#), Some(201));
    let container = r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}"#;
    assert_eq!(call(port, "POST", "/dbs/db/colls", None, container), Some(201));
    // Four writers until the server goes away; what it acknowledged (201) is remembered.
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (acknowledged, stop) = (Arc::clone(&acknowledged), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let body = format!(r#"{{"id":"{w}-{n}","pk":"k{w}"}}"#);
                    match call(port, "POST", "/dbs/db/colls/c/docs", Some(&format!("k{w}")), &body) {
                        Some(201) => acknowledged.lock().unwrap().push((format!("k{w}"), format!("{w}-{n}"))),
                        // The container's default 400 RU/s throttles four writers: not written.
                        Some(429) => std::thread::sleep(Duration::from_millis(5)),
                        Some(status) => panic!("write {w}-{n}: {status}"),
                        None => break,
                    }
                    n += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill").args(["-TERM", &server.id().to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let status = server.wait().expect("the server exits");
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("a writer");
    }
    assert!(status.success(), "exit status after SIGTERM: {status:?}");
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(!acknowledged.is_empty());
    let (mut server, port) = serve(&dir);
    for (key, id) in &acknowledged {
        assert_eq!(call(port, "GET", &format!("/dbs/db/colls/c/docs/{id}"), Some(key), ""), Some(200), "{key}/{id}");
    }
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cosmoql test SUITE --endpoint URL`: the repository's suites over the wire. Sent whole (the
/// Python SDK's way) every case passes, as embedded; merged on the client from the query plans
/// (`--client-merge`, the JavaScript and Rust SDKs' way; ORDER BY RANK through the hybrid search
/// pipeline) every case passes but the named ones a client pipeline cannot give here (a SUM whose
/// ranges disagree on types: a range's undefined partial cannot tell "no numbers" from "not all
/// numbers"; a FROM subquery with DISTINCT, which the server has no per-range form for).
/// `--bless --endpoint` writes the endpoint's answers as the expectations.
#[test]
fn query_suites_run_against_the_server() {
    let (mut server, port) = serve_with(&[]);
    let endpoint = format!("http://127.0.0.1:{port}/");
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let test = |suite: &std::path::Path, extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
            .arg("test")
            .arg(suite)
            .args(["--endpoint", &endpoint, "--key", EMULATOR_KEY])
            .args(extra)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    for suite in ["examples/suite", "tests/suites"] {
        let (ok, out) = test(&repo.join(suite), &[]);
        assert!(ok && out.ends_with(" 0 failed\n"), "{suite}:\n{out}");
    }
    let (ok, out) = test(&repo.join("tests/suites"), &["--client-merge"]);
    assert!(!ok);
    let failed: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("FAIL ")).collect();
    let expected = [
        "aggregates.sql:19: SUM over mixed types is undefined",
        "undefined.sql:75: the static clock functions give one value per query",
    ];
    assert_eq!(failed.len(), expected.len(), "{out}");
    for (got, want) in failed.iter().zip(expected) {
        assert!(got.ends_with(want), "{got} is not {want}:\n{out}");
    }
    assert!(out.ends_with(&format!(" {} failed\n", expected.len())), "{out}");

    // Blessing from the endpoint: a wrong expectation comes back as the suite had it.
    let dir = std::env::temp_dir().join(format!("cosmoql-endpoint-bless-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["fixtures.json", "people.ndjson", "people.sql", "orders.sql"] {
        std::fs::copy(repo.join("examples/suite").join(file), dir.join(file)).unwrap();
    }
    let original = std::fs::read_to_string(dir.join("people.sql")).unwrap();
    let first_expect = original.find("-- @expect\n").expect("an expectation") + "-- @expect\n".len();
    let line_end = first_expect + original[first_expect..].find('\n').unwrap();
    let broken = format!("{}[\"wrong\"]{}", &original[..first_expect], &original[line_end..]);
    std::fs::write(dir.join("people.sql"), &broken).unwrap();
    let (ok, out) = test(&dir, &[]);
    assert!(!ok, "{out}");
    let (ok, out) = test(&dir, &["--bless"]);
    assert!(ok, "{out}");
    assert_eq!(std::fs::read_to_string(dir.join("people.sql")).unwrap(), original);
    let _ = std::fs::remove_dir_all(&dir);
    server.kill().unwrap();
    let _ = server.wait();
}

/// ORDER BY RANK over more rows than a component's window (2 × max(OFFSET + LIMIT, 60)): the
/// engine's answers (the query sent whole, blessed from the server) are what the SDKs' hybrid
/// search pipeline makes of the plan (`--client-merge`: statistics, components and fusion over
/// the server's ranges), and the windows change them (the first 10 of an RRF without a limit,
/// whose windows hold every row, are not those of the same RRF under TOP 10). (One score has no
/// window to speak of, and its equal scores come from different ranges in range order here, in
/// creation order from the engine: the service leaves that order to the SDKs' merges.)
#[test]
fn hybrid_search_over_more_rows_than_a_window_agrees_with_the_client_pipeline() {
    let dir = std::env::temp_dir().join(format!("cosmoql-hybrid-windows-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let words = ["red", "blue", "green", "bike", "car", "tree", "road", "sky", "sea", "sun", "rain"];
    let items: Vec<serde_json::Value> = (0..400u64)
        .map(|i| {
            let length = 3 + (i * 7) % 23;
            let text: Vec<&str> = (0..length).map(|j| words[((i * 5 + j * (1 + i % 4)) % 11) as usize]).collect();
            let angle = (i as f64 * 0.618).rem_euclid(std::f64::consts::TAU);
            serde_json::json!({"id": format!("t{i:03}"), "pk": format!("p{}", i % 7), "text": text.join(" "), "v": [angle.cos(), angle.sin()]})
        })
        .collect();
    std::fs::write(dir.join("texts.json"), serde_json::to_string(&items).unwrap()).unwrap();
    std::fs::write(
        dir.join("fixtures.json"),
        r#"[{"id": "texts", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}, "partitions": 3, "data": "texts.json"}]"#,
    )
    .unwrap();
    let queries = [
        r#"SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "red", "sea"), VectorDistance(c.v, [1, 0]))"#,
        r#"SELECT TOP 10 VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, "red", "sea"), VectorDistance(c.v, [1, 0]))"#,
        r#"SELECT VALUE c.id FROM c WHERE c.pk != "p3" ORDER BY RANK RRF(VectorDistance(c.v, [0, 1]), FullTextScore(c.text, "rain"), FullTextScore(c.text, "blue sky"), [1, -0.5, 2]) OFFSET 20 LIMIT 30"#,
    ];
    let mut suite = String::from("-- @container texts\n");
    for (i, sql) in queries.iter().enumerate() {
        suite.push_str(&format!("\n-- @name query {i}\n{sql}\n-- @expect\n[]\n"));
    }
    std::fs::write(dir.join("hybrid.sql"), &suite).unwrap();
    let (mut server, port) = serve_with(&[]);
    let endpoint = format!("http://127.0.0.1:{port}/");
    let test = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_cosmoql"))
            .arg("test")
            .arg(&dir)
            .args(["--endpoint", &endpoint, "--key", EMULATOR_KEY])
            .args(extra)
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (ok, out) = test(&["--bless"]);
    assert!(ok, "{out}");
    let (ok, out) = test(&["--client-merge"]);
    assert!(ok && out.ends_with(" 0 failed\n"), "{out}");
    // The expectations blessed, in order.
    let blessed = std::fs::read_to_string(dir.join("hybrid.sql")).unwrap();
    let answers: Vec<Vec<serde_json::Value>> = blessed
        .split("-- @expect\n")
        .skip(1)
        .map(|rest| serde_json::Deserializer::from_str(rest).into_iter().next().unwrap().unwrap())
        .collect();
    assert_eq!(answers.iter().map(Vec::len).collect::<Vec<_>>(), [400, 10, 30]);
    assert_ne!(answers[0][..10], answers[1][..], "the windows change the fusion");
    server.kill().unwrap();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
