//! The [`Value`] type, its kinds, constructors and accessors.

use std::fmt;
use std::sync::Arc;

/// A JSON object: keys keep their insertion order (which is also the order in
/// which they are written back out as JSON).
///
/// Key order never matters for equality, hashing or ordering of [`Value`]s.
///
/// Keys hash with foldhash (seeded per map, as the store's other maps of user-given names are):
/// every item a query returns whole is decoded into maps, and SipHash was a tenth of that. Make
/// one with `Map::default()`, or `Map::with_capacity_and_hasher(n, Default::default())`.
pub type Map = indexmap::IndexMap<String, Value, foldhash::fast::RandomState>;

/// A document value as seen by the query engine: any JSON value, plus
/// `undefined` (the value of a missing property, of `<` between different
/// types, ...).
///
/// Strings, arrays and objects are reference counted, so `clone()` is cheap
/// (a reference-count increment). Use [`Value::as_array_mut`] /
/// [`Value::as_object_mut`] to modify in place (copy-on-write).
///
/// The `Eq`, `Ord` and `Hash` implementations form one **total order**
/// (see the [crate docs](crate) and [`crate::order`]); they are *not* the
/// query language's `=`/`<` operators, which live in [`crate::ops`].
#[derive(Clone, Debug, Default)]
pub enum Value {
    /// Cosmos DB's `undefined`: never stored, never written as JSON.
    #[default]
    Undefined,
    /// JSON `null`.
    Null,
    /// JSON `true` / `false`.
    Bool(bool),
    /// A JSON number. All numbers are IEEE-754 doubles, like in JavaScript.
    Number(f64),
    /// A JSON string.
    String(Arc<str>),
    /// A JSON array.
    Array(Arc<Vec<Value>>),
    /// A JSON object.
    Object(Arc<Map>),
}

/// The type of a [`Value`]. Variants are declared (and ordered) in the order
/// of the total order over values: undefined < null < boolean < number <
/// string < array < object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ValueKind {
    /// `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl ValueKind {
    /// The lower-case name of the kind, as used in Cosmos DB messages and
    /// type-checking functions: `"undefined"`, `"null"`, `"boolean"`,
    /// `"number"`, `"string"`, `"array"`, `"object"`.
    pub const fn name(self) -> &'static str {
        match self {
            ValueKind::Undefined => "undefined",
            ValueKind::Null => "null",
            ValueKind::Boolean => "boolean",
            ValueKind::Number => "number",
            ValueKind::String => "string",
            ValueKind::Array => "array",
            ValueKind::Object => "object",
        }
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The shared `undefined` returned by reference from [`Value::get`] and
/// [`Value::index`].
pub(crate) static UNDEFINED: Value = Value::Undefined;

impl Value {
    /// Builds an array value from anything that yields values.
    pub fn array<I, T>(items: I) -> Value
    where
        I: IntoIterator<Item = T>,
        T: Into<Value>,
    {
        Value::Array(Arc::new(items.into_iter().map(Into::into).collect()))
    }

    /// Builds an object value from `(key, value)` pairs, keeping their order.
    /// A repeated key keeps its first position and its last value.
    pub fn object<I, K, V>(entries: I) -> Value
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<Value>,
    {
        Value::Object(Arc::new(entries.into_iter().map(|(k, v)| (k.into(), v.into())).collect()))
    }

    /// Builds a string value.
    pub fn string(s: impl Into<Arc<str>>) -> Value {
        Value::String(s.into())
    }

    /// The length of the value's JSON text at least (every number counted as one character),
    /// or `None` once that passes `cap`. Arrays and objects share their parts, so a value built
    /// of copies of another (`[t, t]`, nested) can stand for far more text than it holds in
    /// memory: what builds values checks this first, and the walk stops at `cap`.
    pub fn json_len_within(&self, cap: usize) -> Option<usize> {
        let mut total = 0usize;
        let mut stack = vec![self];
        while let Some(v) = stack.pop() {
            total = total.saturating_add(match v {
                Value::Undefined => 0,
                Value::Null | Value::Bool(true) => 4,
                Value::Bool(false) => 5,
                Value::Number(_) => 1,
                Value::String(s) => s.len() + 2,
                Value::Array(a) => {
                    stack.extend(a.iter());
                    2 + a.len().saturating_sub(1)
                }
                Value::Object(m) => {
                    let mut keys = 2 + m.len().saturating_sub(1);
                    for (k, e) in m.iter() {
                        keys = keys.saturating_add(k.len() + 3);
                        stack.push(e);
                    }
                    keys
                }
            });
            if total > cap {
                return None;
            }
        }
        Some(total)
    }

    /// An empty array.
    pub fn empty_array() -> Value {
        Value::Array(Arc::new(Vec::new()))
    }

    /// An empty object.
    pub fn empty_object() -> Value {
        Value::Object(Arc::new(Map::default()))
    }

    /// The kind (JSON type, or undefined) of this value.
    pub const fn kind(&self) -> ValueKind {
        match self {
            Value::Undefined => ValueKind::Undefined,
            Value::Null => ValueKind::Null,
            Value::Bool(_) => ValueKind::Boolean,
            Value::Number(_) => ValueKind::Number,
            Value::String(_) => ValueKind::String,
            Value::Array(_) => ValueKind::Array,
            Value::Object(_) => ValueKind::Object,
        }
    }

    /// `true` for [`Value::Undefined`].
    pub const fn is_undefined(&self) -> bool {
        matches!(self, Value::Undefined)
    }

    /// `true` for anything but [`Value::Undefined`] (Cosmos's `IS_DEFINED`).
    pub const fn is_defined(&self) -> bool {
        !self.is_undefined()
    }

    /// `true` for [`Value::Null`].
    pub const fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// `true` for booleans.
    pub const fn is_bool(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    /// `true` for numbers (including NaN and infinities).
    pub const fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    /// `true` for strings.
    pub const fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    /// `true` for arrays.
    pub const fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    /// `true` for objects.
    pub const fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// `true` for null, booleans, numbers and strings (Cosmos's
    /// `IS_PRIMITIVE`).
    pub const fn is_primitive(&self) -> bool {
        matches!(self, Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_))
    }

    /// The boolean, if this is a boolean.
    pub const fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is a number.
    pub const fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The number as an `i64`, if this is a number with an integral value
    /// that fits exactly (e.g. for `OFFSET`/`LIMIT`/`TOP` arguments).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => f64_to_i64_exact(*n),
            _ => None,
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a.as_slice()),
            _ => None,
        }
    }

    /// The entries, if this is an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Mutable access to the elements of an array (clones the vector first
    /// if it is shared).
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(Arc::make_mut(a)),
            _ => None,
        }
    }

    /// Mutable access to the entries of an object (clones the map first if
    /// it is shared).
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(o) => Some(Arc::make_mut(o)),
            _ => None,
        }
    }

    /// Property access `v.key` / `v["key"]`: the property's value, or
    /// `undefined` if this is not an object or has no such property.
    pub fn get(&self, key: &str) -> &Value {
        match self {
            Value::Object(o) => o.get(key).unwrap_or(&UNDEFINED),
            _ => &UNDEFINED,
        }
    }

    /// Element access `v[i]`: the element, or `undefined` if this is not an
    /// array or `i` is out of bounds. (`Index<usize>` is implemented too, so
    /// `v[i]` works the same way.)
    #[allow(clippy::should_implement_trait)] // it is implemented, see above
    pub fn index(&self, i: usize) -> &Value {
        match self {
            Value::Array(a) => a.get(i).unwrap_or(&UNDEFINED),
            _ => &UNDEFINED,
        }
    }

    /// Takes the value out, leaving `undefined` in its place.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
}

/// `n` as an `i64` if it is integral and exactly representable.
fn f64_to_i64_exact(n: f64) -> Option<i64> {
    // 2^63 is exactly representable; every integral f64 in [-2^63, 2^63) fits.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if n.fract() == 0.0 && (-LIMIT..LIMIT).contains(&n) {
        // In range and integral (NaN/inf fail `contains`/`fract`), so the
        // conversion is exact.
        Some(n as i64)
    } else {
        None
    }
}

impl std::ops::Index<&str> for Value {
    type Output = Value;
    /// Same as [`Value::get`]: never panics, yields `undefined` when missing.
    fn index(&self, key: &str) -> &Value {
        self.get(key)
    }
}

impl std::ops::Index<usize> for Value {
    type Output = Value;
    /// Same as [`Value::index`]: never panics, yields `undefined` when out
    /// of bounds.
    fn index(&self, i: usize) -> &Value {
        Value::index(self, i)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::Number(n)
    }
}

impl From<f32> for Value {
    fn from(n: f32) -> Value {
        Value::Number(f64::from(n))
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Number(f64::from(n))
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value::Number(f64::from(n))
    }
}

impl From<i64> for Value {
    /// Rounds to the nearest double for magnitudes above 2^53, like
    /// JavaScript does.
    fn from(n: i64) -> Value {
        Value::Number(n as f64)
    }
}

impl From<u64> for Value {
    /// Rounds to the nearest double above 2^53, like JavaScript does.
    fn from(n: u64) -> Value {
        Value::Number(n as f64)
    }
}

impl From<usize> for Value {
    /// Rounds to the nearest double above 2^53, like JavaScript does.
    fn from(n: usize) -> Value {
        Value::Number(n as f64)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(Arc::from(s))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(Arc::from(s))
    }
}

impl From<Arc<str>> for Value {
    fn from(s: Arc<str>) -> Value {
        Value::String(s)
    }
}

impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Value {
        Value::Array(Arc::new(v))
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Object(Arc::new(m))
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    /// `None` becomes `undefined` (an absent value), not `null`.
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Undefined, Into::into)
    }
}

impl FromIterator<Value> for Value {
    /// Collects into an array.
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Value {
        Value::Array(Arc::new(iter.into_iter().collect()))
    }
}

impl<K: Into<String>> FromIterator<(K, Value)> for Value {
    /// Collects into an object (insertion order kept; a repeated key keeps
    /// its first position and its last value).
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Value {
        Value::Object(Arc::new(iter.into_iter().map(|(k, v)| (k.into(), v)).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_len_is_the_text_length_at_least_and_stops_at_the_cap() {
        for text in [r#"{"a":[1,2,{"b":"xyz"}],"c":null,"d":true,"e":false,"f":{}}"#, "[]", r#""""#, "[[],[[]]]"] {
            let v = crate::parse_json(text).unwrap();
            assert_eq!(v.json_len_within(usize::MAX), crate::to_json_string(&v).map(|t| t.len()), "{text}");
        }
        let long = crate::parse_json("[12345.5, \"\\u0001\"]").unwrap();
        assert!(long.json_len_within(usize::MAX).unwrap() < crate::to_json_string(&long).unwrap().len());
        // 2^40 characters of text in 41 shared arrays: the walk stops at the cap.
        let mut v = Value::from("a");
        for _ in 0..40 {
            v = Value::array([v.clone(), v]);
        }
        assert_eq!(v.json_len_within(1 << 20), None);
        assert_eq!(Value::Undefined.json_len_within(0), Some(0));
    }

    #[test]
    fn get_and_index_never_panic() {
        let v = Value::object([("a", Value::from(1)), ("b", Value::array([2, 3]))]);
        assert_eq!(v.get("a"), &Value::from(1));
        assert!(v.get("zz").is_undefined());
        assert!(v.get("b").index(5).is_undefined());
        assert_eq!(v.get("b").index(1), &Value::from(3));
        assert!(Value::from(3).get("a").is_undefined());
        assert!(Value::Null.index(0).is_undefined());
        assert_eq!(v["b"][0], Value::from(2));
        assert!(v["nope"][3]["x"].is_undefined());
    }

    #[test]
    fn kinds_and_accessors() {
        assert_eq!(Value::Undefined.kind(), ValueKind::Undefined);
        assert_eq!(Value::Null.kind().name(), "null");
        assert_eq!(Value::from(true).as_bool(), Some(true));
        assert_eq!(Value::from(2.5).as_f64(), Some(2.5));
        assert_eq!(Value::from("x").as_str(), Some("x"));
        assert_eq!(Value::from(String::from("y")).as_str(), Some("y"));
        assert_eq!(Value::from(vec![Value::Null]).as_array().map(<[_]>::len), Some(1));
        assert!(Value::from(Map::default()).as_object().is_some());
        assert_eq!(Value::from(None::<i64>), Value::Undefined);
        assert_eq!(Value::from(Some(1)), Value::from(1.0));
        assert!(Value::from(1).as_str().is_none());
        assert!(Value::from("1").as_f64().is_none());
        assert!(Value::Null.is_primitive() && !Value::empty_array().is_primitive());
        assert!(!Value::Undefined.is_primitive());
    }

    #[test]
    fn as_i64_exact_only() {
        assert_eq!(Value::from(3.0).as_i64(), Some(3));
        assert_eq!(Value::from(-0.0).as_i64(), Some(0));
        assert_eq!(Value::from(3.5).as_i64(), None);
        assert_eq!(Value::from(f64::NAN).as_i64(), None);
        assert_eq!(Value::from(f64::INFINITY).as_i64(), None);
        assert_eq!(Value::from(9.3e18).as_i64(), None);
        assert_eq!(Value::from(-9_223_372_036_854_775_808.0).as_i64(), Some(i64::MIN));
    }

    #[test]
    fn copy_on_write() {
        let a = Value::array([1, 2]);
        let mut b = a.clone();
        if let Some(v) = b.as_array_mut() {
            v.push(Value::from(3));
        }
        assert_eq!(a.as_array().map(<[_]>::len), Some(2));
        assert_eq!(b.as_array().map(<[_]>::len), Some(3));
        let mut o = Value::object([("k", 1)]);
        if let Some(m) = o.as_object_mut() {
            m.insert("j".into(), Value::Null);
        }
        assert!(o.get("j").is_null());
    }

    #[test]
    fn collect_into_values() {
        let arr: Value = (0..3).map(Value::from).collect();
        assert_eq!(arr, Value::array([0, 1, 2]));
        let obj: Value = [("b", Value::from(1)), ("a", Value::from(2))].into_iter().collect();
        let keys: Vec<&str> = obj.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
        assert_eq!(keys, ["b", "a"]);
    }
}
