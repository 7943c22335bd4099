//! Habits of other SQL dialects, recognized where they make a syntax error: `LIMIT n` without
//! `OFFSET` (or before it), `COUNT(*)`, `==`, `IS NULL`, and statements that write (`INSERT`,
//! `UPDATE`, `DELETE`), define (`CREATE`, `DROP`) or list (`SHOW`) in a language that only
//! reads. The error stays the service's (a syntax error); the hint says what the Cosmos DB form
//! is. Tools add their own ways to do what a statement asked ([`statement_habit`]).

use crate::error::ParseError;

/// What a statement that Cosmos DB's SQL does not have asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatementHabit {
    /// `INSERT`, `UPSERT`: write new items.
    Insert,
    /// `UPDATE`, `REPLACE`, `MERGE`: change items.
    Update,
    /// `DELETE`: remove items.
    Delete,
    /// `CREATE`, `ALTER`: define a container.
    Create,
    /// `DROP`, `TRUNCATE`: remove a container or its items.
    Drop,
    /// `SHOW`, `DESCRIBE`, `USE`: list or pick containers.
    Show,
}

/// The statement habit `source` starts with (its first word, any case), and that word.
pub fn statement_habit(source: &str) -> Option<(StatementHabit, String)> {
    let word: String = source.trim_start().chars().take_while(char::is_ascii_alphabetic).collect();
    let verb = word.to_ascii_uppercase();
    let habit = match verb.as_str() {
        "INSERT" | "UPSERT" => StatementHabit::Insert,
        "UPDATE" | "REPLACE" | "MERGE" => StatementHabit::Update,
        "DELETE" => StatementHabit::Delete,
        "CREATE" | "ALTER" => StatementHabit::Create,
        "DROP" | "TRUNCATE" => StatementHabit::Drop,
        "SHOW" | "DESCRIBE" | "USE" => StatementHabit::Show,
        _ => return None,
    };
    Some((habit, verb))
}

/// The hint for `error` in `source`, if the mistake is one of those habits.
pub(crate) fn hint(source: &str, error: &ParseError) -> Option<String> {
    let start = error.span.start.min(source.len());
    let at = source.get(start..)?;
    let before = source.get(..start)?.trim_end();
    let word: String = at.chars().take_while(|c| c.is_ascii_alphabetic()).collect::<String>().to_ascii_uppercase();
    // The statement's first word.
    if before.is_empty() {
        let (habit, verb) = statement_habit(at)?;
        return Some(match habit {
            StatementHabit::Insert | StatementHabit::Update | StatementHabit::Delete => format!(
                "Cosmos DB's SQL only reads: there is no {verb}. Items are written one at a time with the item \
                 operations (create, upsert, replace, patch, delete) or several at once in a transactional batch"
            ),
            StatementHabit::Create | StatementHabit::Drop => format!(
                "Cosmos DB's SQL only reads: there is no {verb}. Databases and containers are created and deleted \
                 through the API, not by queries"
            ),
            StatementHabit::Show => {
                format!("Cosmos DB's SQL only reads items: there is no {verb}. The API lists databases and containers")
            }
        });
    }
    if word == "LIMIT" && !has_word(before, "OFFSET") {
        let n = count_after(&at[5..]).unwrap_or_else(|| "N".into());
        // `LIMIT 3 OFFSET 2` (PostgreSQL's order): the offset comes first.
        let after = at[5..].trim_start().get(n.len()..).unwrap_or("").trim_start();
        let offset = match after.get(..6) {
            Some(w) if w.eq_ignore_ascii_case("OFFSET") => count_after(&after[6..]),
            _ => None,
        };
        return Some(match offset {
            Some(m) => format!("Cosmos DB takes OFFSET before LIMIT: write OFFSET {m} LIMIT {n}"),
            None => format!("Cosmos DB takes LIMIT only after OFFSET: write OFFSET 0 LIMIT {n}, or SELECT TOP {n} ..."),
        });
    }
    if word == "IS" {
        let not = at[2..].trim_start().get(..3).is_some_and(|w| w.eq_ignore_ascii_case("NOT"));
        let operand = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("x");
        return Some(if not {
            format!(
                "Cosmos DB has no IS NOT NULL: write {operand} != null (or IS_DEFINED({operand}) AND NOT \
                 IS_NULL({operand}): NOT IS_NULL alone is true where the property is missing)"
            )
        } else {
            format!(
                "Cosmos DB has no IS NULL: write IS_NULL({operand}), or {operand} = null (IS_DEFINED({operand}) says \
                 whether it is there at all)"
            )
        });
    }
    if at.starts_with('=') && before.ends_with('=') {
        return Some("Cosmos DB compares with a single =".into());
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

/// The count written at the start of `text` (a number or a parameter).
fn count_after(text: &str) -> Option<String> {
    let count: String =
        text.trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '@' || c.is_alphanumeric()).collect();
    (!count.is_empty()).then_some(count)
}

/// Whether `text` has `word` as a whole word, in any case (a rough look is enough for a hint).
fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|w| w.eq_ignore_ascii_case(word))
}
