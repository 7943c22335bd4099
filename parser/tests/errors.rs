//! Malformed queries: each one fails with the exact error kind, at the exact line and column, with the
//! expected message, and renders as `line L, column C: message`, the source line and a caret under the
//! offending spot.

use cosmoql_parser::{parse, parse_expression, ParseError, ParseErrorKind};

use ParseErrorKind::{
    InvalidCount, InvalidEscape, InvalidNumber, InvalidParameter, TooDeep, UnexpectedCharacter, UnexpectedEnd,
    UnexpectedToken, UnterminatedString,
};

/// What the text is parsed as.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Entry {
    Query,
    Expr,
}
use Entry::{Expr, Query};

/// One malformed input and the error it must produce.
struct Case {
    name: &'static str,
    entry: Entry,
    source: &'static str,
    kind: ParseErrorKind,
    line: usize,
    column: usize,
    /// A fragment the message must contain.
    message: &'static str,
}

const fn q(
    name: &'static str,
    source: &'static str,
    kind: ParseErrorKind,
    line: usize,
    column: usize,
    message: &'static str,
) -> Case {
    Case { name, entry: Query, source, kind, line, column, message }
}

const fn e(
    name: &'static str,
    source: &'static str,
    kind: ParseErrorKind,
    line: usize,
    column: usize,
    message: &'static str,
) -> Case {
    Case { name, entry: Expr, source, kind, line, column, message }
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    // ---- lexer errors ---------------------------------------------------------------------------
    q("unterminated single-quoted string", "SELECT 'abc FROM c",
      UnterminatedString, 1, 8, "expected a closing quote for this string, found end of input"),
    q("unterminated double-quoted string", "SELECT * FROM c WHERE c.name = \"abc",
      UnterminatedString, 1, 32, "expected a closing quote for this string, found end of input"),
    q("unterminated string spanning lines points at its opening quote", "SELECT \"abc\nFROM c",
      UnterminatedString, 1, 8, "expected a closing quote"),
    q("string ending in a backslash", "SELECT 'abc\\",
      UnterminatedString, 1, 8, "expected a closing quote"),
    q("unknown escape \\q", "SELECT \"a\\q\"",
      InvalidEscape, 1, 10, "found `\\q`"),
    q("unknown escape \\x", "SELECT 'a\\x41'",
      InvalidEscape, 1, 10, "expected an escape (\\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found `\\x`"),
    q("\\u with two hex digits", "SELECT \"\\u12\"",
      InvalidEscape, 1, 9, "expected four hex digits of a Unicode scalar after `\\u`"),
    q("\\u with non-hex digits", "SELECT 'ab\\uZZZZ'",
      InvalidEscape, 1, 11, "expected four hex digits"),
    q("lone high surrogate", "SELECT \"\\uD800\"",
      InvalidEscape, 1, 9, "expected a low surrogate `\\uDC00`-`\\uDFFF` after a high surrogate"),
    q("high surrogate followed by a non-surrogate escape", "SELECT \"\\uD83D\\u0041\"",
      InvalidEscape, 1, 9, "expected a low surrogate"),
    q("lone low surrogate", "SELECT \"\\uDC00\"",
      InvalidEscape, 1, 9, "expected a Unicode scalar, found a lone low surrogate"),
    q("exponent without digits", "SELECT 1e FROM c",
      InvalidNumber, 1, 8, "expected digits in the exponent of the number"),
    q("exponent sign without digits", "SELECT * FROM c WHERE c.a > 2.5E+",
      InvalidNumber, 1, 29, "expected digits in the exponent of the number"),
    q("number with two dots", "SELECT 1.2.3",
      InvalidNumber, 1, 8, "expected a number, found `1.2.3`"),
    q("number glued to letters", "SELECT 12abc FROM c",
      InvalidNumber, 1, 8, "expected a number, found `12abc`"),
    q("@ without a name", "SELECT * FROM c WHERE c.a = @",
      InvalidParameter, 1, 29, "expected a parameter name after `@`"),
    q("@ followed by a digit", "SELECT @1",
      InvalidParameter, 1, 8, "expected a parameter name after `@`"),
    q("hash", "SELECT # FROM c",
      UnexpectedCharacter, 1, 8, "expected a token, found `#`"),
    q("bang alone", "SELECT * FROM c WHERE ! c.a",
      UnexpectedCharacter, 1, 23, "expected a token, found `!`"),
    q("dollar", "SELECT $ FROM c",
      UnexpectedCharacter, 1, 8, "expected a token, found `$`"),
    q("control character", "SELECT \u{7} FROM c",
      UnexpectedCharacter, 1, 8, "expected a token, found U+0007"),
    q("control character inside a string", "SELECT \"a\u{1}b\"",
      UnexpectedCharacter, 1, 10, "expected a printable character in a string, found U+0001"),
    q("non-ASCII letter in an identifier", "SELECT c.naïve FROM c",
      UnexpectedCharacter, 1, 12, "expected a token, found `ï`"),
    q("lexer errors win over earlier syntax errors", "SELECT , FROM c WHERE #",
      UnexpectedCharacter, 1, 23, "found `#`"),

    // ---- missing clause parts -------------------------------------------------------------------
    q("SELECT alone", "SELECT",
      UnexpectedEnd, 1, 7, "expected an expression, `*` or VALUE, found end of input"),
    q("FROM without a source", "SELECT * FROM",
      UnexpectedEnd, 1, 14, "expected a container name, an alias or `(SELECT ...)`, found end of input"),
    q("WHERE without a condition", "SELECT * FROM c WHERE",
      UnexpectedEnd, 1, 22, "expected an expression, found end of input"),
    q("WHERE with trailing spaces and a comment", "SELECT * FROM c WHERE   -- nothing",
      UnexpectedEnd, 1, 22, "expected an expression, found end of input"),
    q("GROUP without BY", "SELECT * FROM c GROUP c.a",
      UnexpectedToken, 1, 23, "expected BY, found identifier `c`"),
    q("ORDER without BY", "SELECT * FROM c ORDER c.a",
      UnexpectedToken, 1, 23, "expected BY, found identifier `c`"),
    q("ORDER BY without items", "SELECT * FROM c ORDER BY",
      UnexpectedEnd, 1, 25, "expected an expression, found end of input"),
    q("ORDER BY with a trailing comma", "SELECT * FROM c ORDER BY c.a,",
      UnexpectedEnd, 1, 30, "expected an expression, found end of input"),
    q("GROUP BY with a trailing comma", "SELECT c.a FROM c GROUP BY c.a, ORDER BY c.a",
      UnexpectedToken, 1, 33, "expected an expression, found keyword ORDER"),
    q("OFFSET without LIMIT", "SELECT * FROM c OFFSET 1",
      UnexpectedEnd, 1, 25, "expected LIMIT, found end of input"),
    q("LIMIT without a count", "SELECT * FROM c OFFSET 1 LIMIT",
      InvalidCount, 1, 31, "expected a non-negative integer or a parameter after LIMIT, found end of input"),
    q("LIMIT without OFFSET", "SELECT * FROM c LIMIT 1",
      UnexpectedToken, 1, 17, "expected end of query, found keyword LIMIT"),
    q("TOP without a count", "SELECT TOP * FROM c",
      InvalidCount, 1, 12, "expected a non-negative integer or a parameter after TOP, found `*`"),
    q("TOP -1", "SELECT TOP -1 * FROM c",
      InvalidCount, 1, 12, "after TOP, found `-`"),
    q("TOP 1.5", "SELECT TOP 1.5 * FROM c",
      InvalidCount, 1, 12, "after TOP, found a number"),
    q("OFFSET @", "SELECT * FROM c OFFSET @ LIMIT 1",
      InvalidParameter, 1, 24, "expected a parameter name after `@`"),
    q("OFFSET with a string", "SELECT * FROM c OFFSET '1' LIMIT 1",
      InvalidCount, 1, 24, "after OFFSET, found a string"),
    q("JOIN without a source", "SELECT * FROM c JOIN",
      UnexpectedEnd, 1, 21, "expected a container name, an alias or `(SELECT ...)`, found end of input"),
    q("FROM x IN without an expression", "SELECT * FROM t IN",
      UnexpectedEnd, 1, 19, "expected an expression, found end of input"),

    // ---- misplaced clauses ----------------------------------------------------------------------
    q("WHERE after ORDER BY", "SELECT * FROM c ORDER BY c.a WHERE c.b = 1",
      UnexpectedToken, 1, 30, "expected end of query, found keyword WHERE"),
    q("two WHERE clauses", "SELECT * FROM c WHERE c.a = 1 WHERE c.b = 2",
      UnexpectedToken, 1, 31, "expected end of query, found keyword WHERE"),
    q("ORDER BY after OFFSET LIMIT", "SELECT * FROM c OFFSET 1 LIMIT 1 ORDER BY c.a",
      UnexpectedToken, 1, 34, "expected end of query, found keyword ORDER"),
    q("FROM after WHERE", "SELECT * WHERE c.a = 1 FROM c",
      UnexpectedToken, 1, 24, "expected end of query, found keyword FROM"),
    q("GROUP BY after ORDER BY", "SELECT c.a FROM c ORDER BY c.a GROUP BY c.a",
      UnexpectedToken, 1, 32, "expected end of query, found keyword GROUP"),
    q("TOP before DISTINCT", "SELECT TOP 5 DISTINCT c.a FROM c",
      UnexpectedToken, 1, 14, "expected an expression, `*` or VALUE, found keyword DISTINCT"),

    // ---- select lists ---------------------------------------------------------------------------
    q("trailing comma in the select list", "SELECT c.id, FROM c",
      UnexpectedToken, 1, 14, "found keyword FROM"),
    q("star followed by more items", "SELECT *, c.id FROM c",
      UnexpectedToken, 1, 9, "expected end of query, found `,`"),
    q("VALUE *", "SELECT VALUE * FROM c",
      UnexpectedToken, 1, 14, "expected an expression, found `*`"),
    q("VALUE with two expressions", "SELECT VALUE c.a, c.b FROM c",
      UnexpectedToken, 1, 17, "expected end of query, found `,`"),
    q("AS without an alias", "SELECT c.id AS FROM c",
      UnexpectedToken, 1, 16, "expected an alias after AS, found keyword FROM"),

    // ---- reserved words as names ----------------------------------------------------------------
    q("c.value", "SELECT c.value FROM c",
      UnexpectedToken, 1, 10,
      "expected a property name after `.`, found keyword VALUE (a reserved word; write [\"value\"] to use it as a property name)"),
    q("reserved word keeps its spelling in the hint", "SELECT c.Order FROM c",
      UnexpectedToken, 1, 10, "found keyword ORDER (a reserved word; write [\"Order\"]"),
    q("FROM alias is a reserved word", "SELECT * FROM c AS select",
      UnexpectedToken, 1, 20, "expected an alias after AS, found keyword SELECT"),
    q("select alias is a reserved word", "SELECT c.id AS top FROM c",
      UnexpectedToken, 1, 16, "expected an alias after AS, found keyword TOP"),
    q("FROM path through a reserved word", "SELECT * FROM c.order",
      UnexpectedToken, 1, 17, "expected a property name after `.`, found keyword ORDER"),
    q("property access after a trailing dot", "SELECT c.a. FROM c",
      UnexpectedToken, 1, 13, "expected a property name after `.`, found keyword FROM"),

    // ---- unbalanced parentheses, brackets, braces -----------------------------------------------
    q("unclosed parenthesis", "SELECT (1 + 2 FROM c",
      UnexpectedToken, 1, 15, "expected `)`, found keyword FROM"),
    q("unopened parenthesis", "SELECT 1 + 2) FROM c",
      UnexpectedToken, 1, 13, "expected end of query (this `)` has no matching `(`), found `)`"),
    q("unclosed array", "SELECT [1, 2 FROM c",
      UnexpectedToken, 1, 14, "expected `,` or `]` in the array, found keyword FROM"),
    q("unclosed object", "SELECT {\"a\": 1 FROM c",
      UnexpectedToken, 1, 16, "expected `,` or `}` in the object, found keyword FROM"),
    q("unclosed index", "SELECT c[\"a\" FROM c",
      UnexpectedToken, 1, 14, "expected `]`, found keyword FROM"),
    q("stray closing bracket", "SELECT ]",
      UnexpectedToken, 1, 8, "expected an expression, `*` or VALUE, found `]`"),
    q("stray closing brace", "SELECT * FROM c WHERE }",
      UnexpectedToken, 1, 23, "expected an expression, found `}`"),
    q("unclosed call", "SELECT COUNT(1 FROM c",
      UnexpectedToken, 1, 16, "expected `,` or `)` in the argument list, found keyword FROM"),
    q("unclosed FROM subquery", "SELECT * FROM (SELECT * FROM c",
      UnexpectedEnd, 1, 31, "expected `)` to close the subquery, found end of input"),
    q("unclosed scalar subquery", "SELECT (SELECT VALUE 1) + (SELECT VALUE 2 FROM c",
      UnexpectedEnd, 1, 49, "expected `)` to close the subquery, found end of input"),
    q("unclosed FROM path index", "SELECT * FROM c.tags[0",
      UnexpectedEnd, 1, 23, "expected `]`, found end of input"),

    // ---- operators ------------------------------------------------------------------------------
    q("conditional without `:`", "SELECT a ? b c",
      UnexpectedToken, 1, 14, "expected `:` of the conditional `? :`, found identifier `c`"),
    q("conditional without the else branch", "SELECT a ? b :",
      UnexpectedEnd, 1, 15, "expected an expression after `:`, found end of input"),
    q("IN without `(`", "SELECT * FROM c WHERE c.a IN 1",
      UnexpectedToken, 1, 30, "expected `(` to open the IN list, found a number"),
    q("IN with an empty list", "SELECT * FROM c WHERE c.a IN ()",
      UnexpectedToken, 1, 31, "expected an expression, found `)`"),
    q("IN list not closed", "SELECT * FROM c WHERE c.a IN (1, 2",
      UnexpectedEnd, 1, 35, "expected `,` or `)` in the IN list, found end of input"),
    q("NOT IN without `(`", "SELECT * FROM c WHERE c.a NOT IN c.b",
      UnexpectedToken, 1, 34, "expected `(` to open the IN list, found identifier `c`"),
    q("chained IN", "SELECT * FROM c WHERE c.a IN (1) IN (2)",
      UnexpectedToken, 1, 34, "the end of the IN expression (put the IN expression in parentheses to use its result as an operand), found keyword IN"),
    q("chained NOT IN", "SELECT * FROM c WHERE c.a NOT IN (1) NOT IN (2)",
      UnexpectedToken, 1, 38, "or the end of the IN expression (put the IN expression in parentheses to use its result as an operand), found keyword NOT"),
    q("chained IN after a unary minus", "SELECT VALUE -a IN (1) IN (2)",
      UnexpectedToken, 1, 24, "or the end of the IN expression (put the IN expression in parentheses to use its result as an operand), found keyword IN"),
    q("chained LIKE", "SELECT * FROM c WHERE c.a LIKE 'a' LIKE 'b'",
      UnexpectedToken, 1, 36, "or the end of the LIKE expression (put the LIKE expression in parentheses to use its result as an operand), found keyword LIKE"),
    q("BETWEEN without AND", "SELECT * FROM c WHERE c.a BETWEEN 1",
      UnexpectedEnd, 1, 36, "expected AND, found end of input"),
    q("BETWEEN with OR instead of AND", "SELECT * FROM c WHERE c.a BETWEEN 1 OR 2",
      UnexpectedToken, 1, 37, "expected AND, found keyword OR"),
    q("BETWEEN without an upper bound", "SELECT * FROM c WHERE c.a BETWEEN 1 AND",
      UnexpectedEnd, 1, 40, "expected the upper bound after AND, found end of input"),
    q("chained IN on the right of AND", "SELECT * FROM c WHERE c.a = 1 AND c.b IN (1) IN (2)",
      UnexpectedToken, 1, 46, "or the end of the IN expression (put the IN expression in parentheses to use its result as an operand), found keyword IN"),
    q("chained LIKE on the right of OR", "SELECT * FROM c WHERE c.x OR c.y LIKE 'a' LIKE 'b'",
      UnexpectedToken, 1, 43, "or the end of the LIKE expression (put the LIKE expression in parentheses to use its result as an operand), found keyword LIKE"),
    q("chained IN under NOT", "SELECT * FROM c WHERE NOT c.a IN (1) IN (2)",
      UnexpectedToken, 1, 38, "or the end of the IN expression (put the IN expression in parentheses to use its result as an operand), found keyword IN"),
    q("chained BETWEEN after ??", "SELECT VALUE a ?? b BETWEEN 1 AND 2 BETWEEN 3 AND 4",
      UnexpectedToken, 1, 37, "or the end of the BETWEEN expression (put the BETWEEN expression in parentheses to use its result as an operand), found keyword BETWEEN"),
    q("IN result as the left operand of =", "SELECT * FROM c WHERE c.a IN (1) = true",
      UnexpectedToken, 1, 34, "or the end of the IN expression (put the IN expression in parentheses to use its result as an operand), found `=`"),
    q("IN result as the left operand of ||", "SELECT VALUE c.a NOT IN (1) || 'x'",
      UnexpectedToken, 1, 29, "found `||`"),
    q("LIKE ... ESCAPE result as the left operand of +", "SELECT VALUE c.a LIKE 'x' ESCAPE '!' + 1",
      UnexpectedToken, 1, 38, "or the end of the LIKE expression"),
    q("ESCAPE with two characters", "SELECT * FROM c WHERE c.a LIKE 'x%' ESCAPE 'ab'",
      UnexpectedToken, 1, 44, "expected a one-character string after ESCAPE, found a string"),
    q("ESCAPE with an empty string", "SELECT * FROM c WHERE c.a LIKE 'x%' ESCAPE ''",
      UnexpectedToken, 1, 44, "expected a one-character string after ESCAPE"),
    q("TOP with a fraction that is integral", "SELECT TOP 1.0 * FROM c",
      InvalidCount, 1, 12, "expected a non-negative integer or a parameter after TOP, found a number"),
    q("TOP with an exponent", "SELECT TOP 1e2 * FROM c",
      InvalidCount, 1, 12, "after TOP, found a number"),
    q("LIMIT past u64", "SELECT * FROM c OFFSET 0 LIMIT 18446744073709551616",
      InvalidCount, 1, 32, "after LIMIT, found a number"),
    q("FROM path index with an exponent", "SELECT * FROM c.a[1e0]",
      UnexpectedToken, 1, 19, "expected a string or a non-negative integer in a FROM path"),
    q("alias that is a reserved word gets an alias hint", "SELECT * FROM c AS select",
      UnexpectedToken, 1, 20, "expected an alias after AS, found keyword SELECT (a reserved word; choose another name)"),
    q("second select item", "SELECT c.id, FROM c",
      UnexpectedToken, 1, 14, "expected an expression, found keyword FROM"),
    q("LIKE with a non-string ESCAPE", "SELECT * FROM c WHERE c.a LIKE 'x%' ESCAPE 1",
      UnexpectedToken, 1, 44, "expected a one-character string after ESCAPE, found a number"),
    q("LIKE without a pattern", "SELECT * FROM c WHERE c.a LIKE",
      UnexpectedEnd, 1, 31, "expected a pattern after LIKE, found end of input"),
    q("NOT alone", "SELECT * FROM c WHERE NOT",
      UnexpectedEnd, 1, 26, "expected an expression after the operator, found end of input"),
    q("NOT followed by a non-comparison keyword", "SELECT * FROM c WHERE c.a NOT = 1",
      UnexpectedToken, 1, 27, "expected end of query, found keyword NOT"),
    q("binary operator without a right operand", "SELECT 1 +",
      UnexpectedEnd, 1, 11, "expected an expression after the operator, found end of input"),
    q("two operators in a row", "SELECT * FROM c WHERE c.a = = 1",
      UnexpectedToken, 1, 29, "expected an expression after the operator, found `=`"),
    q("udf without `.`", "SELECT udf FROM c",
      UnexpectedToken, 1, 12, "expected `.` after udf, found keyword FROM"),
    q("udf.name without a call", "SELECT udf.f FROM c",
      UnexpectedToken, 1, 14, "expected `(` to call the user-defined function, found keyword FROM"),
    q("EXISTS without `(`", "SELECT * FROM c WHERE EXISTS c.a",
      UnexpectedToken, 1, 30, "expected `(` after EXISTS, found identifier `c`"),
    q("EXISTS without a subquery", "SELECT * FROM c WHERE EXISTS(c.a)",
      UnexpectedToken, 1, 30, "expected a subquery `SELECT ...` inside EXISTS(...), found identifier `c`"),
    q("ARRAY(1)", "SELECT ARRAY(1) FROM c",
      UnexpectedToken, 1, 14, "expected a subquery `SELECT ...` inside ARRAY(...), found a number"),
    q("object constructor with a number key", "SELECT {1: 2} FROM c",
      UnexpectedToken, 1, 9, "expected a property name, found a number"),
    q("object constructor without `:`", "SELECT {\"a\" 1} FROM c",
      UnexpectedToken, 1, 13, "expected `:` after the property name, found a number"),
    q("object constructor with a reserved-word key", "SELECT {value: 1} FROM c",
      UnexpectedToken, 1, 9, "expected a property name, found keyword VALUE"),
    q("FROM path with a fractional index", "SELECT * FROM c[1.5]",
      UnexpectedToken, 1, 17, "expected a string or a non-negative integer in a FROM path, found a number"),
    q("FROM path with a parameter index", "SELECT * FROM c[@p]",
      UnexpectedToken, 1, 17, "expected a string or a non-negative integer in a FROM path, found parameter `@p`"),
    q("FROM path with a negative index", "SELECT * FROM c.tags[-1]",
      UnexpectedToken, 1, 22, "found `-`"),

    // ---- positions: several lines, comments, tabs, non-ASCII ------------------------------------
    q("error on line 2", "SELECT c.id,\n       FROM c",
      UnexpectedToken, 2, 8, "found keyword FROM"),
    q("lexer error on line 3", "SELECT *\nFROM c\nWHERE c.a = #",
      UnexpectedCharacter, 3, 13, "expected a token, found `#`"),
    q("error at the start of line 4", "SELECT *\nFROM c\nWHERE c.a =\nORDER BY c.a",
      UnexpectedToken, 4, 1, "expected an expression after the operator, found keyword ORDER"),
    q("error after comment lines", "-- list items\nSELECT *\nFROM c -- the container\nWHERE c.a IN 1",
      UnexpectedToken, 4, 14, "expected `(` to open the IN list, found a number"),
    q("comment text is not lexed", "SELECT * -- it's #1 \"\nFROM c WHERE",
      UnexpectedEnd, 2, 13, "expected an expression, found end of input"),
    q("CRLF line breaks", "SELECT *\r\nFROM c\r\nWHERE #",
      UnexpectedCharacter, 3, 7, "found `#`"),
    q("end of input after a final line break", "SELECT *\nFROM c\nWHERE\n",
      UnexpectedEnd, 3, 6, "expected an expression, found end of input"),
    q("tabs count as one column", "SELECT\t*\tFROM c WHERE c.a = #",
      UnexpectedCharacter, 1, 29, "found `#`"),
    q("non-ASCII before the error counts characters", "SELECT * FROM c WHERE c.name = \"Zoë😀\" AND AND c.x",
      UnexpectedToken, 1, 43, "expected an expression after the operator, found keyword AND"),
    q("non-ASCII on an earlier line does not shift the column", "SELECT \"日本語\" AS s\nFROM c WHERE c.a IN 1",
      UnexpectedToken, 2, 21, "expected `(` to open the IN list"),

    // ---- lone expressions -----------------------------------------------------------------------
    e("two expressions", "1 2",
      UnexpectedToken, 1, 3, "expected end of expression, found a number"),
    e("unmatched `)` in an expression", "(1))",
      UnexpectedToken, 1, 4, "expected end of expression (this `)` has no matching `(`), found `)`"),
    e("empty expression", "",
      UnexpectedEnd, 1, 1, "expected an expression, found end of input"),
    e("keyword where an expression is expected", "1 + SELECT",
      UnexpectedToken, 1, 5, "expected an expression after the operator, found keyword SELECT"),
];

fn run(case: &Case) -> Result<String, ParseError> {
    match case.entry {
        Query => parse(case.source).map(|q| q.to_string()),
        Expr => parse_expression(case.source).map(|e| e.to_string()),
    }
}

/// 1-based line and column (in characters) of byte offset `at`, computed independently of the crate.
fn line_col(source: &str, at: usize) -> (usize, usize) {
    let before = &source[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, source[line_start..at].chars().count() + 1)
}

/// Checks everything about one error; returns the mismatches.
fn check(case: &Case, err: &ParseError) -> Vec<String> {
    let mut problems = Vec::new();
    if err.kind != case.kind {
        problems.push(format!("kind {:?}, expected {:?}", err.kind, case.kind));
    }
    if (err.line, err.column) != (case.line, case.column) {
        problems.push(format!(
            "at line {}, column {}, expected line {}, column {}",
            err.line, err.column, case.line, case.column
        ));
    }
    if !err.message.contains(case.message) {
        problems.push(format!("message {:?} lacks {:?}", err.message, case.message));
    }
    // The span agrees with line and column.
    let start = err.span.range().start;
    if start > case.source.len() || !case.source.is_char_boundary(start) {
        problems.push(format!("span {:?} is not inside the source", err.span));
    } else if line_col(case.source, start) != (err.line, err.column) {
        problems.push(format!(
            "span {:?} starts at {:?}, but the error says line {}, column {}",
            err.span,
            line_col(case.source, start),
            err.line,
            err.column
        ));
    }
    if err.span.range().end < start || err.span.range().end > case.source.len() {
        problems.push(format!("span {:?} ends outside the source", err.span));
    }
    // The rendered form: `line L, column C: message`, the source line, then a caret under the spot.
    let rendered = err.to_string();
    let mut lines: Vec<&str> = rendered.split('\n').collect();
    // A hint (a habit from another SQL dialect) is one more line, after the caret.
    if let Some(hint) = &err.hint {
        if lines.last() != Some(&format!("hint: {hint}").as_str()) {
            problems.push(format!("the hint is not the last rendered line: {rendered:?}"));
        }
        lines.pop();
    }
    let prefix = format!("line {}, column {}: ", err.line, err.column);
    if lines.first() != Some(&format!("{prefix}{}", err.message).as_str()) {
        problems.push(format!("first rendered line is {:?}", lines.first()));
    }
    let source_line = case.source.split('\n').nth(err.line - 1).unwrap_or("").trim_end_matches('\r');
    if lines.len() != 3 {
        problems.push(format!("rendered {} lines: {rendered:?}", lines.len()));
    } else {
        if lines[1] != source_line {
            problems.push(format!("source line rendered as {:?}, expected {source_line:?}", lines[1]));
        }
        let pad: String =
            source_line.chars().take(err.column - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        let caret = lines[2];
        match caret.strip_prefix(pad.as_str()) {
            Some(carets) if !carets.is_empty() && carets.chars().all(|c| c == '^') => {
                // The carets never run past the line (except one for an error at its end).
                let room = source_line.chars().count() + 1 - err.column;
                if carets.len() > room.max(1) {
                    problems.push(format!("{} carets, but only {room} characters left on the line", carets.len()));
                }
            }
            _ => problems.push(format!(
                "caret line {caret:?} does not start with {} padding characters then carets",
                err.column - 1
            )),
        }
    }
    problems
}

#[test]
fn every_malformed_input_fails_exactly_as_expected() {
    assert!(CASES.len() >= 45, "only {} cases", CASES.len());
    let mut failures = Vec::new();
    for case in CASES {
        match run(case) {
            Ok(printed) => failures.push(format!(
                "{}: {:?} parsed (as {printed:?}), expected {:?} at {}:{}",
                case.name, case.source, case.kind, case.line, case.column
            )),
            Err(err) => {
                let problems = check(case, &err);
                if !problems.is_empty() {
                    failures.push(format!("{}: {:?}\n  {}\n{err}", case.name, case.source, problems.join("\n  ")));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n\n{}", failures.len(), CASES.len(), failures.join("\n\n"));
}

#[test]
fn case_names_are_unique() {
    let mut names: Vec<_> = CASES.iter().map(|c| c.name).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "duplicate case names");
}

#[test]
fn too_deep_nesting_is_an_error_not_a_crash() {
    let source = format!("SELECT {}1{}", "(".repeat(300), ")".repeat(300));
    let err = parse(&source).unwrap_err();
    assert_eq!(err.kind, TooDeep);
    assert_eq!(err.line, 1);
    assert!(err.message.contains("nests deeper than 128 levels"), "{}", err.message);
    // The error points at one of the parentheses, not past them.
    assert!(err.column > 8 && err.column <= 8 + 300, "{err}");
    assert_eq!(&source[err.span.range()], "(");
    assert!(err.to_string().starts_with(&format!("line 1, column {}: ", err.column)));
}

#[test]
fn too_long_operator_chain_is_an_error_not_a_crash() {
    let source = format!("SELECT VALUE 1{}", " + 1".repeat(2000));
    let err = parse(&source).unwrap_err();
    assert_eq!(err.kind, TooDeep);
    assert!(err.message.contains("more than 512 operators deep"), "{}", err.message);
    assert!(err.to_string().starts_with(&format!("line 1, column {}: ", err.column)));
}

// ---- the rendered form -------------------------------------------------------------------------

#[test]
fn renders_message_source_line_and_caret_exactly() {
    let err = parse("SELECT c.id,  FROM c").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 1, column 15: expected an expression, found keyword FROM\n\
         SELECT c.id,  FROM c\n\
         \x20             ^^^^"
    );
}

#[test]
fn renders_only_the_offending_line_of_a_multi_line_query() {
    let err = parse("SELECT *\nFROM c\nWHERE c.a IN 1\nORDER BY c.a").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 3, column 14: expected `(` to open the IN list, found a number\n\
         WHERE c.a IN 1\n\
         \x20            ^"
    );
}

#[test]
fn caret_covers_the_whole_offending_token() {
    let err = parse("SELECT * FROM c WHERE c.a = 1 WHERE c.b = 2").unwrap_err();
    let rendered = err.to_string();
    let lines: Vec<&str> = rendered.lines().collect();
    let caret_at = lines[2].find('^').unwrap();
    assert_eq!(caret_at, err.column - 1);
    assert_eq!(&lines[1][caret_at..caret_at + 5], "WHERE");
    assert_eq!(lines[2].trim_start(), "^^^^^");
    assert_eq!(&"SELECT * FROM c WHERE c.a = 1 WHERE c.b = 2"[err.span.range()], "WHERE");
}

#[test]
fn caret_covers_a_bad_number_and_a_bad_escape() {
    let err = parse("SELECT 12abc FROM c").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 1, column 8: expected a number, found `12abc`\nSELECT 12abc FROM c\n       ^^^^^"
    );
    let err = parse("SELECT 'a\\qb'").unwrap_err();
    assert_eq!(err.span.range(), 9..11);
    assert!(err.to_string().ends_with("\n         ^^"), "{err}");
}

#[test]
fn caret_keeps_tabs_so_it_lines_up() {
    let source = "SELECT\t*\tFROM c WHERE c.a = #";
    let err = parse(source).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("line 1, column 29: expected a token, found `#`\n{source}\n      \t \t                   ^")
    );
}

#[test]
fn caret_counts_characters_not_bytes() {
    let source = "SELECT * FROM c WHERE c.name = \"Zoë😀\" AND AND c.x";
    let err = parse(source).unwrap_err();
    assert_eq!(err.column, 43);
    // The span is in bytes: ë is two bytes and 😀 four.
    assert_eq!(err.span.range(), 46..49);
    assert_eq!(&source[err.span.range()], "AND");
    let rendered = err.to_string();
    let caret_line = rendered.lines().nth(2).unwrap();
    assert_eq!(caret_line, format!("{}^^^", " ".repeat(42)));
    // Under the second AND, counting characters.
    let source_line = rendered.lines().nth(1).unwrap();
    let under: String = source_line.chars().skip(42).take(3).collect();
    assert_eq!(under, "AND");
}

#[test]
fn caret_at_end_of_input_is_one_past_the_line() {
    let err = parse("SELECT * FROM c WHERE").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 1, column 22: expected an expression, found end of input\n\
         SELECT * FROM c WHERE\n\
         \x20                    ^"
    );
}

#[test]
fn caret_of_an_unterminated_string_stays_on_its_line() {
    let err = parse("SELECT 'abc\nFROM c").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 1, column 8: expected a closing quote for this string, found end of input\n\
         SELECT 'abc\n\
         \x20      ^"
    );
}

#[test]
fn long_lines_render_a_window_with_the_caret_under_the_spot() {
    let source = format!("SELECT VALUE {}#{}", "c.a + ".repeat(40), " + 1".repeat(40));
    let err = parse(&source).unwrap_err();
    assert_eq!(err.kind, UnexpectedCharacter);
    assert_eq!((err.line, err.column), (1, 14 + 6 * 40));
    let rendered = err.to_string();
    let lines: Vec<&str> = rendered.split('\n').collect();
    assert_eq!(lines.len(), 3, "{rendered}");
    assert_eq!(lines[0], format!("line 1, column {}: expected a token, found `#`", err.column));
    assert!(lines[1].starts_with("...") && lines[1].ends_with("..."), "{rendered}");
    assert!(lines[1].chars().count() < source.chars().count(), "{rendered}");
    let caret_at = lines[2].find('^').unwrap();
    assert_eq!(lines[2].trim_start(), "^");
    assert_eq!(lines[1].chars().nth(caret_at), Some('#'), "{rendered}");
}

#[test]
fn parenthesized_expressions_span_their_parentheses() {
    let source = "(1 + 2) * -(-1)";
    let expr = parse_expression(source).unwrap();
    assert_eq!(expr.span.range(), 0..source.len());
    let cosmoql_parser::ExprKind::Binary { left, right, .. } = &expr.kind else { panic!("{expr:?}") };
    assert_eq!(&source[left.span.range()], "(1 + 2)");
    assert_eq!(&source[right.span.range()], "-(-1)");
}

#[test]
fn large_integer_counts_are_exact() {
    let q = parse("SELECT TOP 9007199254740993 * FROM c OFFSET 18446744073709551615 LIMIT 0").unwrap();
    assert_eq!(q.to_string(), "SELECT TOP 9007199254740993 * FROM c OFFSET 18446744073709551615 LIMIT 0");
}

#[test]
fn nan_and_infinity_are_case_sensitive_literals() {
    let q = parse("SELECT VALUE [NaN, Infinity, -Infinity, nan, 1e999]").unwrap();
    assert_eq!(q.to_string(), "SELECT VALUE [NaN, Infinity, -Infinity, nan, Infinity]");
    assert_eq!(parse(&q.to_string()).unwrap(), q);
    let err = parse("SELECT c.NaN FROM c").unwrap_err();
    assert_eq!((err.line, err.column), (1, 10));
}

#[test]
fn order_by_rank_takes_a_scoring_function() {
    let q = parse("SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'bike', 'road')").unwrap();
    assert!(q.order_by_rank);
    assert_eq!(q.to_string(), "SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.text, \"bike\", \"road\")");
    assert_eq!(parse(&q.to_string()).unwrap(), q);
    // Without a call after it, `rank` is an ordinary name.
    let q = parse("SELECT * FROM c ORDER BY rank").unwrap();
    assert!(!q.order_by_rank);
    let q = parse("SELECT * FROM c ORDER BY c.rank DESC").unwrap();
    assert!(!q.order_by_rank);
}

#[test]
fn habits_from_other_dialects_get_a_hint_after_the_caret() {
    for (source, hint) in [
        ("SELECT * FROM c LIMIT 10", "write OFFSET 0 LIMIT 10, or SELECT TOP 10"),
        ("SELECT * FROM c WHERE c.a = 1 ORDER BY c.b LIMIT @n", "OFFSET 0 LIMIT @n"),
        ("SELECT COUNT(*) FROM c", "counts with COUNT(1)"),
        ("SELECT count( *) AS n FROM c", "counts with count(1)"),
        ("INSERT INTO c VALUES (1)", "there is no INSERT"),
        ("update c SET c.a = 1", "there is no UPDATE"),
        ("DELETE FROM c", "there is no DELETE"),
        ("CREATE TABLE t (a int)", "there is no CREATE"),
    ] {
        let err = parse(source).unwrap_err();
        let got = err.hint.clone().unwrap_or_default();
        assert!(got.contains(hint), "{source}: hint {got:?}, expected it to say {hint:?}");
        assert!(err.to_string().ends_with(&format!("\nhint: {got}")), "{err}");
        // The message stays the syntax error the service answers with.
        assert!(!err.message.contains("hint"), "{}", err.message);
    }
    // No hint where none is due.
    for source in ["SELECT * FROM c OFFSET 1 LIMIT", "SELECT * FROM c WHERE", "SELECT SUM(*) FROM c", "SELEC 1"] {
        let err = parse(source).unwrap_err();
        assert_eq!(err.hint, None, "{source}: {err}");
    }
}
