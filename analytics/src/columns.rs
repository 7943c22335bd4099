//! The mirror's Arrow form: the inferred schema as Arrow types, and items as Arrow columns.
//!
//! * The columns are the system columns `_rid`, `_ts` and `_etag` (as the service's analytical
//!   store has them, with `id` among the user's properties), then the first level's properties
//!   in the order first seen.
//! * The user's strings are `Utf8View`: one of up to 12 bytes sits in its 16-byte view, so
//!   grouping on and comparing short strings reads no second buffer (Q6's GROUP BY on the
//!   mirror took half the time, 2026-11-28). `_rid` and `_etag` stay `Utf8`: long, never
//!   grouped on, 12 bytes an item less each.
//! * Well-defined: a column of the property's type; a value of another type is null (it was
//!   counted as dropped when observed). Numbers are `Int64` while a property held only integers,
//!   `Float64` after; a property with only nulls so far is of Arrow's `Null` type. Nested objects
//!   are `Struct`s of their properties, arrays `LargeList`s of their element type (64-bit
//!   offsets: a batch's items may hold more than 2^31 elements in all).
//! * Full fidelity: a property is a `Struct` with one child a type it held, named `null`,
//!   `bool`, `num`, `string`, `array` or `object` (not Arrow's `Union`, which Parquet cannot
//!   hold): a value sits in the child of its type, the others are null.
//! * Names match case-insensitively: in an object, the first property whose name folds to the
//!   column's is its value (a later one, equal but for case, is not represented).

use std::sync::Arc;

use cosmoql_value::ValueKind;
use datafusion::arrow::array::{
    new_null_array, ArrayRef, BinaryViewBuilder, BooleanArray, Float64Array, Int64Array, LargeListArray, StringArray,
    StringViewArray, StructArray,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema as ArrowSchema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};

use crate::schema::{fold, ColumnType, ObjectSchema, Recent, Schema, SchemaMode};
use crate::view::View;

/// The system columns, first in every mirror.
pub const SYSTEM_COLUMNS: [&str; 3] = ["_rid", "_ts", "_etag"];

/// A full-fidelity child's name for a type.
fn variant_name(ty: &ColumnType) -> &'static str {
    match ty {
        ColumnType::Float64 | ColumnType::Int64 => "num",
        other => other.name(),
    }
}

/// The Arrow type of a column of type `ty`.
pub fn data_type(ty: &ColumnType) -> DataType {
    match ty {
        ColumnType::Null => DataType::Null,
        ColumnType::Bool => DataType::Boolean,
        ColumnType::Int64 => DataType::Int64,
        ColumnType::Float64 => DataType::Float64,
        ColumnType::String => DataType::Utf8View,
        ColumnType::Array(element) => DataType::LargeList(Arc::new(Field::new("item", data_type(element), true))),
        ColumnType::Object(schema) => DataType::Struct(object_fields(schema)),
        ColumnType::Variants(children) => DataType::Struct(
            children.iter().map(|child| Field::new(variant_name(child), data_type(child), true)).collect(),
        ),
    }
}

fn object_fields(schema: &ObjectSchema) -> Fields {
    schema.fields().iter().map(|f| Field::new(f.name.clone(), data_type(&f.ty), true)).collect()
}

/// The mirror's Arrow schema: the system columns, then the user's (a user property named as a
/// system column, but for case, is left out: the system column holds that name).
pub fn arrow_schema(schema: &Schema) -> SchemaRef {
    let mut fields = vec![
        Field::new("_rid", DataType::Utf8, false),
        Field::new("_ts", DataType::Int64, false),
        Field::new("_etag", DataType::Utf8, false),
    ];
    for f in user_fields(schema) {
        fields.push(Field::new(f.name.clone(), data_type(&f.ty), true));
    }
    let mut metadata = std::collections::HashMap::new();
    metadata.insert("cosmoql.schema_mode".to_string(), schema.mode().name().to_string());
    Arc::new(ArrowSchema::new_with_metadata(fields, metadata))
}

fn user_fields(schema: &Schema) -> impl Iterator<Item = &crate::schema::Field> {
    schema.columns().fields().iter().filter(|f| !SYSTEM_COLUMNS.contains(&fold(&f.name).as_ref()))
}

/// One row of the mirror: an item's properties (a [`View`]: stored bytes, or a value) and its
/// system columns.
#[derive(Debug)]
pub struct Row<V> {
    pub doc: V,
    pub rid: String,
    pub ts: i64,
    pub etag: String,
}

/// The rows as a record batch of [`arrow_schema`]'s schema.
pub fn record_batch<'a, V: View<'a>>(
    schema: &Schema,
    arrow: &SchemaRef,
    rows: &[Row<V>],
) -> Result<RecordBatch, ArrowError> {
    let mode = schema.mode();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(arrow.fields().len());
    columns.push(Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.rid.as_str()))));
    columns.push(Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.ts))));
    columns.push(Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.etag.as_str()))));
    let fields: Vec<&crate::schema::Field> = user_fields(schema).collect();
    let objects: Vec<Option<V>> = rows.iter().map(|r| Some(r.doc)).collect();
    for (values, f) in gather(schema.columns(), &fields, &objects).iter().zip(&fields) {
        columns.push(build(&f.ty, values, mode));
    }
    RecordBatch::try_new_with_options(
        Arc::clone(arrow),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows.len())),
    )
}

/// For each of `fields` (of `schema`), its value in each of `objects`: the first property whose
/// name folds to the field's (`None` where there is none, or no object).
fn gather<'a, V: View<'a>>(
    schema: &ObjectSchema,
    fields: &[&crate::schema::Field],
    objects: &[Option<V>],
) -> Vec<Vec<Option<V>>> {
    let mut positions = vec![usize::MAX; schema.fields().len()];
    for (i, f) in fields.iter().enumerate() {
        if let Some(at) = schema.position(&f.name) {
            positions[at] = i;
        }
    }
    let mut columns: Vec<Vec<Option<V>>> = vec![vec![None; objects.len()]; fields.len()];
    let mut recent = Recent::default();
    for (row, object) in objects.iter().enumerate() {
        let Some(object) = object.filter(|o| o.kind() == ValueKind::Object) else { continue };
        for (place, (name, value)) in object.entries().enumerate() {
            let Some(at) = recent.get(schema.fields(), place, name).or_else(|| schema.position(name)) else { continue };
            recent.note(place, at);
            let column = positions[at];
            if column != usize::MAX && columns[column][row].is_none() && value.kind() != ValueKind::Undefined {
                columns[column][row] = Some(value);
            }
        }
    }
    columns
}

/// The Arrow column of type `ty` holding `values` (`None`, null and values of another type:
/// null).
fn build<'a, V: View<'a>>(ty: &ColumnType, values: &[Option<V>], mode: SchemaMode) -> ArrayRef {
    match ty {
        ColumnType::Null => new_null_array(&DataType::Null, values.len()),
        ColumnType::Bool => Arc::new(values.iter().map(|v| v.and_then(View::as_bool)).collect::<BooleanArray>()),
        ColumnType::Int64 => Arc::new(
            values
                .iter()
                .map(|v| v.and_then(View::as_f64).filter(|n| crate::schema::is_int64(*n)).map(|n| n as i64))
                .collect::<Int64Array>(),
        ),
        ColumnType::Float64 => Arc::new(values.iter().map(|v| v.and_then(View::as_f64)).collect::<Float64Array>()),
        // The bytes as stored, checked to be UTF-8 in one pass over the column (not a string at a
        // time); were any not, each is checked alone and those become null. Views: a string of up
        // to 12 bytes sits in its view, so grouping and comparing short strings (a type, a city, a
        // status) reads no second buffer.
        ColumnType::String => {
            let strings: Vec<Option<&[u8]>> = values.iter().map(|v| v.and_then(View::str_bytes)).collect();
            // The longer strings' bytes in one block, sized once (the batch's values are in the
            // cache).
            let long: usize = strings.iter().flatten().filter(|s| s.len() > 12).map(|s| s.len()).sum();
            let block = u32::try_from(long).unwrap_or(u32::MAX).max(1);
            let mut builder = BinaryViewBuilder::with_capacity(strings.len()).with_fixed_block_size(block);
            for s in &strings {
                match s {
                    // A string of 4 GiB or more cannot be an item's (2 MiB at most): null, were it.
                    Some(s) if builder.try_append_value(s).is_ok() => {}
                    _ => builder.append_null(),
                }
            }
            match builder.finish().to_string_view() {
                Ok(strings) => Arc::new(strings),
                Err(_) => Arc::new(values.iter().map(|v| v.and_then(View::as_str)).collect::<StringViewArray>()),
            }
        }
        ColumnType::Array(element) => {
            let mut offsets = Vec::with_capacity(values.len() + 1);
            let mut valid = Vec::with_capacity(values.len());
            let mut children: Vec<Option<V>> = Vec::new();
            offsets.push(0i64);
            for v in values {
                match v {
                    Some(array)
                        if array.kind() == ValueKind::Array
                            && (mode == SchemaMode::FullFidelity
                                || array.elements().all(|item| crate::schema::fits(element, item))) =>
                    {
                        children
                            .extend(array.elements().map(|item| (item.kind() != ValueKind::Undefined).then_some(item)));
                        valid.push(true);
                    }
                    _ => valid.push(false),
                }
                offsets.push(i64::try_from(children.len()).unwrap_or(i64::MAX));
            }
            let child = build(element, &children, mode);
            let field = Arc::new(Field::new("item", data_type(element), true));
            Arc::new(LargeListArray::new(
                field,
                OffsetBuffer::new(offsets.into()),
                child,
                Some(NullBuffer::from(valid)),
            ))
        }
        ColumnType::Object(schema) => {
            let objects: Vec<Option<V>> = values.iter().map(|v| v.filter(|v| v.kind() == ValueKind::Object)).collect();
            let fields: Vec<&crate::schema::Field> = schema.fields().iter().collect();
            let arrays: Vec<ArrayRef> = gather(schema, &fields, &objects)
                .iter()
                .zip(&fields)
                .map(|(column, f)| build(&f.ty, column, mode))
                .collect();
            let nulls = NullBuffer::from(objects.iter().map(Option::is_some).collect::<Vec<bool>>());
            struct_array(object_fields(schema), arrays, nulls, values.len())
        }
        ColumnType::Variants(children) => {
            let mut arrays = Vec::with_capacity(children.len());
            let mut fields = Vec::with_capacity(children.len());
            for child in children {
                let name = variant_name(child);
                let column: Vec<Option<V>> =
                    values.iter().map(|v| v.filter(|v| variant_kind(v.kind()) == name)).collect();
                arrays.push(build(child, &column, mode));
                fields.push(Field::new(name, data_type(child), true));
            }
            let nulls = NullBuffer::from(values.iter().map(Option::is_some).collect::<Vec<bool>>());
            struct_array(fields.into(), arrays, nulls, values.len())
        }
    }
}

fn struct_array(fields: Fields, arrays: Vec<ArrayRef>, nulls: NullBuffer, len: usize) -> ArrayRef {
    if fields.is_empty() {
        return Arc::new(StructArray::new_empty_fields(len, Some(nulls)));
    }
    Arc::new(StructArray::new(fields, arrays, Some(nulls)))
}

/// The full-fidelity child a value of `kind` goes to.
fn variant_kind(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Undefined | ValueKind::Null => "null",
        ValueKind::Boolean => "bool",
        ValueKind::Number => "num",
        ValueKind::String => "string",
        ValueKind::Array => "array",
        ValueKind::Object => "object",
    }
}
