//! JSON input and output, and JavaScript-style number formatting.
//!
//! # Output rules
//!
//! * `undefined` is never written. An undefined object property is omitted,
//!   an undefined array element is omitted (Cosmos DB's array constructor
//!   drops undefined elements), and a top-level undefined produces no JSON at
//!   all: [`to_json_string`] returns `None` and [`write_json`] writes nothing.
//! * NaN and ±Infinity are not JSON. In JSON output they are treated exactly
//!   like `undefined` (omitted from objects and arrays; `None` at top level).
//!   Only [`format_number`] and `Display` of a top-level number spell them
//!   (`NaN`, `Infinity`, `-Infinity`, as JavaScript's `String(x)` does).
//! * Numbers are written the way Cosmos DB (i.e. JavaScript's
//!   Number-to-String) writes them: see [`format_number`].
//! * Object properties keep their insertion order.
//!
//! # serde
//!
//! `Value` implements `Serialize` and `Deserialize` directly. Serializing a
//! *top-level* `undefined` (or non-finite number) is an **error** (there is no
//! JSON for it, and writing `null` would silently change the result); inside
//! arrays and objects such values are skipped. Callers embedding a `Value`
//! field in their own types can use
//! `#[serde(skip_serializing_if = "Value::is_undefined")]`.
//!
//! Through `Serialize`, integral numbers below 2^63 in magnitude are emitted
//! as integers (so `3`, never `3.0`) and all other numbers via
//! `serialize_f64`. With [`to_json_string`] / [`write_json`] every number is
//! formatted exactly like [`format_number`] (a serde_json formatter that uses
//! `ryu-js`). With a plain `serde_json::to_string(&value)` the digits are the
//! same but serde_json's own float notation is used for the `serialize_f64`
//! cases, which can differ from JavaScript for very large or very small
//! magnitudes (e.g. `1e20`, `1e-7`): use [`to_json_string`] for output that
//! must match Cosmos DB.

use std::fmt;
use std::io;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::value::{Map, Value};

/// Formats a number exactly as JavaScript's `Number.prototype.toString()`
/// (and therefore Cosmos DB) does.
///
/// Integral values have no fraction (`3`, `15779342456789124`), `-0` prints
/// `0`, other values use the shortest representation that round-trips
/// (`13.475000000000001`, `-0.8500000000000001`, `0.1234`), and magnitudes
/// `>= 1e21` or `< 1e-6` use exponent notation (`1e+21`, `1e-7`).
/// Non-finite values print as `NaN`, `Infinity` and `-Infinity`.
pub fn format_number(n: f64) -> String {
    with_number_text(n, str::to_owned)
}

/// Calls `f` with [`format_number`]'s text of `n`, without allocating it.
pub fn with_number_text<R>(n: f64, f: impl FnOnce(&str) -> R) -> R {
    f(ryu_js::Buffer::new().format(n))
}

/// An error while parsing JSON (syntax error, I/O error, nesting too deep).
#[derive(Debug)]
pub struct JsonError(serde_json::Error);

impl JsonError {
    /// 1-based line of the error (0 if not applicable, e.g. for I/O errors).
    pub fn line(&self) -> usize {
        self.0.line()
    }

    /// 1-based column of the error (0 if not applicable).
    pub fn column(&self) -> usize {
        self.0.column()
    }

    /// `true` if the input ended before the value was complete.
    pub fn is_eof(&self) -> bool {
        self.0.is_eof()
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&json_error_message(&self.0))
    }
}

/// What a JSON syntax error says in terms of JSON, without serde_json's wording and position
/// ("key must be a string at line 1 column 13" -> "an object's keys must be strings in double
/// quotes").
pub fn json_error_reason(e: &serde_json::Error) -> String {
    let raw = e.to_string();
    let what = raw.split(" at line ").next().unwrap_or(&raw);
    match what {
        "key must be a string" => "an object's keys must be strings in double quotes",
        "expected ident" | "expected value" => "expected a JSON value",
        "EOF while parsing a value" | "EOF while parsing an object" | "EOF while parsing a list" => {
            "the text ends before the value does"
        }
        "EOF while parsing a string" => "a string is not closed",
        "trailing characters" => "more text after the end of the value",
        "trailing comma" => "a comma before a closing bracket",
        "expected `:`" => "expected `:` after an object key",
        other => other,
    }
    .to_string()
}

/// A JSON syntax error with its position first: `not valid JSON at column 9: ...` (a one-line
/// text) or `... at line 2, column 9: ...`.
pub fn json_error_message(e: &serde_json::Error) -> String {
    let what = json_error_reason(e);
    match (e.line(), e.column()) {
        (0, _) => format!("not valid JSON: {what}"),
        (1, column) => format!("not valid JSON at column {column}: {what}"),
        (line, column) => format!("not valid JSON at line {line}, column {column}: {what}"),
    }
}

impl std::error::Error for JsonError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl From<serde_json::Error> for JsonError {
    fn from(e: serde_json::Error) -> Self {
        JsonError(e)
    }
}

/// Parses one JSON text into a [`Value`]. Numbers become `f64` (correctly
/// rounded); duplicate keys keep the first key's position and the last value.
/// Trailing non-whitespace is an error.
pub fn parse_json(text: &str) -> Result<Value, JsonError> {
    // A leading byte-order mark is not part of the JSON text (RFC 8259 lets parsers ignore it).
    Ok(serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(text))?)
}

/// Parses one JSON text from a byte slice (must be UTF-8).
pub fn parse_json_slice(bytes: &[u8]) -> Result<Value, JsonError> {
    Ok(serde_json::from_slice(bytes)?)
}

/// Parses one JSON text from a reader. Wrap unbuffered readers (files,
/// sockets) in a [`std::io::BufReader`].
pub fn from_reader<R: io::Read>(reader: R) -> Result<Value, JsonError> {
    Ok(serde_json::from_reader(reader)?)
}

/// `true` if `v` has no JSON representation (undefined or a non-finite
/// number) and is therefore omitted from JSON output.
fn omitted(v: &Value) -> bool {
    match v {
        Value::Undefined => true,
        Value::Number(n) => !n.is_finite(),
        _ => false,
    }
}

/// `v` as its JSON text shows it: `None` for undefined or a non-finite number (no JSON form),
/// objects without such properties, arrays without such elements, at every depth. Every output
/// mode (tables too) shows results through this, so they all agree with the JSON.
pub fn json_visible(v: &Value) -> Option<Value> {
    if omitted(v) {
        return None;
    }
    let has_hidden = |v: &Value| -> bool {
        // A linear walk: an explicit stack, no recursion on user data.
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                Value::Array(a) => {
                    for e in a.iter() {
                        if omitted(e) {
                            return true;
                        }
                        stack.push(e);
                    }
                }
                Value::Object(o) => {
                    for e in o.values() {
                        if omitted(e) {
                            return true;
                        }
                        stack.push(e);
                    }
                }
                _ => {}
            }
        }
        false
    };
    if !has_hidden(v) {
        return Some(v.clone());
    }
    // Rare: rebuild through the JSON text, which has exactly the visible parts.
    to_json_string(v).and_then(|text| parse_json(&text).ok())
}

/// Compact JSON text of `v`, with Cosmos DB number formatting; `None` for a
/// top-level `undefined` or non-finite number (which have no JSON form: the
/// caller drops them, as Cosmos DB drops undefined results).
pub fn to_json_string(v: &Value) -> Option<String> {
    let mut out = Vec::new();
    if write_json(&mut out, v).ok()? {
        String::from_utf8(out).ok()
    } else {
        None
    }
}

/// Like [`to_json_string`], indented with two spaces.
pub fn to_json_string_pretty(v: &Value) -> Option<String> {
    let mut out = Vec::new();
    if write_with(&mut out, v, PrettyFormatter::new()).ok()? {
        String::from_utf8(out).ok()
    } else {
        None
    }
}

/// Writes the compact JSON text of `v` to `writer`. Returns `Ok(false)`, and
/// writes nothing, when `v` has no JSON form (top-level `undefined` or
/// non-finite number).
pub fn write_json<W: io::Write>(writer: W, v: &Value) -> io::Result<bool> {
    write_with(writer, v, CompactFormatter)
}

fn write_with<W: io::Write, F: Formatter>(writer: W, v: &Value, f: F) -> io::Result<bool> {
    if omitted(v) {
        return Ok(false);
    }
    let mut ser = serde_json::Serializer::with_formatter(writer, JsFormatter(f));
    v.serialize(&mut ser)?;
    Ok(true)
}

/// A serde_json formatter that writes floats with [`format_number`] and
/// delegates everything else (layout) to `F`.
struct JsFormatter<F>(F);

impl<F: Formatter> Formatter for JsFormatter<F> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(ryu_js::Buffer::new().format(value).as_bytes())
    }
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// 2^53: integers up to this print digit for digit.
const MAX_SAFE_INTEGER: u64 = 1 << 53;

impl Serialize for Value {
    /// See the [module docs](self): a top-level undefined or non-finite
    /// number is an error; nested ones are skipped.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Undefined => Err(ser::Error::custom("undefined has no JSON representation (drop it instead)")),
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => {
                if !n.is_finite() {
                    Err(ser::Error::custom(format_args!(
                        "{} has no JSON representation (drop it instead)",
                        format_number(*n)
                    )))
                } else if let Some(i) = self.as_i64().filter(|i| i.unsigned_abs() <= MAX_SAFE_INTEGER) {
                    // Safe integers print the same as JavaScript does; larger ones go through the
                    // float formatter, which prints them as JavaScript does (2^60 -> 1152921504606847000).
                    s.serialize_i64(i)
                } else {
                    s.serialize_f64(*n)
                }
            }
            Value::String(st) => s.serialize_str(st),
            Value::Array(a) => {
                let len = a.iter().filter(|v| !omitted(v)).count();
                let mut seq = s.serialize_seq(Some(len))?;
                for v in a.iter().filter(|v| !omitted(v)) {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Value::Object(o) => {
                let len = o.values().filter(|v| !omitted(v)).count();
                let mut map = s.serialize_map(Some(len))?;
                for (k, v) in o.iter().filter(|(_, v)| !omitted(v)) {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }

    fn visit_i128<E: de::Error>(self, n: i128) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }

    fn visit_u128<E: de::Error>(self, n: u128) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        Ok(Value::Number(n))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(Arc::from(s)))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(Arc::from(s)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element::<Value>()? {
            items.push(v);
        }
        Ok(Value::Array(Arc::new(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::with_capacity_and_hasher(access.size_hint().unwrap_or(0).min(4096), Default::default());
        while let Some((k, v)) = access.next_entry::<String, Value>()? {
            map.insert(k, v);
        }
        Ok(Value::Object(Arc::new(map)))
    }
}

impl<'de> Deserialize<'de> for Value {
    /// Accepts any self-describing input (JSON): null, booleans, numbers
    /// (converted to `f64`), strings, sequences and maps. Never produces
    /// `undefined`.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

impl std::str::FromStr for Value {
    type Err = JsonError;
    /// Same as [`parse_json`].
    fn from_str(s: &str) -> Result<Value, JsonError> {
        parse_json(s)
    }
}

impl fmt::Display for Value {
    /// Compact JSON, as [`to_json_string`]. For values with no JSON form at
    /// the top level this prints JavaScript's spelling instead: `undefined`,
    /// `NaN`, `Infinity`, `-Infinity` (Display only; never valid JSON).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Undefined => f.write_str("undefined"),
            Value::Number(n) => f.write_str(ryu_js::Buffer::new().format(*n)),
            _ => match to_json_string(self) {
                Some(s) => f.write_str(&s),
                None => Err(fmt::Error),
            },
        }
    }
}

impl From<serde_json::Value> for Value {
    fn from(v: serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Number(number_to_f64(&n)),
            serde_json::Value::String(s) => Value::from(s),
            serde_json::Value::Array(a) => Value::Array(Arc::new(a.into_iter().map(Value::from).collect())),
            serde_json::Value::Object(o) => {
                Value::Object(Arc::new(o.into_iter().map(|(k, v)| (k, Value::from(v))).collect()))
            }
        }
    }
}

impl From<&serde_json::Value> for Value {
    fn from(v: &serde_json::Value) -> Value {
        Value::from(v.clone())
    }
}

fn number_to_f64(n: &serde_json::Number) -> f64 {
    if let Some(f) = n.as_f64() {
        f
    } else if let Some(i) = n.as_i64() {
        i as f64
    } else if let Some(u) = n.as_u64() {
        u as f64
    } else {
        f64::NAN
    }
}

impl Value {
    /// Converts to a `serde_json::Value` (convenience; not for hot paths).
    /// Undefined and non-finite values are dropped as in JSON output, so a
    /// top-level one yields `None`. Integral numbers below 2^63 in magnitude
    /// become JSON integers, others JSON floats.
    pub fn to_serde_json(&self) -> Option<serde_json::Value> {
        Some(match self {
            Value::Undefined => return None,
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => match self.as_i64() {
                Some(i) => serde_json::Value::from(i),
                None => serde_json::Value::Number(serde_json::Number::from_f64(*n)?),
            },
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::Array(a) => serde_json::Value::Array(a.iter().filter_map(Value::to_serde_json).collect()),
            Value::Object(o) => {
                serde_json::Value::Object(o.iter().filter_map(|(k, v)| Some((k.clone(), v.to_serde_json()?))).collect())
            }
        })
    }

    /// Compact JSON text; `None` for a top-level undefined or non-finite
    /// number. Same as [`to_json_string`].
    pub fn to_json(&self) -> Option<String> {
        to_json_string(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(json: &str) -> Value {
        parse_json(json).unwrap_or_else(|e| panic!("bad test json {json}: {e}"))
    }

    fn out(v: &Value) -> String {
        to_json_string(v).unwrap_or_else(|| panic!("no json for {v:?}"))
    }

    #[test]
    fn json_visible_is_what_the_json_text_holds() {
        assert_eq!(json_visible(&Value::Undefined), None);
        assert_eq!(json_visible(&Value::Number(f64::INFINITY)), None);
        let mut o = cosmoql_object([("a", Value::Undefined), ("b", Value::Number(f64::NAN)), ("c", v("[1]"))]);
        if let Value::Object(map) = &mut o {
            Arc::make_mut(map).insert("d".into(), Value::Array(vec![Value::Undefined, v("2")].into()));
        }
        assert_eq!(json_visible(&o), Some(v(r#"{"c":[1],"d":[2]}"#)));
        let plain = v(r#"{"x":[1,{"y":null}]}"#);
        assert_eq!(json_visible(&plain), Some(plain.clone()));
    }

    fn cosmoql_object<const N: usize>(fields: [(&str, Value); N]) -> Value {
        Value::object(fields)
    }

    #[test]
    fn numbers_format_like_javascript() {
        let cases: &[(f64, &str)] = &[
            (3.0, "3"),
            (-3.0, "-3"),
            (0.0, "0"),
            (-0.0, "0"),
            (15779342456789124.0, "15779342456789124"),
            (13.475000000000001, "13.475000000000001"),
            (-0.8500000000000001, "-0.8500000000000001"),
            (0.1234, "0.1234"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (1.5e-10, "1.5e-10"),
            (-2.5e300, "-2.5e+300"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (-0.675, "-0.675"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for &(n, s) in cases {
            assert_eq!(format_number(n), s, "format_number({n:e})");
            assert_eq!(Value::from(n).to_string(), s, "Display({n:e})");
            if n.is_finite() {
                assert_eq!(out(&Value::from(n)), s, "to_json_string({n:e})");
                // The same inside containers.
                assert_eq!(out(&Value::array([n])), format!("[{s}]"));
            }
        }
    }

    #[test]
    fn parse_keeps_order_and_round_trips() {
        let text = r#"{"z":1,"a":[1,2.5,"x",null,true,false,{"k":{}}],"m":"é\"\n","b":[]}"#;
        let val = v(text);
        let keys: Vec<&str> = val.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
        assert_eq!(keys, ["z", "a", "m", "b"]);
        assert_eq!(out(&val), text);
        assert_eq!(val.to_string(), text);
        // Integral floats lose their ".0"; exponents are normalised.
        assert_eq!(out(&v("[1.0, -0.0, 1E2, 2.50, 1e21, 1e-7]")), "[1,0,100,2.5,1e+21,1e-7]");
        assert_eq!(out(&v("13.475000000000001")), "13.475000000000001");
        // Big integer literal: correctly rounded to the nearest double.
        assert_eq!(out(&v("15779342456789123")), "15779342456789124");
        assert_eq!(out(&v("18446744073709551616")), "18446744073709552000");
    }

    #[test]
    fn undefined_and_non_finite_are_omitted() {
        let mut m = Map::default();
        m.insert("a".into(), Value::from(1));
        m.insert("u".into(), Value::Undefined);
        m.insert("n".into(), Value::from(f64::NAN));
        m.insert(
            "arr".into(),
            Value::array([
                Value::from(1),
                Value::Undefined,
                Value::from(-2.7),
                Value::from(f64::INFINITY),
                Value::object([("x", Value::Undefined)]),
            ]),
        );
        let val = Value::from(m);
        assert_eq!(out(&val), r#"{"a":1,"arr":[1,-2.7,{}]}"#);
        assert_eq!(to_json_string(&Value::Undefined), None);
        assert_eq!(to_json_string(&Value::from(f64::NAN)), None);
        assert_eq!(Value::Undefined.to_string(), "undefined");
        assert_eq!(Value::Undefined.to_json(), None);
        let mut buf = Vec::new();
        assert!(!write_json(&mut buf, &Value::Undefined).unwrap_or(true));
        assert!(buf.is_empty());
        // The serde path: nested skipped, top level is an error (not null).
        assert_eq!(serde_json::to_string(&val).ok().as_deref(), Some(r#"{"a":1,"arr":[1,-2.7,{}]}"#));
        assert!(serde_json::to_string(&Value::Undefined).is_err());
        assert!(serde_json::to_string(&Value::from(f64::INFINITY)).is_err());
        // to_serde_json drops them too.
        assert_eq!(val.to_serde_json().map(|j| j.to_string()).as_deref(), Some(r#"{"a":1,"arr":[1,-2.7,{}]}"#));
        assert_eq!(Value::Undefined.to_serde_json(), None);
    }

    #[test]
    fn pretty_output() {
        let val = v(r#"{"a":[1,2.5],"b":{}}"#);
        assert_eq!(
            to_json_string_pretty(&val).as_deref(),
            Some("{\n  \"a\": [\n    1,\n    2.5\n  ],\n  \"b\": {}\n}")
        );
        assert_eq!(to_json_string_pretty(&Value::Undefined), None);
    }

    #[test]
    fn serde_json_value_interop() {
        let j: serde_json::Value = serde_json::from_str(r#"{"b":1,"a":[1.5,null,"s",true]}"#).unwrap_or_default();
        let val = Value::from(&j);
        assert_eq!(val, v(r#"{"a":[1.5,null,"s",true],"b":1}"#));
        assert_eq!(out(&val), r#"{"b":1,"a":[1.5,null,"s",true]}"#);
        assert_eq!(val.to_serde_json(), Some(j.clone()));
        // Deserialize from a serde_json::Value directly.
        let back: Option<Value> = serde_json::from_value(j).ok();
        assert_eq!(back, Some(val));
        let big = Value::from(1e300).to_serde_json();
        assert!(big.as_ref().is_some_and(serde_json::Value::is_f64));
        assert_eq!(big.and_then(|j| j.as_f64()), Some(1e300));
        assert_eq!(Value::from(-7.0).to_serde_json(), Some(serde_json::Value::from(-7_i64)));
    }

    #[test]
    fn parse_errors_do_not_panic() {
        for bad in ["", "{", "[1,]", "NaN", "01", "{\"a\" 1}", "1 2", "\"\\ud800\"x", "tru"] {
            assert!(parse_json(bad).is_err(), "{bad:?} should not parse");
        }
        let deep = "[".repeat(10_000);
        assert!(parse_json(&deep).is_err());
        let err = parse_json("{\n  \"a\": ?}").err();
        assert_eq!(err.as_ref().map(JsonError::line), Some(2));
        assert!(parse_json_slice(b"\xff").is_err());
        assert!(parse_json_slice(b"[1]").is_ok());
        assert_eq!(from_reader(&b" {\"a\": 1} "[..]).ok(), Some(v(r#"{"a":1}"#)));
        assert_eq!("[true]".parse::<Value>().ok(), Some(Value::array([true])));
    }

    #[test]
    fn duplicate_keys_keep_first_position_last_value() {
        let val = v(r#"{"a":1,"b":2,"a":3}"#);
        assert_eq!(out(&val), r#"{"a":3,"b":2}"#);
    }
}
