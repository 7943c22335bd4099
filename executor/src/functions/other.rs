//! Conditional functions: IIF.
//!
//! (`DocumentId`, the only item function, needs the item itself and is handled by the
//! evaluator.)

use cosmoql_value::Value;

use super::FunctionDef;

pub(crate) const FUNCTIONS: &[FunctionDef] = &[FunctionDef {
    name: "IIF",
    min_args: 3,
    max_args: Some(3),
    // Anything but `true` (false, undefined, a number, ...) selects the third argument.
    eval: |a, _| Ok(if matches!(a[0], Value::Bool(true)) { a[1].clone() } else { a[2].clone() }),
}];

#[cfg(test)]
mod tests {
    use cosmoql_value::parse_json;

    use super::*;
    use crate::functions::{lookup, FunctionContext};

    fn iif(cond: Value, a: Value, b: Value) -> Value {
        let def = lookup("iif").unwrap();
        (def.eval)(&[cond, a, b], &FunctionContext::default()).unwrap()
    }

    #[test]
    fn iif_cases() {
        let (yes, no) = (Value::from(123), Value::from(456));
        assert_eq!(iif(Value::Bool(true), yes.clone(), no.clone()), yes);
        for cond in [
            Value::Bool(false),
            Value::from(123),
            Value::from("ABC"),
            parse_json("[1,2,3]").unwrap(),
            parse_json(r#"{"name": "Alice", "age": 20}"#).unwrap(),
            Value::Null,
            Value::Undefined,
        ] {
            assert_eq!(iif(cond.clone(), yes.clone(), no.clone()), no, "{cond:?}");
        }
        // IIF(p.onSale, p.pricing.sale, p.pricing.msrp)
        assert_eq!(iif(Value::Bool(true), Value::from(30.85), Value::from(55.95)), Value::from(30.85));
        assert_eq!(iif(Value::Bool(false), Value::from(12.55), Value::from(20.15)), Value::from(20.15));
        // An undefined branch is returned as is.
        assert_eq!(iif(Value::Bool(true), Value::Undefined, no), Value::Undefined);
    }
}
