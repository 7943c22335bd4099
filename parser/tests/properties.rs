//! Property tests: printing any parser-shaped tree and parsing it back gives the same tree; no input
//! (random bytes, token soup, absurd nesting) panics or overflows the stack.

use cosmoql_parser::lexer::is_plain_identifier;
use cosmoql_parser::*;
use proptest::prelude::*;

fn sp() -> Span {
    Span::default()
}

fn ident_name() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,7}".prop_filter("not a keyword", |s| is_plain_identifier(s))
}

fn ident() -> impl Strategy<Value = Ident> {
    ident_name().prop_map(|name| Ident { name, span: sp() })
}

fn any_string() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z \"'\\\\/]{0,8}", any::<String>().prop_map(|s| s.chars().take(8).collect()), Just(String::new()),]
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u32..1000).prop_map(f64::from),
        (0.0f64..1e6),
        (0.0f64..1.0).prop_map(|x| x * 1e-9),
        Just(1e300),
        Just(9007199254740993.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
    ]
}

fn count() -> impl Strategy<Value = Count> {
    prop_oneof![
        (0u64..1_000_000_000_000).prop_map(|value| Count::Literal { value, span: sp() }),
        ident_name().prop_map(|name| Count::Parameter(Ident { name, span: sp() })),
    ]
}

fn e(kind: ExprKind) -> Expr {
    Expr { kind, span: sp() }
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        Just(e(ExprKind::Literal(Literal::Undefined))),
        Just(e(ExprKind::Literal(Literal::Null))),
        any::<bool>().prop_map(|b| e(ExprKind::Literal(Literal::Bool(b)))),
        number().prop_map(|n| e(ExprKind::Literal(Literal::Number(n)))),
        any_string().prop_map(|s| e(ExprKind::Literal(Literal::String(s)))),
        ident_name().prop_map(|n| e(ExprKind::Identifier(n))),
        "[a-zA-Z_][a-zA-Z0-9_]{0,5}".prop_map(|n| e(ExprKind::Parameter(n))),
    ]
}

const UNARY: [UnaryOp; 4] = [UnaryOp::Negate, UnaryOp::Plus, UnaryOp::BitNot, UnaryOp::Not];
const BINARY: [BinaryOp; 21] = [
    BinaryOp::Multiply,
    BinaryOp::Divide,
    BinaryOp::Modulo,
    BinaryOp::Add,
    BinaryOp::Subtract,
    BinaryOp::ShiftLeft,
    BinaryOp::ShiftRight,
    BinaryOp::ShiftRightZeroFill,
    BinaryOp::Lt,
    BinaryOp::LtEq,
    BinaryOp::Gt,
    BinaryOp::GtEq,
    BinaryOp::Eq,
    BinaryOp::NotEq,
    BinaryOp::BitAnd,
    BinaryOp::BitXor,
    BinaryOp::BitOr,
    BinaryOp::Concat,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::Coalesce,
];

fn expr_with(query: BoxedStrategy<Query>) -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(5, 48, 4, move |inner| {
        let b = || inner.clone().prop_map(Box::new);
        let list = || prop::collection::vec(inner.clone(), 1..4);
        prop_oneof![
            (b(), ident()).prop_map(|(base, name)| e(ExprKind::Property { base, name })),
            (b(), b()).prop_map(|(base, index)| e(ExprKind::Index { base, index })),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| e(ExprKind::Array(v))),
            prop::collection::vec((any_string(), inner.clone()), 0..3).prop_map(|v| e(ExprKind::Object(
                v.into_iter().map(|(name, value)| ObjectProperty { name: Ident { name, span: sp() }, value }).collect()
            ))),
            (prop::sample::select(&UNARY[..]), b()).prop_map(|(op, operand)| e(ExprKind::Unary { op, operand })),
            (prop::sample::select(&BINARY[..]), b(), b()).prop_map(|(op, left, right)| e(ExprKind::Binary {
                op,
                left,
                right
            })),
            (b(), b(), b(), any::<bool>()).prop_map(|(expr, low, high, negated)| e(ExprKind::Between {
                expr,
                low,
                high,
                negated
            })),
            (b(), list(), any::<bool>()).prop_map(|(expr, list, negated)| e(ExprKind::In { expr, list, negated })),
            (b(), b(), prop::option::of(any::<char>().prop_map(String::from)), any::<bool>())
                .prop_map(|(expr, pattern, escape, negated)| e(ExprKind::Like { expr, pattern, escape, negated })),
            (b(), b(), b()).prop_map(|(condition, then, otherwise)| e(ExprKind::Conditional {
                condition,
                then,
                otherwise
            })),
            (ident(), any::<bool>(), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(name, udf, args)| e(ExprKind::Call { name, udf, args })),
            query.clone().prop_map(|q| e(ExprKind::Subquery(Box::new(q)))),
            query.clone().prop_map(|q| e(ExprKind::Exists(Box::new(q)))),
            query.clone().prop_map(|q| e(ExprKind::ArraySubquery(Box::new(q)))),
        ]
    })
}

fn collection(query: BoxedStrategy<Query>) -> impl Strategy<Value = Collection> {
    let segment = prop_oneof![
        ident().prop_map(PathSegment::Property),
        any_string().prop_map(|name| PathSegment::Key { name, span: sp() }),
        (0u64..1000).prop_map(|index| PathSegment::Index { index, span: sp() }),
    ];
    prop_oneof![
        4 => (ident(), prop::collection::vec(segment, 0..3))
            .prop_map(|(root, path)| Collection::Path { root, path, span: sp() }),
        1 => query.prop_map(|q| Collection::Subquery(Box::new(q))),
    ]
}

fn from_source(query: BoxedStrategy<Query>, expr: BoxedStrategy<Expr>) -> impl Strategy<Value = FromSource> {
    prop_oneof![
        (collection(query), prop::option::of(ident())).prop_map(|(collection, alias)| FromSource::Aliased {
            collection,
            alias,
            span: sp()
        }),
        (ident(), expr).prop_map(|(alias, array)| FromSource::Iterate { alias, array, span: sp() }),
    ]
}

/// A query whose expressions are leaves, or built over `sub` (queries one level down).
fn query_over(sub: BoxedStrategy<Query>) -> BoxedStrategy<Query> {
    let expr = expr_with(sub.clone()).boxed();
    let projection = prop_oneof![
        Just(Projection::Star(sp())),
        expr.clone().prop_map(Projection::Value),
        prop::collection::vec((expr.clone(), prop::option::of(ident())), 1..4).prop_map(|items| {
            Projection::List(items.into_iter().map(|(expr, alias)| SelectItem { expr, alias, span: sp() }).collect())
        }),
    ];
    let select = (any::<bool>(), prop::option::of(count()), projection)
        .prop_map(|(distinct, top, projection)| SelectClause { distinct, top, projection, span: sp() });
    let from = prop::option::of(
        (from_source(sub.clone(), expr.clone()), prop::collection::vec(from_source(sub, expr.clone()), 0..3))
            .prop_map(|(source, joins)| FromClause { source, joins, span: sp() }),
    );
    let direction = prop::option::of(prop_oneof![Just(SortDirection::Asc), Just(SortDirection::Desc)]);
    let order_by = prop::collection::vec(
        (expr.clone(), direction).prop_map(|(expr, direction)| OrderByItem { expr, direction, span: sp() }),
        0..3,
    );
    let offset_limit =
        prop::option::of((count(), count()).prop_map(|(offset, limit)| OffsetLimit { offset, limit, span: sp() }));
    (select, from, prop::option::of(expr.clone()), prop::collection::vec(expr, 0..3), order_by, offset_limit)
        .prop_map(|(select, from, where_clause, group_by, order_by, offset_limit)| Query {
            select,
            from,
            where_clause,
            group_by,
            order_by,
            order_by_rank: false,
            offset_limit,
            span: sp(),
        })
        .boxed()
}

fn simple_query() -> BoxedStrategy<Query> {
    ident_name()
        .prop_map(|name| Query {
            select: SelectClause {
                distinct: false,
                top: None,
                projection: Projection::Value(e(ExprKind::Identifier(name.clone()))),
                span: sp(),
            },
            from: Some(FromClause {
                source: FromSource::Aliased {
                    collection: Collection::Path { root: Ident { name, span: sp() }, path: vec![], span: sp() },
                    alias: None,
                    span: sp(),
                },
                joins: vec![],
                span: sp(),
            }),
            where_clause: None,
            group_by: vec![],
            order_by: vec![],
            order_by_rank: false,
            offset_limit: None,
            span: sp(),
        })
        .boxed()
}

fn query() -> BoxedStrategy<Query> {
    query_over(query_over(simple_query()))
}

fn expr() -> BoxedStrategy<Expr> {
    expr_with(query_over(simple_query())).boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn expressions_round_trip(ast in expr()) {
        let printed = ast.to_string();
        let parsed = parse_expression(&printed).map_err(|e| TestCaseError::fail(format!("{printed}\n{e}")))?;
        prop_assert_eq!(&parsed, &ast, "printed as {}", printed);
        prop_assert_eq!(parsed.to_string(), printed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn queries_round_trip(ast in query()) {
        let printed = ast.to_string();
        let parsed = parse(&printed).map_err(|e| TestCaseError::fail(format!("{printed}\n{e}")))?;
        prop_assert_eq!(&parsed, &ast, "printed as {}", printed);
    }
}

/// Parsing must return, never panic; an error must point inside (or just past) the input.
fn parse_never_panics(text: &str) -> Result<(), TestCaseError> {
    match parse(text) {
        Ok(q) => {
            let again = parse(&q.to_string()).map_err(|e| TestCaseError::fail(format!("{q}\n{e}")))?;
            prop_assert_eq!(again, q);
        }
        Err(err) => {
            prop_assert!(err.span.start <= text.len());
            let prefix = format!("line {}, column {}: ", err.line, err.column);
            prop_assert!(err.to_string().starts_with(&prefix));
        }
    }
    Ok(())
}

const SOUP: &[&str] = &[
    "SELECT",
    "select",
    "VALUE",
    "DISTINCT",
    "TOP",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "ORDER",
    "ASC",
    "DESC",
    "OFFSET",
    "LIMIT",
    "JOIN",
    "IN",
    "NOT",
    "AND",
    "OR",
    "BETWEEN",
    "LIKE",
    "ESCAPE",
    "EXISTS",
    "ARRAY",
    "AS",
    "udf",
    "true",
    "null",
    "undefined",
    "c",
    "c.id",
    "x",
    "@p",
    "1",
    "2.5",
    ".5",
    "1e3",
    "'s'",
    "\"t\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    ":",
    "?",
    "??",
    "*",
    "/",
    "%",
    "+",
    "-",
    "~",
    "&",
    "|",
    "||",
    "^",
    "<<",
    ">>",
    ">>>",
    "=",
    "!=",
    "<>",
    "<",
    "<=",
    ">",
    ">=",
    "--",
    "\n",
    "'",
    "\\",
    "@",
    "#",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        parse_never_panics(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn random_text_never_panics(text in "\\PC{0,120}") {
        parse_never_panics(&text)?;
    }

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(prop::sample::select(SOUP), 0..60)) {
        parse_never_panics(&tokens.join(" "))?;
    }

    #[test]
    fn select_prefixed_soup_never_panics(tokens in prop::collection::vec(prop::sample::select(SOUP), 0..40)) {
        parse_never_panics(&format!("SELECT {} FROM c WHERE {}", tokens.join(" "), tokens.join("")))?;
    }
}

/// Runs `f` on a thread with a 1 MiB stack: half the default, so the bound is shown with margin.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(1 << 20).spawn(f).expect("thread").join().expect("no panic");
}

fn assert_too_deep(text: String) {
    on_small_stack(move || {
        let err = parse(&text).expect_err("must be rejected");
        assert_eq!(err.kind, ParseErrorKind::TooDeep, "{}", err.message);
    });
}

#[test]
fn hundred_thousand_deep_nesting_is_an_error_not_an_overflow() {
    const N: usize = 100_000;
    let wrap = |open: &str, close: &str| format!("SELECT VALUE {}1{}", open.repeat(N), close.repeat(N));
    assert_too_deep(wrap("(", ")"));
    assert_too_deep(wrap("[", "]"));
    assert_too_deep(wrap("{a: ", "}"));
    assert_too_deep(wrap("f(", ")"));
    assert_too_deep(wrap("(SELECT VALUE ", ")"));
    assert_too_deep(wrap("ARRAY(SELECT VALUE ", ")"));
    assert_too_deep(wrap("NOT ", ""));
    assert_too_deep(wrap("- ", ""));
    assert_too_deep(wrap("~", ""));
    assert_too_deep(wrap("c[", "]"));
    assert_too_deep(wrap("1 ? 2 : ", ""));
    assert_too_deep(format!("SELECT VALUE c{}", ".a".repeat(N)));
    assert_too_deep(format!("SELECT VALUE 1{}", " + 1".repeat(N)));
    assert_too_deep(format!("SELECT * FROM c WHERE c.a = 1{}", " OR c.a = 1".repeat(N)));
    assert_too_deep(format!("SELECT * FROM c WHERE c.a IN (1){}", " AND c.a IN (1)".repeat(N)));
    // Unclosed: the error comes from the depth bound, not from the missing `)`.
    assert_too_deep(format!("SELECT VALUE {}", "(".repeat(N)));
}

#[test]
fn long_but_legal_chains_parse_and_print() {
    on_small_stack(|| {
        let n = MAX_EXPRESSION_DEPTH - 2;
        let text =
            format!("SELECT * FROM c WHERE c.id = 0{}", (1..n).map(|i| format!(" OR c.id = {i}")).collect::<String>());
        let q = parse(&text).expect("a chain within the bound parses");
        assert_eq!(parse(&q.to_string()).expect("printed form parses"), q);
        let nested = format!("SELECT VALUE {}1{}", "(".repeat(MAX_NESTING - 2), ")".repeat(MAX_NESTING - 2));
        parse(&nested).expect("nesting within the bound parses");
    });
}
