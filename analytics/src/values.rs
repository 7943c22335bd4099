//! Query results as cosmoql values, so that numbers print as the row engine prints them: every
//! number is a double, a row is an object of its columns (a null column is `null`), a struct an
//! object of its non-null fields (a missing property and a null are one in the mirror), a list
//! an array. Types with no JSON counterpart (dates, times, durations, decimals past a double's
//! precision) are written as Arrow displays them.

use std::sync::Arc;

use cosmoql_value::{Map, Value};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

/// The batches' rows, in order.
pub fn rows(batches: &[RecordBatch]) -> Result<Vec<Value>, ArrowError> {
    let mut out = Vec::with_capacity(batches.iter().map(RecordBatch::num_rows).sum());
    for batch in batches {
        let schema = batch.schema();
        let columns: Vec<Vec<Value>> = batch.columns().iter().map(|c| column(c.as_ref())).collect::<Result<_, _>>()?;
        for row in 0..batch.num_rows() {
            let mut map = Map::default();
            for (field, values) in schema.fields().iter().zip(&columns) {
                map.insert(field.name().clone(), values[row].clone());
            }
            out.push(Value::from(map));
        }
    }
    Ok(out)
}

/// An Arrow column's values (nulls as `null`).
pub fn column(array: &dyn Array) -> Result<Vec<Value>, ArrowError> {
    let n = array.len();
    let nulls = |values: Vec<Value>| -> Vec<Value> {
        values.into_iter().enumerate().map(|(i, v)| if array.is_null(i) { Value::Null } else { v }).collect()
    };
    Ok(match array.data_type() {
        DataType::Null => vec![Value::Null; n],
        DataType::Boolean => nulls(array.as_boolean().iter().map(|b| b.map_or(Value::Null, Value::Bool)).collect()),
        // Every number is a double, as the row engine's (an integer past 2^53 rounds as there).
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => {
            let cast = datafusion::arrow::compute::cast(array, &DataType::Float64)?;
            cast.as_primitive::<Float64Type>()
                .iter()
                .map(|v| match v {
                    Some(v) if v.is_finite() => Value::Number(v),
                    // JSON has no NaN or infinities (Cosmos DB's row engine gives undefined).
                    _ => Value::Null,
                })
                .collect()
        }
        DataType::Utf8View => array.as_string_view().iter().map(|s| s.map_or(Value::Null, Value::from)).collect(),
        DataType::Utf8 | DataType::LargeUtf8 => {
            let cast = datafusion::arrow::compute::cast(array, &DataType::Utf8)?;
            cast.as_string::<i32>().iter().map(|s| s.map_or(Value::Null, Value::from)).collect()
        }
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) | DataType::ListView(_) => {
            let cast = datafusion::arrow::compute::cast(
                array,
                &DataType::LargeList(Arc::new(datafusion::arrow::datatypes::Field::new(
                    "item",
                    list_item_type(array.data_type()),
                    true,
                ))),
            )?;
            let list = cast.as_list::<i64>();
            let values = column(list.values().as_ref())?;
            let offsets = list.value_offsets();
            (0..n)
                .map(|i| {
                    if list.is_null(i) {
                        return Value::Null;
                    }
                    let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
                    Value::Array(Arc::new(values[a..b].to_vec()))
                })
                .collect()
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let children: Vec<Vec<Value>> = s.columns().iter().map(|c| column(c.as_ref())).collect::<Result<_, _>>()?;
            (0..n)
                .map(|i| {
                    if s.is_null(i) {
                        return Value::Null;
                    }
                    let mut map = Map::default();
                    for (field, values) in fields.iter().zip(&children) {
                        if !values[i].is_null() {
                            map.insert(field.name().clone(), values[i].clone());
                        }
                    }
                    Value::from(map)
                })
                .collect()
        }
        DataType::Dictionary(_, value) => {
            let cast = datafusion::arrow::compute::cast(array, value)?;
            column(cast.as_ref())?
        }
        _ => {
            let formatter = ArrayFormatter::try_new(array, &FormatOptions::default())?;
            (0..n)
                .map(|i| if array.is_null(i) { Value::Null } else { Value::from(formatter.value(i).to_string()) })
                .collect()
        }
    })
}

fn list_item_type(ty: &DataType) -> DataType {
    match ty {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::ListView(f) => {
            f.data_type().clone()
        }
        other => other.clone(),
    }
}
