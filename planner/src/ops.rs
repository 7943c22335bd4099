//! What the operators do to values: arithmetic and bitwise operators as JavaScript does them,
//! comparisons and three-valued logic from `cosmoql_value::ops`. One definition serves constant
//! folding in the binder and evaluation in the executor, so a folded constant is always what the
//! row-by-row evaluation would give.

use cosmoql_parser::{BinaryOp, UnaryOp};
use cosmoql_value::{and, not, or, query_eq, query_ge, query_gt, query_le, query_lt, query_ne, Value};

/// JavaScript's ToInt32.
fn to_int32(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    (n.trunc().rem_euclid(4_294_967_296.0) as u64 as u32) as i32
}

/// The prefix operators.
pub fn unary(op: UnaryOp, v: &Value) -> Value {
    match (op, v) {
        (UnaryOp::Not, v) => not(v),
        (UnaryOp::Negate, Value::Number(n)) => Value::Number(-n),
        (UnaryOp::Plus, Value::Number(n)) => Value::Number(*n),
        (UnaryOp::BitNot, Value::Number(n)) => Value::Number(f64::from(!to_int32(*n))),
        _ => Value::Undefined,
    }
}

/// The non-logical binary operators.
pub fn binary(op: BinaryOp, l: &Value, r: &Value) -> Value {
    match op {
        BinaryOp::Eq => return query_eq(l, r),
        BinaryOp::NotEq => return query_ne(l, r),
        BinaryOp::Lt => return query_lt(l, r),
        BinaryOp::LtEq => return query_le(l, r),
        BinaryOp::Gt => return query_gt(l, r),
        BinaryOp::GtEq => return query_ge(l, r),
        BinaryOp::Concat => {
            return match (l, r) {
                (Value::String(a), Value::String(b)) => Value::from(format!("{a}{b}")),
                _ => Value::Undefined,
            }
        }
        BinaryOp::And => return and(l, r),
        BinaryOp::Or => return or(l, r),
        BinaryOp::Coalesce => return if l.is_undefined() { r.clone() } else { l.clone() },
        _ => {}
    }
    let (Value::Number(a), Value::Number(b)) = (l, r) else { return Value::Undefined };
    let (a, b) = (*a, *b);
    Value::Number(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Subtract => a - b,
        BinaryOp::Multiply => a * b,
        BinaryOp::Divide => a / b,
        BinaryOp::Modulo => a % b,
        BinaryOp::BitAnd => f64::from(to_int32(a) & to_int32(b)),
        BinaryOp::BitOr => f64::from(to_int32(a) | to_int32(b)),
        BinaryOp::BitXor => f64::from(to_int32(a) ^ to_int32(b)),
        BinaryOp::ShiftLeft => f64::from(to_int32(a).wrapping_shl(to_int32(b) as u32 & 31)),
        BinaryOp::ShiftRight => f64::from(to_int32(a).wrapping_shr(to_int32(b) as u32 & 31)),
        BinaryOp::ShiftRightZeroFill => f64::from((to_int32(a) as u32).wrapping_shr(to_int32(b) as u32 & 31)),
        _ => return Value::Undefined,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_bitwise_follow_javascript() {
        let n = Value::from;
        assert_eq!(binary(BinaryOp::Add, &n(1.0), &n(2.0)), n(3.0));
        assert_eq!(binary(BinaryOp::Add, &n(1.0), &Value::from("2")), Value::Undefined);
        assert_eq!(binary(BinaryOp::Modulo, &n(-7.0), &n(3.0)), n(-1.0));
        assert_eq!(binary(BinaryOp::BitAnd, &n(100.0), &n(1000.0)), n(96.0));
        assert_eq!(binary(BinaryOp::BitOr, &n(100.0), &n(1000.0)), n(1004.0));
        assert_eq!(binary(BinaryOp::BitXor, &n(100.0), &n(1000.0)), n(908.0));
        assert_eq!(binary(BinaryOp::ShiftRight, &n(100.0), &n(2.0)), n(25.0));
        assert_eq!(binary(BinaryOp::ShiftLeft, &n(100.0), &n(2.0)), n(400.0));
        assert_eq!(binary(BinaryOp::ShiftRightZeroFill, &n(-1.0), &n(0.0)), n(4294967295.0));
        assert_eq!(binary(BinaryOp::ShiftRight, &n(-8.0), &n(1.0)), n(-4.0));
        assert_eq!(unary(UnaryOp::BitNot, &n(5.0)), n(-6.0));
        assert_eq!(binary(BinaryOp::Concat, &Value::from("a"), &Value::from("b")), Value::from("ab"));
        assert_eq!(binary(BinaryOp::Concat, &Value::from("a"), &n(1.0)), Value::Undefined);
        assert_eq!(to_int32(4294967297.0), 1);
        assert_eq!(to_int32(-1.5), -1);
    }
}
