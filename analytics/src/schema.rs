//! The analytical store's schema, inferred from the items as Azure Cosmos DB documents it
//! ("What is Azure Cosmos DB analytical store?", quoted in `docs/design/analytical-store-research.md`,
//! section 1).
//!
//! * The first level's properties are the columns; nested objects and arrays stay inside their
//!   column. The first document defines the schema, later ones add to it; it never shrinks.
//! * Names are compared case-insensitively: in one object only the first of names equal but for
//!   case is represented; across documents they share the column, named as first seen.
//! * At most [`MAX_PROPERTIES`] properties across all levels and [`MAX_NESTING`] levels (the
//!   root's properties are level 1; an array's elements and an object's properties are one
//!   level below it): the rest is not represented.
//! * **Well-defined** ([`SchemaMode::WellDefined`], the default for the API for NoSQL): a
//!   property's first non-null value fixes its type; a later value of another type is not
//!   represented, its item is (the documented `"code"` example). Null fits every type. Integers
//!   and other numbers are one family ("From `float` to `integer`" and back, "All documents are
//!   represented"): a column that has held both is [`ColumnType::Float64`]. An array must hold
//!   one type ("`{"a": ["str",12]}` isn't a well-defined schema"): an item with a mixed array is
//!   not represented at all. An array or object value that does not fit its column's type is not
//!   represented as a whole.
//! * **Full fidelity** ([`SchemaMode::FullFidelity`]): every value is kept under a child named
//!   for its type ([`ColumnType::Variants`]); nothing is dropped but past the limits. Numbers are
//!   one type, `num` ("`float` and `integer` values are represented as `num`" for the API for
//!   NoSQL); each type of each property counts toward the property limit.
//!
//! Where the documentation contradicts itself (one bullet says a document "not following the
//! first non-null datatype won't be represented", its example keeps the document and drops the
//! property), the example is followed.

use std::collections::HashMap;

use cosmoql_value::{Map, Value, ValueKind};

use crate::view::View;

/// The most properties, across all levels, the schema represents.
pub const MAX_PROPERTIES: usize = 1000;

/// The deepest level represented (the root's properties are level 1).
pub const MAX_NESTING: usize = 127;

/// How values of different types in one property are represented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaMode {
    /// One type a property: the first non-null value's.
    WellDefined,
    /// One child a type a property.
    FullFidelity,
}

impl SchemaMode {
    /// The mode's name, as the files and the metadata write it.
    pub fn name(self) -> &'static str {
        match self {
            SchemaMode::WellDefined => "well-defined",
            SchemaMode::FullFidelity => "full-fidelity",
        }
    }

    /// The mode named `name` ([`Self::name`]).
    pub fn from_name(name: &str) -> Option<SchemaMode> {
        [SchemaMode::WellDefined, SchemaMode::FullFidelity].into_iter().find(|m| m.name() == name)
    }
}

/// The type of a column, or of a value inside one.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnType {
    /// Only nulls so far (well-defined: the first non-null value will fix the type), or the null
    /// child of a full-fidelity property.
    Null,
    Bool,
    /// Integers (within ±2^63) only so far.
    Int64,
    /// Numbers with a fraction, or past ±2^63, or integers and others in one column; every number
    /// in full fidelity (`num`).
    Float64,
    String,
    /// An array whose elements have this type.
    Array(Box<ColumnType>),
    Object(ObjectSchema),
    /// Full fidelity: one child a type the property held, in the order first seen (never two of
    /// one kind, never a `Variants` among them).
    Variants(Vec<ColumnType>),
}

impl ColumnType {
    /// The name of the type (a full-fidelity property's number child is [`ColumnType::Float64`],
    /// which [`Schema::describe`] writes `num`).
    pub fn name(&self) -> &'static str {
        match self {
            ColumnType::Null => "null",
            ColumnType::Bool => "bool",
            ColumnType::Int64 => "int64",
            ColumnType::Float64 => "float64",
            ColumnType::String => "string",
            ColumnType::Array(_) => "array",
            ColumnType::Object(_) => "object",
            ColumnType::Variants(_) => "variants",
        }
    }
}

/// The properties of an object column (the top level's are the columns), in the order first seen.
#[derive(Clone, Debug, Default)]
pub struct ObjectSchema {
    fields: Vec<Field>,
    /// Field positions by lower-cased name.
    folded: HashMap<String, usize, foldhash::fast::RandomState>,
    /// Field positions by the names seen for them, as spelled (looked up for every property of
    /// every item: foldhash, not SipHash).
    spelled: HashMap<String, usize, foldhash::fast::RandomState>,
    /// The fields of the object merged last.
    recent: Recent,
}

/// Two object schemas are equal when their fields are (what spellings each has met aside).
impl PartialEq for ObjectSchema {
    fn eq(&self, other: &Self) -> bool {
        self.fields == other.fields
    }
}

/// The most spellings an object schema remembers.
const MAX_SPELLINGS: usize = 4 * MAX_PROPERTIES;

/// A property: its name as first seen, and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: ColumnType,
    /// Every value the property has had is represented, under this very name: none was of
    /// another type, none was spelled otherwise (case-insensitive names share a field, where a
    /// Cosmos SQL path tells them apart). What routing a query to the mirror asks of each
    /// property it reads.
    pub exact: bool,
}

impl ObjectSchema {
    /// The properties, in the order first seen.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The property named `name`, compared case-insensitively.
    pub fn get(&self, name: &str) -> Option<&Field> {
        self.position(name).map(|i| &self.fields[i])
    }

    /// Where the property named `name` (compared case-insensitively) is among [`Self::fields`].
    pub fn position(&self, name: &str) -> Option<usize> {
        if let Some(&at) = self.spelled.get(name) {
            return Some(at);
        }
        self.folded.get(fold(name).as_ref()).copied()
    }

    /// Notes `name` as a spelling of field `at`, so that it is found again without folding (at
    /// most [`MAX_SPELLINGS`] a schema: names of many casings are folded each time).
    fn remember(&mut self, name: &str, at: usize) {
        if self.spelled.len() < MAX_SPELLINGS && !self.spelled.contains_key(name) {
            self.spelled.insert(name.to_string(), at);
        }
    }
}

/// The fields of an object that have been given a value so far, in [`Schema::merge_object`]:
/// a bit a field among the first 128 (no allocation for an object of most items), a list past
/// them.
#[derive(Default)]
struct Seen {
    low: u128,
    high: Vec<usize>,
}

impl Seen {
    /// Notes field `at`; `false` when it was noted already.
    fn insert(&mut self, at: usize) -> bool {
        if at < 128 {
            let bit = 1u128 << at;
            let new = self.low & bit == 0;
            self.low |= bit;
            new
        } else if self.high.contains(&at) {
            false
        } else {
            self.high.push(at);
            true
        }
    }
}

/// What became of one item ([`Schema::observe`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// Represented, but for `dropped` values (another type than their column's, a name
    /// repeated but for case, past the limits).
    Included { dropped: u64 },
    /// Not represented: a mixed-type array at `path` (well-defined), or not an object.
    Excluded { path: String },
}

/// What the schema has not represented so far, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Items left out whole (a mixed-type array).
    pub items: u64,
    /// Values of another type than their property's.
    pub type_mismatches: u64,
    /// Properties whose name repeated an earlier one of their object but for case.
    pub case_duplicates: u64,
    /// New properties past [`MAX_PROPERTIES`].
    pub over_properties: u64,
    /// Values nested past [`MAX_NESTING`].
    pub over_nesting: u64,
}

impl Dropped {
    fn values(&self) -> u64 {
        self.type_mismatches + self.case_duplicates + self.over_properties + self.over_nesting
    }
}

/// A container's analytical schema: it grows with every item observed.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    mode: SchemaMode,
    root: ObjectSchema,
    /// Properties (full fidelity: property types) represented, across all levels.
    properties: usize,
    dropped: Dropped,
}

impl Schema {
    pub fn new(mode: SchemaMode) -> Self {
        Schema { mode, root: ObjectSchema::default(), properties: 0, dropped: Dropped::default() }
    }

    pub fn mode(&self) -> SchemaMode {
        self.mode
    }

    /// The columns: the first level's properties.
    pub fn columns(&self) -> &ObjectSchema {
        &self.root
    }

    /// Properties represented across all levels (in full fidelity, each type of each property).
    pub fn properties(&self) -> usize {
        self.properties
    }

    /// What was not represented so far.
    pub fn dropped(&self) -> Dropped {
        self.dropped
    }

    /// Adds what `item` (a document, without system properties; a [`Value`] or stored bytes)
    /// brings to the schema.
    pub fn observe<'a>(&mut self, item: impl View<'a>) -> Observed {
        if item.kind() != ValueKind::Object {
            self.dropped.items += 1;
            return Observed::Excluded { path: String::new() };
        }
        if self.mode == SchemaMode::WellDefined {
            if let Some(steps) = mixed_array_in(item, 1) {
                self.dropped.items += 1;
                return Observed::Excluded { path: steps.iter().rev().map(|step| format!("/{step}")).collect() };
            }
        }
        let before = self.dropped.values();
        let mut root = std::mem::take(&mut self.root);
        self.merge_object(&mut root, item, 1);
        self.root = root;
        Observed::Included { dropped: self.dropped.values() - before }
    }

    /// Merges the properties of `object`, at level `level`, into `schema`.
    fn merge_object<'a>(&mut self, schema: &mut ObjectSchema, object: impl View<'a>, level: usize) {
        // The fields this object has given a value (a later name equal but for case is a
        // duplicate), and the folded names it brought past the limit.
        let mut seen = Seen::default();
        let mut seen_over: Vec<String> = Vec::new();
        for (place, (name, value)) in object.entries().enumerate() {
            if value.kind() == ValueKind::Undefined {
                continue;
            }
            if level > MAX_NESTING {
                self.dropped.over_nesting += 1;
                continue;
            }
            // The field at this place in the last object, when it has this very name; else a
            // spelling met before is found in one lookup.
            let known = schema.recent.get(&schema.fields, place, name).or_else(|| schema.spelled.get(name).copied());
            let at = match known.or_else(|| schema.folded.get(fold(name).as_ref()).copied()) {
                Some(at) => {
                    if known.is_none() {
                        schema.remember(name, at);
                    }
                    if schema.fields[at].exact && schema.fields[at].name != name {
                        schema.fields[at].exact = false;
                    }
                    at
                }
                None => {
                    let folded = fold(name).into_owned();
                    if self.properties >= MAX_PROPERTIES {
                        if seen_over.contains(&folded) {
                            self.dropped.case_duplicates += 1;
                        } else {
                            self.dropped.over_properties += 1;
                            seen_over.push(folded);
                        }
                        continue;
                    }
                    self.properties += 1;
                    let ty = match self.mode {
                        SchemaMode::WellDefined => ColumnType::Null,
                        SchemaMode::FullFidelity => ColumnType::Variants(Vec::new()),
                    };
                    let at = schema.fields.len();
                    schema.folded.insert(folded, at);
                    schema.remember(name, at);
                    schema.fields.push(Field { name: name.to_string(), ty, exact: true });
                    at
                }
            };
            schema.recent.note(place, at);
            if !seen.insert(at) {
                self.dropped.case_duplicates += 1;
                schema.fields[at].exact = false;
                continue;
            }
            let mut ty = std::mem::replace(&mut schema.fields[at].ty, ColumnType::Null);
            if !self.merge(&mut ty, value, level, true) {
                self.dropped.type_mismatches += 1;
                schema.fields[at].exact = false;
            }
            schema.fields[at].ty = ty;
        }
    }

    /// Merges `value` (at level `level`; a property's value, or an array's element) into `ty`;
    /// `false` when it does not fit (well-defined: another type than the column's), and then
    /// `ty` is unchanged.
    fn merge<'a>(&mut self, ty: &mut ColumnType, value: impl View<'a>, level: usize, property: bool) -> bool {
        if let ColumnType::Variants(children) = ty {
            return self.merge_variant(children, value, level, property);
        }
        if !fits(ty, value) {
            return false;
        }
        match value.kind() {
            ValueKind::Undefined | ValueKind::Null => {}
            ValueKind::Boolean => *ty = ColumnType::Bool,
            ValueKind::String => *ty = ColumnType::String,
            ValueKind::Number => {
                let n = value.as_f64().unwrap_or(0.5);
                *ty = match ty {
                    ColumnType::Null | ColumnType::Int64 if is_int64(n) => ColumnType::Int64,
                    _ => ColumnType::Float64,
                }
            }
            ValueKind::Array => {
                let mut element = match std::mem::replace(ty, ColumnType::Null) {
                    ColumnType::Array(element) => *element,
                    _ => ColumnType::Null,
                };
                self.merge_elements(&mut element, value, level);
                *ty = ColumnType::Array(Box::new(element));
            }
            ValueKind::Object => {
                let mut schema = match std::mem::replace(ty, ColumnType::Null) {
                    ColumnType::Object(schema) => schema,
                    _ => ObjectSchema::default(),
                };
                self.merge_object(&mut schema, value, level + 1);
                *ty = ColumnType::Object(schema);
            }
        }
        true
    }

    /// Merges an array's elements (one level below the array) into its element type.
    fn merge_elements<'a>(&mut self, element: &mut ColumnType, array: impl View<'a>, level: usize) {
        for item in array.elements() {
            if item.kind() == ValueKind::Undefined {
                continue;
            }
            if level + 1 > MAX_NESTING {
                self.dropped.over_nesting += 1;
                continue;
            }
            // Well-defined elements fit (the array was checked to hold one type, and as a whole
            // against the column); full-fidelity elements always do.
            self.merge(element, item, level + 1, false);
        }
    }

    /// Full fidelity: `value` goes to the child of its type, made when first seen (for a
    /// property, a property type of its own: "each datatype of each property ... count as one of
    /// the 1000 maximum properties"; an array's element types are not properties).
    fn merge_variant<'a>(
        &mut self,
        children: &mut Vec<ColumnType>,
        value: impl View<'a>,
        level: usize,
        property: bool,
    ) -> bool {
        let kind = variant_of(value.kind());
        let at = match children.iter().position(|c| c.name() == kind.name()) {
            Some(at) => at,
            None => {
                // The property's first type counted when the property was made.
                if property && !children.is_empty() {
                    if self.properties >= MAX_PROPERTIES {
                        self.dropped.over_properties += 1;
                        return true;
                    }
                    self.properties += 1;
                }
                children.push(kind);
                children.len() - 1
            }
        };
        match &mut children[at] {
            ColumnType::Array(element) => self.merge_elements(element, value, level),
            ColumnType::Object(schema) => self.merge_object(schema, value, level + 1),
            _ => {}
        }
        true
    }
}

impl Schema {
    /// Takes in what `later` observed, as though this schema had observed those items itself,
    /// after its own: `later` and this schema both grew from `base`, and `later`'s items come
    /// after this one's. So a partition's items can be observed in two halves at once, the
    /// second half into a copy of the schema as it was.
    ///
    /// `false`, and this schema unchanged, when the result could differ from observing the items
    /// in order (then observe them again, in order): `later` dropped a value for its type or past
    /// the property limit (this schema's types could have taken or dropped others), two types that
    /// do not fit each other, more properties than the limit together, or full fidelity. What an
    /// item decides alone carries over: an item left out for a mixed-type array, a name repeated
    /// but for case in one object, a value nested too deep.
    pub fn absorb(&mut self, later: &Schema, base: &Schema) -> bool {
        let (l, b) = (later.dropped, base.dropped);
        if self.mode != SchemaMode::WellDefined
            || later.mode != self.mode
            || l.type_mismatches != b.type_mismatches
            || l.over_properties != b.over_properties
        {
            return false;
        }
        let mut root = self.root.clone();
        let mut added = 0;
        if !absorb_object(&mut root, &later.root, &mut added) || self.properties + added > MAX_PROPERTIES {
            return false;
        }
        self.root = root;
        self.properties += added;
        self.dropped.items += l.items.saturating_sub(b.items);
        self.dropped.case_duplicates += l.case_duplicates.saturating_sub(b.case_duplicates);
        self.dropped.over_nesting += l.over_nesting.saturating_sub(b.over_nesting);
        true
    }
}

/// [`Schema::absorb`] for an object: `later`'s fields into `into`'s (found by folded name; a new
/// one appended, in `later`'s order, as observing would have appended it); the properties added
/// counted in `added`; `false` when two types do not fit.
fn absorb_object(into: &mut ObjectSchema, later: &ObjectSchema, added: &mut usize) -> bool {
    let mut places = Vec::with_capacity(later.fields.len());
    for field in &later.fields {
        let at = match into.position(&field.name) {
            Some(at) => {
                let target = &mut into.fields[at];
                // Another spelling of the field (observing would have met it), or one `later`
                // met: no longer exact.
                target.exact &= field.exact && target.name == field.name;
                if !absorb_type(&mut target.ty, &field.ty, added) {
                    return false;
                }
                at
            }
            None => {
                *added += 1 + properties_in(&field.ty);
                into.folded.insert(fold(&field.name).into_owned(), into.fields.len());
                into.fields.push(field.clone());
                into.fields.len() - 1
            }
        };
        places.push(at);
    }
    for (name, &at) in &later.spelled {
        into.remember(name, places[at]);
    }
    true
}

/// [`Schema::absorb`] for a type: what observing `later`'s values into `into` would have made of
/// it; `false` when they would not all have fit.
fn absorb_type(into: &mut ColumnType, later: &ColumnType, added: &mut usize) -> bool {
    match (&mut *into, later) {
        (_, ColumnType::Null) => true,
        (ColumnType::Null, _) => {
            *added += properties_in(later);
            *into = later.clone();
            true
        }
        (ColumnType::Bool, ColumnType::Bool)
        | (ColumnType::String, ColumnType::String)
        | (ColumnType::Int64, ColumnType::Int64)
        | (ColumnType::Float64, ColumnType::Int64 | ColumnType::Float64) => true,
        (ColumnType::Int64, ColumnType::Float64) => {
            *into = ColumnType::Float64;
            true
        }
        (ColumnType::Array(element), ColumnType::Array(other)) => absorb_type(element, other, added),
        (ColumnType::Object(schema), ColumnType::Object(other)) => absorb_object(schema, other, added),
        _ => false,
    }
}

/// The properties inside a well-defined type, at every level (an object's fields and theirs).
fn properties_in(ty: &ColumnType) -> usize {
    match ty {
        ColumnType::Object(schema) => schema.fields.iter().map(|f| 1 + properties_in(&f.ty)).sum(),
        ColumnType::Array(element) => properties_in(element),
        _ => 0,
    }
}

impl Schema {
    /// The schema as a value, what a persisted mirror keeps of it: the mode, the properties
    /// counted, what was dropped, and each field's name, type and exactness, in order.
    pub fn to_value(&self) -> Value {
        let d = self.dropped;
        let mut map = Map::default();
        map.insert("mode".into(), Value::from(self.mode.name()));
        map.insert("properties".into(), Value::from(self.properties as f64));
        let dropped: Vec<Value> = [d.items, d.type_mismatches, d.case_duplicates, d.over_properties, d.over_nesting]
            .iter()
            .map(|&n| Value::from(n as f64))
            .collect();
        map.insert("dropped".into(), Value::from(dropped));
        map.insert("columns".into(), object_value(&self.root));
        Value::from(map)
    }

    /// The schema [`Self::to_value`] wrote; `None` for anything else (a damaged or foreign
    /// file): names repeated but for case in an object, more properties or levels than the
    /// limits, a type that is not one.
    pub fn from_value(value: &Value) -> Option<Schema> {
        let mode = SchemaMode::from_name(value.get("mode").as_str()?)?;
        let count = |v: &Value| v.as_i64().and_then(|n| u64::try_from(n).ok());
        let properties = usize::try_from(count(value.get("properties"))?).ok().filter(|&n| n <= MAX_PROPERTIES)?;
        let d = value.get("dropped").as_array()?;
        let [items, type_mismatches, case_duplicates, over_properties, over_nesting] = d else { return None };
        let dropped = Dropped {
            items: count(items)?,
            type_mismatches: count(type_mismatches)?,
            case_duplicates: count(case_duplicates)?,
            over_properties: count(over_properties)?,
            over_nesting: count(over_nesting)?,
        };
        let mut fields = 0;
        let root = object_from(value.get("columns"), 1, &mut fields)?;
        Some(Schema { mode, root, properties, dropped }).filter(|_| fields <= MAX_PROPERTIES)
    }
}

fn object_value(schema: &ObjectSchema) -> Value {
    let fields: Vec<Value> = schema
        .fields
        .iter()
        .map(|f| {
            let mut map = Map::default();
            map.insert("name".into(), Value::from(f.name.as_str()));
            map.insert("type".into(), type_value(&f.ty));
            map.insert("exact".into(), Value::Bool(f.exact));
            Value::from(map)
        })
        .collect();
    Value::from(fields)
}

fn type_value(ty: &ColumnType) -> Value {
    let tagged = |tag: &str, inner: Value| {
        let mut map = Map::default();
        map.insert(tag.into(), inner);
        Value::from(map)
    };
    match ty {
        ColumnType::Array(element) => tagged("array", type_value(element)),
        ColumnType::Object(schema) => tagged("object", object_value(schema)),
        ColumnType::Variants(children) => {
            tagged("variants", Value::from(children.iter().map(type_value).collect::<Vec<_>>()))
        }
        scalar => Value::from(scalar.name()),
    }
}

/// An object schema [`object_value`] wrote, at `level`; its fields counted in `fields`.
fn object_from(value: &Value, level: usize, fields: &mut usize) -> Option<ObjectSchema> {
    if level > MAX_NESTING + 1 {
        return None;
    }
    let mut schema = ObjectSchema::default();
    for f in value.as_array()? {
        let name = f.get("name").as_str()?;
        let folded = fold(name).into_owned();
        if schema.folded.contains_key(&folded) {
            return None;
        }
        *fields += 1;
        let ty = type_from(f.get("type"), level, fields)?;
        let exact = match f.get("exact") {
            Value::Bool(b) => *b,
            _ => return None,
        };
        schema.folded.insert(folded, schema.fields.len());
        schema.remember(name, schema.fields.len());
        schema.fields.push(Field { name: name.to_string(), ty, exact });
    }
    Some(schema)
}

fn type_from(value: &Value, level: usize, fields: &mut usize) -> Option<ColumnType> {
    if level > MAX_NESTING + 1 {
        return None;
    }
    if let Some(name) = value.as_str() {
        return Some(match name {
            "null" => ColumnType::Null,
            "bool" => ColumnType::Bool,
            "int64" => ColumnType::Int64,
            "float64" => ColumnType::Float64,
            "string" => ColumnType::String,
            _ => return None,
        });
    }
    let map = value.as_object()?;
    if map.len() != 1 {
        return None;
    }
    let (tag, inner) = map.iter().next()?;
    Some(match tag.as_ref() {
        "array" => ColumnType::Array(Box::new(type_from(inner, level + 1, fields)?)),
        "object" => ColumnType::Object(object_from(inner, level + 1, fields)?),
        "variants" => ColumnType::Variants(
            inner.as_array()?.iter().map(|child| type_from(child, level, fields)).collect::<Option<Vec<_>>>()?,
        ),
        _ => return None,
    })
}

/// The full-fidelity child a value of `kind` goes to, empty.
fn variant_of(kind: ValueKind) -> ColumnType {
    match kind {
        ValueKind::Undefined | ValueKind::Null => ColumnType::Null,
        ValueKind::Boolean => ColumnType::Bool,
        ValueKind::Number => ColumnType::Float64,
        ValueKind::String => ColumnType::String,
        ValueKind::Array => ColumnType::Array(Box::new(ColumnType::Variants(Vec::new()))),
        ValueKind::Object => ColumnType::Object(ObjectSchema::default()),
    }
}

/// The field each property of the object seen last went to, by place: the next object of the
/// same shape (most items) finds its fields by comparing names, without a lookup.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recent(Vec<usize>);

impl Recent {
    /// The field the property at `place` of the last object went to, when it has this very
    /// name (then a lookup of `name` finds it too).
    pub(crate) fn get(&self, fields: &[Field], place: usize, name: &str) -> Option<usize> {
        self.0.get(place).copied().filter(|&at| fields.get(at).is_some_and(|f| f.name == name))
    }

    /// Notes that the property at `place` went to field `at` (the first [`MAX_RECENT`] places).
    pub(crate) fn note(&mut self, place: usize, at: usize) {
        if let Some(slot) = self.0.get_mut(place) {
            *slot = at;
        } else if place == self.0.len() && place < MAX_RECENT {
            self.0.push(at);
        }
    }
}

/// The places of an object whose fields are remembered for the next object.
const MAX_RECENT: usize = 256;

/// A name as names are compared: lower-cased (without a copy when it is already).
pub(crate) fn fold(name: &str) -> std::borrow::Cow<'_, str> {
    if name.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        std::borrow::Cow::Owned(name.to_lowercase())
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

/// An integer the column can hold as one (`-0` and numbers past ±2^63 are not).
pub(crate) fn is_int64(n: f64) -> bool {
    n.fract() == 0.0 && n.abs() < 9.223_372_036_854_776e18 && !(n == 0.0 && n.is_sign_negative())
}

/// Whether `value` fits a well-defined `ty` (whatever it holds inside: its parts that do not fit
/// are dropped one by one, except an array's elements, which fit as a whole or not at all).
pub(crate) fn fits<'a>(ty: &ColumnType, value: impl View<'a>) -> bool {
    match (ty, value.kind()) {
        (_, ValueKind::Undefined | ValueKind::Null) | (ColumnType::Null, _) => true,
        (ColumnType::Bool, ValueKind::Boolean) | (ColumnType::String, ValueKind::String) => true,
        (ColumnType::Int64 | ColumnType::Float64, ValueKind::Number) => true,
        (ColumnType::Array(element), ValueKind::Array) => value.elements().all(|item| fits(element, item)),
        (ColumnType::Object(_), ValueKind::Object) => true,
        _ => false,
    }
}

/// The family of a non-null value, for the one-type rule of arrays (numbers are one).
fn family(kind: ValueKind) -> Option<u8> {
    match kind {
        ValueKind::Undefined | ValueKind::Null => None,
        ValueKind::Boolean => Some(0),
        ValueKind::Number => Some(1),
        ValueKind::String => Some(2),
        ValueKind::Array => Some(3),
        ValueKind::Object => Some(4),
    }
}

/// The path of the first array holding values of two types among the properties of `object`
/// (at `level`), down to the deepest level represented: its steps, the last first (the path is
/// spelled out only for an item that has one).
fn mixed_array_in<'a>(object: impl View<'a>, level: usize) -> Option<Vec<String>> {
    if level > MAX_NESTING {
        return None;
    }
    object.entries().find_map(|(name, value)| {
        let mut steps = mixed_array(value, level)?;
        steps.push(name.to_string());
        Some(steps)
    })
}

/// The types an array holds, level by level down its nested arrays (objects merge their
/// properties instead: a property of two types in an array's objects is dropped, not the item).
#[derive(Default)]
struct ArrayShape {
    family: Option<u8>,
    inner: Option<Box<ArrayShape>>,
}

impl ArrayShape {
    /// Adds the elements of `array`; `false` when one of them (or of the arrays among them, at
    /// any depth) is of another type than those before.
    fn add<'a>(&mut self, array: impl View<'a>) -> bool {
        for item in array.elements() {
            let Some(f) = family(item.kind()) else { continue };
            if *self.family.get_or_insert(f) != f {
                return false;
            }
            if item.kind() == ValueKind::Array && !self.inner.get_or_insert_with(Box::default).add(item) {
                return false;
            }
        }
        true
    }
}

/// [`mixed_array_in`] for one value at `level`.
fn mixed_array<'a>(value: impl View<'a>, level: usize) -> Option<Vec<String>> {
    match value.kind() {
        ValueKind::Array => {
            if !ArrayShape::default().add(value) {
                return Some(Vec::new());
            }
            if level + 1 > MAX_NESTING {
                return None;
            }
            value.elements().enumerate().find_map(|(i, item)| {
                let mut steps = mixed_array(item, level + 1)?;
                steps.push(i.to_string());
                Some(steps)
            })
        }
        ValueKind::Object => mixed_array_in(value, level + 1),
        _ => None,
    }
}

impl Schema {
    /// The schema as an indented tree, a property a line (`name: type`, a full-fidelity
    /// property's types after it), then what was not represented: what a user reads to see
    /// how the items were taken.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        describe_object(&self.root, 0, &mut out);
        let d = self.dropped;
        out.push_str(&format!(
            "{} properties; not represented: items with a mixed-type array {}, values of another type than their \
             property's {}, names repeated but for case {}, properties past {MAX_PROPERTIES} {}, values past \
             {MAX_NESTING} levels {}\n",
            self.properties, d.items, d.type_mismatches, d.case_duplicates, d.over_properties, d.over_nesting
        ));
        out
    }
}

fn describe_object(schema: &ObjectSchema, indent: usize, out: &mut String) {
    for field in &schema.fields {
        out.push_str(&format!("{:indent$}{}: ", "", field.name, indent = indent));
        describe_type(&field.ty, indent, out);
    }
}

fn describe_type(ty: &ColumnType, indent: usize, out: &mut String) {
    match ty {
        ColumnType::Object(schema) => {
            out.push_str("object\n");
            describe_object(schema, indent + 2, out);
        }
        ColumnType::Array(element) => {
            out.push_str("array of ");
            describe_type(element, indent, out);
        }
        ColumnType::Variants(children) => {
            let names: Vec<&str> =
                children.iter().map(|c| if matches!(c, ColumnType::Float64) { "num" } else { c.name() }).collect();
            out.push_str(&format!("{{{}}}\n", names.join(", ")));
            for child in children {
                if matches!(child, ColumnType::Object(_) | ColumnType::Array(_)) {
                    out.push_str(&format!("{:indent$}  .{} ", "", child.name(), indent = indent));
                    describe_type(child, indent + 2, out);
                }
            }
        }
        other => {
            out.push_str(other.name());
            out.push('\n');
        }
    }
}
