//! The sandbox of server-side JavaScript (issue 26): user-defined functions as the documentation
//! writes them, values across the boundary, and hostile scripts (an endless loop, deep recursion,
//! a 1 GB string, an allocation bomb, a throw inside a callback, host objects) each ending with a
//! clear error within its limit, the next call working.

use std::time::{Duration, Instant};

use cosmoql_js::{Limits, Sandbox, ScriptErrorKind};
use cosmoql_value::{parse_json, to_json_string, Value};

fn json(text: &str) -> Value {
    parse_json(text).unwrap()
}

fn sandbox() -> Sandbox {
    Sandbox::new(Limits { time: Duration::from_millis(300), ..Limits::default() }).unwrap()
}

/// "User-defined functions (UDFs) in Azure Cosmos DB": the tax example.
const TAX: &str = include_str!("../../examples/scripts/tax.js");

/// The same page's regular-expression example.
const REGEX_MATCH: &str = "function REGEX_MATCH(input, pattern) { return input.match(pattern) }";

#[test]
fn the_documented_udfs_give_the_documented_results() {
    let s = sandbox();
    assert_eq!(s.call_function(TAX, &[json("500")]).unwrap(), json("50"));
    assert_eq!(s.call_function(TAX, &[json("5000")]).unwrap(), json("1000"));
    assert_eq!(s.call_function(TAX, &[json("20000")]).unwrap(), json("8000"));
    let e = s.call_function(TAX, &[]).unwrap_err();
    assert_eq!((e.kind, e.message.as_str()), (ScriptErrorKind::Thrown, "no input"));
    let matched = s.call_function(REGEX_MATCH, &[json(r#""AB-1234""#), json(r#""[0-9]+""#)]).unwrap();
    assert_eq!(matched, json(r#"["1234"]"#));
    assert_eq!(s.call_function(REGEX_MATCH, &[json(r#""AB""#), json(r#""[0-9]+""#)]).unwrap(), Value::Null);
}

#[test]
fn values_cross_as_json() {
    let s = sandbox();
    let echo = "function (v) { return v }";
    for text in [r#"{"a":[1,2.5,"x",null,true,{"b":{}}]}"#, "[]", "null", "false", "-0.125", r#""é\n""#] {
        let v = json(text);
        assert_eq!(
            to_json_string(&s.call_function(echo, std::slice::from_ref(&v)).unwrap()),
            to_json_string(&v),
            "{text}"
        );
    }
    assert_eq!(s.call_function(echo, &[Value::Undefined]).unwrap(), Value::Undefined);
    assert_eq!(s.call_function("function () {}", &[]).unwrap(), Value::Undefined);
    assert_eq!(s.call_function("function (a, b) { return typeof b }", &[json("1")]).unwrap(), json(r#""undefined""#));
    assert_eq!(s.call_function("function () { return NaN }", &[]).unwrap(), Value::Null);
    let e = s.call_function("function () { return function () {} }", &[]).unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::Result);
    let e = s.call_function("function () { const a = {}; a.a = a; return a }", &[]).unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::Result, "{e}");
}

#[test]
fn scripts_that_are_not_functions_are_refused() {
    let s = sandbox();
    let e = s.call_function("function (", &[]).unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::Syntax, "{e}");
    assert!(e.message.starts_with("the script is not valid JavaScript"), "{e}");
    let e = s.call_function("42", &[]).unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::Syntax);
    assert!(e.message.contains("not a function"), "{e}");
}

/// Each hostile script ends within its limit with its error, and the sandbox then runs the next
/// call as if nothing happened.
#[test]
fn hostile_scripts_end_with_a_clear_error_and_the_next_call_works() {
    let s = sandbox();
    let cases: &[(&str, &str, ScriptErrorKind)] = &[
        ("an endless loop", "function () { while (true) {} }", ScriptErrorKind::TimeLimit),
        (
            "an endless loop that catches",
            "function () { for (;;) { try { while (true) {} } catch (e) {} } }",
            ScriptErrorKind::TimeLimit,
        ),
        ("recursion", "function f(n) { return f(n + 1) + 1 }", ScriptErrorKind::StackLimit),
        ("a 1 GB string", "function () { return 'x'.repeat(1000000000).length }", ScriptErrorKind::MemoryLimit),
        (
            "an allocation bomb",
            "function () { const a = []; while (true) a.push(new Array(10000).fill(1.5)) }",
            ScriptErrorKind::MemoryLimit,
        ),
        (
            "a throw inside a callback",
            "function () { return [1, 2].map(function (x) { throw new Error('inside ' + x) }) }",
            ScriptErrorKind::Thrown,
        ),
    ];
    for (what, source, kind) in cases {
        let started = Instant::now();
        let e = s.call_function(source, &[json("0")]).unwrap_err();
        let took = started.elapsed();
        assert_eq!(e.kind, *kind, "{what}: {e}");
        assert!(took < Duration::from_secs(3), "{what} took {took:?}");
        if *kind == ScriptErrorKind::TimeLimit {
            assert!(took >= Duration::from_millis(300), "{what} stopped early: {took:?}");
            assert_eq!(e.message, "the script ran past its time limit of 300ms");
        }
        assert_eq!(s.call_function(TAX, &[json("500")]).unwrap(), json("50"), "after {what}");
    }
    let e = s.call_function(cases[5].1, &[]).unwrap_err();
    assert_eq!(e.message, "Error: inside 1");
}

/// No host objects: no modules, file system, network, timers or console.
#[test]
fn the_sandbox_has_no_host_objects() {
    let s = sandbox();
    let names = [
        "require",
        "process",
        "setTimeout",
        "setInterval",
        "fetch",
        "XMLHttpRequest",
        "console",
        "std",
        "os",
        "scriptArgs",
    ];
    for name in names {
        let probe = format!("function () {{ return typeof {name} }}");
        let got = s.call_function(&probe, &[]);
        assert!(matches!(got.as_ref().map(|v| v.as_str()), Ok(Some("undefined"))), "{name}: {got:?}");
    }
}

/// A session's calls compile the function once and share a context; a new session, or a call
/// that fails, starts from a fresh one.
#[test]
fn calls_in_a_session_share_one_context_and_a_new_session_starts_fresh() {
    let s = sandbox();
    let counter = "function () { globalThis.n = (globalThis.n || 0) + 1; return globalThis.n; }";
    assert_eq!(s.call_in_session(1, counter, &[]).unwrap(), json("1"));
    assert_eq!(s.call_in_session(1, counter, &[]).unwrap(), json("2"));
    assert_eq!(s.call_in_session(1, TAX, &[json("500")]).unwrap(), json("50"));
    assert_eq!(s.call_in_session(2, counter, &[]).unwrap(), json("1"));
    // An endless loop ends at the limit; the session goes with it.
    let e = s.call_in_session(2, "function () { while (true) {} }", &[]).unwrap_err();
    assert_eq!(e.kind, ScriptErrorKind::TimeLimit, "{e}");
    assert_eq!(s.call_in_session(2, counter, &[]).unwrap(), json("1"));
    let e = s.call_in_session(2, TAX, &[]).unwrap_err();
    assert_eq!((e.kind, e.message.as_str()), (ScriptErrorKind::Thrown, "no input"));
}
