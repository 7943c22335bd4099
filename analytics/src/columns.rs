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

use cosmoql_catalog::rid::RidText;
use cosmoql_storage::ItemMeta;
use cosmoql_value::ValueKind;
use datafusion::arrow::array::builder::make_view;
use datafusion::arrow::array::{
    new_null_array, ArrayRef, BinaryViewArray, BooleanBuilder, Float64Builder, Int64Array, Int64Builder,
    LargeListArray, StringArray, StringViewArray, StructArray,
};
use datafusion::arrow::buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema as ArrowSchema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};

use crate::schema::{fold, ColumnType, ObjectSchema, Recent, Schema, SchemaMode};
use crate::view::{read_ahead, View};

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
    schema.columns().fields().iter().filter(|f| is_user_field(f))
}

/// Whether a root field is the user's own column (not a name a system column holds, but for
/// case).
fn is_user_field(f: &crate::schema::Field) -> bool {
    !SYSTEM_COLUMNS.contains(&fold(&f.name).as_ref())
}

/// One row of the mirror: an item's properties (a [`View`]: stored bytes, or a value) and its
/// system columns, their texts on the stack (not two strings an item to build a column from).
#[derive(Debug)]
pub struct Row<V> {
    pub doc: V,
    pub rid: RidText,
    pub ts: i64,
    pub etag: [u8; ItemMeta::ETAG_LEN],
}

/// The rows as a record batch of [`arrow_schema`]'s schema.
///
/// Built row by row: each item's properties are read once, in order, and each value goes
/// straight to its column's builder (nested objects and arrays to theirs). Items lie all over
/// memory (in the order they were written, read here in position order): one pass over each
/// is one wait for it, where a pass a column waited again for every column (2026-11-28).
pub fn record_batch<'a, V: View<'a>>(
    schema: &Schema,
    arrow: &SchemaRef,
    rows: &[Row<V>],
) -> Result<RecordBatch, ArrowError> {
    let mode = schema.mode();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(arrow.fields().len());
    columns.push(Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.rid.as_str()))));
    columns.push(Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.ts))));
    // ASCII by construction.
    columns.push(Arc::new(StringArray::from_iter_values(
        rows.iter().map(|r| std::str::from_utf8(&r.etag).unwrap_or_default()),
    )));
    // The user's properties: the root's fields but those a system column holds.
    let keep: Vec<bool> = schema.columns().fields().iter().map(is_user_field).collect();
    let mut root = ObjectBuilder::new(schema.columns(), Some(&keep), mode, rows.len());
    read_ahead(rows, |row| row.doc, |row| root.append(Some(row.doc)));
    columns.extend(root.finish());
    RecordBatch::try_new_with_options(
        Arc::clone(arrow),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows.len())),
    )
}

/// The builders of an object's fields: a value a row for each (`None` where the object has no
/// property of the field's name, or there is no object). In an object, the first property whose
/// name folds to the field's is its value.
struct ObjectBuilder<'s> {
    schema: &'s ObjectSchema,
    /// A builder a field of `schema` (`None`: left out).
    builders: Vec<Option<Builder<'s>>>,
    /// The row each field last took a value in (plus one; 0: none yet).
    filled: Vec<usize>,
    rows: usize,
    recent: Recent,
}

impl<'s> ObjectBuilder<'s> {
    fn new(schema: &'s ObjectSchema, keep: Option<&[bool]>, mode: SchemaMode, capacity: usize) -> ObjectBuilder<'s> {
        let builders = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                keep.is_none_or(|k| k.get(i).copied().unwrap_or(true)).then(|| Builder::new(&f.ty, mode, capacity))
            })
            .collect();
        ObjectBuilder { schema, builders, filled: vec![0; schema.fields().len()], rows: 0, recent: Recent::default() }
    }

    /// Takes a row: the properties of `object` (none when it is not an object).
    fn append<'a, V: View<'a>>(&mut self, object: Option<V>) {
        self.rows += 1;
        let row = self.rows;
        if let Some(object) = object.filter(|o| o.kind() == ValueKind::Object) {
            let fields = self.schema.fields();
            for (place, (name, value)) in object.entries().enumerate() {
                let Some(at) = self.recent.get(fields, place, name).or_else(|| self.schema.position(name)) else {
                    continue;
                };
                self.recent.note(place, at);
                if self.filled[at] == row || value.kind() == ValueKind::Undefined {
                    continue;
                }
                self.filled[at] = row;
                if let Some(builder) = &mut self.builders[at] {
                    builder.append(Some(value));
                }
            }
        }
        for (builder, filled) in self.builders.iter_mut().zip(&self.filled) {
            if let Some(builder) = builder.as_mut().filter(|_| *filled != row) {
                builder.append(None::<V>);
            }
        }
    }

    /// The columns of the fields kept, in order.
    fn finish(self) -> Vec<ArrayRef> {
        self.builders.into_iter().flatten().map(Builder::finish).collect()
    }
}

/// A column under construction, of one schema type (a value of another type is null).
enum Builder<'s> {
    Null(usize),
    Bool(BooleanBuilder),
    Int64(Int64Builder),
    Float64(Float64Builder),
    String(Strings),
    Array { element: &'s ColumnType, mode: SchemaMode, items: Box<Builder<'s>>, offsets: Vec<i64>, valid: Vec<bool> },
    Object { fields: Box<ObjectBuilder<'s>>, valid: Vec<bool> },
    Variants { children: Vec<(&'static str, &'s ColumnType, Builder<'s>)>, valid: Vec<bool> },
}

impl<'s> Builder<'s> {
    fn new(ty: &'s ColumnType, mode: SchemaMode, capacity: usize) -> Builder<'s> {
        match ty {
            ColumnType::Null => Builder::Null(0),
            ColumnType::Bool => Builder::Bool(BooleanBuilder::with_capacity(capacity)),
            ColumnType::Int64 => Builder::Int64(Int64Builder::with_capacity(capacity)),
            ColumnType::Float64 => Builder::Float64(Float64Builder::with_capacity(capacity)),
            ColumnType::String => Builder::String(Strings::with_capacity(capacity)),
            ColumnType::Array(element) => {
                let mut offsets = Vec::with_capacity(capacity + 1);
                offsets.push(0);
                Builder::Array {
                    element,
                    mode,
                    items: Box::new(Builder::new(element, mode, capacity)),
                    offsets,
                    valid: Vec::with_capacity(capacity),
                }
            }
            ColumnType::Object(schema) => Builder::Object {
                fields: Box::new(ObjectBuilder::new(schema, None, mode, capacity)),
                valid: Vec::with_capacity(capacity),
            },
            ColumnType::Variants(children) => Builder::Variants {
                children: children.iter().map(|c| (variant_name(c), c, Builder::new(c, mode, capacity))).collect(),
                valid: Vec::with_capacity(capacity),
            },
        }
    }

    /// Takes a row's value (`None`, null and values of another type: null).
    fn append<'a, V: View<'a>>(&mut self, value: Option<V>) {
        match self {
            Builder::Null(rows) => *rows += 1,
            Builder::Bool(b) => b.append_option(value.and_then(View::as_bool)),
            Builder::Int64(b) => {
                b.append_option(value.and_then(View::as_f64).filter(|n| crate::schema::is_int64(*n)).map(|n| n as i64))
            }
            Builder::Float64(b) => b.append_option(value.and_then(View::as_f64)),
            Builder::String(s) => s.append(value.and_then(View::str_bytes)),
            Builder::Array { element, mode, items, offsets, valid } => match value {
                Some(array)
                    if array.kind() == ValueKind::Array
                        && (*mode == SchemaMode::FullFidelity
                            || array.elements().all(|item| crate::schema::fits(element, item))) =>
                {
                    let mut count = 0usize;
                    for item in array.elements() {
                        items.append((item.kind() != ValueKind::Undefined).then_some(item));
                        count += 1;
                    }
                    let last = offsets.last().copied().unwrap_or(0);
                    offsets.push(last.saturating_add(i64::try_from(count).unwrap_or(i64::MAX)));
                    valid.push(true);
                }
                _ => {
                    offsets.push(offsets.last().copied().unwrap_or(0));
                    valid.push(false);
                }
            },
            Builder::Object { fields, valid } => {
                let object = value.filter(|v| v.kind() == ValueKind::Object);
                valid.push(object.is_some());
                fields.append(object);
            }
            Builder::Variants { children, valid } => {
                let name = value.map(|v| variant_kind(v.kind()));
                for (child, _, builder) in children.iter_mut() {
                    builder.append(value.filter(|_| name == Some(*child)));
                }
                valid.push(value.is_some());
            }
        }
    }

    fn finish(self) -> ArrayRef {
        match self {
            Builder::Null(rows) => new_null_array(&DataType::Null, rows),
            Builder::Bool(mut b) => Arc::new(b.finish()),
            Builder::Int64(mut b) => Arc::new(b.finish()),
            Builder::Float64(mut b) => Arc::new(b.finish()),
            Builder::String(s) => s.finish(),
            Builder::Array { element, items, offsets, valid, .. } => {
                let field = Arc::new(Field::new("item", data_type(element), true));
                Arc::new(LargeListArray::new(
                    field,
                    OffsetBuffer::new(offsets.into()),
                    items.finish(),
                    Some(NullBuffer::from(valid)),
                ))
            }
            Builder::Object { fields, valid } => {
                let rows = valid.len();
                struct_array(object_fields(fields.schema), fields.finish(), NullBuffer::from(valid), rows)
            }
            Builder::Variants { children, valid } => {
                let rows = valid.len();
                let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = children
                    .into_iter()
                    .map(|(name, ty, builder)| (Field::new(name, data_type(ty), true), builder.finish()))
                    .unzip();
                struct_array(fields.into(), arrays, NullBuffer::from(valid), rows)
            }
        }
    }
}

/// A column of strings as views: one of up to 12 bytes sits in its view, so grouping and
/// comparing short strings (a type, a city, a status) reads no second buffer; the longer ones'
/// bytes follow each other in one buffer. The bytes are as stored (UTF-8, checked when the item
/// was made), checked again when the column is made, as Arrow does: were any not UTF-8, those
/// would be null.
struct Strings {
    views: Vec<u128>,
    bytes: Vec<u8>,
    valid: Vec<bool>,
}

impl Strings {
    fn with_capacity(capacity: usize) -> Strings {
        Strings { views: Vec::with_capacity(capacity), bytes: Vec::new(), valid: Vec::with_capacity(capacity) }
    }

    fn append(&mut self, s: Option<&[u8]>) {
        let view = s.and_then(|s| {
            if s.len() <= 12 {
                return Some(make_view(s, 0, 0));
            }
            // Past 4 GiB in a batch's column (items are 2 MiB at most): null, were it.
            let at = u32::try_from(self.bytes.len()).ok()?;
            u32::try_from(self.bytes.len() + s.len()).ok()?;
            self.bytes.extend_from_slice(s);
            Some(make_view(s, 0, at))
        });
        self.views.push(view.unwrap_or(0));
        self.valid.push(view.is_some());
    }

    fn finish(mut self) -> ArrayRef {
        self.bytes.shrink_to_fit();
        let buffers = if self.bytes.is_empty() { Vec::new() } else { vec![Buffer::from_vec(self.bytes)] };
        let nulls = Some(NullBuffer::from(self.valid));
        let rows = self.views.len();
        let views = ScalarBuffer::from(self.views);
        match StringViewArray::try_new(views.clone(), buffers.clone(), nulls.clone()) {
            Ok(strings) => Arc::new(strings),
            Err(_) => match BinaryViewArray::try_new(views, buffers, nulls) {
                Ok(binary) => Arc::new(
                    binary.iter().map(|b| b.and_then(|b| std::str::from_utf8(b).ok())).collect::<StringViewArray>(),
                ),
                Err(_) => new_null_array(&DataType::Utf8View, rows),
            },
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
