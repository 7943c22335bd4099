//! The interactive loop: rustyline with history, multi-line statements, completion and syntax
//! highlighting; Ctrl-C clears the line or cancels a running query, Ctrl-D leaves.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Config, Context, Editor, Helper};

use crate::session::{Session, Vocabulary, INTERRUPTED};
use crate::statements::is_complete;
use crate::text::color;

/// SQL keywords offered by completion and highlighted.
pub const KEYWORDS: [&str; 34] = [
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "IN",
    "JOIN",
    "VALUE",
    "TOP",
    "DISTINCT",
    "AS",
    "ORDER",
    "BY",
    "ASC",
    "DESC",
    "GROUP",
    "OFFSET",
    "LIMIT",
    "BETWEEN",
    "LIKE",
    "ESCAPE",
    "EXISTS",
    "ARRAY",
    "RANK",
    "EXPLAIN",
    "ANALYZE",
    "true",
    "false",
    "null",
    "undefined",
    "udf",
    "NaN",
    "Infinity",
];

/// Where history is kept: `$COSMOQL_HISTORY` (empty: nowhere), else `$HOME/.cosmoql_history`.
pub fn history_path() -> Option<PathBuf> {
    match std::env::var_os("COSMOQL_HISTORY") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cosmoql_history")),
    }
}

/// Completion, highlighting and multi-line validation.
#[derive(Debug)]
pub struct SqlHelper {
    vocabulary: Arc<RwLock<Vocabulary>>,
    functions: Vec<&'static str>,
    colored: bool,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '@' | '[' | ']' | '$')
}

impl Completer for SqlHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before.char_indices().rev().find(|(_, c)| !is_word_char(*c)).map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        let head = before.trim_start();
        let vocabulary = self.vocabulary.read().map_err(|_| ReadlineError::Interrupted)?;
        let mut out: Vec<Pair> = Vec::new();
        let mut push = |display: String, replacement: String| {
            if !out.iter().any(|p| p.replacement == replacement) {
                out.push(Pair { display, replacement });
            }
        };
        // `.use NAME`, `.drop NAME`: container names.
        if (head.starts_with(".use ") || head.starts_with(".drop ")) && !word.starts_with('.') {
            // A name the terminal cannot show as it is (control characters) is not offered.
            for c in &vocabulary.containers {
                if c.starts_with(word) && crate::text::printable(c) == c.as_str() {
                    push(c.clone(), c.clone());
                }
            }
            return Ok((start, out));
        }
        if word.starts_with('.') && start == line.len() - line.trim_start().len() {
            for c in crate::help::commands().into_iter().filter(|c| c.starts_with(word)) {
                push(c.to_string(), c.to_string());
            }
            return Ok((start, out));
        }
        if let Some(dot) = word.find('.') {
            // alias.path: property paths seen in the data.
            let (alias, path) = (&word[..dot], &word[dot + 1..]);
            for p in vocabulary.paths.iter().filter(|p| p.starts_with(path) && crate::text::printable(p) == p.as_str())
            {
                push(p.clone(), format!("{alias}.{p}"));
            }
            return Ok((start, out));
        }
        let upper = word.to_ascii_uppercase();
        if word.is_empty() {
            return Ok((start, out));
        }
        for k in KEYWORDS.iter().filter(|k| k.to_ascii_uppercase().starts_with(&upper)) {
            let r = if k.chars().all(|c| c.is_ascii_uppercase()) && word.chars().all(|c| c.is_ascii_lowercase()) {
                k.to_ascii_lowercase()
            } else {
                k.to_string()
            };
            push(k.to_string(), r);
        }
        for f in self.functions.iter().filter(|f| f.to_ascii_uppercase().starts_with(&upper)) {
            push(format!("{f}()"), format!("{f}("));
        }
        for c in vocabulary
            .containers
            .iter()
            .filter(|c| c.to_ascii_uppercase().starts_with(&upper) && crate::text::printable(c) == c.as_str())
        {
            push(c.clone(), c.clone());
        }
        Ok((start, out))
    }
}

impl Hinter for SqlHelper {
    type Hint = String;
}

/// Lines longer than this are not highlighted: highlighting redraws the whole line at every
/// keystroke, which made pasting a long line quadratic (50 KB took 42 s).
pub const HIGHLIGHT_MAX_BYTES: usize = 2048;

impl Highlighter for SqlHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if !self.colored || line.len() > HIGHLIGHT_MAX_BYTES {
            return Cow::Borrowed(line);
        }
        Cow::Owned(highlight_sql(line, &self.functions))
    }

    fn highlight_char(&self, line: &str, _pos: usize, _kind: CmdKind) -> bool {
        self.colored && line.len() <= HIGHLIGHT_MAX_BYTES
    }
}

impl Validator for SqlHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if is_complete(ctx.input()) { ValidationResult::Valid(None) } else { ValidationResult::Incomplete })
    }
}

impl Helper for SqlHelper {}

/// ANSI-highlights SQL: keywords, functions, strings, numbers, parameters, comments and
/// `.commands`.
pub fn highlight_sql(line: &str, functions: &[&str]) -> String {
    let mut out = String::with_capacity(line.len() * 2);
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    let at = |i: usize| chars.get(i).map(|c| c.1);
    let offset = |i: usize| chars.get(i).map_or(line.len(), |c| c.0);
    if line.trim_start().starts_with('.') {
        let end = line.find(|c: char| c.is_whitespace() && !line.trim_start().is_empty()).unwrap_or(line.len());
        let end = if line[..end].trim().is_empty() { line.len() } else { end };
        return format!("{}{}{}{}", color::CYAN, &line[..end], color::RESET, &line[end..]);
    }
    while i < chars.len() {
        let c = chars[i].1;
        let start = i;
        if c == '\'' || c == '"' {
            i += 1;
            while i < chars.len() && at(i) != Some(c) {
                if at(i) == Some('\\') {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
            out.push_str(color::GREEN);
            out.push_str(&line[offset(start)..offset(i)]);
            out.push_str(color::RESET);
        } else if c == '-' && at(i + 1) == Some('-') {
            out.push_str(color::DIM);
            out.push_str(&line[offset(i)..]);
            out.push_str(color::RESET);
            break;
        } else if c.is_ascii_digit() {
            while i < chars.len() && at(i).is_some_and(|c| c.is_ascii_alphanumeric() || c == '.') {
                i += 1;
            }
            out.push_str(color::YELLOW);
            out.push_str(&line[offset(start)..offset(i)]);
            out.push_str(color::RESET);
        } else if c.is_alphabetic() || c == '_' || c == '@' {
            i += 1;
            while i < chars.len() && at(i).is_some_and(|c| c.is_alphanumeric() || c == '_') {
                i += 1;
            }
            let word = &line[offset(start)..offset(i)];
            let prev_dot = start > 0 && at(start - 1) == Some('.');
            let is_call = line[offset(i)..].trim_start().starts_with('(');
            let keyword = !prev_dot && KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word));
            if word.starts_with('@') {
                out.push_str(color::MAGENTA);
                out.push_str(word);
                out.push_str(color::RESET);
            } else if keyword {
                out.push_str(color::BOLD);
                out.push_str(color::BLUE);
                out.push_str(word);
                out.push_str(color::RESET);
            } else if is_call && !prev_dot && functions.iter().any(|f| f.eq_ignore_ascii_case(word)) {
                out.push_str(color::CYAN);
                out.push_str(word);
                out.push_str(color::RESET);
            } else {
                out.push_str(word);
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Runs the interactive loop until `.quit` or Ctrl-D; returns the exit status: what `.exit N`
/// asked for, else 0 (a statement that failed was reported and the session went on, as in
/// sqlite3 and psql), 1 when the terminal itself failed.
pub fn run(mut session: Session, banner: &str, place: &str) -> u8 {
    // Ctrl-C while a query runs (the terminal is in cooked mode then) sets the flag the query
    // loop watches; while editing, rustyline reads Ctrl-C as a key and clears the line.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    // Tab completes what all candidates share; a second Tab lists them (as bash and psql do).
    let config = Config::builder()
        .auto_add_history(false)
        .completion_type(rustyline::CompletionType::List)
        .max_history_size(5000)
        .map(|b| b.build());
    let Ok(config) = config else { return 1 };
    let mut editor: Editor<SqlHelper, DefaultHistory> = match Editor::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            errln!("error: cannot start the line editor: {e}");
            return 1;
        }
    };
    editor.set_helper(Some(SqlHelper {
        vocabulary: Arc::clone(&session.vocabulary),
        functions: cosmoql::function_names(),
        colored: session.colored,
    }));
    let history = history_path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    let version = env!("CARGO_PKG_VERSION");
    if session.colored {
        outln!("{}cosmoql {version}{}: Cosmos DB for NoSQL queries, {place}", color::BOLD, color::RESET);
    } else {
        outln!("cosmoql {version}: Cosmos DB for NoSQL queries, {place}");
    }
    outln!("{banner}");
    outln!("Type .help for commands; end a statement with ; or an empty line; Ctrl-D quits.");
    let mut code = 0;
    loop {
        let prompt = format!("{}> ", crate::text::printable(session.current().unwrap_or("cosmoql")));
        match editor.readline(&prompt) {
            Ok(line) => {
                if line.trim().is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(line.trim_end());
                let outcome = session.run_input(&line);
                if outcome.quit {
                    code = outcome.exit_code.unwrap_or(0);
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                errln!("error: {e}");
                code = 1;
                break;
            }
        }
    }
    if let Some(path) = &history {
        let _ = editor.save_history(path);
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn helper() -> SqlHelper {
        let vocabulary = Vocabulary {
            containers: vec!["families".into(), "telemetry".into()],
            paths: vec!["deviceId".into(), "location".into(), "location.city".into()],
        };
        SqlHelper { vocabulary: Arc::new(RwLock::new(vocabulary)), functions: vec!["LOWER", "LENGTH"], colored: false }
    }

    fn complete(line: &str) -> Vec<String> {
        let history = DefaultHistory::new();
        let (start, pairs) = helper().complete(line, line.len(), &Context::new(&history)).expect("complete");
        pairs.into_iter().map(|p| format!("{}{}", &line[..start], p.replacement)).collect()
    }

    #[test]
    fn completes_commands_keywords_functions_containers_and_paths() {
        assert_eq!(complete(".cont"), vec![".containers"]);
        assert_eq!(complete(".use te"), vec![".use telemetry"]);
        assert_eq!(complete("sel"), vec!["select"]);
        assert_eq!(complete("SELECT LE"), vec!["SELECT LENGTH("]);
        assert_eq!(complete("SELECT c.loc"), vec!["SELECT c.location", "SELECT c.location.city"]);
        assert_eq!(complete("SELECT * FROM fam"), vec!["SELECT * FROM families"]);
    }

    /// Highlighting redraws the line at every keystroke: a pasted 50 KB line took 42 s. Long
    /// lines are not highlighted, so rustyline echoes their characters as they come.
    #[test]
    fn long_lines_are_not_highlighted() {
        let h = SqlHelper { colored: true, ..helper() };
        let long = format!("SELECT VALUE '{}'", "x".repeat(HIGHLIGHT_MAX_BYTES));
        assert!(!h.highlight_char(&long, long.len(), CmdKind::Other));
        assert!(matches!(h.highlight(&long, 0), Cow::Borrowed(_)));
        assert!(h.highlight_char("SELECT 1", 8, CmdKind::Other));
    }

    #[test]
    fn keywords_strings_and_numbers_are_coloured() {
        let h = highlight_sql("SELECT c.name, 'x' FROM c WHERE c.n > 10 -- hi", &["LOWER"]);
        assert!(h.contains(&format!("{}{}SELECT{}", color::BOLD, color::BLUE, color::RESET)), "{h}");
        assert!(h.contains(&format!("{}'x'{}", color::GREEN, color::RESET)), "{h}");
        assert!(h.contains(&format!("{}10{}", color::YELLOW, color::RESET)), "{h}");
        assert!(h.contains(&format!("{}-- hi{}", color::DIM, color::RESET)), "{h}");
        // A property named like a keyword stays plain.
        let h = highlight_sql("c.value", &[]);
        assert_eq!(h, "c.value");
    }
}
