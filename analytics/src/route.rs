//! Cosmos SQL routed to the analytical store: an aggregate query the mirror answers exactly runs
//! there, through DataFusion, instead of on the row engine ([`AnalyticalRoute`], a
//! [`cosmoql::QueryRoute`] a client is given with `ContainerClient::with_route`).
//!
//! "Exactly" means the results are the row engine's (groups in another order: neither engine
//! promises one). It holds when every property the query reads is, in the mirror, a column of one
//! scalar type with a value in every item, so that Cosmos DB's undefined, null and cross-type rules
//! never come into play:
//!
//! * **the query**: `FROM c` alone (no JOIN, no subquery), COUNT, SUM, AVG, MIN and MAX of
//!   properties (COUNT of a constant too), GROUP BY properties, SELECT of aggregates and of the
//!   grouped properties; a filter of comparisons, BETWEEN and IN of a property with constants of
//!   its type, boolean properties, AND, OR and NOT; no DISTINCT, ORDER BY, TOP or OFFSET;
//! * **the mirror**: well-defined schema; it holds the container's items, no more and no fewer
//!   (no item left out for a mixed-type array; the two times to live cannot disagree on which
//!   items are there); every property read has kept every value it had, under that very name
//!   (no value of another type dropped, no spelling in another case); and none is null or
//!   missing in any item.
//!
//! The mirror syncs before the check (unless its sync policy says otherwise: then a mirror behind
//! its container holds other items, and the query stays on the row engine until it catches up).
//!
//! SUM and AVG add doubles, as the row engine does; in another order (the row engine's changes
//! with the partitions too), so a sum of numbers with fractions may differ in its last bits.
//! SUM over no items is 0; AVG, MIN and MAX over none are undefined (the property is left out),
//! as on the row engine.

use std::sync::Arc;

use cosmoql::executor::{QueryError, QueryOptions};
use cosmoql::planner::bound::{AggregateSpec, BoundExpr, BoundProjection, BoundQuery, SourceKind, Step};
use cosmoql::planner::{bind, AggregateKind, BindContext, Plan};
use cosmoql::{QueryRoute, Routing};
use cosmoql_storage::Container;
use cosmoql_value::{Map, Value};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::DataFusionError;

use crate::mirror::Snapshot;
use crate::schema::{ColumnType, ObjectSchema, Schema, SchemaMode};
use crate::session::Analytics;
use crate::table::MirrorTable;

/// The engine's name, as EXPLAIN writes it.
pub const ENGINE: &str = "analytical store";

/// Routes the aggregate queries its analytical store answers exactly (see the module's text).
#[derive(Debug)]
pub struct AnalyticalRoute {
    analytics: Arc<Analytics>,
}

impl AnalyticalRoute {
    pub fn new(analytics: Arc<Analytics>) -> AnalyticalRoute {
        AnalyticalRoute { analytics }
    }

    /// The statement `plan` becomes on `container`'s mirror, synced now, with the snapshot it
    /// was checked against; or why the query stays on the row engine.
    /// (Whether the request allows routing at all is the client's to ask first.)
    fn check(&self, container: &Arc<Container>, plan: &Plan, options: &QueryOptions) -> Result<Checked, String> {
        // Bound again: the plan drops a filter its partition targets answer whole (the mirror
        // reads every partition, so it filters itself).
        let udfs = options.udfs.as_ref().map(|host| host.names()).unwrap_or_default();
        let context =
            BindContext { parameters: &options.parameters, vector_policies: &options.vector_policies, udfs: &udfs };
        let query = bind(&plan.syntax, context).map_err(|e| format!("it did not bind again (a bug): {e}"))?;
        let shape = shape_of(&query)?;
        let Some((database, id, mirror)) = self.analytics.mirror_of(container) else {
            return Err("the container has no analytical store".into());
        };
        if self.analytics.mode() != SchemaMode::WellDefined {
            return Err("the analytical store keeps a full-fidelity schema (a column a type)".into());
        }
        if container.analytical_ttl() != Some(-1) && container.default_ttl().is_some() {
            return Err("the container's and the analytical time to live both let items go: the two may hold \
                        different items"
                .into());
        }
        self.analytics.catch_up(&mirror).map_err(|e| format!("the analytical store could not sync: {e}"))?;
        // The schema after the snapshot: it has seen at least what the snapshot holds.
        let snapshot = mirror.snapshot();
        let schema = mirror.schema();
        if schema.dropped().items > 0 {
            return Err(format!(
                "the analytical store has left items out ({} so far, for mixed-type arrays)",
                schema.dropped().items
            ));
        }
        let rows = snapshot.rows();
        if rows != container.item_count() {
            return Err(format!("the analytical store holds {rows} items, the container {}", container.item_count()));
        }
        let table = format!("{}.{}", ident(&database), ident(&id));
        let mut sql = Sql { schema: &schema, snapshot: &snapshot, read: Vec::new() };
        let statement = sql.statement(&query, &table)?;
        let why = if sql.read.is_empty() {
            "an aggregate that reads no property".to_string()
        } else {
            format!("an aggregate over columns of one type, in every item ({})", sql.read.join(", "))
        };
        Ok(Checked { database, container: id, snapshot, statement, shape, why })
    }
}

/// A query the mirror answers.
struct Checked {
    database: String,
    container: String,
    snapshot: Arc<Snapshot>,
    statement: String,
    shape: Shape,
    why: String,
}

impl QueryRoute for AnalyticalRoute {
    fn route(&self, container: &Arc<Container>, plan: &Plan, options: &QueryOptions) -> Routing {
        match self.check(container, plan, options) {
            Ok(checked) => Routing::Elsewhere { engine: ENGINE.into(), why: checked.why, runs: checked.statement },
            Err(why) => Routing::RowEngine { why },
        }
    }

    fn answer(
        &self,
        container: &Arc<Container>,
        plan: &Plan,
        options: &QueryOptions,
    ) -> Option<Result<Vec<Value>, QueryError>> {
        let checked = self.check(container, plan, options).ok()?;
        if options.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            return Some(Err(QueryError::cancelled()));
        }
        let budget = options.memory_budget.unwrap_or(cosmoql::DEFAULT_MEMORY_BUDGET);
        match self.run(container, checked, usize::try_from(budget).unwrap_or(usize::MAX)) {
            Ok(values) => Some(Ok(values)),
            // Past the query's memory budget: the row engine runs it, holding it to the budget
            // as it holds every query (and failing it as it fails them, if it must).
            Err(Failure::Budget) => None,
            Err(Failure::Bug(e)) => Some(Err(QueryError::internal(format!(
                "the analytical store failed a query routed to it (a bug): {e}"
            )))),
        }
    }
}

/// Why a routed statement did not finish.
enum Failure {
    /// It needed more memory than the query's budget.
    Budget,
    /// Anything else: a bug.
    Bug(String),
}

impl AnalyticalRoute {
    /// Runs a checked statement on its snapshot; its rows as the Cosmos query's results.
    fn run(&self, container: &Arc<Container>, checked: Checked, budget: usize) -> Result<Vec<Value>, Failure> {
        let table = Arc::new(MirrorTable::new(checked.snapshot, container.partition_key().clone()));
        let ctx = self
            .analytics
            .context_over(&checked.database, &checked.container, table, budget)
            .map_err(|e| Failure::Bug(e.message))?;
        let batches: Vec<RecordBatch> = self
            .analytics
            .block_on(async {
                let frame = ctx.sql(&checked.statement).await?;
                frame.collect().await
            })
            .map_err(|e| match e.find_root() {
                DataFusionError::ResourcesExhausted(_) => Failure::Budget,
                _ => Failure::Bug(e.strip_backtrace()),
            })?;
        let mut out = Vec::new();
        for batch in &batches {
            let mut columns: Vec<std::vec::IntoIter<Value>> = batch
                .columns()
                .iter()
                .map(|c| crate::values::column(c.as_ref()).map(Vec::into_iter))
                .collect::<Result<_, _>>()
                .map_err(|e| Failure::Bug(e.to_string()))?;
            for _ in 0..batch.num_rows() {
                // A null is an aggregate over no items (nothing read is null): undefined.
                let mut row = columns.iter_mut().map(|c| match c.next() {
                    Some(Value::Null) | None => Value::Undefined,
                    Some(v) => v,
                });
                match &checked.shape {
                    Shape::Value => {
                        if let Some(v) = row.next().filter(|v| !v.is_undefined()) {
                            out.push(v);
                        }
                    }
                    Shape::List(names) => {
                        let mut map = Map::default();
                        for (name, v) in names.iter().zip(row) {
                            if !v.is_undefined() {
                                map.insert(name.clone(), v);
                            }
                        }
                        out.push(Value::from(map));
                    }
                }
            }
        }
        Ok(out)
    }
}

/// What each result is: the one column's value (`SELECT VALUE`), or an object of the columns
/// under these names.
#[derive(Debug, Clone)]
enum Shape {
    Value,
    List(Vec<String>),
}

/// The result's shape, when the query has one the mirror can answer.
fn shape_of(query: &BoundQuery) -> Result<Shape, String> {
    if !matches!(query.sources.as_slice(), [s] if matches!(s.kind, SourceKind::Items)) {
        return Err("it reads more than the container's items (a JOIN, or FROM a path or a subquery)".into());
    }
    if !query.is_aggregate() {
        return Err("it does not aggregate (only aggregates are routed)".into());
    }
    if query.distinct || !query.order_by.is_empty() || query.rank.is_some() {
        return Err("it has DISTINCT or ORDER BY".into());
    }
    if query.offset != 0 || query.limit.is_some() {
        return Err("it has TOP or OFFSET LIMIT".into());
    }
    Ok(match &query.projection {
        BoundProjection::Value(_) => Shape::Value,
        BoundProjection::List(items) => Shape::List(items.iter().map(|(name, _)| name.clone()).collect()),
        BoundProjection::Star(_) => return Err("it selects *".into()),
    })
}

/// The type family a property is read as.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Family {
    /// Any scalar (counted, MIN and MAX).
    Scalar,
    /// A scalar to group by: not a float64 column (-0 and 0 are one group in Cosmos SQL, and
    /// floating-point keys are left to the row engine's rules).
    Key,
    Number,
    String,
    Bool,
}

/// Writes a bound query as a DataFusion statement, checking each property it reads against the
/// schema and the snapshot.
struct Sql<'a> {
    schema: &'a Schema,
    snapshot: &'a Snapshot,
    /// The properties read, with their types (for EXPLAIN).
    read: Vec<String>,
}

impl Sql<'_> {
    fn statement(&mut self, query: &BoundQuery, table: &str) -> Result<String, String> {
        let item = query.item_slot().ok_or("it does not read the container's items")?;
        let mut groups = Vec::new();
        for g in query.group_by.iter().flatten() {
            let path = path_of(g, item).ok_or("it groups by something other than properties")?;
            groups.push((path.clone(), self.column(&path, Family::Key)?));
        }
        let exprs: Vec<&BoundExpr> = match &query.projection {
            BoundProjection::Value(e) => vec![e],
            BoundProjection::List(items) => items.iter().map(|(_, e)| e).collect(),
            BoundProjection::Star(_) => return Err("it selects *".into()),
        };
        let mut select = Vec::new();
        for (i, e) in exprs.into_iter().enumerate() {
            let sql = match e {
                BoundExpr::Aggregate(a) => self.aggregate(&query.aggregates[*a], item)?,
                e => match path_of(e, item).and_then(|p| groups.iter().find(|(g, _)| *g == p)) {
                    Some((_, sql)) => sql.clone(),
                    None => return Err("it selects something other than aggregates and grouped properties".into()),
                },
            };
            select.push(format!("{sql} AS \"o{i}\""));
        }
        let mut statement = format!("SELECT {} FROM {table}", select.join(", "));
        if let Some(filter) = &query.filter {
            statement.push_str(" WHERE ");
            statement.push_str(&self.predicate(filter, item)?);
        }
        if !groups.is_empty() {
            let keys: Vec<&str> = groups.iter().map(|(_, sql)| sql.as_str()).collect();
            statement.push_str(" GROUP BY ");
            statement.push_str(&keys.join(", "));
        }
        Ok(statement)
    }

    fn aggregate(&mut self, spec: &AggregateSpec, item: usize) -> Result<String, String> {
        if let (AggregateKind::Count, BoundExpr::Const(v)) = (spec.kind, &spec.arg) {
            return if v.is_undefined() { Err("it counts undefined".into()) } else { Ok("count(*)".into()) };
        }
        let path = path_of(&spec.arg, item).ok_or("it aggregates something other than a property")?;
        Ok(match spec.kind {
            AggregateKind::Count => format!("count({})", self.column(&path, Family::Scalar)?),
            // Doubles, as the row engine adds them (an integer column's sum never wraps).
            AggregateKind::Sum => {
                format!("coalesce(sum(CAST({} AS DOUBLE)), 0.0)", self.column(&path, Family::Number)?)
            }
            AggregateKind::Avg => format!("avg(CAST({} AS DOUBLE))", self.column(&path, Family::Number)?),
            AggregateKind::Min => format!("min({})", self.column(&path, Family::Scalar)?),
            AggregateKind::Max => format!("max({})", self.column(&path, Family::Scalar)?),
            AggregateKind::CountIf | AggregateKind::MakeList | AggregateKind::MakeSet => {
                return Err("it uses COUNTIF, MAKELIST or MAKESET".into())
            }
        })
    }

    /// A filter as a boolean DataFusion expression (two-valued: nothing it reads is null).
    fn predicate(&mut self, e: &BoundExpr, item: usize) -> Result<String, String> {
        use cosmoql::parser::ast::{BinaryOp, UnaryOp};
        let unsupported = || {
            "its filter is not only comparisons of properties with constants of their type (with BETWEEN, IN, AND, \
             OR and NOT)"
                .to_string()
        };
        Ok(match e {
            BoundExpr::Const(Value::Bool(b)) => b.to_string().to_uppercase(),
            BoundExpr::Unary(UnaryOp::Not, x) => format!("(NOT {})", self.predicate(x, item)?),
            BoundExpr::Binary(op @ (BinaryOp::And | BinaryOp::Or), l, r) => {
                let word = if *op == BinaryOp::And { "AND" } else { "OR" };
                format!("({} {word} {})", self.predicate(l, item)?, self.predicate(r, item)?)
            }
            BoundExpr::Binary(op, l, r) => {
                let text = match op {
                    BinaryOp::Eq => "=",
                    BinaryOp::NotEq => "<>",
                    BinaryOp::Lt => "<",
                    BinaryOp::LtEq => "<=",
                    BinaryOp::Gt => ">",
                    BinaryOp::GtEq => ">=",
                    _ => return Err(unsupported()),
                };
                // `5 < c.x` is `c.x > 5`.
                let (path, constant, text) = match (path_of(l, item), path_of(r, item), l.as_ref(), r.as_ref()) {
                    (Some(p), None, _, BoundExpr::Const(v)) => (p, v, text),
                    (None, Some(p), BoundExpr::Const(v), _) => (p, v, flip(text)),
                    _ => return Err(unsupported()),
                };
                let (literal, family) = literal(constant).ok_or_else(unsupported)?;
                format!("({} {text} {literal})", self.column(&path, family)?)
            }
            BoundExpr::Between { expr, low, high, negated } => {
                let path = path_of(expr, item).ok_or_else(unsupported)?;
                let (BoundExpr::Const(lo), BoundExpr::Const(hi)) = (low.as_ref(), high.as_ref()) else {
                    return Err(unsupported());
                };
                let ((lo, f1), (hi, f2)) = (literal(lo).ok_or_else(unsupported)?, literal(hi).ok_or_else(unsupported)?);
                if f1 != f2 {
                    return Err(unsupported());
                }
                let not = if *negated { "NOT " } else { "" };
                format!("({} {not}BETWEEN {lo} AND {hi})", self.column(&path, f1)?)
            }
            BoundExpr::In { expr, list, negated, .. } => {
                let path = path_of(expr, item).ok_or_else(unsupported)?;
                let mut literals = Vec::new();
                let mut family = None;
                for v in list {
                    let BoundExpr::Const(v) = v else { return Err(unsupported()) };
                    let (text, f) = literal(v).ok_or_else(unsupported)?;
                    if family.is_some_and(|g| g != f) {
                        return Err(unsupported());
                    }
                    family = Some(f);
                    literals.push(text);
                }
                let family = family.ok_or_else(unsupported)?;
                let not = if *negated { "NOT " } else { "" };
                format!("({} {not}IN ({}))", self.column(&path, family)?, literals.join(", "))
            }
            e => match path_of(e, item) {
                Some(path) => self.column(&path, Family::Bool)?,
                None => return Err(unsupported()),
            },
        })
    }

    /// The column at `path`, read as `family`: it must hold that one type, every value it had,
    /// under this very name, and a value in every item of the snapshot.
    fn column(&mut self, path: &[String], family: Family) -> Result<String, String> {
        let shown = format!("c.{}", path.join("."));
        let mut fields: &ObjectSchema = self.schema.columns();
        let mut ty = None;
        for (depth, step) in path.iter().enumerate() {
            let field = fields
                .fields()
                .iter()
                .find(|f| f.name == *step)
                .ok_or_else(|| format!("{shown} is not a column of the analytical store"))?;
            if !field.exact {
                return Err(format!(
                    "{shown} has had values the analytical store does not represent (of another type, or under a \
                     name equal but for case)"
                ));
            }
            match &field.ty {
                ColumnType::Object(inner) if depth + 1 < path.len() => fields = inner,
                t if depth + 1 == path.len() => ty = Some(t),
                _ => return Err(format!("{shown} is not a column of the analytical store")),
            }
        }
        let ty = ty.ok_or_else(|| format!("{shown} is not a column of the analytical store"))?;
        let fits = match (family, ty) {
            (_, ColumnType::Null | ColumnType::Array(_) | ColumnType::Object(_) | ColumnType::Variants(_)) => false,
            (Family::Scalar, _) => true,
            (Family::Key, t) => !matches!(t, ColumnType::Float64),
            (Family::Number, t) => matches!(t, ColumnType::Int64 | ColumnType::Float64),
            (Family::String, t) => matches!(t, ColumnType::String),
            (Family::Bool, t) => matches!(t, ColumnType::Bool),
        };
        if family == Family::Key && matches!(ty, ColumnType::Float64) {
            return Err(format!("{shown} holds float64: grouping by numbers with fractions stays on the row engine"));
        }
        if !fits {
            return Err(format!("{shown} holds {}, read here as another type", ty.name()));
        }
        if let Some(items) = self.nulls(path) {
            return Err(format!("{shown} is null or missing in {items} item(s)"));
        }
        let entry = format!("{shown} {}", ty.name());
        if !self.read.contains(&entry) {
            self.read.push(entry);
        }
        let mut sql = ident(&path[0]);
        for step in &path[1..] {
            sql = format!("{sql}[{}]", string(step));
        }
        Ok(sql)
    }

    /// The items of the snapshot where `path` has no value (`None`: there are none).
    fn nulls(&self, path: &[String]) -> Option<usize> {
        let mut missing = 0;
        for partition in &self.snapshot.partitions {
            for batch in &partition.batches {
                let mut array = batch.column_by_name(&path[0]).map(Arc::clone);
                for step in &path[1..] {
                    array = match array {
                        Some(a) if a.null_count() == 0 && matches!(a.data_type(), DataType::Struct(_)) => {
                            a.as_struct().column_by_name(step).map(Arc::clone)
                        }
                        _ => None,
                    };
                }
                missing += match array {
                    Some(a) => a.null_count(),
                    None => batch.num_rows(),
                };
            }
        }
        (missing > 0).then_some(missing)
    }
}

/// The property path `e` reads from the item (`c.a.b`), when it is one.
fn path_of(e: &BoundExpr, item: usize) -> Option<Vec<String>> {
    match e {
        BoundExpr::Path { slot, steps } if *slot == item && !steps.is_empty() => steps
            .iter()
            .map(|s| match s {
                Step::Key(k) => Some(k.clone()),
                Step::Index(_) => None,
            })
            .collect(),
        _ => None,
    }
}

/// A constant as a DataFusion literal, with its type family (scalars only).
fn literal(v: &Value) -> Option<(String, Family)> {
    match v {
        Value::Bool(b) => Some((b.to_string().to_uppercase(), Family::Bool)),
        // Shortest round-trip digits (`0.1`, `1e-7`, `5.0`): parsed back to the same double.
        Value::Number(n) if n.is_finite() => Some((format!("{n:?}"), Family::Number)),
        Value::String(s) => Some((string(s), Family::String)),
        _ => None,
    }
}

/// The comparison with its sides swapped.
fn flip(op: &'static str) -> &'static str {
    match op {
        "<" => ">",
        "<=" => ">=",
        ">" => "<",
        ">=" => "<=",
        other => other,
    }
}

/// A quoted identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A quoted string literal.
fn string(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
