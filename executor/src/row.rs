//! Rows: what a query's aliases are bound to while it runs, and where each row comes from.

use cosmoql_storage::{ItemPosition, StoredItem};
use cosmoql_value::Value;

/// What a row slot holds: a stored item (read lazily from its binary form) or a value.
#[derive(Debug, Clone)]
pub enum Binding {
    Undefined,
    Item(StoredItem),
    Value(Value),
}

/// A row: one binding per alias in scope (outer queries' aliases first).
pub type Row = Vec<Binding>;

/// Where a row comes from in scan order: its item's position, then its place among the rows the
/// item expands into (JOINs). Rows of sources that read no item have no item position; their
/// `sub` counts rows in arrival order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowPos {
    pub item: Option<ItemPosition>,
    pub sub: u64,
}
