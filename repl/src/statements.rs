//! The text of statements: splitting input into SQL statements and `.commands`, knowing when a
//! statement typed so far is complete, `EXPLAIN [ANALYZE]`, and a command's words.

use cosmoql::value::{to_json_string, Value};
use cosmoql::PartitionKeyComponent;

/// `.nullvalue "TEXT"` and `.nullvalue TEXT` alike.
pub fn unquote(text: &str) -> String {
    let t = text.trim();
    t.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(t).to_string()
}

/// Splits a command's arguments at whitespace outside double quotes; the quotes stay in the words
/// (a partition key path keeps its quoted segments: `/"a b"/c`).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in text.chars() {
        if c.is_whitespace() && !quoted {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            continue;
        }
        if quoted && c == '\\' && !escaped {
            escaped = true;
            word.push(c);
            continue;
        }
        if c == '"' && !escaped {
            quoted = !quoted;
        }
        escaped = false;
        word.push(c);
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// `EXPLAIN [ANALYZE] rest` -> (Some(analyze), rest); anything else -> (None, text).
pub fn strip_explain(sql: &str) -> (Option<bool>, &str) {
    let t = sql.trim_start();
    let word = |s: &str, w: &str| -> Option<usize> {
        let head = s.get(..w.len())?;
        let after = s[w.len()..].chars().next();
        (head.eq_ignore_ascii_case(w) && after.is_none_or(char::is_whitespace)).then_some(w.len())
    };
    match word(t, "explain") {
        Some(n) => {
            let rest = t[n..].trim_start();
            match word(rest, "analyze") {
                Some(m) => (Some(true), rest[m..].trim_start()),
                None => (Some(false), rest),
            }
        }
        None => (None, sql),
    }
}

/// One statement of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Statement {
    /// A `.command` line.
    Command(String),
    /// SQL, without its `;`, and where it starts in the input: the 0-based line and character
    /// column (an error's position is shifted by them, the text is never padded: a script of
    /// many statements on one line or many lines stays linear).
    Sql { sql: String, line: usize, column: usize },
}

/// An error rendered against a statement (`line L, column C: ...`) as the input's, for a
/// statement that starts `line` lines and (on its first line) `column` characters further on.
pub fn shift_position(rendered: &str, line: usize, column: usize) -> String {
    fn number(text: &str) -> Option<(usize, &str)> {
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        text[..digits].parse::<usize>().ok().map(|n| (n, &text[digits..]))
    }
    let Some((l, rest)) = rendered.strip_prefix("line ").and_then(number) else { return rendered.to_string() };
    let Some((c, rest)) = rest.strip_prefix(", column ").and_then(number) else { return rendered.to_string() };
    let c = if l == 1 { c.saturating_add(column) } else { c };
    format!("line {}, column {c}{rest}", l.saturating_add(line))
}

/// Splits input into statements: a line starting with `.` and a letter is a command (and ends
/// a statement left open); SQL runs to a `;` outside string literals and comments, or to an empty line.
pub fn split_statements(text: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current = String::new();
    // Where the statement under way starts in `text` (0-based line and character column), so an
    // error's `line L, column C` can be the input's (see [`shift_position`]).
    let mut start: Option<(usize, usize)> = None;
    let flush = |current: &mut String, start: &mut Option<(usize, usize)>, out: &mut Vec<Statement>| {
        let sql = current.trim();
        if !sql.is_empty() {
            let (line, column) = start.unwrap_or((0, 0));
            out.push(Statement::Sql { sql: sql.to_string(), line, column });
        }
        current.clear();
        *start = None;
    };
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('.') && trimmed[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '?') {
            // A command line also ends a statement left without `;`.
            flush(&mut current, &mut start, &mut out);
            out.push(Statement::Command(line.trim().to_string()));
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut current, &mut start, &mut out);
            continue;
        }
        let mut quotes = Quotes::default();
        let mut chars = line.chars().enumerate().peekable();
        while let Some((j, c)) = chars.next() {
            if start.is_none() && !c.is_whitespace() && c != ';' {
                start = Some((i, j));
            }
            if quotes.inside(c) {
                current.push(c);
                continue;
            }
            match c {
                '\'' | '"' => {
                    quotes.open = Some(c);
                    current.push(c);
                }
                '-' if chars.peek().map(|(_, c)| *c) == Some('-') => {
                    // A comment runs to the end of the line (and starts no statement).
                    if start == Some((i, j)) {
                        start = None;
                    }
                    break;
                }
                ';' => flush(&mut current, &mut start, &mut out),
                _ => current.push(c),
            }
        }
        // Lines before a statement starts are not kept (it knows where it starts).
        if start.is_some() {
            current.push('\n');
        } else {
            current.clear();
        }
    }
    flush(&mut current, &mut start, &mut out);
    out
}

/// Whether the REPL buffer holds a complete statement: it ends with `;` (outside strings), ends
/// with an empty line, or is a `.command` or blank.
pub fn is_complete(buffer: &str) -> bool {
    let t = buffer.trim();
    if t.is_empty() || t.starts_with('.') || buffer.ends_with("\n\n") || buffer.ends_with('\n') {
        return true;
    }
    let mut quotes = Quotes::default();
    let mut last_significant = ' ';
    for line in buffer.lines() {
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if quotes.inside(c) {
                last_significant = c;
                continue;
            }
            match c {
                '\'' | '"' => quotes.open = Some(c),
                '-' if chars.peek() == Some(&'-') => break,
                c if c.is_whitespace() => continue,
                _ => {}
            }
            last_significant = c;
        }
    }
    quotes.open.is_none() && last_significant == ';'
}

/// Where a scan of SQL text stands in string literals (`'...'` or `"..."`, with backslash escapes).
#[derive(Default)]
struct Quotes {
    /// The quote of the literal the scan is in.
    open: Option<char>,
    escaped: bool,
}

impl Quotes {
    /// Whether `c` belongs to a string literal opened before it (its closing quote included),
    /// moving past it if so.
    fn inside(&mut self, c: char) -> bool {
        let Some(q) = self.open else { return false };
        if self.escaped {
            self.escaped = false;
        } else if c == '\\' {
            self.escaped = true;
        } else if c == q {
            self.open = None;
        }
        true
    }
}

/// For a statement Cosmos DB's SQL does not have (`INSERT`, `DELETE`, `DROP`, `SHOW`, ...; the
/// parser knows which): the REPL's commands that do it.
pub fn shell_hint(sql: &str) -> Option<&'static str> {
    use cosmoql::parser::hints::{statement_habit, StatementHabit};
    Some(match statement_habit(sql)?.0 {
        StatementHabit::Insert => "hint: in this shell, .insert JSON (or .upsert JSON) writes an item; .import FILE loads many",
        StatementHabit::Update => {
            "hint: in this shell, .patch ID PK OPERATIONS changes an item in place; .replace JSON and .upsert JSON write it whole"
        }
        StatementHabit::Delete => "hint: in this shell, .delete ID PK deletes an item",
        StatementHabit::Create => "hint: in this shell, .create NAME /key creates a container",
        StatementHabit::Drop => "hint: in this shell, .drop NAME deletes a container",
        StatementHabit::Show => "hint: in this shell, .containers lists the containers, .use NAME switches",
    })
}

/// The other container a query's FROM names, when it names one (`FROM families` while
/// `telemetry` is in use): the name after FROM is an alias in Cosmos DB, so the query ran on
/// `current`, and a user expecting SQL's rule should be told.
pub fn other_container(query: &cosmoql::parser::ast::Query, current: &str, containers: &[String]) -> Option<String> {
    use cosmoql::parser::ast::{Collection, FromSource};
    let FromSource::Aliased { collection: Collection::Path { root, .. }, .. } = &query.from.as_ref()?.source else {
        return None;
    };
    let name = root.name.as_str();
    if name.eq_ignore_ascii_case(current) {
        return None;
    }
    containers.iter().find(|c| c.eq_ignore_ascii_case(name)).cloned()
}

/// Parses a JSON array of key components, where a top-level element may also be the bare word
/// `undefined`. The array is split at its top-level commas (outside strings and nested brackets)
/// and every element is parsed as JSON on its own.
pub fn key_components(text: &str) -> Result<Vec<PartitionKeyComponent>, String> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or("the key must be a JSON array of components, e.g. '[\"redmond\"]'")?;
    let mut elements = Vec::new();
    let (mut scan, mut start) = (Brackets::default(), 0);
    for (i, c) in inner.char_indices() {
        match scan.step(c) {
            Some(Bracket::Unbalanced) => return Err("unbalanced brackets in the key".into()),
            Some(Bracket::Other(',')) if scan.depth == 0 => {
                elements.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if scan.in_string || scan.depth != 0 {
        return Err("the key is not valid JSON: unterminated string or bracket".into());
    }
    let last = &inner[start..];
    if !(elements.is_empty() && last.trim().is_empty()) {
        elements.push(last);
    }
    elements
        .iter()
        .enumerate()
        .map(|(i, element)| {
            let element = element.trim();
            if element.is_empty() {
                return Err(format!("component {} is empty (a stray comma?)", i + 1));
            }
            if element == "undefined" {
                return Ok(PartitionKeyComponent::Undefined);
            }
            let value: serde_json::Value = serde_json::from_str(element).map_err(|e| {
                let hint = if element.starts_with(['"', '[', '{']) { "" } else { " (a string needs double quotes)" };
                format!("component {} ({element}) is {}{hint}", i + 1, cosmoql::value::json::json_error_message(&e))
            })?;
            PartitionKeyComponent::try_from(&value).map_err(|e| format!("component {}: {e}", i + 1))
        })
        .collect()
}

/// The end of the bracketed text `text` starts with (`[...]`, strings and nesting skipped): the
/// byte just past its closing bracket.
pub fn bracket_end(text: &str) -> Option<usize> {
    let mut scan = Brackets::default();
    for (i, c) in text.char_indices() {
        match scan.step(c) {
            Some(Bracket::Unbalanced) => return None,
            Some(Bracket::Close) if scan.depth == 0 => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Where a scan of JSON-like text stands: in a string or not, and how deep in brackets.
#[derive(Default)]
struct Brackets {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

/// What a character outside strings is to [`Brackets`] (an opening bracket is `Other`: only
/// the depth it adds matters).
enum Bracket {
    Close,
    /// A closing bracket that closes nothing.
    Unbalanced,
    Other(char),
}

impl Brackets {
    /// Moves past `c`: `None` inside a string (its quotes included), else what `c` is.
    fn step(&mut self, c: char) -> Option<Bracket> {
        if self.in_string {
            match c {
                _ if self.escaped => self.escaped = false,
                '\\' => self.escaped = true,
                '"' => self.in_string = false,
                _ => {}
            }
            return None;
        }
        Some(match c {
            '"' => {
                self.in_string = true;
                return None;
            }
            '[' | '{' => {
                self.depth += 1;
                Bracket::Other(c)
            }
            ']' | '}' => match self.depth.checked_sub(1) {
                Some(d) => {
                    self.depth = d;
                    Bracket::Close
                }
                None => Bracket::Unbalanced,
            },
            c => Bracket::Other(c),
        })
    }
}

/// For a value that is not JSON but reads as a bare word (`dev-1`), the quoted string it
/// probably meant (`"dev-1"`).
pub fn quote_hint(text: &str) -> Option<String> {
    let t = text.trim();
    let bare = !t.is_empty() && !t.starts_with(['"', '\'', '{', '[']) && !t.contains(char::is_whitespace);
    bare.then(|| to_json_string(&Value::from(t)).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_at_semicolons_and_empty_lines() {
        let s = split_statements("select 1; select ';' from c\n.mode json\nselect\n2\n\nselect 3 -- ; no\n;");
        // Each statement knows where it starts in the text (errors then name the text's lines
        // and columns).
        let sql = |sql: &str, line: usize, column: usize| Statement::Sql { sql: sql.to_string(), line, column };
        assert_eq!(
            s,
            vec![
                sql("select 1", 0, 0),
                sql("select ';' from c", 0, 10),
                Statement::Command(".mode json".into()),
                sql("select\n2", 2, 0),
                sql("select 3", 5, 0),
            ]
        );
        assert_eq!(shift_position("line 1, column 8: x\nSELECT", 4, 0), "line 5, column 8: x\nSELECT");
        assert_eq!(shift_position("line 1, column 8: x", 4, 10), "line 5, column 18: x");
        assert_eq!(shift_position("line 2, column 8: x", 4, 10), "line 6, column 8: x");
        assert_eq!(shift_position("no container in use", 4, 3), "no container in use");
        assert_eq!(
            shift_position("line 99999999999999999999999, column 1: x", 1, 1),
            "line 99999999999999999999999, column 1: x"
        );
    }

    proptest::proptest! {
        /// Any text of statements, strings, comments, commands and blank lines: each statement
        /// says where it starts (its first character is there in the text), and the statements
        /// together are never longer than the text (no padding: linear in the input).
        #[test]
        fn the_splitter_knows_where_each_statement_starts(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "SELECT 1", ";", " ", "  ", "\n", "\n\n", "'a;b'", "\"q\"", "'", "-- c;", "--", "-", ".mode json\n",
                ".x", "😀", "\t", "\r\n", "c.n", "\u{202e}", "é",
            ]), 0..40),
        ) {
            let text: String = pieces.concat();
            let statements = split_statements(&text);
            let mut total = 0;
            for statement in &statements {
                if let Statement::Sql { sql, line, column } = statement {
                    total += sql.len();
                    let first = sql.chars().next().unwrap();
                    let at = text.lines().nth(*line).and_then(|l| l.chars().nth(*column));
                    proptest::prop_assert_eq!(at, Some(first), "{:?}: {:?}", text, statement);
                }
            }
            proptest::prop_assert!(total <= text.len(), "{:?}", text);
        }
    }

    #[test]
    fn completeness() {
        assert!(is_complete("select 1;"));
        assert!(is_complete("select 1\n"));
        assert!(is_complete(".help"));
        assert!(!is_complete("select 1"));
        assert!(!is_complete("select ';"));
        assert!(is_complete("select ';';  "));
    }

    #[test]
    fn command_words_keep_quoted_segments() {
        assert_eq!(words(r#"t /"a b"/c  /d"#), vec![r#"t"#, r#"/"a b"/c"#, "/d"]);
        assert_eq!(words(r#"t /"a \" b""#), vec!["t", r#"/"a \" b""#]);
    }

    #[test]
    fn explain_prefix() {
        assert_eq!(strip_explain("EXPLAIN ANALYZE select 1"), (Some(true), "select 1"));
        assert_eq!(strip_explain("explain select 1"), (Some(false), "select 1"));
        assert_eq!(strip_explain("explainer"), (None, "explainer"));
    }
}
