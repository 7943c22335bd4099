//! String matching as the query language defines it, shared by the functions that evaluate it
//! (`CONTAINS`, `STARTSWITH`, `ENDSWITH`, `StringEquals`, `RegexMatch`, `UPPER`, `LOWER`) and by
//! the index scans that answer them from index keys, so that both agree by construction.
//!
//! Case-insensitive comparisons and `UPPER`/`LOWER` use simple (one character to one character)
//! Unicode case mappings, like .NET's invariant culture: `UPPER("ß")` stays `"ß"`.

use std::cell::RefCell;
use std::collections::HashMap;

use std::sync::{Arc, Mutex};

use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::syntax;
use regex_automata::{hybrid, meta, Input};

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
    static REGEX_CACHE: RefCell<HashMap<(String, String), Pattern>> = RefCell::new(HashMap::new());
}

/// The most the compiled form of one `RegexMatch` pattern may take, in bytes; a pattern past it
/// is refused as too large. Query text is bounded, but a counted repetition (`a{1000}{1000}`)
/// multiplies it.
pub const REGEX_SIZE_LIMIT: usize = 10 << 20;

/// The most work one match may do, in automaton states visited (about a second's work). A match
/// visits at most the pattern's states at each character of the string; one whose pattern and
/// string are small enough that this product stays within the bound runs on the fastest engine.
/// A larger one runs on a lazily built DFA that counts the states it builds (each costs a visit
/// of every pattern state) and stops with an error past the bound.
pub const REGEX_MATCH_WORK: usize = 1 << 27;

/// A compiled `RegexMatch` pattern. Only whether it matches is ever asked, so its groups are
/// compiled without their capture slots: a pattern of thousands of groups (`(a?)` repeated)
/// costs the matcher nothing more than one without them, where keeping the slots made a match
/// copy all of them at every step (minutes and gigabytes for 5,000 groups).
#[derive(Clone, Debug)]
pub struct Pattern(Arc<Compiled>);

#[derive(Debug)]
struct Compiled {
    /// All of the engines, choosing the fastest for each search; used when the worst case is
    /// within [`REGEX_MATCH_WORK`].
    fast: meta::Regex,
    /// A DFA built as it goes, stepped here so that its work can be counted.
    lazy: hybrid::dfa::DFA,
    /// Its caches, one per thread matching at once.
    caches: Mutex<Vec<hybrid::dfa::Cache>>,
    /// The pattern's automaton states: the cost of one step of the slowest engine, or of
    /// building one DFA state.
    states: usize,
}

impl Pattern {
    /// Whether every string of at most `len` bytes is matched within [`REGEX_MATCH_WORK`], so
    /// that [`Pattern::is_match`] never fails on one.
    pub fn decides_within(&self, len: usize) -> bool {
        self.0.states.saturating_mul(len.max(1)) <= REGEX_MATCH_WORK
    }

    /// Whether the pattern matches anywhere in `s`, or an error if finding out would take more
    /// than [`REGEX_MATCH_WORK`].
    pub fn is_match(&self, s: &str) -> Result<bool, String> {
        let c = &self.0;
        if self.decides_within(s.len()) {
            return Ok(c.fast.is_match(s));
        }
        let mut cache = c.caches.lock().ok().and_then(|mut v| v.pop()).unwrap_or_else(|| c.lazy.create_cache());
        let found = c.stepped(&mut cache, s);
        if let Ok(mut v) = c.caches.lock() {
            v.push(cache);
        }
        match found {
            Some(found) => Ok(found),
            None => Err(format!(
                "the regular expression is too complex to match against a string of {} characters \
                 (a pattern of {} states; a match may visit at most {} states)",
                s.chars().count(),
                c.states,
                REGEX_MATCH_WORK
            )),
        }
    }
}

impl Compiled {
    /// Walks the lazy DFA over `s`, stopping at the first match. `None`: the work bound was
    /// reached, or the DFA cannot decide (a Unicode word boundary next to a non-ASCII character)
    /// and the slower engines would take more than the bound.
    fn stepped(&self, cache: &mut hybrid::dfa::Cache, s: &str) -> Option<bool> {
        let dfa = &self.lazy;
        let input = Input::new(s);
        let budget = REGEX_MATCH_WORK / self.states.max(1);
        let mut built = 0usize;
        let mut sid = dfa.start_state_forward(cache, &input).ok()?;
        if sid.is_tagged() && (sid.is_dead() || sid.is_quit()) {
            return if sid.is_dead() { Some(false) } else { None };
        }
        for &b in s.as_bytes() {
            if dfa.next_state_untagged(cache, sid, b).is_unknown() {
                built += 1;
                if built > budget {
                    return None;
                }
            }
            sid = dfa.next_state(cache, sid, b).ok()?;
            if sid.is_tagged() {
                if sid.is_match() {
                    return Some(true);
                }
                if sid.is_dead() {
                    return Some(false);
                }
                if sid.is_quit() {
                    return None;
                }
            }
        }
        let sid = dfa.next_eoi_state(cache, sid).ok()?;
        if sid.is_quit() {
            return None;
        }
        Some(sid.is_match())
    }
}

/// A `RegexMatch` pattern with its modifiers (`m`, `s`, `i`, `x`) compiled, or what is wrong
/// with it. The engines are finite automata (no backtracking): no backreferences or
/// look-around, no pattern compiles past [`REGEX_SIZE_LIMIT`] and no match does more than
/// [`REGEX_MATCH_WORK`].
pub fn regex(pattern: &str, modifiers: &str) -> Result<Pattern, String> {
    let key = (pattern.to_owned(), modifiers.to_owned());
    if let Some(re) = REGEX_CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(re);
    }
    let mut syntax = syntax::Config::new();
    for m in modifiers.chars() {
        syntax = match m {
            'i' => syntax.case_insensitive(true),
            'm' => syntax.multi_line(true),
            's' => syntax.dot_matches_new_line(true),
            'x' => syntax.ignore_whitespace(true),
            _ => return Err(format!("invalid modifier '{m}' in \"{modifiers}\" (expected any of m, s, i, x)")),
        };
    }
    let refused = |e: &dyn std::fmt::Display, too_large: bool| {
        if too_large {
            format!(
                "regular expression too large: \"{}\" compiles past {} MiB",
                shortened(pattern),
                REGEX_SIZE_LIMIT >> 20
            )
        } else {
            format!("invalid regular expression \"{}\": {e}", shortened(pattern))
        }
    };
    let config = meta::Config::new()
        .which_captures(WhichCaptures::Implicit)
        .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
        .onepass_size_limit(Some(REGEX_SIZE_LIMIT))
        .dfa_size_limit(Some(REGEX_SIZE_LIMIT))
        .hybrid_cache_capacity(REGEX_SIZE_LIMIT);
    let fast = meta::Builder::new()
        .configure(config)
        .syntax(syntax)
        .build(pattern)
        .map_err(|e| refused(&e, e.size_limit().is_some()))?;
    let nfa = thompson::Compiler::new()
        .syntax(syntax)
        .configure(thompson::Config::new().which_captures(WhichCaptures::None).nfa_size_limit(Some(REGEX_SIZE_LIMIT)))
        .build(pattern)
        .map_err(|e| refused(&e, e.size_limit().is_some()))?;
    let states = nfa.states().len();
    let lazy = hybrid::dfa::DFA::builder()
        .configure(
            hybrid::dfa::Config::new()
                .cache_capacity(REGEX_SIZE_LIMIT)
                .skip_cache_capacity_check(true)
                .minimum_cache_clear_count(None)
                .unicode_word_boundary(true),
        )
        .build_from_nfa(nfa)
        .map_err(|e| refused(&e, false))?;
    let re = Pattern(Arc::new(Compiled { fast, lazy, caches: Mutex::new(Vec::new()), states }));
    REGEX_CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= REGEX_CACHE_SIZE {
            cache.clear();
        }
        cache.insert(key, re.clone());
    });
    Ok(re)
}

/// A pattern as an error message quotes it: at most 60 characters of it.
fn shortened(pattern: &str) -> String {
    match pattern.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &pattern[..at]),
        None => pattern.to_string(),
    }
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
        assert!(regex("ABC", "i").unwrap().is_match("abcd").unwrap());
        assert!(regex("a", "q").is_err());
        assert!(regex("(", "").is_err());
    }
}
