//! The signatures of the system functions: names, argument counts, and how the binder treats
//! them. The bodies live in the executor (`cosmoql_executor::functions`), which maps every
//! [`FunctionId`] to one; a test there checks that every signature has a body and every body a
//! signature.
//!
//! Names are case-insensitive (`upper`, `UPPER` and `Upper` are one function).

use std::collections::HashMap;
use std::sync::OnceLock;

/// The aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggregateKind {
    Count,
    /// `COUNTIF(condition)`: the rows where the condition is true.
    CountIf,
    Sum,
    Avg,
    Min,
    Max,
    /// `MAKELIST(x)`: the values, in scan order, duplicates kept.
    MakeList,
    /// `MAKESET(x)`: the distinct values, in order of first appearance.
    MakeSet,
}

impl AggregateKind {
    /// The name as the service spells it.
    pub fn name(self) -> &'static str {
        match self {
            AggregateKind::Count => "COUNT",
            AggregateKind::CountIf => "COUNTIF",
            AggregateKind::Sum => "SUM",
            AggregateKind::Avg => "AVG",
            AggregateKind::Min => "MIN",
            AggregateKind::Max => "MAX",
            AggregateKind::MakeList => "MAKELIST",
            AggregateKind::MakeSet => "MAKESET",
        }
    }
}

/// How the binder treats a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// Evaluated per row from its arguments.
    Scalar,
    /// Evaluated per row, but one value for the whole query (`GetCurrentDateTimeStatic`, ...).
    PerQuery,
    /// An aggregate: only in SELECT and ORDER BY, over the rows of a group.
    Aggregate(AggregateKind),
    /// A scoring function: only in `ORDER BY RANK` (`FullTextScore`, `RRF`).
    Ranking,
    /// `DocumentId(alias)`: the item's numeric id, read from the row's binding.
    DocumentId,
}

/// One function's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// The name as documented.
    pub name: &'static str,
    pub min_args: usize,
    /// `None`: any number from `min_args` up.
    pub max_args: Option<usize>,
    pub kind: FunctionKind,
}

impl Signature {
    /// Whether `n` arguments fit.
    pub fn accepts(&self, n: usize) -> bool {
        n >= self.min_args && self.max_args.is_none_or(|m| n <= m)
    }
}

/// A function, as an index into [`SIGNATURES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionId(pub u16);

impl FunctionId {
    /// Its signature.
    pub fn signature(self) -> &'static Signature {
        &SIGNATURES[usize::from(self.0)]
    }

    /// Its documented name.
    pub fn name(self) -> &'static str {
        self.signature().name
    }
}

const fn sig(name: &'static str, min_args: usize, max_args: Option<usize>) -> Signature {
    Signature { name, min_args, max_args, kind: FunctionKind::Scalar }
}

const fn with(name: &'static str, min_args: usize, max_args: Option<usize>, kind: FunctionKind) -> Signature {
    Signature { name, min_args, max_args, kind }
}

/// Every function the binder knows, sorted by name.
pub static SIGNATURES: &[Signature] = &[
    sig("ABS", 1, Some(1)),
    sig("ACOS", 1, Some(1)),
    sig("AGO", 2, Some(2)),
    sig("ARRAY_AVG", 1, Some(1)),
    sig("ARRAY_CONCAT", 2, None),
    sig("ARRAY_CONTAINS", 2, Some(3)),
    sig("ARRAY_CONTAINS_ALL", 2, None),
    sig("ARRAY_CONTAINS_ANY", 2, None),
    sig("ARRAY_LENGTH", 1, Some(1)),
    sig("ARRAY_MAX", 1, Some(1)),
    sig("ARRAY_MEDIAN", 1, Some(1)),
    sig("ARRAY_MIN", 1, Some(1)),
    sig("ARRAY_SLICE", 2, Some(3)),
    sig("ARRAY_SUM", 1, Some(1)),
    sig("ASIN", 1, Some(1)),
    sig("ATAN", 1, Some(1)),
    sig("ATN2", 2, Some(2)),
    with("AVG", 1, Some(1), FunctionKind::Aggregate(AggregateKind::Avg)),
    sig("CEILING", 1, Some(1)),
    sig("CHOOSE", 2, None),
    sig("CONCAT", 2, None),
    sig("CONTAINS", 2, Some(3)),
    sig("CONTAINS_ALL_CI", 2, None),
    sig("CONTAINS_ALL_CS", 2, None),
    sig("CONTAINS_ANY_CI", 2, None),
    sig("CONTAINS_ANY_CS", 2, None),
    sig("COS", 1, Some(1)),
    sig("COT", 1, Some(1)),
    with("COUNT", 1, Some(1), FunctionKind::Aggregate(AggregateKind::Count)),
    with("COUNTIF", 1, Some(1), FunctionKind::Aggregate(AggregateKind::CountIf)),
    sig("DateTimeAdd", 3, Some(3)),
    sig("DateTimeBin", 2, Some(4)),
    sig("DateTimeDiff", 3, Some(3)),
    sig("DateTimeFormat", 2, Some(2)),
    sig("DateTimeFromParts", 3, Some(7)),
    sig("DateTimePart", 2, Some(2)),
    sig("DateTimeToTicks", 1, Some(1)),
    sig("DateTimeToTimestamp", 1, Some(1)),
    sig("DAY", 1, Some(1)),
    sig("DEGREES", 1, Some(1)),
    with("DocumentId", 1, Some(1), FunctionKind::DocumentId),
    sig("ENDSWITH", 2, Some(3)),
    sig("EXP", 1, Some(1)),
    sig("FLOOR", 1, Some(1)),
    sig("FullTextContains", 2, Some(2)),
    sig("FullTextContainsAll", 2, None),
    sig("FullTextContainsAny", 2, None),
    with("FullTextScore", 2, None, FunctionKind::Ranking),
    sig("GetCurrentDateTime", 0, Some(0)),
    with("GetCurrentDateTimeStatic", 0, Some(0), FunctionKind::PerQuery),
    sig("GetCurrentTicks", 0, Some(0)),
    with("GetCurrentTicksStatic", 0, Some(0), FunctionKind::PerQuery),
    sig("GetCurrentTimestamp", 0, Some(0)),
    with("GetCurrentTimestampStatic", 0, Some(0), FunctionKind::PerQuery),
    sig("IIF", 3, Some(3)),
    sig("INDEX_OF", 2, Some(3)),
    sig("IntAdd", 2, Some(2)),
    sig("IntBitAnd", 2, Some(2)),
    sig("IntBitLeftShift", 2, Some(2)),
    sig("IntBitNot", 1, Some(1)),
    sig("IntBitOr", 2, Some(2)),
    sig("IntBitRightShift", 2, Some(2)),
    sig("IntBitXor", 2, Some(2)),
    sig("IntDiv", 2, Some(2)),
    sig("IntMod", 2, Some(2)),
    sig("IntMul", 2, Some(2)),
    sig("IntSub", 2, Some(2)),
    sig("IS_ARRAY", 1, Some(1)),
    sig("IS_BOOL", 1, Some(1)),
    sig("IS_DATETIME", 1, Some(1)),
    sig("IS_DEFINED", 1, Some(1)),
    sig("IS_FINITE_NUMBER", 1, Some(1)),
    sig("IS_INTEGER", 1, Some(1)),
    sig("IS_NULL", 1, Some(1)),
    sig("IS_NUMBER", 1, Some(1)),
    sig("IS_OBJECT", 1, Some(1)),
    sig("IS_PRIMITIVE", 1, Some(1)),
    sig("IS_STRING", 1, Some(1)),
    sig("LASTINDEXOF", 2, Some(3)),
    sig("LEFT", 2, Some(2)),
    sig("LENGTH", 1, Some(1)),
    sig("LOG", 1, Some(2)),
    sig("LOG10", 1, Some(1)),
    sig("LOWER", 1, Some(1)),
    sig("LTRIM", 1, Some(2)),
    with("MAKELIST", 1, Some(1), FunctionKind::Aggregate(AggregateKind::MakeList)),
    with("MAKESET", 1, Some(1), FunctionKind::Aggregate(AggregateKind::MakeSet)),
    with("MAX", 1, Some(1), FunctionKind::Aggregate(AggregateKind::Max)),
    with("MIN", 1, Some(1), FunctionKind::Aggregate(AggregateKind::Min)),
    sig("MONTH", 1, Some(1)),
    sig("NOW", 0, Some(2)),
    sig("NumberBin", 1, Some(2)),
    sig("ObjectToArray", 1, Some(3)),
    sig("PI", 0, Some(0)),
    sig("POWER", 2, Some(2)),
    sig("RADIANS", 1, Some(1)),
    sig("RAND", 0, Some(0)),
    sig("RegexMatch", 2, Some(3)),
    sig("REPLACE", 3, Some(3)),
    sig("REPLICATE", 2, Some(2)),
    sig("REVERSE", 1, Some(1)),
    sig("RIGHT", 2, Some(2)),
    sig("ROUND", 1, Some(1)),
    with("RRF", 1, None, FunctionKind::Ranking),
    sig("RTRIM", 1, Some(2)),
    sig("SetDifference", 2, Some(2)),
    sig("SetEqual", 2, Some(2)),
    sig("SetIntersect", 2, Some(2)),
    sig("SetUnion", 2, Some(2)),
    sig("SIGN", 1, Some(1)),
    sig("SIN", 1, Some(1)),
    sig("SQRT", 1, Some(1)),
    sig("SQUARE", 1, Some(1)),
    sig("STARTSWITH", 2, Some(3)),
    sig("StringEquals", 2, Some(3)),
    sig("StringJoin", 2, Some(2)),
    sig("StringSplit", 2, Some(2)),
    sig("StringToArray", 1, Some(1)),
    sig("StringToBoolean", 1, Some(1)),
    sig("StringToNull", 1, Some(1)),
    sig("StringToNumber", 1, Some(1)),
    sig("StringToObject", 1, Some(1)),
    sig("ST_AREA", 1, Some(1)),
    sig("ST_DISTANCE", 2, Some(2)),
    sig("ST_INTERSECTS", 2, Some(2)),
    sig("ST_ISVALID", 1, Some(1)),
    sig("ST_ISVALIDDETAILED", 1, Some(1)),
    sig("ST_WITHIN", 2, Some(2)),
    sig("SUBSTRING", 3, Some(3)),
    with("SUM", 1, Some(1), FunctionKind::Aggregate(AggregateKind::Sum)),
    sig("TAN", 1, Some(1)),
    sig("TicksToDateTime", 1, Some(1)),
    sig("TimestampToDateTime", 1, Some(1)),
    sig("ToString", 1, Some(1)),
    sig("TRIM", 1, Some(2)),
    sig("TRUNC", 1, Some(1)),
    sig("UPPER", 1, Some(1)),
    sig("VectorDistance", 2, Some(4)),
    sig("YEAR", 1, Some(1)),
    // The service's internal functions, which the SDKs' hybrid search pipelines send in the
    // per-range queries of its plans (`docs/design/hybrid-search-plans.md`).
    sig("_FullTextScore", 5, Some(5)),
    sig("_FullTextWordCount", 1, Some(1)),
    sig("_VectorScore", 2, Some(4)),
];

fn table() -> &'static HashMap<String, FunctionId> {
    static TABLE: OnceLock<HashMap<String, FunctionId>> = OnceLock::new();
    TABLE.get_or_init(|| {
        SIGNATURES.iter().enumerate().map(|(i, s)| (s.name.to_ascii_uppercase(), FunctionId(i as u16))).collect()
    })
}

/// The function called `name` (any case), if there is one.
pub fn lookup(name: &str) -> Option<FunctionId> {
    table().get(&name.to_ascii_uppercase()).copied()
}

/// Every function's documented name, sorted (the internal ones, `_...`, left out).
pub fn names() -> Vec<&'static str> {
    SIGNATURES.iter().map(|s| s.name).filter(|n| !n.starts_with('_')).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_every_name_is_unique() {
        let upper: Vec<String> = SIGNATURES.iter().map(|s| s.name.to_ascii_uppercase()).collect();
        let mut sorted = upper.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(upper, sorted);
        assert!(SIGNATURES.len() < usize::from(u16::MAX));
        for s in SIGNATURES {
            assert!(s.max_args.is_none_or(|m| m >= s.min_args), "{}", s.name);
            assert_eq!(lookup(&s.name.to_ascii_lowercase()).map(FunctionId::name), Some(s.name));
        }
    }
}
