//! Planning a request ([`plan_query`]) and the plan cache: a repeated query costs what a
//! prepared statement costs.
//!
//! Plans are kept by everything planning reads: the query text, the parameters (their exact
//! values: binding folds them into the plan), the request's partition key, the vector policies,
//! and the source's plan epoch, which changes whenever what planning reads from the source does
//! (a container's indexing policy). At most [`CAPACITY`] plans are kept; the least recently used
//! goes first. Errors are not cached.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use cosmoql_planner::{Plan, PlanContext, LIMITS};
use cosmoql_value::Value;

use crate::error::QueryError;
use crate::options::QueryOptions;
use crate::source::QuerySource;

/// Plans `sql` for `source` with the request's options.
pub fn plan_query(source: &dyn QuerySource, sql: &str, options: &QueryOptions) -> Result<Plan, QueryError> {
    let policy = source.indexing_policy();
    let udfs = options.udfs.as_ref().map(|host| host.names()).unwrap_or_default();
    let context = PlanContext {
        parameters: &options.parameters,
        vector_policies: &options.vector_policies,
        partition_key: source.partition_key(),
        request_partition_key: options.partition_key.as_ref(),
        request_feed_range: options.epk_range.is_some(),
        limits: &LIMITS,
        indexing_policy: &policy,
        udfs: &udfs,
    };
    Ok(cosmoql_planner::plan(sql, &context)?)
}

/// Plans kept at most.
pub const CAPACITY: usize = 512;

struct Cache {
    /// foldhash, seeded per map: a key is mostly the query's text, and formatting the key and
    /// hashing it with SipHash were a tenth of a point read's instructions.
    plans: HashMap<String, (Arc<Plan>, u64), foldhash::fast::RandomState>,
    tick: u64,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Cache { plans: HashMap::default(), tick: 0 }))
}

/// The plan of `sql` for `source` with these options: from the cache, or planned and kept.
pub fn cached_plan(source: &dyn QuerySource, sql: &str, options: &QueryOptions) -> Result<Arc<Plan>, QueryError> {
    cached_plan_with_origin(source, sql, options).map(|(plan, _)| plan)
}

/// [`cached_plan`], and whether the plan came from the cache.
pub fn cached_plan_with_origin(
    source: &dyn QuerySource,
    sql: &str,
    options: &QueryOptions,
) -> Result<(Arc<Plan>, bool), QueryError> {
    let Some(epoch) = source.plan_epoch() else {
        return plan_query(source, sql, options).map(|p| (Arc::new(p), false));
    };
    let key = cache_key(epoch, sql, options);
    if let Ok(mut cache) = cache().lock() {
        cache.tick += 1;
        let tick = cache.tick;
        if let Some((plan, used)) = cache.plans.get_mut(&key) {
            *used = tick;
            return Ok((Arc::clone(plan), true));
        }
    }
    let plan = Arc::new(plan_query(source, sql, options)?);
    if let Ok(mut cache) = cache().lock() {
        if cache.plans.len() >= CAPACITY {
            let oldest = cache.plans.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                cache.plans.remove(&oldest);
            }
        }
        let tick = cache.tick;
        cache.plans.insert(key, (Arc::clone(&plan), tick));
    }
    Ok((plan, false))
}

/// [`cached_plan`], and the nanoseconds spent planning (0 when the plan came from the cache).
pub fn timed_plan(source: &dyn QuerySource, sql: &str, options: &QueryOptions) -> Result<(Arc<Plan>, u64), QueryError> {
    let started = std::time::Instant::now();
    let (plan, cached) = cached_plan_with_origin(source, sql, options)?;
    Ok((plan, if cached { 0 } else { started.elapsed().as_nanos() as u64 }))
}

/// Plans in the cache now.
pub fn cached_plans() -> usize {
    cache().lock().map_or(0, |c| c.plans.len())
}

/// Appends `n` in hexadecimal (the key is built on every request: no formatting machinery).
fn push_hex(out: &mut String, n: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digits = (64 - n.leading_zeros()).div_ceil(4).max(1);
    for shift in (0..digits).rev() {
        out.push(char::from(DIGITS[((n >> (4 * shift)) & 0xF) as usize]));
    }
}

/// Appends `text` after its length, so that no two sequences of texts give the same key.
fn push_text(out: &mut String, text: &str) {
    push_hex(out, text.len() as u64);
    out.push(':');
    out.push_str(text);
}

fn cache_key(epoch: u64, sql: &str, options: &QueryOptions) -> String {
    // Room for the parameters too (a name, a short value) so that the key is written once.
    let mut key = String::with_capacity(sql.len() + 64 + 64 * options.parameters.len());
    push_hex(&mut key, epoch);
    key.push('\u{0}');
    push_text(&mut key, sql);
    key.push('\u{0}');
    let mut names: Vec<&String> = options.parameters.keys().collect();
    names.sort_unstable();
    for name in names {
        push_text(&mut key, name);
        key.push('=');
        exact(&mut key, &options.parameters[name]);
    }
    if let Some(pk) = &options.partition_key {
        let _ = write!(key, "\u{0}pk {pk:?}");
    }
    if options.epk_range.is_some() {
        key.push_str("\u{0}range");
    }
    if !options.vector_policies.is_empty() {
        let _ = write!(key, "\u{0}vectors {:?}", options.vector_policies);
    }
    key
}

/// A value written so that two values have the same text only if binding gives them the same
/// plan: numbers by their bits (`-0` is not `0`), strings with their length, keys in order.
fn exact(out: &mut String, v: &Value) {
    match v {
        Value::Undefined => out.push('u'),
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Number(n) => {
            out.push('#');
            push_hex(out, n.to_bits());
        }
        Value::String(s) => {
            out.push('s');
            push_text(out, s);
        }
        Value::Array(items) => {
            out.push('[');
            for item in items.iter() {
                exact(out, item);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (k, item) in map.iter() {
                push_text(out, k);
                out.push('=');
                exact(out, item);
                out.push(',');
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_binding_tells_apart_have_different_keys() {
        let key = |v: Value| {
            let options = QueryOptions::default().parameter("x", v);
            cache_key(1, "SELECT VALUE @x", &options)
        };
        assert_ne!(key(Value::from(0.0)), key(Value::from(-0.0)));
        assert_ne!(key(Value::from("1")), key(Value::from(1.0)));
        assert_ne!(key(Value::from("a,b")), key(Value::Array(Arc::new(vec![Value::from("a"), Value::from("b")]))));
        assert_ne!(key(Value::from("ab")), key(Value::from("a")));
        assert_eq!(key(Value::from(2.0)), key(Value::from(2.0)));
        let mut hex = String::new();
        for n in [0, 9, 0x10, 0xabc, u64::MAX] {
            push_hex(&mut hex, n);
            hex.push(' ');
        }
        assert_eq!(hex, "0 9 10 abc ffffffffffffffff ");
        let other_epoch = cache_key(2, "SELECT VALUE @x", &QueryOptions::default().parameter("x", Value::from(2.0)));
        assert_ne!(key(Value::from(2.0)), other_epoch);
    }
}
