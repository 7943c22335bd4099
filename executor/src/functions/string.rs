//! String functions: CONCAT, CONTAINS, INDEX_OF, SUBSTRING, RegexMatch, StringTo*, ToString, ...
//!
//! **Positions and lengths count UTF-16 code units**, as in the .NET SDK's reference evaluator
//! and JavaScript (`LENGTH("😀")` is 2). A slice that would cut a surrogate pair in half
//! (`LEFT("😀", 1)`) cannot be represented in a Rust string: the lone half becomes U+FFFD.
//! `REVERSE` reverses code points (reversing code units would break every surrogate pair).
//!
//! Case-insensitive comparisons and `UPPER`/`LOWER` use simple (one character to one character)
//! Unicode case mappings, like .NET's invariant culture: `UPPER("ß")` stays `"ß"`.
//!
//! Wrong argument types give `undefined`. The only errors are a malformed regular expression or
//! an unknown `RegexMatch` modifier.

use cosmoql_value::text::{self, case_map, fold, Pattern, TextTest};
use cosmoql_value::{and, format_number, or, parse_json, to_json_string, Value};

use super::body::{Builtin, FunctionContext};
use crate::error::FunctionError;

type Res = Result<Value, FunctionError>;

macro_rules! def {
    ($name:literal, $f:expr) => {
        Builtin { name: $name, eval: $f }
    };
}

pub(crate) const FUNCTIONS: &[Builtin] = &[
    def!("CONCAT", concat),
    def!("CONTAINS", contains),
    def!("CONTAINS_ALL_CI", |a, _| Ok(contains_many(a, true, true))),
    def!("CONTAINS_ALL_CS", |a, _| Ok(contains_many(a, true, false))),
    def!("CONTAINS_ANY_CI", |a, _| Ok(contains_many(a, false, true))),
    def!("CONTAINS_ANY_CS", |a, _| Ok(contains_many(a, false, false))),
    def!("ENDSWITH", ends_with),
    def!("STARTSWITH", starts_with),
    def!("StringEquals", string_equals),
    def!("INDEX_OF", index_of),
    def!("LASTINDEXOF", last_index_of),
    def!("LEFT", left),
    def!("RIGHT", right),
    def!("SUBSTRING", substring),
    def!("LENGTH", length),
    def!("LOWER", |a, _| Ok(map_str(&a[0], |s| case_map(s, false)))),
    def!("UPPER", |a, _| Ok(map_str(&a[0], |s| case_map(s, true)))),
    def!("LTRIM", |a, _| Ok(trim(a, true, false))),
    def!("RTRIM", |a, _| Ok(trim(a, false, true))),
    def!("TRIM", |a, _| Ok(trim(a, true, true))),
    def!("REPLACE", replace),
    def!("REPLICATE", replicate),
    def!("REVERSE", |a, _| Ok(map_str(&a[0], |s| s.chars().rev().collect()))),
    def!("RegexMatch", regex_match),
    def!("StringJoin", string_join),
    def!("StringSplit", string_split),
    def!("StringToArray", |a, _| Ok(parse_as(&a[0], Value::is_array))),
    def!("StringToBoolean", |a, _| Ok(parse_as(&a[0], Value::is_bool))),
    def!("StringToNull", |a, _| Ok(parse_as(&a[0], Value::is_null))),
    def!("StringToNumber", |a, _| Ok(parse_as(&a[0], Value::is_number))),
    def!("StringToObject", |a, _| Ok(parse_as(&a[0], Value::is_object))),
    def!("ToString", |a, _| Ok(to_string(&a[0]))),
];

// ---------------------------------------------------------------------------------------------
// Helpers

/// The optional boolean flag at `i`: absent or undefined means `false`; `None` for a non-boolean.
fn flag(args: &[Value], i: usize) -> Option<bool> {
    match args.get(i) {
        None | Some(Value::Undefined) => Some(false),
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => None,
    }
}

/// An integral number as `i64` (saturating for huge magnitudes); `None` for anything else.
fn int_arg(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) if n.is_finite() && n.fract() == 0.0 => Some(*n as i64),
        _ => None,
    }
}

fn map_str(v: &Value, f: impl FnOnce(&str) -> String) -> Value {
    v.as_str().map_or(Value::Undefined, |s| Value::from(f(s)))
}

fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

/// The UTF-16 code units `[start, start + len)` of `s` (clamped to the string) as a string.
fn utf16_slice(s: &str, start: usize, len: usize) -> String {
    if s.is_ascii() {
        let start = start.min(s.len());
        let end = start.saturating_add(len).min(s.len());
        return s[start..end].to_owned();
    }
    let units: Vec<u16> = s.encode_utf16().collect();
    let start = start.min(units.len());
    let end = start.saturating_add(len).min(units.len());
    String::from_utf16_lossy(&units[start..end])
}

/// The UTF-16 offset of byte offset `b` (a char boundary) of `s`.
fn byte_to_utf16(s: &str, b: usize) -> usize {
    utf16_len(&s[..b])
}

/// The byte offset of the first character starting at or after UTF-16 offset `u`; `None` past
/// the end.
fn utf16_to_byte(s: &str, u: usize) -> Option<usize> {
    if s.is_ascii() {
        return (u <= s.len()).then_some(u);
    }
    let mut units = 0;
    for (b, c) in s.char_indices() {
        if units >= u {
            return Some(b);
        }
        units += c.len_utf16();
    }
    (units >= u).then_some(s.len())
}

/// The byte offset of the last character starting at or before UTF-16 offset `u`.
fn utf16_floor_byte(s: &str, u: usize) -> usize {
    if s.is_ascii() {
        return u.min(s.len());
    }
    let mut units = 0;
    let mut last = 0;
    for (b, c) in s.char_indices() {
        if units > u {
            return last;
        }
        last = b;
        units += c.len_utf16();
    }
    if units > u {
        last
    } else {
        s.len()
    }
}

/// `SUBSTRING` semantics on UTF-16 code units: a negative start or a non-positive length gives
/// `""`; the length is clamped to the end of the string.
fn substring_units(s: &str, start: i64, len: i64) -> String {
    if start < 0 || len <= 0 {
        return String::new();
    }
    utf16_slice(s, start as usize, usize::try_from(len).unwrap_or(usize::MAX))
}

// ---------------------------------------------------------------------------------------------
// Functions

fn concat(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let size: u128 = args.iter().map(|a| a.as_str().map_or(0, |s| s.len() as u128)).sum();
    if size > super::MAX_BUILT as u128 {
        return Err(super::too_large(size, "a string"));
    }
    let mut out = String::with_capacity(size as usize);
    for a in args {
        match a.as_str() {
            Some(s) => out.push_str(s),
            None => return Ok(Value::Undefined),
        }
    }
    Ok(Value::from(out))
}

/// `CONTAINS`, `STARTSWITH`, `ENDSWITH` and `StringEquals`: two strings and an optional
/// ignore-case flag.
fn compare_strings(args: &[Value], test: TextTest) -> Value {
    let (Some(a), Some(b), Some(ignore_case)) = (args[0].as_str(), args[1].as_str(), flag(args, 2)) else {
        return Value::Undefined;
    };
    Value::Bool(test.holds(a, b, ignore_case))
}

fn contains(args: &[Value], _: &FunctionContext<'_>) -> Res {
    Ok(compare_strings(args, TextTest::Contains))
}

fn starts_with(args: &[Value], _: &FunctionContext<'_>) -> Res {
    Ok(compare_strings(args, TextTest::StartsWith))
}

fn ends_with(args: &[Value], _: &FunctionContext<'_>) -> Res {
    Ok(compare_strings(args, TextTest::EndsWith))
}

fn string_equals(args: &[Value], _: &FunctionContext<'_>) -> Res {
    Ok(compare_strings(args, TextTest::Equals))
}

/// `CONTAINS_ALL_*` / `CONTAINS_ANY_*`: `CONTAINS(s, x1, ci) AND/OR ... CONTAINS(s, xn, ci)` in
/// three-valued logic (a non-string search value counts as undefined).
fn contains_many(args: &[Value], all: bool, ignore_case: bool) -> Value {
    let Some(s) = args[0].as_str() else { return Value::Undefined };
    let haystack = if ignore_case { fold(s) } else { s.to_owned() };
    let mut acc = Value::Bool(all);
    for needle in &args[1..] {
        let found = match needle.as_str() {
            Some(n) if ignore_case => Value::Bool(haystack.contains(&fold(n))),
            Some(n) => Value::Bool(haystack.contains(n)),
            None => Value::Undefined,
        };
        acc = if all { and(&acc, &found) } else { or(&acc, &found) };
    }
    acc
}

fn index_of(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(needle)) = (args[0].as_str(), args[1].as_str()) else { return Ok(Value::Undefined) };
    let start = match args.get(2) {
        None => 0,
        Some(v) => match int_arg(v) {
            Some(n) if n >= 0 => n as usize,
            _ => return Ok(Value::Undefined),
        },
    };
    let Some(from) = utf16_to_byte(s, start) else { return Ok(Value::from(-1)) };
    Ok(Value::from(match s[from..].find(needle) {
        Some(b) => byte_to_utf16(s, from + b) as i64,
        None => -1,
    }))
}

/// `LASTINDEXOF(s, x [, start])`: the last occurrence of `x` that lies entirely within
/// `s[0..=start]` (.NET's `LastIndexOf(value, startIndex)`); `start` defaults to the last
/// position and is clamped to it; a negative start finds nothing.
fn last_index_of(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(needle)) = (args[0].as_str(), args[1].as_str()) else { return Ok(Value::Undefined) };
    let len = utf16_len(s) as i64;
    let start = match args.get(2) {
        None => len - 1,
        Some(v) => match int_arg(v) {
            Some(n) => n.min(len - 1),
            None => return Ok(Value::Undefined),
        },
    };
    // Every occurrence must start at or before this UTF-16 offset (`start` may be i64::MIN).
    let last_start = start.saturating_add(1).saturating_sub(utf16_len(needle) as i64);
    if start < 0 || last_start < 0 {
        return Ok(Value::from(if needle.is_empty() && len == 0 { 0 } else { -1 }));
    }
    // The last character boundary at or before `last_start`; an occurrence starting there or
    // earlier ends at or before `limit + needle.len()` (rounded down to a boundary).
    let limit = utf16_floor_byte(s, last_start as usize);
    let mut window_end = (limit + needle.len()).min(s.len());
    while !s.is_char_boundary(window_end) {
        window_end -= 1;
    }
    Ok(Value::from(match s[..window_end].rfind(needle) {
        Some(b) => byte_to_utf16(s, b) as i64,
        None => -1,
    }))
}

fn left(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(n)) = (args[0].as_str(), int_arg(&args[1])) else { return Ok(Value::Undefined) };
    Ok(Value::from(substring_units(s, 0, n)))
}

fn right(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(n)) = (args[0].as_str(), int_arg(&args[1])) else { return Ok(Value::Undefined) };
    let len = utf16_len(s) as i64;
    if n <= 0 {
        return Ok(Value::from(""));
    }
    Ok(Value::from(substring_units(s, (len - n).max(0), n)))
}

fn substring(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(start), Some(len)) = (args[0].as_str(), int_arg(&args[1]), int_arg(&args[2])) else {
        return Ok(Value::Undefined);
    };
    Ok(Value::from(substring_units(s, start, len)))
}

fn length(args: &[Value], _: &FunctionContext<'_>) -> Res {
    Ok(args[0].as_str().map_or(Value::Undefined, |s| Value::from(utf16_len(s))))
}

/// `LTRIM`/`RTRIM`/`TRIM`: without a second argument, removes whitespace; with one, removes any
/// of its characters (an empty set removes nothing).
fn trim(args: &[Value], start: bool, end: bool) -> Value {
    let Some(s) = args[0].as_str() else { return Value::Undefined };
    let chars: Option<Vec<char>> = match args.get(1) {
        None => None,
        Some(Value::String(set)) => Some(set.chars().collect()),
        Some(_) => return Value::Undefined,
    };
    let matches = |c: char| chars.as_ref().map_or(c.is_whitespace(), |set| set.contains(&c));
    let mut out = s;
    if start {
        out = out.trim_start_matches(matches);
    }
    if end {
        out = out.trim_end_matches(matches);
    }
    Value::from(out)
}

/// `REPLACE(s, find, replacement)`: every occurrence; an empty `find` gives undefined.
fn replace(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(find), Some(with)) = (args[0].as_str(), args[1].as_str(), args[2].as_str()) else {
        return Ok(Value::Undefined);
    };
    if find.is_empty() {
        return Ok(Value::Undefined);
    }
    if with.len() > find.len() {
        let grows = s.matches(find).count() as u128 * (with.len() - find.len()) as u128;
        let size = s.len() as u128 + grows;
        if size > super::MAX_BUILT as u128 {
            return Err(super::too_large(size, "a string"));
        }
    }
    Ok(Value::from(s.replace(find, with)))
}

/// The longest string `REPLICATE` produces, in characters.
const REPLICATE_MAX: usize = 10_000;

/// `REPLICATE(s, n)`: `n` is truncated to an integer; negative, non-finite or a result longer
/// than 10,000 characters gives undefined.
fn replicate(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(n)) = (args[0].as_str(), args[1].as_f64()) else { return Ok(Value::Undefined) };
    if !n.is_finite() || n < 0.0 {
        return Ok(Value::Undefined);
    }
    let n = n.trunc();
    if utf16_len(s) as f64 * n > REPLICATE_MAX as f64 {
        return Ok(Value::Undefined);
    }
    Ok(Value::from(s.repeat(n as usize)))
}

fn string_join(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(items), Some(sep)) = (args[0].as_array(), args[1].as_str()) else { return Ok(Value::Undefined) };
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        match item.as_str() {
            Some(s) => parts.push(s),
            None => return Ok(Value::Undefined),
        }
    }
    let size =
        parts.iter().map(|p| p.len() as u128).sum::<u128>() + sep.len() as u128 * parts.len().saturating_sub(1) as u128;
    if size > super::MAX_BUILT as u128 {
        return Err(super::too_large(size, "a string"));
    }
    Ok(Value::from(parts.join(sep)))
}

/// `StringSplit(s, sep)`: empty pieces are kept; an empty separator gives `[s]`.
fn string_split(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(sep)) = (args[0].as_str(), args[1].as_str()) else { return Ok(Value::Undefined) };
    if sep.is_empty() {
        return Ok(Value::array([s]));
    }
    Ok(Value::array(s.split(sep)))
}

/// `StringTo*`: the string parsed as strict JSON (surrounding whitespace allowed), if it is of
/// the wanted type; undefined otherwise, and for non-string arguments.
fn parse_as(v: &Value, wanted: fn(&Value) -> bool) -> Value {
    match v.as_str().map(parse_json) {
        Some(Ok(parsed)) if wanted(&parsed) => parsed,
        _ => Value::Undefined,
    }
}

/// `ToString`: numbers as JavaScript prints them (`NaN`, `Infinity`), arrays and objects as
/// compact JSON, strings unchanged; undefined stays undefined.
fn to_string(v: &Value) -> Value {
    match v {
        Value::Undefined => Value::Undefined,
        Value::String(_) => v.clone(),
        Value::Number(n) => Value::from(format_number(*n)),
        _ => to_json_string(v).map_or(Value::Undefined, Value::from),
    }
}

// ---------------------------------------------------------------------------------------------
// RegexMatch

/// `RegexMatch(s, pattern [, modifiers])`: whether the pattern matches anywhere in `s`.
/// Modifiers: `i` (ignore case), `m` (multi-line `^`/`$`), `s` (`.` matches newlines), `x`
/// (ignore pattern whitespace and `#` comments). The engine runs in linear time; it has no
/// backreferences or look-around, and patterns using them are reported as invalid.
fn regex_match(args: &[Value], _: &FunctionContext<'_>) -> Res {
    let (Some(s), Some(pattern)) = (args[0].as_str(), args[1].as_str()) else { return Ok(Value::Undefined) };
    let modifiers = match args.get(2) {
        None => "",
        Some(Value::String(m)) => m,
        Some(_) => return Ok(Value::Undefined),
    };
    let re = compiled(pattern, modifiers)?;
    Ok(Value::Bool(re.is_match(s).map_err(FunctionError)?))
}

fn compiled(pattern: &str, modifiers: &str) -> Result<Pattern, FunctionError> {
    text::regex(pattern, modifiers).map_err(FunctionError)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::functions::lookup;
    use crate::functions::test_support::{call, j};

    fn s(x: &str) -> Value {
        Value::from(x)
    }

    fn n(x: f64) -> Value {
        Value::from(x)
    }

    const U: Value = Value::Undefined;
    const T: Value = Value::Bool(true);
    const F: Value = Value::Bool(false);

    #[test]
    fn concat_cases() {
        assert_eq!(call("CONCAT", &[s("Ferpal"), s("Ropes")]), s("FerpalRopes"));
        assert_eq!(call("concat", &[s("adventure"), s("works")]), s("adventureworks"));
        assert_eq!(call("CONCAT", &[s("abc"), s("def")]), s("abcdef"));
        assert_eq!(call("CONCAT", &[s("a"), s("-"), s("b"), s("-"), s("c")]), s("a-b-c"));
        assert_eq!(call("CONCAT", &[s("a"), n(1.0)]), U);
        assert_eq!(call("CONCAT", &[s("a"), U]), U);
        assert_eq!(call("CONCAT", &[Value::Null, s("a")]), U);
    }

    #[test]
    fn contains_cases() {
        let aw = s("AdventureWorks");
        assert_eq!(call("CONTAINS", &[aw.clone(), s("Adventure")]), T);
        assert_eq!(call("CONTAINS", &[aw.clone(), s("Works")]), T);
        assert_eq!(call("CONTAINS", &[aw.clone(), s("adventure")]), F);
        assert_eq!(call("CONTAINS", &[aw.clone(), s("adventure"), F]), F);
        assert_eq!(call("CONTAINS", &[aw.clone(), s("works"), T]), T);
        assert_eq!(call("CONTAINS", &[aw.clone(), s("Contoso")]), F);
        assert_eq!(call("CONTAINS", &[s("abc"), s("ab")]), T);
        assert_eq!(call("CONTAINS", &[s("abc"), s("d")]), F);
        assert_eq!(call("CONTAINS", &[s("abc"), s("")]), T);
        assert_eq!(call("CONTAINS", &[s("abc"), U]), U);
        assert_eq!(call("CONTAINS", &[n(1.0), s("1")]), U);
        assert_eq!(call("CONTAINS", &[aw, s("works"), n(1.0)]), U);
    }

    #[test]
    fn starts_ends_with() {
        let aw = s("AdventureWorks");
        assert_eq!(call("ENDSWITH", &[aw.clone(), s("Adventure")]), F);
        assert_eq!(call("ENDSWITH", &[aw.clone(), s("Works")]), T);
        assert_eq!(call("ENDSWITH", &[aw.clone(), s("works")]), F);
        assert_eq!(call("ENDSWITH", &[aw.clone(), s("works"), T]), T);
        assert_eq!(call("ENDSWITH", &[s("abc"), s("b")]), F);
        assert_eq!(call("ENDSWITH", &[s("abc"), s("bc")]), T);
        assert_eq!(call("STARTSWITH", &[aw.clone(), s("Works")]), F);
        assert_eq!(call("STARTSWITH", &[aw.clone(), s("Adventure")]), T);
        assert_eq!(call("STARTSWITH", &[aw.clone(), s("adventure")]), F);
        assert_eq!(call("STARTSWITH", &[aw.clone(), s("adventure"), T]), T);
        assert_eq!(call("STARTSWITH", &[s("abc"), s("b")]), F);
        assert_eq!(call("STARTSWITH", &[s("abc"), s("a")]), T);
        assert_eq!(call("STARTSWITH", &[s("WakefieldFamily"), s("Wakefield")]), T);
        assert_eq!(call("STARTSWITH", &[U, s("a")]), U);
        assert_eq!(call("ENDSWITH", &[s("a"), Value::Null]), U);
    }

    #[test]
    fn string_equals_cases() {
        assert_eq!(call("STRINGEQUALS", &[s("AdventureWorks"), s("AdventureWorks")]), T);
        assert_eq!(call("STRINGEQUALS", &[s("AdventureWorks"), s("adventureworks")]), F);
        assert_eq!(call("STRINGEQUALS", &[s("AdventureWorks"), s("adventureworks"), T]), T);
        assert_eq!(call("StringEquals", &[s("abc"), s("abc"), F]), T);
        assert_eq!(call("StringEquals", &[s("abc"), s("ABC"), F]), F);
        assert_eq!(call("StringEquals", &[s("abc"), s("ABC"), T]), T);
        assert_eq!(call("StringEquals", &[s("1"), n(1.0)]), U);
        assert_eq!(call("StringEquals", &[s("é"), s("É"), T]), T);
    }

    #[test]
    fn contains_all_any() {
        let h = s("Have a nice day!");
        let case = |name: &str, rest: &[Value]| {
            let mut args = vec![h.clone()];
            args.extend_from_slice(rest);
            call(name, &args)
        };
        let (have, nice, day, had) = (s("have"), s("nice"), s("day!"), s("had"));
        let (have_u, nice_u, day_u) = (s("HAVE"), s("NICE"), s("DAY!"));
        // CONTAINS_ALL_CI
        assert_eq!(case("CONTAINS_ALL_CI", &[have.clone(), nice.clone(), day.clone()]), T);
        assert_eq!(case("CONTAINS_ALL_CI", &[have_u.clone(), nice_u.clone(), day_u.clone()]), T);
        assert_eq!(case("CONTAINS_ALL_CI", &[had.clone(), nice.clone(), day.clone()]), F);
        assert_eq!(case("CONTAINS_ALL_CI", &[U, nice.clone(), day.clone()]), U);
        assert_eq!(case("CONTAINS_ALL_CI", &[U, had.clone()]), F);
        // CONTAINS_ALL_CS. The docs example shows case1 (`"have"` in `"Have a nice day!"`) as true,
        // which contradicts the page's own definition (`CONTAINS(s, x, false) AND ...`) and the
        // case-sensitive CONTAINS_ANY_CS example: "have" is not there case-sensitively.
        assert_eq!(case("CONTAINS_ALL_CS", &[have.clone(), nice.clone(), day.clone()]), F);
        assert_eq!(case("CONTAINS_ALL_CS", &[s("Have"), nice.clone(), day.clone()]), T);
        assert_eq!(case("CONTAINS_ALL_CS", &[have_u.clone(), nice_u.clone(), day_u.clone()]), F);
        assert_eq!(case("CONTAINS_ALL_CS", &[had.clone(), nice.clone(), day.clone()]), F);
        assert_eq!(case("CONTAINS_ALL_CS", &[U, nice.clone(), day.clone()]), U);
        assert_eq!(case("CONTAINS_ALL_CS", &[U, had.clone()]), F);
        // CONTAINS_ANY_CI
        assert_eq!(case("CONTAINS_ANY_CI", &[have.clone(), nice.clone(), day.clone()]), T);
        assert_eq!(case("CONTAINS_ANY_CI", &[have_u.clone(), nice_u.clone(), day_u.clone()]), T);
        assert_eq!(case("CONTAINS_ANY_CI", &[had.clone(), nice.clone(), day.clone()]), T);
        assert_eq!(case("CONTAINS_ANY_CI", &[U, nice.clone(), day.clone()]), T);
        assert_eq!(case("CONTAINS_ANY_CI", &[U, had.clone()]), U);
        // CONTAINS_ANY_CS
        assert_eq!(case("CONTAINS_ANY_CS", &[have.clone(), nice.clone(), day.clone()]), T);
        assert_eq!(case("CONTAINS_ANY_CS", &[have_u, nice_u, day_u]), F);
        assert_eq!(case("CONTAINS_ANY_CS", &[had.clone(), nice.clone(), day.clone()]), T);
        assert_eq!(case("CONTAINS_ANY_CS", &[U, nice, day]), T);
        assert_eq!(case("CONTAINS_ANY_CS", &[U, had]), U);
        // Non-string source.
        assert_eq!(call("CONTAINS_ANY_CS", &[n(1.0), s("1")]), U);
    }

    #[test]
    fn index_of_cases() {
        let aw = s("AdventureWorks");
        let idx = |needle: &str| call("INDEX_OF", &[aw.clone(), s(needle)]);
        assert_eq!(idx("A"), n(0.0));
        assert_eq!(idx("s"), n(13.0));
        assert_eq!(idx("Adventure"), n(0.0));
        assert_eq!(idx("Works"), n(9.0));
        assert_eq!(idx("tureW"), n(5.0));
        assert_eq!(idx("Cosmos"), n(-1.0));
        assert_eq!(idx("aD"), n(-1.0));
        assert_eq!(call("INDEX_OF", &[aw.clone(), s("Works"), n(5.0)]), n(9.0));
        assert_eq!(call("INDEX_OF", &[aw.clone(), s("Adventure"), n(5.0)]), n(-1.0));
        assert_eq!(call("INDEX_OF", &[aw.clone(), s("s"), n(100.0)]), n(-1.0));
        assert_eq!(call("INDEX_OF", &[aw.clone(), s("s"), n(1.5)]), U);
        assert_eq!(call("INDEX_OF", &[s("abc"), s("c")]), n(2.0));
        assert_eq!(call("INDEX_OF", &[s("abc"), s("")]), n(0.0));
        assert_eq!(call("INDEX_OF", &[aw, U]), U);
        // UTF-16 positions: the emoji counts for 2.
        assert_eq!(call("INDEX_OF", &[s("😀ab"), s("b")]), n(3.0));
        assert_eq!(call("INDEX_OF", &[s("😀ab😀b"), s("b"), n(3.0)]), n(3.0));
        assert_eq!(call("INDEX_OF", &[s("😀ab😀b"), s("b"), n(4.0)]), n(6.0));
    }

    #[test]
    fn last_index_of_cases() {
        let x = s("abcdeabc");
        assert_eq!(call("LASTINDEXOF", &[x.clone(), s("abc")]), n(5.0));
        assert_eq!(call("LASTINDEXOF", &[x.clone(), s("abc"), n(6.0)]), n(0.0));
        assert_eq!(call("LASTINDEXOF", &[x.clone(), s("abc"), n(7.0)]), n(5.0));
        assert_eq!(call("LASTINDEXOF", &[x.clone(), s("fg")]), n(-1.0));
        assert_eq!(call("LASTINDEXOF", &[x.clone(), s("abc"), n(100.0)]), n(5.0));
        assert_eq!(call("LASTINDEXOF", &[x.clone(), s("abc"), n(1.0)]), n(-1.0));
        assert_eq!(call("LASTINDEXOF", &[x.clone(), s("abc"), n(2.0)]), n(0.0));
        assert_eq!(call("LASTINDEXOF", &[x.clone(), s("a"), n(-1.0)]), n(-1.0));
        assert_eq!(call("LASTINDEXOF", &[x, s("a"), s("1")]), U);
        assert_eq!(call("LASTINDEXOF", &[s("😀a😀a"), s("a")]), n(5.0));
        assert_eq!(call("LASTINDEXOF", &[s("😀a😀a"), s("a"), n(4.0)]), n(2.0));
    }

    #[test]
    fn left_right_substring() {
        let aw = s("AdventureWorks");
        let l = |k: f64| call("LEFT", &[aw.clone(), n(k)]);
        let r = |k: f64| call("RIGHT", &[aw.clone(), n(k)]);
        assert_eq!(l(0.0), s(""));
        assert_eq!(l(1.0), s("A"));
        assert_eq!(l(5.0), s("Adven"));
        assert_eq!(l(14.0), aw);
        assert_eq!(l(100.0), aw);
        assert_eq!(l(-1.0), s(""));
        assert_eq!(l(1.5), U);
        assert_eq!(r(0.0), s(""));
        assert_eq!(r(1.0), s("s"));
        assert_eq!(r(5.0), s("Works"));
        assert_eq!(r(14.0), aw);
        assert_eq!(r(100.0), aw);
        assert_eq!(r(-3.0), s(""));
        assert_eq!(call("LEFT", &[s("abc"), n(1.0)]), s("a"));
        assert_eq!(call("LEFT", &[s("abc"), n(2.0)]), s("ab"));
        assert_eq!(call("RIGHT", &[s("abc"), n(1.0)]), s("c"));
        assert_eq!(call("RIGHT", &[s("abc"), n(2.0)]), s("bc"));
        assert_eq!(call("LEFT", &[n(12.0), n(1.0)]), U);
        assert_eq!(call("RIGHT", &[s("abc"), U]), U);

        let sub = |a: f64, b: f64| call("SUBSTRING", &[aw.clone(), n(a), n(b)]);
        assert_eq!(sub(0.0, 9.0), s("Adventure"));
        assert_eq!(sub(9.0, 5.0), s("Works"));
        assert_eq!(sub(0.0, 14.0), aw);
        assert_eq!(sub(0.0, -1.0), s(""));
        assert_eq!(sub(9.0, 100.0), s("Works"));
        assert_eq!(sub(100.0, 1.0), s(""));
        assert_eq!(sub(-1.0, 3.0), s(""));
        assert_eq!(sub(0.5, 3.0), U);
        assert_eq!(call("SUBSTRING", &[s("abc"), n(1.0), n(1.0)]), s("b"));
        assert_eq!(call("SUBSTRING", &[s("abc"), s("1"), n(1.0)]), U);
        // UTF-16 code units.
        assert_eq!(call("SUBSTRING", &[s("a😀b"), n(1.0), n(2.0)]), s("😀"));
        assert_eq!(call("SUBSTRING", &[s("a😀b"), n(3.0), n(1.0)]), s("b"));
        assert_eq!(call("LEFT", &[s("😀"), n(1.0)]), s("\u{FFFD}"));
        assert_eq!(call("RIGHT", &[s("é😀"), n(2.0)]), s("😀"));
    }

    #[test]
    fn length_cases() {
        assert_eq!(call("LENGTH", &[s("AdventureWorks")]), n(14.0));
        assert_eq!(call("LENGTH", &[s("")]), n(0.0));
        assert_eq!(call("LENGTH", &[s("abc")]), n(3.0));
        assert_eq!(call("LENGTH", &[Value::Null]), U);
        assert_eq!(call("LENGTH", &[n(0.0)]), U);
        assert_eq!(call("LENGTH", &[j(r#"["Adventure", "Works"]"#)]), U);
        assert_eq!(call("LENGTH", &[U]), U);
        assert_eq!(call("LENGTH", &[s("é")]), n(1.0));
        assert_eq!(call("LENGTH", &[s("😀")]), n(2.0));
    }

    #[test]
    fn lower_upper() {
        for (input, lower, upper) in [
            ("adventureworks", "adventureworks", "ADVENTUREWORKS"),
            ("ADVENTUREWORKS", "adventureworks", "ADVENTUREWORKS"),
            ("adventureWorks", "adventureworks", "ADVENTUREWORKS"),
            ("AdventureWorks", "adventureworks", "ADVENTUREWORKS"),
            ("ADVENTURE_WORKS", "adventure_works", "ADVENTURE_WORKS"),
            ("Abc", "abc", "ABC"),
            ("WakefieldFamily", "wakefieldfamily", "WAKEFIELDFAMILY"),
            ("Ça été straße", "ça été straße", "ÇA ÉTÉ STRAßE"),
        ] {
            assert_eq!(call("LOWER", &[s(input)]), s(lower), "{input}");
            assert_eq!(call("UPPER", &[s(input)]), s(upper), "{input}");
        }
        assert_eq!(call("LOWER", &[n(1.0)]), U);
        assert_eq!(call("UPPER", &[U]), U);
    }

    #[test]
    fn trims() {
        let aw = "AdventureWorks";
        let lt = |x: &str| call("LTRIM", &[s(x)]);
        let rt = |x: &str| call("RTRIM", &[s(x)]);
        assert_eq!(lt("  AdventureWorks"), s(aw));
        assert_eq!(lt("  AdventureWorks  "), s("AdventureWorks  "));
        assert_eq!(lt("AdventureWorks  "), s("AdventureWorks  "));
        assert_eq!(lt(aw), s(aw));
        assert_eq!(call("LTRIM", &[s(aw), s("Works")]), s(aw));
        assert_eq!(call("LTRIM", &[s(aw), s("Adventure")]), s("Works"));
        assert_eq!(call("LTRIM", &[s(aw), s(aw)]), s(""));
        assert_eq!(call("LTRIM", &[s(aw), s("")]), s(aw));
        assert_eq!(lt("  abc"), s("abc"));
        assert_eq!(lt("abc"), s("abc"));
        assert_eq!(lt("abc   "), s("abc   "));

        assert_eq!(rt("  AdventureWorks"), s("  AdventureWorks"));
        assert_eq!(rt("  AdventureWorks  "), s("  AdventureWorks"));
        assert_eq!(rt("AdventureWorks  "), s(aw));
        assert_eq!(rt(aw), s(aw));
        assert_eq!(call("RTRIM", &[s(aw), s("Works")]), s("Adventure"));
        assert_eq!(call("RTRIM", &[s(aw), s("Adventure")]), s(aw));
        assert_eq!(call("RTRIM", &[s(aw), s(aw)]), s(""));
        assert_eq!(call("RTRIM", &[s(aw), s("")]), s(aw));

        let t = |x: &str| call("TRIM", &[s(x)]);
        assert_eq!(t("   AdventureWorks"), s(aw));
        assert_eq!(t("AdventureWorks   "), s(aw));
        assert_eq!(t("   AdventureWorks   "), s(aw));
        assert_eq!(t("---AdventureWorks---"), s("---AdventureWorks---"));
        assert_eq!(call("TRIM", &[s("___AdventureWorks___"), s("_")]), s(aw));
        assert_eq!(call("TRIM", &[s("---AdventureWorks---"), s("-")]), s(aw));
        assert_eq!(call("TRIM", &[s("-- AdventureWorks --"), s("-")]), s(" AdventureWorks "));
        assert_eq!(call("TRIM", &[s("-_-AdventureWorks-_-"), s("-_")]), s(aw));
        for x in ["   abc", "   abc   ", "abc   ", "abc"] {
            assert_eq!(t(x), s("abc"));
        }
        assert_eq!(t("\t\n abc \r\n"), s("abc"));
        assert_eq!(call("TRIM", &[n(1.0)]), U);
        assert_eq!(call("TRIM", &[s("x"), n(1.0)]), U);
        assert_eq!(call("LTRIM", &[U]), U);
    }

    #[test]
    fn replace_replicate_reverse() {
        assert_eq!(call("REPLACE", &[s("This is a Test"), s("Test"), s("desk")]), s("This is a desk"));
        assert_eq!(call("REPLACE", &[s("AdventureWorksLT"), s("LT"), s("LT2")]), s("AdventureWorksLT2"));
        assert_eq!(call("REPLACE", &[s("aaa"), s("a"), s("b")]), s("bbb"));
        assert_eq!(call("REPLACE", &[s("30"), s("6"), s("9")]), s("30"));
        assert_eq!(call("REPLACE", &[s("612"), s("6"), s("9")]), s("912"));
        assert_eq!(call("REPLACE", &[s("abc"), s(""), s("x")]), U);
        assert_eq!(call("REPLACE", &[U, s("6"), s("9")]), U);
        assert_eq!(call("REPLACE", &[s("abc"), s("a"), n(1.0)]), U);

        assert_eq!(call("REPLICATE", &[s("a"), n(3.0)]), s("aaa"));
        assert_eq!(call("REPLICATE", &[s("Cosmic"), n(3.0)]), s("CosmicCosmicCosmic"));
        assert_eq!(call("REPLICATE", &[s("a"), n(0.0)]), s(""));
        assert_eq!(call("REPLICATE", &[s("ab"), n(2.7)]), s("abab"));
        assert_eq!(call("REPLICATE", &[s("a"), n(-1.0)]), U);
        assert_eq!(call("REPLICATE", &[s("a"), n(f64::INFINITY)]), U);
        assert_eq!(call("REPLICATE", &[s("a"), n(10_000.0)]), Value::from("a".repeat(10_000)));
        assert_eq!(call("REPLICATE", &[s("ab"), n(5_001.0)]), U);
        assert_eq!(call("REPLICATE", &[n(1.0), n(2.0)]), U);

        assert_eq!(call("REVERSE", &[s("Abc")]), s("cbA"));
        assert_eq!(call("REVERSE", &[s("AdventureWorks")]), s("skroWerutnevdA"));
        assert_eq!(call("REVERSE", &[s("skroWerutnevdA")]), s("AdventureWorks"));
        assert_eq!(call("REVERSE", &[s("a😀b")]), s("b😀a"));
        assert_eq!(call("REVERSE", &[j("[1,2]")]), U);
    }

    #[test]
    fn regex_match_cases() {
        let rm = |args: &[Value]| call("RegexMatch", args);
        assert_eq!(rm(&[s("abcd"), s("ABC")]), F);
        assert_eq!(rm(&[s("abcd"), s("ABC"), s("")]), F);
        assert_eq!(rm(&[s("abcd"), s("ABC"), s("i")]), T);
        assert_eq!(rm(&[s("abcd"), s("ab."), s("")]), T);
        assert_eq!(rm(&[s("abcd"), s("ab c"), s("x")]), T);
        assert_eq!(rm(&[s("abcd"), s("aB c"), s("ix")]), T);
        assert_eq!(rm(&[s("03a"), s("[0-9]")]), T);
        assert_eq!(rm(&[s("salt3824908"), s("salt{1}")]), T);
        assert_eq!(rm(&[s("shame"), s("s...."), s("i")]), T);
        assert_eq!(rm(&[s("Tecozow coat"), s(" coat{1}")]), T);
        assert_eq!(rm(&[s("Tecozow jacket"), s(" coat{1}")]), F);
        // m and s modifiers.
        assert_eq!(rm(&[s("a\nb"), s("^b$")]), F);
        assert_eq!(rm(&[s("a\nb"), s("^b$"), s("m")]), T);
        assert_eq!(rm(&[s("a\nb"), s("a.b")]), F);
        assert_eq!(rm(&[s("a\nb"), s("a.b"), s("s")]), T);
        // Wrong types.
        assert_eq!(rm(&[n(1.0), s("1")]), U);
        assert_eq!(rm(&[s("1"), U]), U);
        assert_eq!(rm(&[s("1"), s("1"), n(1.0)]), U);
        // Errors.
        let def = lookup("REGEXMATCH").unwrap();
        let ctx = FunctionContext::default();
        assert!((def.eval)(&[s("a"), s("(")], &ctx).is_err());
        assert!((def.eval)(&[s("a"), s("a"), s("q")], &ctx).is_err());
    }

    #[test]
    fn regex_match_is_linear_time() {
        let long = format!("{}!", "a".repeat(100_000));
        let started = Instant::now();
        assert_eq!(call("RegexMatch", &[Value::from(long.as_str()), s("(a+)+$")]), F);
        assert_eq!(call("RegexMatch", &[Value::from(long.as_str()), s("^(a+)+$")]), F);
        assert_eq!(call("RegexMatch", &[Value::from(&long[..100_000]), s("^(a+)+$")]), T);
        assert_eq!(call("RegexMatch", &[Value::from(long.as_str()), s("^(a|aa)*b")]), F);
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    }

    #[test]
    fn join_and_split() {
        let words = j(r#"["Iropa", "Mountain", "Bike"]"#);
        assert_eq!(call("STRINGJOIN", &[words.clone(), s(" ")]), s("Iropa Mountain Bike"));
        assert_eq!(call("STRINGJOIN", &[words.clone(), s("")]), s("IropaMountainBike"));
        assert_eq!(call("STRINGJOIN", &[words, U]), U);
        assert_eq!(call("STRINGJOIN", &[j(r#"["6", "7", "4", "3"]"#), s("A")]), s("6A7A4A3"));
        assert_eq!(call("STRINGJOIN", &[j(r#"["Adventure", "LT"]"#), s("Works")]), s("AdventureWorksLT"));
        assert_eq!(call("STRINGJOIN", &[j("[]"), s(",")]), s(""));
        assert_eq!(call("STRINGJOIN", &[j(r#"["a", 1]"#), s(",")]), U);
        assert_eq!(call("STRINGJOIN", &[s("ab"), s(",")]), U);

        let split = |a: &str, b: &str| call("STRINGSPLIT", &[s(a), s(b)]);
        assert_eq!(split("Handlebar", "e"), j(r#"["Handl", "bar"]"#));
        assert_eq!(split("CARBON_STEEL_BIKE_WHEEL", "_"), j(r#"["CARBON", "STEEL", "BIKE", "WHEEL"]"#));
        assert_eq!(split("Road Bike", " "), j(r#"["Road", "Bike"]"#));
        assert_eq!(split("xenmoun mountain bike", "moun"), j(r#"["xen", " ", "tain bike"]"#));
        assert_eq!(call("STRINGSPLIT", &[s("AluminumBikeFrame"), U]), U);
        assert_eq!(split("Helmet", ""), j(r#"["Helmet"]"#));
        assert_eq!(split("", ""), j(r#"[""]"#));
        assert_eq!(split("a,,b,", ","), j(r#"["a", "", "b", ""]"#));
        assert_eq!(call("STRINGSPLIT", &[n(1.0), s(",")]), U);
    }

    #[test]
    fn string_to_array() {
        let sta = |x: &str| call("StringToArray", &[s(x)]);
        assert_eq!(sta("[]"), j("[]"));
        assert_eq!(sta("[1,2,3]"), j("[1,2,3]"));
        assert_eq!(sta(r#"["str",2,3]"#), j(r#"["str",2,3]"#));
        assert_eq!(sta("[['5','6','7'],['8'],['9']]"), U);
        assert!(sta(r#"[["5","6","7"],["8"],["9"]]"#).is_array());
        assert_eq!(sta(r#"[1,2,3, "[4,5,6]",[7,8]]"#), j(r#"[1,2,3,"[4,5,6]",[7,8]]"#));
        assert_eq!(sta("[1,2,3, '[4,5,6]',[7,8]]"), U);
        assert_eq!(sta("["), U);
        assert_eq!(sta(r#"[ "coats", "gloves", "hats" ]"#), j(r#"["coats","gloves","hats"]"#));
        assert_eq!(
            sta(r#"[ { "types": [ "coats", "gloves" ] }, [ "hats" ], 76, false, null ]"#),
            j(r#"[{"types":["coats","gloves"]},["hats"],76,false,null]"#)
        );
        assert_eq!(sta(r#"[ [ "coats", "gloves" ], [ "hats" ] ]"#), j(r#"[["coats","gloves"],["hats"]]"#));
        assert_eq!(sta("[ 'coats', 'gloves', 'hats' ]"), U);
        assert_eq!(sta("{}"), U);
        for bad in [F, U, n(f64::NAN), Value::Null] {
            assert_eq!(call("StringToArray", &[bad]), U);
        }
    }

    #[test]
    fn string_to_boolean_and_null() {
        let stb = |x: &str| call("StringToBoolean", &[s(x)]);
        assert_eq!(stb("true"), T);
        assert_eq!(stb("    false"), F);
        assert_eq!(stb("false"), F);
        assert_eq!(stb("true  "), T);
        assert_eq!(stb("  false  "), F);
        assert_eq!(stb("null"), U);
        assert_eq!(stb("TRUE"), U);
        assert_eq!(stb("False"), U);
        for bad in [U, n(f64::NAN), F, T, Value::Null] {
            assert_eq!(call("StringToBoolean", &[bad]), U);
        }

        let stn = |x: &str| call("StringToNull", &[s(x)]);
        for ok in ["null", "  null ", "null  ", "  null", "  null  "] {
            assert_eq!(stn(ok), Value::Null, "{ok:?}");
        }
        for bad in ["true", "NULL", "Null", ""] {
            assert_eq!(stn(bad), U, "{bad:?}");
        }
        for bad in [F, U, n(f64::NAN), Value::Null] {
            assert_eq!(call("StringToNull", &[bad]), U);
        }
    }

    #[test]
    #[allow(clippy::approx_constant)] // the documented literal 3.14
    fn string_to_number() {
        let stn = |x: &str| call("StringToNumber", &[s(x)]);
        assert_eq!(stn("1.000000"), n(1.0));
        assert_eq!(stn("3.14"), n(3.14));
        assert_eq!(stn("   60   "), n(60.0));
        assert_eq!(stn("100"), n(100.0));
        assert_eq!(stn("-1.79769e+308"), n(-1.79769e308));
        assert_eq!(stn("0xF"), U);
        assert_eq!(stn("99     54"), U);
        assert_eq!(stn("false"), U);
        assert_eq!(stn(" "), U);
        assert_eq!(stn("Hello"), U);
        assert!(!stn("2").is_string());
        for bad in [U, F, n(f64::NAN), n(f64::INFINITY), Value::Null] {
            assert_eq!(call("StringToNumber", &[bad]), U);
        }
    }

    #[test]
    fn string_to_object() {
        let sto = |x: &str| call("StringToObject", &[s(x)]);
        assert_eq!(sto("{}"), j("{}"));
        assert_eq!(sto(r#"{"a":[1,2,3]}"#), j(r#"{"a":[1,2,3]}"#));
        assert_eq!(sto("{'a':[1,2,3]}"), U);
        assert_eq!(sto("{a:[1,2,3]}"), U);
        assert!(sto(r#"{"obj":[{"b":[5,6,7]},{"c":8},{"d":9}]}"#).is_object());
        assert_eq!(sto("{'obj':[{'b':[5,6,7]},{'c':8},{'d':9}]}"), U);
        assert_eq!(sto("{"), U);
        assert_eq!(sto(r#"{"isAvailable": true}"#), j(r#"{"isAvailable": true}"#));
        assert_eq!(sto(r#"{"division": {"name": "Sales"}}"#), j(r#"{"division": {"name": "Sales"}}"#));
        assert_eq!(sto("{'price': 27.55}"), U);
        assert_eq!(sto("[]"), U);
        for bad in [F, U, n(f64::NAN), Value::Null] {
            assert_eq!(call("StringToObject", &[bad]), U);
        }
    }

    #[test]
    fn to_string_cases() {
        let ts = |v: Value| call("ToString", &[v]);
        assert_eq!(ts(n(125.0)), s("125"));
        assert_eq!(ts(n(0.1234)), s("0.1234"));
        assert_eq!(ts(F), s("false"));
        assert_eq!(ts(j("[ 1, 2, 3 ]")), s("[1,2,3]"));
        assert_eq!(ts(j(r#"{ "department": "Bicycles" }"#)), s(r#"{"department":"Bicycles"}"#));
        assert_eq!(ts(s("Hello World")), s("Hello World"));
        assert_eq!(ts(U), U);
        assert_eq!(ts(n(f64::NAN)), s("NaN"));
        assert_eq!(ts(n(f64::INFINITY)), s("Infinity"));
        assert_eq!(ts(n(f64::NEG_INFINITY)), s("-Infinity"));
        assert_eq!(ts(n(1.0)), s("1"));
        assert_eq!(ts(Value::Null), s("null"));
        assert_eq!(ts(n(13.475000000000001)), s("13.475000000000001"));
        // IS_STRING(ToString(undefined)) is false, and ToString(false) of that is "false".
        assert_eq!(ts(call("IS_STRING", &[ts(U)])), s("false"));
        // CONCAT(ToString(p.Weight), p.WeightUnits)
        assert_eq!(call("CONCAT", &[ts(n(4.0)), s("lb")]), s("4lb"));
        assert_eq!(call("CONCAT", &[ts(n(8999.0)), s("mg")]), s("8999mg"));
        // REPLACE(ToString(n.nutritionValue), "6", "9")
        assert_eq!(call("REPLACE", &[ts(n(60.0)), s("6"), s("9")]), s("90"));
        assert_eq!(call("REPLACE", &[ts(Value::Null), s("6"), s("9")]), s("null"));
        assert_eq!(call("REPLACE", &[ts(U), s("6"), s("9")]), U);
    }
}
