//! Snapshots of the syntax tree (with spans) and the printed form of one query or expression per
//! grammar feature. Each snapshot holds the source, the printed SQL and the tree; every case also
//! checks that the printed form parses back to the same tree.
//!
//! To accept changed snapshots: `INSTA_UPDATE=always cargo test -p cosmoql-parser --test snapshots_ast`,
//! then read the `.snap` files under `tests/snapshots/`.

use std::fmt::{Debug, Display};

use cosmoql_parser::{parse, parse_expression, ParseError};

/// What a snapshot records.
#[derive(Debug)]
#[allow(dead_code)] // Read through `Debug` only.
struct Snapshot<'a, T> {
    source: &'a str,
    printed: String,
    ast: T,
}

fn check<T>(name: &str, source: &str, parser: fn(&str) -> Result<T, ParseError>)
where
    T: Debug + Display + PartialEq,
{
    let ast = parser(source).unwrap_or_else(|e| panic!("{name}: {source:?} does not parse:\n{e}"));
    let printed = ast.to_string();
    let again = parser(&printed).unwrap_or_else(|e| panic!("{name}: printed form {printed:?} does not parse:\n{e}"));
    assert_eq!(again, ast, "{name}: printing {source:?} as {printed:?} changed the tree");
    assert_eq!(again.to_string(), printed, "{name}: printing is not stable");
    insta::assert_debug_snapshot!(name, Snapshot { source, printed, ast });
}

macro_rules! query_snapshots {
    ($($name:ident: $source:expr,)*) => {
        $(
            #[test]
            fn $name() {
                check(concat!("query_", stringify!($name)), $source, parse);
            }
        )*
    };
}

macro_rules! expr_snapshots {
    ($($name:ident: $source:expr,)*) => {
        $(
            #[test]
            fn $name() {
                check(concat!("expr_", stringify!($name)), $source, parse_expression);
            }
        )*
    };
}

query_snapshots! {
    // ---- SELECT -------------------------------------------------------------------------------
    select_star: "SELECT * FROM Families",
    select_value: "SELECT VALUE c.name FROM c",
    select_list_with_and_without_as: "SELECT c.id, c.name AS n, c.age years FROM c",
    select_distinct_value: "SELECT DISTINCT VALUE c.city FROM c",
    select_distinct_list: "SELECT DISTINCT c.city, c.state FROM c",
    select_top_literal: "SELECT TOP 10 * FROM c",
    select_distinct_top_parameter: "SELECT DISTINCT TOP @n c.id FROM c",
    select_without_from: "SELECT 1 AS one, 'x' AS two",
    select_subquery_expressions: "SELECT c.id, ARRAY(SELECT VALUE t FROM t IN c.tags) AS tags, EXISTS(SELECT VALUE 1 FROM t IN c.tags WHERE t = 'a') AS has_a, (SELECT VALUE COUNT(1) FROM t IN c.tags) AS n FROM c",

    // ---- FROM and JOIN ------------------------------------------------------------------------
    from_container: "SELECT c.id FROM c",
    from_alias_with_as: "SELECT f.id FROM Families AS f",
    from_alias_without_as: "SELECT f.id FROM Families f",
    from_root: "SELECT * FROM ROOT r",
    from_path_with_index_and_key: "SELECT * FROM c.children[0][\"first name\"]",
    from_path_aliased: "SELECT VALUE city FROM c.address.city AS city",
    from_iteration: "SELECT VALUE child FROM child IN Families.children",
    join_iteration: "SELECT c.id, t FROM c JOIN t IN c.tags",
    join_aliased_path: "SELECT c.id, a.city FROM c JOIN c.address AS a",
    several_joins: "SELECT f.id, ch.givenName, p.givenName AS pet FROM Families f JOIN ch IN f.children JOIN p IN ch.pets",
    from_subquery: "SELECT s.id FROM (SELECT VALUE c FROM c WHERE c.active) AS s",
    join_subquery: "SELECT c.id FROM c JOIN (SELECT VALUE t FROM t IN c.tags WHERE t = 'a') t",

    // ---- WHERE, GROUP BY, ORDER BY, OFFSET LIMIT ------------------------------------------------
    where_clause: "SELECT * FROM c WHERE c.qty > 10 AND c.kind = 'book'",
    group_by: "SELECT c.city, COUNT(1) AS n FROM c GROUP BY c.city",
    group_by_several: "SELECT c.city, c.state, SUM(c.pop) AS pop FROM c GROUP BY c.city, c.state",
    order_by_several_directions: "SELECT * FROM c ORDER BY c.last ASC, c.first DESC, c.id",
    offset_limit_literals: "SELECT * FROM c ORDER BY c.id OFFSET 10 LIMIT 5",
    offset_limit_parameters: "SELECT * FROM c OFFSET @skip LIMIT @take",
    all_clauses: "SELECT DISTINCT TOP 5 c.city AS city FROM c JOIN t IN c.tags WHERE t = @tag GROUP BY c.city ORDER BY c.city DESC OFFSET 0 LIMIT 5",

    // ---- lexical ------------------------------------------------------------------------------
    comments: "-- all books\nSELECT c.id -- the id\nFROM c --the container\nWHERE c.kind = 'book' -- filter",
    keywords_any_case: "select distinct top 3 value c.a from c join t in c.tags where c.a between 1 and 2 and not c.b or c.c like 'x' escape '!' group by c.a order by c.a desc offset 0 limit 3",
    case_sensitive_literal_words: "SELECT VALUE [true, TRUE, false, False, null, NULL, undefined, Undefined]",
}

expr_snapshots! {
    // ---- paths ----------------------------------------------------------------------------------
    property_path: "c.address.city",
    bracket_string_key: "c[\"a b\"]",
    bracket_index: "c.tags[0]",
    bracket_parameter: "c[@key]",
    bracket_expression: "c[c.field || \"_x\"]",
    postfix_on_constructors: "{a: [1, 2]}.a[0]",

    // ---- literals -------------------------------------------------------------------------------
    literal_numbers: "[0, 42, 1.5, .5, 2., 1e3, 2.5E-2, 1e+2]",
    literal_strings: "[\"double\", 'single', \"it's\", 'say \"hi\"', '']",
    literal_string_escapes: "\"q\\\" a\\' b\\\\ s\\/ b\\b f\\f n\\n r\\r t\\t\"",
    literal_unicode_escapes: "['\\u00e9', \"\\uD83D\\uDE00\", \"\\u0001\", 'é😀']",
    literal_words: "[true, false, null, undefined]",

    // ---- constructors and parameters -------------------------------------------------------------
    array_constructor: "[1, [2, 3], [], c.a]",
    object_constructor: "{a: 1, \"b c\": [2], nested: {}, \"\": null}",
    parameter: "@p",

    // ---- unary operators ------------------------------------------------------------------------
    unary_operators: "[-a, +a, ~a, NOT a]",
    unary_nested: "[- -a, -(-1), NOT NOT a, ~-a]",
    negative_number: "-1",

    // ---- binary operator groups -------------------------------------------------------------------
    multiplicative: "a * b / c % d",
    additive: "a + b - c",
    shift: "a << 1 >> 2 >>> 3",
    relational: "[a < b, a <= b, a > b, a >= b]",
    equality: "[a = b, a != b, a <> b]",
    bitwise: "a | b ^ c & d",
    concat: "a || b || c",
    logical: "a AND b OR c AND d",
    coalesce: "a ?? b ?? c",
    conditional_nested: "a ? b ? c : d : e ? f : g",

    // ---- one precedence example per level ---------------------------------------------------------
    precedence_multiplicative_over_additive: "1 + 2 * 3",
    precedence_additive_over_shift: "1 << 2 + 3",
    precedence_shift_over_relational: "a < 1 << 2",
    precedence_relational_over_equality: "a = b < c",
    precedence_equality_over_bitand: "x & 1 = 1",
    precedence_bitand_over_bitxor: "a ^ b & c",
    precedence_bitxor_over_bitor: "a | b ^ c",
    precedence_bitor_over_concat: "a || b | c",
    precedence_concat_vs_equality: "a || b = c",
    precedence_and_over_or: "a = 1 AND b = 2 OR c",
    precedence_not_over_comparison: "NOT a = 1",
    precedence_not_under_and: "NOT a AND b",
    precedence_coalesce_over_conditional: "a ?? b ? c : d",
    precedence_unary_over_multiplicative: "-a * b",
    precedence_parentheses: "(1 + 2) * 3",
    left_associative: "1 - 2 - 3",

    // ---- IN, BETWEEN, LIKE ------------------------------------------------------------------------
    in_list: "c.a IN (1, 'two', @three)",
    not_in_list: "c.a NOT IN (1, 2)",
    between: "c.a BETWEEN 1 AND 10",
    not_between: "c.a NOT BETWEEN c.lo + 1 AND c.hi",
    between_then_and: "c.a BETWEEN 1 AND 2 AND c.b",
    like: "c.name LIKE 'J%'",
    not_like_with_escape: "c.name NOT LIKE '100!%' ESCAPE '!'",
    comparisons_under_and: "c.a IN (1) AND c.b LIKE 'x%' OR c.c BETWEEN 1 AND 2",
    not_over_in: "NOT c.a IN (1)",
    parenthesized_comparison_chain: "(c.a IN (1)) IN (true)",
    comparison_operand_is_concat: "c.a || c.b LIKE 'x' || '%'",

    // ---- calls and subqueries ----------------------------------------------------------------------
    function_call: "CONCAT(LOWER(c.first), ' ', c.last)",
    function_call_without_arguments: "GetCurrentDateTime()",
    udf_call: "udf.tax(c.price, 0.2)",
    scalar_subquery: "(SELECT VALUE COUNT(1) FROM t IN c.tags)",
    exists_subquery: "EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'a')",
    array_subquery: "ARRAY(SELECT VALUE t.name FROM t IN c.tags)",
}
