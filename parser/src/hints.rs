//! Hints for syntax errors that come from habits of other SQL dialects: `LIMIT n` without
//! `OFFSET`, `COUNT(*)`, and statements that write (`INSERT`, `UPDATE`, `DELETE`) or define
//! (`CREATE`, `DROP`) in a language that only reads. The error stays the service's (a syntax
//! error); the hint says what the Cosmos DB form is.

use crate::error::ParseError;

/// The hint for `error` in `source`, if the mistake is one of those habits.
pub(crate) fn hint(source: &str, error: &ParseError) -> Option<String> {
    let at = source.get(error.span.start.min(source.len())..)?;
    let word: String = at.chars().take_while(|c| c.is_ascii_alphabetic()).collect::<String>().to_ascii_uppercase();
    let before = source.get(..error.span.start.min(source.len()))?.trim_end();
    // The statement's first word.
    if before.is_empty() {
        return match word.as_str() {
            "INSERT" | "UPDATE" | "DELETE" | "UPSERT" | "REPLACE" | "MERGE" => Some(format!(
                "Cosmos DB's SQL only reads: there is no {word}. Items are written one at a time with the item \
                 operations (create, upsert, replace, patch, delete) or several at once in a transactional batch"
            )),
            "CREATE" | "DROP" | "ALTER" | "TRUNCATE" => Some(format!(
                "Cosmos DB's SQL only reads: there is no {word}. Databases and containers are created and deleted \
                 through the API, not by queries"
            )),
            _ => None,
        };
    }
    if word == "LIMIT" && !has_word(before, "OFFSET") {
        let count: String = at[5..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '@' || c.is_alphanumeric())
            .collect();
        let n = if count.is_empty() { "N".to_string() } else { count };
        return Some(format!(
            "Cosmos DB takes LIMIT only after OFFSET: write OFFSET 0 LIMIT {n}, or SELECT TOP {n} ..."
        ));
    }
    if at.starts_with('*') {
        let call = before.strip_suffix('(')?.trim_end();
        let name: String = call.chars().rev().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let name: String = name.chars().rev().collect();
        if name.eq_ignore_ascii_case("COUNT") {
            return Some(format!(
                "Cosmos DB counts with {name}(1) (every item), or {name}(c.path) (the items that have the path)"
            ));
        }
    }
    None
}

/// Whether `text` has `word` as a whole word, in any case (outside nothing: a rough look is
/// enough for a hint).
fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|w| w.eq_ignore_ascii_case(word))
}
