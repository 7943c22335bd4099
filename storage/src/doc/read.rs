//! Reading a document into any `T: Deserialize` straight from its bytes, as its decoded value
//! reads through `serde_json` (`Value::to_serde_json`, then `serde_json::from_value`): integral
//! numbers as integers (`u64` unless negative), others as `f64`, non-finite numbers left out
//! (JSON has none), strings borrowed, objects in their order, `null` as `None`. An item returned
//! whole adds its system properties after its own ([`read_object_with`]).

use serde::de::{IntoDeserializer, MapAccess, SeqAccess};
use serde::forward_to_deserialize_any;

use super::*;

/// Why a document could not be read as the type asked for (serde's message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError(String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

impl de::Error for ReadError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ReadError(msg.to_string())
    }
}

/// A scalar added to a document as it is read (an item's system property).
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Text(String),
    Number(f64),
}

impl Scalar {
    /// The scalar as a value.
    pub fn into_value(self) -> Value {
        match self {
            Scalar::Text(text) => Value::from(text),
            Scalar::Number(n) => Value::from(n),
        }
    }
}

/// `n` as `serde_json` hands over the number `to_serde_json` makes of it.
fn visit_number<'de, V: Visitor<'de>>(n: f64, visitor: V) -> Result<V::Value, ReadError> {
    match Value::Number(n).as_i64() {
        Some(i) if i >= 0 => visitor.visit_u64(i.unsigned_abs()),
        Some(i) => visitor.visit_i64(i),
        None => visitor.visit_f64(n),
    }
}

/// Whether a value is read at all: a non-finite number has no JSON form and is left out.
fn shown(v: &DocRef<'_>) -> bool {
    !matches!(v.head(), Some(Head::Number(n)) if !n.is_finite())
}

impl<'de> Deserializer<'de> for DocRef<'de> {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.head() {
            None => Err(de::Error::custom("a stored document is malformed")),
            Some(Head::Null) => visitor.visit_unit(),
            Some(Head::Bool(b)) => visitor.visit_bool(b),
            Some(Head::Number(n)) if n.is_finite() => visit_number(n, visitor),
            Some(Head::Number(_)) => visitor.visit_unit(),
            Some(Head::String(s)) => match std::str::from_utf8(s) {
                Ok(s) => visitor.visit_borrowed_str(s),
                Err(_) => Err(de::Error::custom("a stored string is not UTF-8")),
            },
            Some(Head::Array(_, payload)) => visitor.visit_seq(Elements { rest: payload }),
            Some(Head::Object(_, payload)) => {
                visitor.visit_map(ObjectReader { entries: Entries::of(payload), value: None, tail: Vec::new() })
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.head() {
            Some(Head::Null) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match self.head() {
            // A unit variant by name, or `{"Variant": content}`, as serde_json reads them.
            Some(Head::String(_)) => {
                let name = self.as_str().ok_or_else(|| de::Error::custom("a stored string is not UTF-8"))?;
                visitor.visit_enum(name.into_deserializer())
            }
            Some(Head::Object(1, _)) => match self.entries().next() {
                Some((variant, content)) => visitor.visit_enum(Variant { variant, content }),
                None => Err(de::Error::custom("a stored document is malformed")),
            },
            _ => Err(de::Error::invalid_type(
                de::Unexpected::Other("a value other than a string or an object of one property"),
                &"an enum",
            )),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

impl<'de> SeqAccess<'de> for Elements<'de> {
    type Error = ReadError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, ReadError> {
        for e in self.by_ref() {
            if shown(&e) {
                return seed.deserialize(e).map(Some);
            }
        }
        Ok(None)
    }
}

/// An object's entries, then any scalars added after them.
struct ObjectReader<'de> {
    entries: Entries<'de>,
    value: Option<DocRef<'de>>,
    tail: Vec<(&'static str, Scalar)>,
}

impl<'de> MapAccess<'de> for ObjectReader<'de> {
    type Error = ReadError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ReadError> {
        for (k, v) in self.entries.by_ref() {
            if shown(&v) {
                self.value = Some(v);
                return seed.deserialize(de::value::BorrowedStrDeserializer::new(k)).map(Some);
            }
        }
        match self.tail.first() {
            Some((name, _)) => seed.deserialize(de::value::BorrowedStrDeserializer::new(name)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ReadError> {
        if let Some(v) = self.value.take() {
            return seed.deserialize(v);
        }
        if self.tail.is_empty() {
            return Err(de::Error::custom("a value was read before its key"));
        }
        seed.deserialize(self.tail.remove(0).1)
    }
}

/// A scalar added to a document, read as a stored one is.
impl<'de> Deserializer<'de> for Scalar {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self {
            Scalar::Text(text) => visitor.visit_string(text),
            Scalar::Number(n) => visit_number(n, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match self {
            Scalar::Text(text) => visitor.visit_enum(text.into_deserializer()),
            Scalar::Number(n) => Err(de::Error::invalid_type(de::Unexpected::Float(n), &"an enum")),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// `{"Variant": content}`.
struct Variant<'de> {
    variant: &'de str,
    content: DocRef<'de>,
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = ReadError;
    type Variant = DocRef<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, DocRef<'de>), ReadError> {
        let variant = seed.deserialize(de::value::BorrowedStrDeserializer::<ReadError>::new(self.variant))?;
        Ok((variant, self.content))
    }
}

impl<'de> de::VariantAccess<'de> for DocRef<'de> {
    type Error = ReadError;

    fn unit_variant(self) -> Result<(), ReadError> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, ReadError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, ReadError> {
        Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], visitor: V) -> Result<V::Value, ReadError> {
        Deserializer::deserialize_map(self, visitor)
    }
}

/// Reads an object document as `T` with `tail` added after its own properties (an item's system
/// properties).
pub(crate) fn read_object_with<T: de::DeserializeOwned>(
    doc: &Doc,
    tail: Vec<(&'static str, Scalar)>,
) -> Result<T, ReadError> {
    struct Whole<'de> {
        doc: DocRef<'de>,
        tail: Vec<(&'static str, Scalar)>,
    }
    impl<'de> Deserializer<'de> for Whole<'de> {
        type Error = ReadError;

        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            match self.doc.head() {
                Some(Head::Object(_, payload)) => {
                    visitor.visit_map(ObjectReader { entries: Entries::of(payload), value: None, tail: self.tail })
                }
                _ => Err(de::Error::custom("a stored item is not an object")),
            }
        }

        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
            visitor.visit_some(self)
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            visitor: V,
        ) -> Result<V::Value, ReadError> {
            visitor.visit_newtype_struct(self)
        }

        forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit unit_struct
            seq tuple tuple_struct map struct enum identifier ignored_any
        }
    }
    T::deserialize(Whole { doc: doc.root(), tail })
}
