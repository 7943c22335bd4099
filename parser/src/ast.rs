//! The spanned syntax tree of a Cosmos DB for NoSQL query.
//!
//! Every node carries the byte [`Span`] it was parsed from. Spans never take part in equality
//! (see [`Span`]), so trees compare by meaning. `Display` (in `display.rs`) prints a tree back as SQL.

use crate::span::Span;

/// A whole query: `SELECT ... [FROM ...] [WHERE ...] [GROUP BY ...] [ORDER BY ...] [OFFSET .. LIMIT ..]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub select: SelectClause,
    pub from: Option<FromClause>,
    pub where_clause: Option<Expr>,
    /// Empty when there is no `GROUP BY`.
    pub group_by: Vec<Expr>,
    /// Empty when there is no `ORDER BY`.
    pub order_by: Vec<OrderByItem>,
    /// `ORDER BY RANK <scoring function>` (FullTextScore, RRF): rank by relevance.
    pub order_by_rank: bool,
    pub offset_limit: Option<OffsetLimit>,
    pub span: Span,
}

/// `SELECT [DISTINCT] [TOP n] <projection>`.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectClause {
    pub distinct: bool,
    pub top: Option<Count>,
    pub projection: Projection,
    pub span: Span,
}

/// What `SELECT` returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    /// `SELECT *`
    Star(Span),
    /// `SELECT VALUE expr`
    Value(Expr),
    /// `SELECT expr [AS alias], ...`
    List(Vec<SelectItem>),
}

/// One item of a select list.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectItem {
    pub expr: Expr,
    pub alias: Option<Ident>,
    pub span: Span,
}

/// A name with its location.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A row count in `TOP`, `OFFSET` or `LIMIT`: a literal or a parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Count {
    Literal {
        value: u64,
        span: Span,
    },
    /// The parameter's name without `@`.
    Parameter(Ident),
}

/// `FROM <source> [JOIN <source>]...`.
#[derive(Debug, Clone, PartialEq)]
pub struct FromClause {
    pub source: FromSource,
    pub joins: Vec<FromSource>,
    pub span: Span,
}

/// One input of `FROM` or `JOIN`.
#[derive(Debug, Clone, PartialEq)]
pub enum FromSource {
    /// `<collection> [[AS] alias]`: each item (or the value at the path) once.
    Aliased { collection: Collection, alias: Option<Ident>, span: Span },
    /// `alias IN <expr>`: each element of the array the expression gives (`t IN c.tags`,
    /// `kv IN ObjectToArray(c.meta)`).
    Iterate { alias: Ident, array: Expr, span: Span },
}

/// What a `FROM`/`JOIN` source reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Collection {
    /// `name` (the container, e.g. `c`, `root`, `Families`, or an earlier alias) followed by a path:
    /// `c.children[0]["first name"]`.
    Path { root: Ident, path: Vec<PathSegment>, span: Span },
    /// `(SELECT ...)`.
    Subquery(Box<Query>),
}

/// One step of a collection path.
#[derive(Debug, Clone, PartialEq)]
pub enum PathSegment {
    /// `.name`
    Property(Ident),
    /// `["name"]`
    Key { name: String, span: Span },
    /// `[3]`
    Index { index: u64, span: Span },
}

/// `ORDER BY` item.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderByItem {
    pub expr: Expr,
    /// `None` when no direction was written (ascending).
    pub direction: Option<SortDirection>,
    pub span: Span,
}

/// `ASC` or `DESC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortDirection {
    Asc,
    Desc,
}

/// `OFFSET n LIMIT m`.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetLimit {
    pub offset: Count,
    pub limit: Count,
    pub span: Span,
}

/// A scalar expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// The shapes of scalar expressions.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// A bare identifier: an alias from `FROM`/`JOIN`, or the container name.
    Identifier(String),
    /// `@name` (stored without `@`).
    Parameter(String),
    /// `base.name`
    Property {
        base: Box<Expr>,
        name: Ident,
    },
    /// `base[index]`: `c["a b"]`, `c.tags[0]`, `c[@key]`.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `[a, b, ...]`
    Array(Vec<Expr>),
    /// `{name: value, "other name": value}`
    Object(Vec<ObjectProperty>),
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `expr [NOT] BETWEEN low AND high`
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    /// `expr [NOT] IN (a, b, ...)`
    In {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    /// `expr [NOT] LIKE pattern [ESCAPE 'c']`
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<String>,
        negated: bool,
    },
    /// `cond ? then : otherwise`
    Conditional {
        condition: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// `name(args)` or `udf.name(args)`
    Call {
        name: Ident,
        udf: bool,
        args: Vec<Expr>,
    },
    /// `(SELECT ...)`
    Subquery(Box<Query>),
    /// `EXISTS(SELECT ...)`
    Exists(Box<Query>),
    /// `ARRAY(SELECT ...)`
    ArraySubquery(Box<Query>),
}

/// A constant.
#[derive(Debug, Clone)]
pub enum Literal {
    Undefined,
    Null,
    Bool(bool),
    /// Also `NaN` and `Infinity`.
    Number(f64),
    String(String),
}

/// Numbers compare by bits, so a `NaN` literal equals itself (trees compare by what was written).
impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Literal::Number(a), Literal::Number(b)) => a.to_bits() == b.to_bits(),
            (Literal::String(a), Literal::String(b)) => a == b,
            (Literal::Bool(a), Literal::Bool(b)) => a == b,
            (Literal::Null, Literal::Null) | (Literal::Undefined, Literal::Undefined) => true,
            _ => false,
        }
    }
}

/// A property of an object constructor.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectProperty {
    pub name: Ident,
    pub value: Expr,
}

/// Prefix operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-`
    Negate,
    /// `+`
    Plus,
    /// `~`
    BitNot,
    /// `NOT`
    Not,
}

/// Infix operators (each left-associative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Multiply,
    Divide,
    Modulo,
    Add,
    Subtract,
    ShiftLeft,
    ShiftRight,
    ShiftRightZeroFill,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Eq,
    /// `!=` (also written `<>`)
    NotEq,
    BitAnd,
    BitXor,
    BitOr,
    /// `||`
    Concat,
    And,
    Or,
    /// `??`
    Coalesce,
}

impl BinaryOp {
    /// The operator's text.
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::Add => "+",
            BinaryOp::Subtract => "-",
            BinaryOp::ShiftLeft => "<<",
            BinaryOp::ShiftRight => ">>",
            BinaryOp::ShiftRightZeroFill => ">>>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "!=",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitXor => "^",
            BinaryOp::BitOr => "|",
            BinaryOp::Concat => "||",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
            BinaryOp::Coalesce => "??",
        }
    }

    /// Binding strength: higher binds tighter. See [`Precedence`].
    pub fn precedence(self) -> Precedence {
        match self {
            BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::Modulo => Precedence::Multiplicative,
            BinaryOp::Add | BinaryOp::Subtract => Precedence::Additive,
            BinaryOp::ShiftLeft | BinaryOp::ShiftRight | BinaryOp::ShiftRightZeroFill => Precedence::Shift,
            BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq => Precedence::Relational,
            BinaryOp::Eq | BinaryOp::NotEq => Precedence::Equality,
            BinaryOp::BitAnd => Precedence::BitAnd,
            BinaryOp::BitXor => Precedence::BitXor,
            BinaryOp::BitOr => Precedence::BitOr,
            BinaryOp::Concat => Precedence::Concat,
            BinaryOp::And => Precedence::And,
            BinaryOp::Or => Precedence::Or,
            BinaryOp::Coalesce => Precedence::Coalesce,
        }
    }
}

/// Operator precedence, loosest first. The parser and the printer both read this one table.
///
/// The binary levels from `Multiplicative` to `Concat` follow the grammar Microsoft publishes for
/// Cosmos DB SQL (the .NET SDK's `sql.g4`: `* / %` > `+ -` > relational > equality > `&` > `^` > `|` >
/// `||`), with the shifts placed between additive and relational as in JavaScript, whose bitwise
/// semantics Cosmos DB follows. `IN`, `LIKE` and `BETWEEN` take operands of the `Concat` level, as in
/// that grammar. `NOT` binds looser than comparisons and tighter than `AND` (documented: NOT, then AND,
/// then OR), so `NOT c.a = 1` is `NOT (c.a = 1)`. `??` and `? :` are the loosest, as in C# and
/// JavaScript, which the documentation names as their model; `? :` is right-associative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Precedence {
    /// The level of a whole expression (anything goes).
    Lowest,
    Conditional,
    Coalesce,
    Or,
    And,
    Not,
    /// `IN`, `LIKE`, `BETWEEN`
    Comparison,
    Concat,
    BitOr,
    BitXor,
    BitAnd,
    Equality,
    Relational,
    Shift,
    Additive,
    Multiplicative,
    /// `-x`, `+x`, `~x`
    Unary,
    /// Literals, paths, calls, constructors, parenthesized expressions.
    Primary,
}

impl Precedence {
    /// The next tighter level (`Primary` stays `Primary`).
    pub fn next(self) -> Precedence {
        use Precedence::*;
        match self {
            Lowest => Conditional,
            Conditional => Coalesce,
            Coalesce => Or,
            Or => And,
            And => Not,
            Not => Comparison,
            Comparison => Concat,
            Concat => BitOr,
            BitOr => BitXor,
            BitXor => BitAnd,
            BitAnd => Equality,
            Equality => Relational,
            Relational => Shift,
            Shift => Additive,
            Additive => Multiplicative,
            Multiplicative => Unary,
            Unary | Primary => Primary,
        }
    }
}

impl Expr {
    /// The precedence level at which this expression was (or would be) parsed.
    pub fn precedence(&self) -> Precedence {
        match &self.kind {
            ExprKind::Binary { op, .. } => op.precedence(),
            ExprKind::Unary { op: UnaryOp::Not, .. } => Precedence::Not,
            ExprKind::Unary { .. } => Precedence::Unary,
            ExprKind::Between { .. } | ExprKind::In { .. } | ExprKind::Like { .. } => Precedence::Comparison,
            ExprKind::Conditional { .. } => Precedence::Conditional,
            _ => Precedence::Primary,
        }
    }

    /// The direct sub-expressions, in text order, not those inside a subquery (see
    /// [`Expr::subquery`]): the one list every walk over expressions uses.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Literal(_) | ExprKind::Identifier(_) | ExprKind::Parameter(_) => vec![],
            ExprKind::Subquery(_) | ExprKind::Exists(_) | ExprKind::ArraySubquery(_) => vec![],
            ExprKind::Property { base, .. } => vec![base],
            ExprKind::Index { base, index } => vec![base, index],
            ExprKind::Array(items) => items.iter().collect(),
            ExprKind::Object(props) => props.iter().map(|p| &p.value).collect(),
            ExprKind::Unary { operand, .. } => vec![operand],
            ExprKind::Binary { left, right, .. } => vec![left, right],
            ExprKind::Between { expr, low, high, .. } => vec![expr, low, high],
            ExprKind::In { expr, list, .. } => std::iter::once(&**expr).chain(list).collect(),
            ExprKind::Like { expr, pattern, .. } => vec![expr, pattern],
            ExprKind::Conditional { condition, then, otherwise } => vec![condition, then, otherwise],
            ExprKind::Call { args, .. } => args.iter().collect(),
        }
    }

    /// The query of `(SELECT ...)`, `EXISTS(SELECT ...)` or `ARRAY(SELECT ...)`.
    pub fn subquery(&self) -> Option<&Query> {
        match &self.kind {
            ExprKind::Subquery(q) | ExprKind::Exists(q) | ExprKind::ArraySubquery(q) => Some(q),
            _ => None,
        }
    }
}
