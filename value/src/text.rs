//! String matching as the query language defines it, shared by the functions that evaluate it
//! (`CONTAINS`, `STARTSWITH`, `ENDSWITH`, `StringEquals`, `RegexMatch`, `UPPER`, `LOWER`) and by
//! the index scans that answer them from index keys, so that both agree by construction.
//!
//! Case-insensitive comparisons and `UPPER`/`LOWER` use simple (one character to one character)
//! Unicode case mappings, like .NET's invariant culture: `UPPER("ß")` stays `"ß"`.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::{Regex, RegexBuilder};

/// Simple (one-to-one) case mapping of every character; characters whose full mapping has
/// several characters are kept as they are.
pub fn case_map(s: &str, upper: bool) -> String {
    if s.is_ascii() {
        return if upper { s.to_ascii_uppercase() } else { s.to_ascii_lowercase() };
    }
    s.chars()
        .map(|c| {
            let mut m: Vec<char> = if upper { c.to_uppercase().collect() } else { c.to_lowercase().collect() };
            if m.len() == 1 {
                m.pop().unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

/// Folds case for case-insensitive comparison (simple upper-case mapping, as .NET's
/// `OrdinalIgnoreCase`).
pub fn fold(s: &str) -> String {
    case_map(s, true)
}

/// A comparison of a string with a search string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextTest {
    Contains,
    StartsWith,
    EndsWith,
    Equals,
}

impl TextTest {
    /// Whether `s` passes the test against `needle`, ignoring case if asked.
    pub fn holds(self, s: &str, needle: &str, ignore_case: bool) -> bool {
        if ignore_case {
            self.exact(&fold(s), &fold(needle))
        } else {
            self.exact(s, needle)
        }
    }

    fn exact(self, s: &str, needle: &str) -> bool {
        match self {
            TextTest::Contains => s.contains(needle),
            TextTest::StartsWith => s.starts_with(needle),
            TextTest::EndsWith => s.ends_with(needle),
            TextTest::Equals => s == needle,
        }
    }

    /// A matcher for one search string: the needle is folded once.
    pub fn matcher(self, needle: &str, ignore_case: bool) -> impl Fn(&str) -> bool + Send + Sync + 'static {
        let needle = if ignore_case { fold(needle) } else { needle.to_string() };
        move |s: &str| if ignore_case { self.exact(&fold(s), &needle) } else { self.exact(s, &needle) }
    }
}

const REGEX_CACHE_SIZE: usize = 64;

thread_local! {
    /// Compiled `RegexMatch` patterns by (pattern, modifiers); a query evaluates one pattern per
    /// row, so compiling it once per thread matters.
    static REGEX_CACHE: RefCell<HashMap<(String, String), Regex>> = RefCell::new(HashMap::new());
}

/// A `RegexMatch` pattern with its modifiers (`m`, `s`, `i`, `x`) compiled, or what is wrong
/// with it. The regex engine runs in linear time: no pattern can make a match hang.
pub fn regex(pattern: &str, modifiers: &str) -> Result<Regex, String> {
    let key = (pattern.to_owned(), modifiers.to_owned());
    if let Some(re) = REGEX_CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(re);
    }
    let mut builder = RegexBuilder::new(pattern);
    for m in modifiers.chars() {
        match m {
            'i' => builder.case_insensitive(true),
            'm' => builder.multi_line(true),
            's' => builder.dot_matches_new_line(true),
            'x' => builder.ignore_whitespace(true),
            _ => return Err(format!("invalid modifier '{m}' in \"{modifiers}\" (expected any of m, s, i, x)")),
        };
    }
    let re = builder.build().map_err(|e| format!("invalid regular expression \"{pattern}\": {e}"))?;
    REGEX_CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= REGEX_CACHE_SIZE {
            cache.clear();
        }
        cache.insert(key, re.clone());
    });
    Ok(re)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_agree_with_their_matchers() {
        for (s, needle) in [("AdventureWorks", "works"), ("é", "É"), ("abc", ""), ("ß", "SS"), ("Ab", "ab")] {
            for test in [TextTest::Contains, TextTest::StartsWith, TextTest::EndsWith, TextTest::Equals] {
                for ci in [false, true] {
                    assert_eq!(test.holds(s, needle, ci), test.matcher(needle, ci)(s), "{test:?} {s} {needle} {ci}");
                }
            }
        }
        assert!(TextTest::EndsWith.holds("AdventureWorks", "works", true));
        assert!(!TextTest::EndsWith.holds("AdventureWorks", "works", false));
        assert!(!TextTest::Equals.holds("ß", "SS", true));
    }

    #[test]
    fn regex_modifiers() {
        assert!(regex("ABC", "i").unwrap().is_match("abcd"));
        assert!(regex("a", "q").is_err());
        assert!(regex("(", "").is_err());
    }
}
