//! Prints a syntax tree back as SQL, on one line, with the minimal parentheses that keep its shape:
//! for every tree the parser produces, `parse(tree.to_string()) == tree`.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;
use crate::lexer::is_plain_identifier;

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let s = &self.select;
        f.write_str("SELECT ")?;
        if s.distinct {
            f.write_str("DISTINCT ")?;
        }
        if let Some(top) = &s.top {
            write!(f, "TOP {top} ")?;
        }
        match &s.projection {
            Projection::Star(_) => f.write_str("*")?,
            Projection::Value(e) => write!(f, "VALUE {e}")?,
            Projection::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", item.expr)?;
                    if let Some(alias) = &item.alias {
                        write!(f, " AS {}", alias.name)?;
                    }
                }
            }
        }
        if let Some(from) = &self.from {
            write!(f, " FROM {}", from.source)?;
            for join in &from.joins {
                write!(f, " JOIN {join}")?;
            }
        }
        if let Some(w) = &self.where_clause {
            write!(f, " WHERE {w}")?;
        }
        if !self.group_by.is_empty() {
            f.write_str(" GROUP BY ")?;
            comma_list(f, &self.group_by)?;
        }
        if !self.order_by.is_empty() {
            f.write_str(if self.order_by_rank { " ORDER BY RANK " } else { " ORDER BY " })?;
            for (i, item) in self.order_by.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", item.expr)?;
                match item.direction {
                    Some(SortDirection::Asc) => f.write_str(" ASC")?,
                    Some(SortDirection::Desc) => f.write_str(" DESC")?,
                    None => {}
                }
            }
        }
        if let Some(ol) = &self.offset_limit {
            write!(f, " OFFSET {} LIMIT {}", ol.offset, ol.limit)?;
        }
        Ok(())
    }
}

impl SelectClause {
    /// The projection as written after `SELECT [DISTINCT] [TOP n]`.
    pub fn projection_text(&self) -> String {
        match &self.projection {
            Projection::Star(_) => "*".to_string(),
            Projection::Value(e) => format!("VALUE {e}"),
            Projection::List(items) => items
                .iter()
                .map(|i| match &i.alias {
                    Some(a) => format!("{} AS {}", i.expr, a.name),
                    None => i.expr.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

impl Display for Count {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Count::Literal { value, .. } => write!(f, "{value}"),
            Count::Parameter(p) => write!(f, "@{}", p.name),
        }
    }
}

impl Display for FromSource {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            FromSource::Aliased { collection, alias, .. } => {
                write!(f, "{collection}")?;
                if let Some(alias) = alias {
                    write!(f, " {}", alias.name)?;
                }
                Ok(())
            }
            FromSource::Iterate { alias, array, .. } => write!(f, "{} IN {array}", alias.name),
        }
    }
}

impl Display for Collection {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Collection::Path { root, path, .. } => {
                f.write_str(&root.name)?;
                for seg in path {
                    match seg {
                        PathSegment::Property(name) => write!(f, ".{}", name.name)?,
                        PathSegment::Key { name, .. } => {
                            f.write_char('[')?;
                            write_string(f, name)?;
                            f.write_char(']')?;
                        }
                        PathSegment::Index { index, .. } => write!(f, "[{index}]")?,
                    }
                }
                Ok(())
            }
            Collection::Subquery(q) => write!(f, "({q})"),
        }
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_expr(f, self, Precedence::Lowest)
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Undefined => f.write_str("undefined"),
            Literal::Null => f.write_str("null"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Number(n) => write_number(f, *n),
            Literal::String(s) => write_string(f, s),
        }
    }
}

fn comma_list(f: &mut Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_expr(f, e, Precedence::Lowest)?;
    }
    Ok(())
}

/// Writes `e`, in parentheses if it binds looser than the context needs.
fn write_expr(f: &mut Formatter<'_>, e: &Expr, min: Precedence) -> fmt::Result {
    if e.precedence() < min {
        f.write_char('(')?;
        write_expr(f, e, Precedence::Lowest)?;
        return f.write_char(')');
    }
    match &e.kind {
        ExprKind::Literal(l) => write!(f, "{l}"),
        ExprKind::Identifier(name) => f.write_str(name),
        ExprKind::Parameter(name) => write!(f, "@{name}"),
        ExprKind::Property { base, name } => {
            // `1.a` would lex as a malformed number.
            if matches!(base.kind, ExprKind::Literal(Literal::Number(_))) {
                write!(f, "({base})")?;
            } else {
                write_expr(f, base, Precedence::Primary)?;
            }
            write!(f, ".{}", name.name)
        }
        ExprKind::Index { base, index } => {
            write_expr(f, base, Precedence::Primary)?;
            f.write_char('[')?;
            write_expr(f, index, Precedence::Lowest)?;
            f.write_char(']')
        }
        ExprKind::Array(items) => {
            f.write_char('[')?;
            comma_list(f, items)?;
            f.write_char(']')
        }
        ExprKind::Object(props) => {
            f.write_char('{')?;
            for (i, p) in props.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                if is_plain_identifier(&p.name.name) {
                    f.write_str(&p.name.name)?;
                } else {
                    write_string(f, &p.name.name)?;
                }
                f.write_str(": ")?;
                write_expr(f, &p.value, Precedence::Lowest)?;
            }
            f.write_char('}')
        }
        ExprKind::Unary { op, operand } => {
            let (text, level) = match op {
                UnaryOp::Not => ("NOT ", Precedence::Not),
                UnaryOp::Negate => ("-", Precedence::Unary),
                UnaryOp::Plus => ("+", Precedence::Unary),
                UnaryOp::BitNot => ("~", Precedence::Unary),
            };
            f.write_str(text)?;
            // `- -x` must not print as `--x`, which starts a comment. Whether the operand prints
            // with a leading `-` is read from its shape (printing it to look would make nested
            // minus signs exponential).
            let leading_minus = match &operand.kind {
                ExprKind::Unary { op: UnaryOp::Negate, .. } => true,
                ExprKind::Literal(Literal::Number(n)) => n.is_sign_negative() && !n.is_nan(),
                _ => false,
            };
            if leading_minus {
                write!(f, "({operand})")
            } else {
                write_expr(f, operand, level)
            }
        }
        ExprKind::Binary { op, left, right } => {
            let p = op.precedence();
            write_expr(f, left, p)?;
            write!(f, " {} ", op.as_str())?;
            write_expr(f, right, p.next())
        }
        ExprKind::Between { expr, low, high, negated } => {
            write_expr(f, expr, Precedence::Concat)?;
            f.write_str(if *negated { " NOT BETWEEN " } else { " BETWEEN " })?;
            write_expr(f, low, Precedence::Concat)?;
            f.write_str(" AND ")?;
            write_expr(f, high, Precedence::Concat)
        }
        ExprKind::In { expr, list, negated } => {
            write_expr(f, expr, Precedence::Concat)?;
            f.write_str(if *negated { " NOT IN (" } else { " IN (" })?;
            comma_list(f, list)?;
            f.write_char(')')
        }
        ExprKind::Like { expr, pattern, escape, negated } => {
            write_expr(f, expr, Precedence::Concat)?;
            f.write_str(if *negated { " NOT LIKE " } else { " LIKE " })?;
            write_expr(f, pattern, Precedence::Concat)?;
            if let Some(esc) = escape {
                f.write_str(" ESCAPE ")?;
                write_string(f, esc)?;
            }
            Ok(())
        }
        ExprKind::Conditional { condition, then, otherwise } => {
            write_expr(f, condition, Precedence::Coalesce)?;
            f.write_str(" ? ")?;
            write_expr(f, then, Precedence::Lowest)?;
            f.write_str(" : ")?;
            write_expr(f, otherwise, Precedence::Conditional)
        }
        ExprKind::Call { name, udf, args } => {
            if *udf {
                f.write_str("udf.")?;
            }
            write!(f, "{}(", name.name)?;
            comma_list(f, args)?;
            f.write_char(')')
        }
        ExprKind::Subquery(q) => write!(f, "({q})"),
        ExprKind::Exists(q) => write!(f, "EXISTS({q})"),
        ExprKind::ArraySubquery(q) => write!(f, "ARRAY({q})"),
    }
}

/// Numbers print in their shortest round-trip form; `NaN` and `Infinity` are literals of their own
/// (an overflowing `1e999` prints as `Infinity`).
fn write_number(f: &mut Formatter<'_>, n: f64) -> fmt::Result {
    if n.is_nan() {
        f.write_str("NaN")
    } else if n.is_infinite() {
        f.write_str(if n > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        write!(f, "{n}")
    }
}

/// A double-quoted string literal with JSON-style escapes.
pub(crate) fn write_string(f: &mut impl Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            '\u{8}' => f.write_str("\\b")?,
            '\u{c}' => f.write_str("\\f")?,
            c if (c as u32) < 0x20 || c == '\u{7f}' => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}
