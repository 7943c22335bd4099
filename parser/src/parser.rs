//! Recursive descent for the clauses, Pratt (precedence climbing) for scalar expressions.

use crate::ast::*;
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::{tokenize, Keyword, Spanned, Token};
use crate::span::Span;

/// How deeply parentheses, brackets, unary operators, calls and subqueries may nest.
pub const MAX_NESTING: usize = 128;

/// The service's limit on ANDs and on ORs in one query (`maxLogicalAndPerSqlQuery`,
/// `maxLogicalOrPerSqlQuery`); a chain deeper than [`MAX_EXPRESSION_DEPTH`] is reported with it.
pub const MAX_LOGICAL_OPERATORS: usize = 500;

/// How deep one expression tree may grow (long `a OR b OR c ...` chains count one level per operator).
/// Bounding it keeps every recursive walk over the tree (printing, binding, evaluation) far from the
/// stack limit.
pub const MAX_EXPRESSION_DEPTH: usize = 512;

/// Parses a whole query.
pub fn parse_query(source: &str) -> Result<Query, ParseError> {
    let parsed = (|| {
        let mut p = Parser::new(source)?;
        let (query, _) = p.query()?;
        p.expect_end("end of query")?;
        Ok(query)
    })();
    parsed.map_err(|mut e: ParseError| {
        e.hint = crate::hints::hint(source, &e);
        e
    })
}

/// Parses a lone scalar expression (used by tests and tools; queries go through [`parse_query`]).
pub fn parse_expression(source: &str) -> Result<Expr, ParseError> {
    let mut p = Parser::new(source)?;
    let (expr, _) = p.expr()?;
    p.expect_end("end of expression")?;
    Ok(expr)
}

type Parsed<T> = Result<(T, usize), ParseError>;

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Spanned>,
    pos: usize,
    nesting: usize,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Result<Self, ParseError> {
        Ok(Parser { src, tokens: tokenize(src)?, pos: 0, nesting: 0 })
    }

    // ---- token helpers -------------------------------------------------------------------------

    fn peek(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)].token
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        &self.tokens[(self.pos + ahead).min(self.tokens.len() - 1)].token
    }

    fn span(&self) -> Span {
        self.tokens[self.pos.min(self.tokens.len() - 1)].span
    }

    /// The span of the last consumed token.
    fn prev_span(&self) -> Span {
        self.tokens[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Spanned {
        let t = self.tokens[self.pos.min(self.tokens.len() - 1)].clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn at_keyword(&self, k: Keyword) -> bool {
        matches!(self.peek(), Token::Keyword(x) if *x == k)
    }

    fn eat_keyword(&mut self, k: Keyword) -> bool {
        let hit = self.at_keyword(k);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn eat(&mut self, t: &Token) -> bool {
        let hit = self.peek() == t;
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn error_here(&self, expected: &str) -> ParseError {
        let found = match self.peek() {
            Token::Keyword(k)
                if !matches!(
                    k,
                    Keyword::True
                        | Keyword::False
                        | Keyword::Null
                        | Keyword::Undefined
                        | Keyword::NaN
                        | Keyword::Infinity
                ) =>
            {
                format!("keyword {}", k.as_str())
            }
            other => other.describe(),
        };
        let mut err = ParseError::expected(self.src, self.span(), expected, &found);
        if matches!(self.peek(), Token::Eof) {
            err.kind = ParseErrorKind::UnexpectedEnd;
        }
        err
    }

    fn expect(&mut self, t: &Token, expected: &str) -> Result<Span, ParseError> {
        if self.peek() == t {
            Ok(self.bump().span)
        } else {
            Err(self.error_here(expected))
        }
    }

    fn expect_keyword(&mut self, k: Keyword) -> Result<Span, ParseError> {
        if self.at_keyword(k) {
            Ok(self.bump().span)
        } else {
            Err(self.error_here(k.as_str()))
        }
    }

    fn expect_end(&mut self, what: &str) -> Result<(), ParseError> {
        if matches!(self.peek(), Token::Eof) {
            Ok(())
        } else if matches!(self.peek(), Token::RParen) {
            Err(self.error_here(&format!("{what} (this `)` has no matching `(`)")))
        } else {
            Err(self.error_here(what))
        }
    }

    /// An identifier; a reserved word here gets a hint on how to write it instead.
    fn ident(&mut self, expected: &str) -> Result<Ident, ParseError> {
        match self.peek().clone() {
            Token::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            Token::Keyword(k) => {
                let word = &self.src[self.span().range()];
                let hint = if expected.contains("property name") {
                    format!("write [\"{word}\"] to use it as a property name")
                } else {
                    "choose another name".to_string()
                };
                Err(ParseError::expected(
                    self.src,
                    self.span(),
                    expected,
                    &format!("keyword {} (a reserved word; {hint})", k.as_str()),
                ))
            }
            _ => Err(self.error_here(expected)),
        }
    }

    /// The current token as a non-negative integer, when it is written as plain digits that fit.
    fn integer_literal(&self) -> Option<u64> {
        let text = &self.src[self.span().range()];
        if !matches!(self.peek(), Token::Number(_)) || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse().ok()
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(ParseError::new(
                self.src,
                ParseErrorKind::TooDeep,
                self.span(),
                format!("the query nests deeper than {MAX_NESTING} levels here"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }

    fn check_depth(&self, depth: usize, span: Span) -> Result<usize, ParseError> {
        if depth > MAX_EXPRESSION_DEPTH {
            return Err(ParseError::new(
                self.src,
                ParseErrorKind::TooDeep,
                Span::new(span.end.saturating_sub(1).max(span.start), span.end),
                format!("the expression is more than {MAX_EXPRESSION_DEPTH} operators deep here"),
            ));
        }
        Ok(depth)
    }

    // ---- clauses -------------------------------------------------------------------------------

    fn query(&mut self) -> Parsed<Query> {
        self.enter()?;
        let result = self.query_inner();
        self.leave();
        result
    }

    fn query_inner(&mut self) -> Parsed<Query> {
        let start = self.expect_keyword(Keyword::Select)?;
        let mut depth = 0;
        let distinct = self.eat_keyword(Keyword::Distinct);
        let top = if self.eat_keyword(Keyword::Top) { Some(self.count("TOP")?) } else { None };
        let projection = if matches!(self.peek(), Token::Star) {
            Projection::Star(self.bump().span)
        } else if self.eat_keyword(Keyword::Value) {
            let (e, d) = self.expr()?;
            depth = depth.max(d);
            Projection::Value(e)
        } else {
            let mut items = Vec::new();
            loop {
                let expected = if items.is_empty() { "an expression, `*` or VALUE" } else { "an expression" };
                let (expr, d) = self.expr_or(expected)?;
                depth = depth.max(d);
                let alias = if self.eat_keyword(Keyword::As) {
                    Some(self.ident("an alias after AS")?)
                } else if matches!(self.peek(), Token::Ident(_)) {
                    Some(self.ident("an alias")?)
                } else {
                    None
                };
                let span = expr.span.to(alias.as_ref().map_or(expr.span, |a| a.span));
                items.push(SelectItem { expr, alias, span });
                if !self.eat(&Token::Comma) {
                    break;
                }
            }
            Projection::List(items)
        };
        let select = SelectClause { distinct, top, projection, span: start.to(self.prev_span()) };

        let from = if self.at_keyword(Keyword::From) {
            let (f, d) = self.parse_from()?;
            depth = depth.max(d);
            Some(f)
        } else {
            None
        };
        let where_clause = if self.eat_keyword(Keyword::Where) {
            let (e, d) = self.expr()?;
            depth = depth.max(d);
            Some(e)
        } else {
            None
        };
        let mut group_by = Vec::new();
        if self.eat_keyword(Keyword::Group) {
            self.expect_keyword(Keyword::By)?;
            let (list, d) = self.expr_list()?;
            depth = depth.max(d);
            group_by = list;
        }
        let mut order_by = Vec::new();
        let mut order_by_rank = false;
        if self.eat_keyword(Keyword::Order) {
            self.expect_keyword(Keyword::By)?;
            // `ORDER BY RANK f(...)`: RANK is a keyword only when a function call follows it.
            if matches!(self.peek(), Token::Ident(w) if w.eq_ignore_ascii_case("rank"))
                && matches!(self.peek_at(1), Token::Ident(_))
                && matches!(self.peek_at(2), Token::LParen)
            {
                self.bump();
                order_by_rank = true;
            }
            loop {
                let (expr, d) = self.expr()?;
                depth = depth.max(d);
                let direction = if self.eat_keyword(Keyword::Asc) {
                    Some(SortDirection::Asc)
                } else if self.eat_keyword(Keyword::Desc) {
                    Some(SortDirection::Desc)
                } else {
                    None
                };
                let span = expr.span.to(self.prev_span());
                order_by.push(OrderByItem { expr, direction, span });
                if !self.eat(&Token::Comma) {
                    break;
                }
            }
        }
        let offset_limit = if self.at_keyword(Keyword::Offset) {
            let start = self.bump().span;
            let offset = self.count("OFFSET")?;
            self.expect_keyword(Keyword::Limit)?;
            let limit = self.count("LIMIT")?;
            Some(OffsetLimit { offset, limit, span: start.to(self.prev_span()) })
        } else {
            None
        };
        let span = start.to(self.prev_span());
        let query = Query { select, from, where_clause, group_by, order_by, order_by_rank, offset_limit, span };
        Ok((query, depth + 1))
    }

    /// `TOP`/`OFFSET`/`LIMIT` operand: a non-negative integer literal or a parameter.
    fn count(&mut self, clause: &str) -> Result<Count, ParseError> {
        let span = self.span();
        match self.peek().clone() {
            Token::Number(_) if self.integer_literal().is_some() => {
                let value = self.integer_literal().unwrap_or_default();
                self.bump();
                Ok(Count::Literal { value, span })
            }
            Token::Parameter(name) => {
                self.bump();
                Ok(Count::Parameter(Ident { name, span }))
            }
            _ => {
                let mut err = self.error_here(&format!("a non-negative integer or a parameter after {clause}"));
                err.kind = ParseErrorKind::InvalidCount;
                Err(err)
            }
        }
    }

    fn parse_from(&mut self) -> Parsed<FromClause> {
        let start = self.expect_keyword(Keyword::From)?;
        let (source, mut depth) = self.parse_from_source()?;
        let mut joins = Vec::new();
        while self.eat_keyword(Keyword::Join) {
            let (j, d) = self.parse_from_source()?;
            depth = depth.max(d);
            joins.push(j);
        }
        Ok((FromClause { source, joins, span: start.to(self.prev_span()) }, depth))
    }

    fn parse_from_source(&mut self) -> Parsed<FromSource> {
        let start = self.span();
        if matches!(self.peek(), Token::Ident(_)) && matches!(self.peek_at(1), Token::Keyword(Keyword::In)) {
            let alias = self.ident("an alias")?;
            self.bump(); // IN
            let (array, d) = self.expr()?;
            return Ok((FromSource::Iterate { alias, array, span: start.to(self.prev_span()) }, d));
        }
        let (collection, d) = self.collection()?;
        let alias = if self.eat_keyword(Keyword::As) {
            Some(self.ident("an alias after AS")?)
        } else if matches!(self.peek(), Token::Ident(_)) {
            Some(self.ident("an alias")?)
        } else {
            None
        };
        Ok((FromSource::Aliased { collection, alias, span: start.to(self.prev_span()) }, d))
    }

    fn collection(&mut self) -> Parsed<Collection> {
        if matches!(self.peek(), Token::LParen) && matches!(self.peek_at(1), Token::Keyword(Keyword::Select)) {
            self.bump();
            let (q, d) = self.query()?;
            self.expect(&Token::RParen, "`)` to close the subquery")?;
            return Ok((Collection::Subquery(Box::new(q)), d));
        }
        let root = self.ident("a container name, an alias or `(SELECT ...)`")?;
        let mut path = Vec::new();
        loop {
            if self.eat(&Token::Dot) {
                path.push(PathSegment::Property(self.ident("a property name after `.`")?));
            } else if matches!(self.peek(), Token::LBracket) {
                let open = self.bump().span;
                let span = self.span();
                match self.peek().clone() {
                    Token::String(name) => {
                        self.bump();
                        path.push(PathSegment::Key { name, span });
                    }
                    Token::Number(_) if self.integer_literal().is_some() => {
                        let index = self.integer_literal().unwrap_or_default();
                        self.bump();
                        path.push(PathSegment::Index { index, span });
                    }
                    _ => return Err(self.error_here("a string or a non-negative integer in a FROM path")),
                }
                let _ = open;
                self.expect(&Token::RBracket, "`]`")?;
            } else {
                break;
            }
        }
        let span = root.span.to(self.prev_span());
        Ok((Collection::Path { root, path, span }, 1))
    }

    // ---- expressions ---------------------------------------------------------------------------

    fn expr(&mut self) -> Parsed<Expr> {
        self.expr_bp(Precedence::Lowest, "an expression")
    }

    fn expr_or(&mut self, expected: &str) -> Parsed<Expr> {
        self.expr_bp(Precedence::Lowest, expected)
    }

    /// Parses an expression whose top operator binds at least as tightly as `min`.
    fn expr_bp(&mut self, min: Precedence, expected: &str) -> Parsed<Expr> {
        self.enter()?;
        let result = self.expr_bp_inner(min, expected);
        self.leave();
        result
    }

    fn expr_bp_inner(&mut self, min: Precedence, expected: &str) -> Parsed<Expr> {
        let (mut lhs, mut depth) = self.prefix(expected)?;
        // Set once this loop has built an IN/LIKE/BETWEEN (a parenthesized one from `prefix` is fine).
        let mut built_comparison: Option<Keyword> = None;
        loop {
            if let Some(op) = binary_op(self.peek()) {
                let p = op.precedence();
                if p < min {
                    break;
                }
                if let Some(k) = built_comparison.filter(|_| p > Precedence::Comparison) {
                    return Err(self.comparison_operand_error(k));
                }
                self.bump();
                let (rhs, d) = self.expr_bp(p.next(), "an expression after the operator")?;
                let span = lhs.span.to(rhs.span);
                depth = match op {
                    // A chain of ANDs or ORs this deep is past the service's limit on them.
                    BinaryOp::And | BinaryOp::Or if depth.max(d) + 1 > MAX_EXPRESSION_DEPTH => {
                        return Err(ParseError::new(
                            self.src,
                            ParseErrorKind::TooDeep,
                            span,
                            format!(
                                "The SQL query exceeded the maximum number of '{}' operators. The allowed limit is {MAX_LOGICAL_OPERATORS}.",
                                op.as_str()
                            ),
                        ));
                    }
                    _ => self.check_depth(depth.max(d) + 1, span)?,
                };
                lhs = Expr { kind: ExprKind::Binary { op, left: Box::new(lhs), right: Box::new(rhs) }, span };
                continue;
            }
            match self.peek() {
                Token::Question => {
                    if Precedence::Conditional < min {
                        break;
                    }
                    self.bump();
                    let (then, d1) = self.expr_bp(Precedence::Lowest, "an expression after `?`")?;
                    self.expect(&Token::Colon, "`:` of the conditional `? :`")?;
                    let (otherwise, d2) = self.expr_bp(Precedence::Conditional, "an expression after `:`")?;
                    let span = lhs.span.to(otherwise.span);
                    depth = self.check_depth(depth.max(d1).max(d2) + 1, span)?;
                    lhs = Expr {
                        kind: ExprKind::Conditional {
                            condition: Box::new(lhs),
                            then: Box::new(then),
                            otherwise: Box::new(otherwise),
                        },
                        span,
                    };
                }
                Token::Keyword(k @ (Keyword::Not | Keyword::In | Keyword::Like | Keyword::Between)) => {
                    let negated = *k == Keyword::Not;
                    let op = if negated {
                        match self.peek_at(1) {
                            Token::Keyword(k @ (Keyword::In | Keyword::Like | Keyword::Between)) => *k,
                            _ => break,
                        }
                    } else {
                        *k
                    };
                    if Precedence::Comparison < min {
                        break;
                    }
                    // These do not chain: `a IN (1) IN (2)` needs parentheses, as in Cosmos's grammar.
                    if let Some(k) = built_comparison {
                        return Err(self.comparison_operand_error(k));
                    }
                    if negated {
                        self.bump();
                    }
                    self.bump();
                    let (e, d) = self.comparison(lhs, op, negated)?;
                    depth = self.check_depth(depth.max(d) + 1, e.span)?;
                    lhs = e;
                    built_comparison = Some(op);
                }
                _ => break,
            }
        }
        Ok((lhs, depth))
    }

    /// An operator that would take an IN/LIKE/BETWEEN result as its left operand.
    fn comparison_operand_error(&self, k: Keyword) -> ParseError {
        let name = k.as_str();
        self.error_here(&format!(
            "AND, OR, `??`, `?` or the end of the {name} expression (put the {name} expression in parentheses to use its result as an operand)"
        ))
    }

    /// The rest of `lhs [NOT] IN (...)`, `lhs [NOT] LIKE p [ESCAPE 'c']`, `lhs [NOT] BETWEEN a AND b`.
    fn comparison(&mut self, lhs: Expr, op: Keyword, negated: bool) -> Parsed<Expr> {
        let expr = Box::new(lhs);
        match op {
            Keyword::In => {
                self.expect(&Token::LParen, "`(` to open the IN list")?;
                let (list, depth) = self.expr_list()?;
                let end = self.expect(&Token::RParen, "`,` or `)` in the IN list")?;
                let span = expr.span.to(end);
                Ok((Expr { kind: ExprKind::In { expr, list, negated }, span }, depth))
            }
            Keyword::Like => {
                let (pattern, depth) = self.expr_bp(Precedence::Concat, "a pattern after LIKE")?;
                let escape = if self.eat_keyword(Keyword::Escape) {
                    match self.peek().clone() {
                        Token::String(s) if s.chars().count() == 1 => {
                            self.bump();
                            Some(s)
                        }
                        _ => return Err(self.error_here("a one-character string after ESCAPE")),
                    }
                } else {
                    None
                };
                let span = expr.span.to(self.prev_span());
                Ok((Expr { kind: ExprKind::Like { expr, pattern: Box::new(pattern), escape, negated }, span }, depth))
            }
            _ => {
                let (low, d1) = self.expr_bp(Precedence::Concat, "the lower bound after BETWEEN")?;
                self.expect_keyword(Keyword::And)?;
                let (high, d2) = self.expr_bp(Precedence::Concat, "the upper bound after AND")?;
                let span = expr.span.to(high.span);
                let kind = ExprKind::Between { expr, low: Box::new(low), high: Box::new(high), negated };
                Ok((Expr { kind, span }, d1.max(d2)))
            }
        }
    }

    fn prefix(&mut self, expected: &str) -> Parsed<Expr> {
        let start = self.span();
        let (op, level) = match self.peek() {
            Token::Keyword(Keyword::Not) => (UnaryOp::Not, Precedence::Not),
            Token::Minus => (UnaryOp::Negate, Precedence::Unary),
            Token::Plus => (UnaryOp::Plus, Precedence::Unary),
            Token::Tilde => (UnaryOp::BitNot, Precedence::Unary),
            _ => return self.postfix(expected),
        };
        self.bump();
        let (operand, d) = self.expr_bp(level, "an expression after the operator")?;
        let span = start.to(operand.span);
        let depth = self.check_depth(d + 1, span)?;
        Ok((Expr { kind: ExprKind::Unary { op, operand: Box::new(operand) }, span }, depth))
    }

    /// A primary expression followed by any number of `.name` and `[index]`.
    fn postfix(&mut self, expected: &str) -> Parsed<Expr> {
        let (mut e, mut depth) = self.primary(expected)?;
        loop {
            if self.eat(&Token::Dot) {
                let name = self.ident("a property name after `.`")?;
                let span = e.span.to(name.span);
                depth = self.check_depth(depth + 1, span)?;
                e = Expr { kind: ExprKind::Property { base: Box::new(e), name }, span };
            } else if matches!(self.peek(), Token::LBracket) {
                self.bump();
                let (index, d) = self.expr()?;
                let end = self.expect(&Token::RBracket, "`]`")?;
                let span = e.span.to(end);
                depth = self.check_depth(depth.max(d) + 1, span)?;
                e = Expr { kind: ExprKind::Index { base: Box::new(e), index: Box::new(index) }, span };
            } else {
                return Ok((e, depth));
            }
        }
    }

    fn primary(&mut self, expected: &str) -> Parsed<Expr> {
        let start = self.span();
        let literal = |l| Ok((Expr { kind: ExprKind::Literal(l), span: start }, 1));
        match self.peek().clone() {
            Token::Number(n) => {
                self.bump();
                literal(Literal::Number(n))
            }
            Token::String(s) => {
                self.bump();
                literal(Literal::String(s))
            }
            Token::Keyword(Keyword::True) => {
                self.bump();
                literal(Literal::Bool(true))
            }
            Token::Keyword(Keyword::False) => {
                self.bump();
                literal(Literal::Bool(false))
            }
            Token::Keyword(Keyword::Null) => {
                self.bump();
                literal(Literal::Null)
            }
            Token::Keyword(Keyword::Undefined) => {
                self.bump();
                literal(Literal::Undefined)
            }
            Token::Keyword(Keyword::NaN) => {
                self.bump();
                literal(Literal::Number(f64::NAN))
            }
            Token::Keyword(Keyword::Infinity) => {
                self.bump();
                literal(Literal::Number(f64::INFINITY))
            }
            Token::Parameter(name) => {
                self.bump();
                Ok((Expr { kind: ExprKind::Parameter(name), span: start }, 1))
            }
            Token::Ident(name) => {
                self.bump();
                if matches!(self.peek(), Token::LParen) {
                    self.call(Ident { name, span: start }, false)
                } else {
                    Ok((Expr { kind: ExprKind::Identifier(name), span: start }, 1))
                }
            }
            Token::Keyword(Keyword::Udf) => {
                self.bump();
                self.expect(&Token::Dot, "`.` after udf")?;
                let name = self.ident("a function name after `udf.`")?;
                if !matches!(self.peek(), Token::LParen) {
                    return Err(self.error_here("`(` to call the user-defined function"));
                }
                let (mut e, d) = self.call(name, true)?;
                e.span = start.to(e.span);
                Ok((e, d))
            }
            Token::LParen => {
                self.bump();
                if self.at_keyword(Keyword::Select) {
                    let (q, d) = self.query()?;
                    let end = self.expect(&Token::RParen, "`)` to close the subquery")?;
                    return Ok((Expr { kind: ExprKind::Subquery(Box::new(q)), span: start.to(end) }, d + 1));
                }
                let (mut e, d) = self.expr()?;
                let end = self.expect(&Token::RParen, "`)`")?;
                e.span = start.to(end);
                Ok((e, d))
            }
            Token::Keyword(k @ (Keyword::Exists | Keyword::Array)) => {
                self.bump();
                self.expect(&Token::LParen, &format!("`(` after {}", k.as_str()))?;
                if !self.at_keyword(Keyword::Select) {
                    return Err(self.error_here(&format!("a subquery `SELECT ...` inside {}(...)", k.as_str())));
                }
                let (q, d) = self.query()?;
                let end = self.expect(&Token::RParen, "`)` to close the subquery")?;
                let kind = if k == Keyword::Exists {
                    ExprKind::Exists(Box::new(q))
                } else {
                    ExprKind::ArraySubquery(Box::new(q))
                };
                Ok((Expr { kind, span: start.to(end) }, d + 1))
            }
            Token::LBracket => {
                self.bump();
                let (items, depth) =
                    if matches!(self.peek(), Token::RBracket) { (Vec::new(), 0) } else { self.expr_list()? };
                let end = self.expect(&Token::RBracket, "`,` or `]` in the array")?;
                Ok((Expr { kind: ExprKind::Array(items), span: start.to(end) }, depth + 1))
            }
            Token::LBrace => {
                self.bump();
                let mut props = Vec::new();
                let mut depth = 0;
                if !matches!(self.peek(), Token::RBrace) {
                    loop {
                        let name_span = self.span();
                        let name = match self.peek().clone() {
                            Token::String(s) => {
                                self.bump();
                                Ident { name: s, span: name_span }
                            }
                            Token::Ident(_) | Token::Keyword(_) => self.ident("a property name")?,
                            _ => return Err(self.error_here("a property name")),
                        };
                        self.expect(&Token::Colon, "`:` after the property name")?;
                        let (value, d) = self.expr()?;
                        depth = depth.max(d);
                        props.push(ObjectProperty { name, value });
                        if !self.eat(&Token::Comma) {
                            break;
                        }
                    }
                }
                let end = self.expect(&Token::RBrace, "`,` or `}` in the object")?;
                Ok((Expr { kind: ExprKind::Object(props), span: start.to(end) }, depth + 1))
            }
            _ => Err(self.error_here(expected)),
        }
    }

    /// `expr (, expr)*`, with the deepest depth among them.
    fn expr_list(&mut self) -> Parsed<Vec<Expr>> {
        let mut list = Vec::new();
        let mut depth = 0;
        loop {
            let (e, d) = self.expr()?;
            depth = depth.max(d);
            list.push(e);
            if !self.eat(&Token::Comma) {
                return Ok((list, depth));
            }
        }
    }

    /// `name(args)`; the current token is `(`.
    fn call(&mut self, name: Ident, udf: bool) -> Parsed<Expr> {
        self.bump(); // (
        let (args, depth) = if matches!(self.peek(), Token::RParen) { (Vec::new(), 0) } else { self.expr_list()? };
        let end = self.expect(&Token::RParen, "`,` or `)` in the argument list")?;
        let span = name.span.to(end);
        Ok((Expr { kind: ExprKind::Call { name, udf, args }, span }, depth + 1))
    }
}

fn binary_op(t: &Token) -> Option<BinaryOp> {
    Some(match t {
        Token::Star => BinaryOp::Multiply,
        Token::Slash => BinaryOp::Divide,
        Token::Percent => BinaryOp::Modulo,
        Token::Plus => BinaryOp::Add,
        Token::Minus => BinaryOp::Subtract,
        Token::ShiftLeft => BinaryOp::ShiftLeft,
        Token::ShiftRight => BinaryOp::ShiftRight,
        Token::ShiftRightZeroFill => BinaryOp::ShiftRightZeroFill,
        Token::Lt => BinaryOp::Lt,
        Token::LtEq => BinaryOp::LtEq,
        Token::Gt => BinaryOp::Gt,
        Token::GtEq => BinaryOp::GtEq,
        Token::Eq => BinaryOp::Eq,
        Token::NotEq | Token::LtGt => BinaryOp::NotEq,
        Token::Amp => BinaryOp::BitAnd,
        Token::Caret => BinaryOp::BitXor,
        Token::Pipe => BinaryOp::BitOr,
        Token::PipePipe => BinaryOp::Concat,
        Token::Keyword(Keyword::And) => BinaryOp::And,
        Token::Keyword(Keyword::Or) => BinaryOp::Or,
        Token::QuestionQuestion => BinaryOp::Coalesce,
        _ => return None,
    })
}
