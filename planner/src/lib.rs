//! The query planner: from query text to one [`Plan`].
//!
//! ```text
//! text ─ rules::check_text ─ parse ─ rules::check_limits ─ bind ─ prune ─ Plan { query, targets, strategy, paging }
//! ```
//!
//! - [`bind`] (the binder) resolves aliases, parameters and functions into a [`BoundQuery`]
//!   (`bound.rs`), folding constants with the operators' semantics ([`ops`]) and making the
//!   service's rejections ([`rules`]).
//! - [`prune`] reads the bound WHERE clause (equalities and `IN` on the partition key paths, `OR`
//!   of them, `AND` with other predicates, hierarchical key prefixes and synthetic keys) and
//!   returns the keys or EPK ranges that can hold matching items, with a reason for EXPLAIN.
//! - [`plan()`] chooses how the query runs across partitions ([`Strategy`]) and how its pages
//!   resume ([`Paging`]); the plan's `Display` is EXPLAIN.
//!
//! The executor runs plans; see `docs/ARCHITECTURE.md` for the whole path of a query.

pub mod access;
pub mod bind;
pub mod bound;
pub mod choices;
pub mod error;
pub mod functions;
pub mod ops;
pub mod plan;
pub mod policy;
pub mod prune;
pub mod rules;
pub mod spatial;

pub use access::{Access, IndexOrder, PredicateAccess, PredicateStrategy};
pub use bind::{bind, BindContext};
pub use bound::{
    compare_sort_keys, fusion_window, AggregateSpec, BoundExpr, BoundProjection, BoundQuery, RankComponent, RankFn,
    SortKey, Source, SourceKind, Step, SubqueryKind,
};
pub use choices::{OrderedRead, UnitShare, SCAN_SHARE, SEEK_THEN_SORT, WALK_ENTRIES_PER_ITEM};
pub use error::{PlanError, PlanErrorKind};
pub use functions::{AggregateKind, FunctionId, FunctionKind, Signature};
pub use plan::{plan, OnePassReason, Paging, PartitionTargets, Plan, PlanContext, PointRead, Strategy};
pub use policy::VectorPolicy;
pub use prune::{prune, Pruning, Targets, MAX_KEYS};
pub use rules::{Limits, LIMITS};
