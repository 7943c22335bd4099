//! Facts about the Cosmos DB binary JSON format: marker bytes, the system
//! string table and the 4-bit character sets.
//!
//! Nothing here reads a buffer. [`classify`] turns a marker byte into a
//! [`Form`] that says how the bytes after it are laid out; the reader in
//! [`super::reader`] acts on that description.
//!
//! Every multi-byte integer on the wire (lengths, counts, offsets, numbers) is
//! little-endian.
//!
//! Marker map (ranges are half-open):
//!
//! | bytes         | form                                                    |
//! |---------------|---------------------------------------------------------|
//! | `00..20`      | the integer 0..=31 itself                               |
//! | `20..40`      | system string, index into [`SYSTEM_STRINGS`]            |
//! | `40..60`      | user string, 1-byte id (external dictionary)            |
//! | `60..68`      | user string, 2-byte id (external dictionary)            |
//! | `68..71`      | unassigned                                              |
//! | `71..75`      | base64 strings (standard / URL alphabet, 1 or 2 byte n) |
//! | `75..78`      | GUID strings (lower, upper, quoted lower)               |
//! | `78..80`      | 4-bit table strings and packed 4/5/6/7-bit strings      |
//! | `80..C0`      | string whose byte length is `marker - 0x80`             |
//! | `C0..C3`      | string with a 1, 2 or 4 byte length prefix              |
//! | `C3..C7`      | reference to an earlier string, 1..=4 byte offset       |
//! | `C7..D0`      | numbers: uint64, uint8, int16/32/64, double, floats     |
//! | `D0..D4`      | null, false, true, GUID                                 |
//! | `D7..E0`      | uint8, int8/16/32/64, uint32, binary blobs              |
//! | `E0..E8`      | arrays                                                  |
//! | `E8..F0`      | objects                                                 |
//! | `F0..F4`      | uniform number arrays and arrays of them                |
//! | `D4..D7`, `F4..FF`, `FF` | unassigned / reserved / invalid              |

/// The first byte of every binary JSON document.
pub const PREAMBLE: u8 = 0x80;

// Literal integers and dictionary strings.
pub const LITERAL_INT_FIRST: u8 = 0x00;
pub const LITERAL_INT_END: u8 = 0x20;
pub const SYSTEM_STRING_FIRST: u8 = 0x20;
pub const SYSTEM_STRING_END: u8 = 0x40;
pub const USER_STRING_1_FIRST: u8 = 0x40;
pub const USER_STRING_1_END: u8 = 0x60;
/// Ids 0..32 use the 1-byte user-string form; the 2-byte form continues
/// from there.
pub const ONE_BYTE_USER_STRING_IDS: usize = (USER_STRING_1_END - USER_STRING_1_FIRST) as usize;
pub const USER_STRING_2_FIRST: u8 = 0x60;
pub const USER_STRING_2_END: u8 = 0x68;

// Encoded strings.
pub const BASE64_L1: u8 = 0x71;
pub const BASE64_L2: u8 = 0x72;
pub const BASE64_URL_L1: u8 = 0x73;
pub const BASE64_URL_L2: u8 = 0x74;
pub const GUID_STRING_LOWER: u8 = 0x75;
pub const GUID_STRING_UPPER: u8 = 0x76;
pub const GUID_STRING_QUOTED_LOWER: u8 = 0x77;
pub const HEX_LOWER_4BIT: u8 = 0x78;
pub const HEX_UPPER_4BIT: u8 = 0x79;
pub const DATE_TIME_4BIT: u8 = 0x7A;
pub const PACKED_4BIT: u8 = 0x7B;
pub const PACKED_5BIT: u8 = 0x7C;
pub const PACKED_6BIT: u8 = 0x7D;
pub const PACKED_7BIT_L1: u8 = 0x7E;
pub const PACKED_7BIT_L2: u8 = 0x7F;

// Plain strings.
pub const SHORT_STRING_FIRST: u8 = 0x80;
pub const SHORT_STRING_END: u8 = 0xC0;
pub const STR_L1: u8 = 0xC0;
pub const STR_L2: u8 = 0xC1;
pub const STR_L4: u8 = 0xC2;
pub const STR_R1: u8 = 0xC3;
pub const STR_R2: u8 = 0xC4;
pub const STR_R3: u8 = 0xC5;
pub const STR_R4: u8 = 0xC6;

// Self-describing numbers.
pub const NUMBER_UINT64: u8 = 0xC7;
pub const NUMBER_UINT8: u8 = 0xC8;
pub const NUMBER_INT16: u8 = 0xC9;
pub const NUMBER_INT32: u8 = 0xCA;
pub const NUMBER_INT64: u8 = 0xCB;
pub const NUMBER_DOUBLE: u8 = 0xCC;
pub const FLOAT32: u8 = 0xCD;
pub const FLOAT64: u8 = 0xCE;
pub const FLOAT16: u8 = 0xCF;

// Other scalars.
pub const NULL: u8 = 0xD0;
pub const FALSE: u8 = 0xD1;
pub const TRUE: u8 = 0xD2;
pub const GUID: u8 = 0xD3;
pub const UINT8: u8 = 0xD7;
pub const INT8: u8 = 0xD8;
pub const INT16: u8 = 0xD9;
pub const INT32: u8 = 0xDA;
pub const INT64: u8 = 0xDB;
pub const UINT32: u8 = 0xDC;
pub const BINARY_L1: u8 = 0xDD;
pub const BINARY_L2: u8 = 0xDE;
pub const BINARY_L4: u8 = 0xDF;

// Containers.
pub const ARR_EMPTY: u8 = 0xE0;
pub const ARR_SINGLE: u8 = 0xE1;
pub const ARR_L1: u8 = 0xE2;
pub const ARR_L2: u8 = 0xE3;
pub const ARR_L4: u8 = 0xE4;
pub const ARR_LC1: u8 = 0xE5;
pub const ARR_LC2: u8 = 0xE6;
pub const ARR_LC4: u8 = 0xE7;
pub const OBJ_EMPTY: u8 = 0xE8;
pub const OBJ_SINGLE: u8 = 0xE9;
pub const OBJ_L1: u8 = 0xEA;
pub const OBJ_L2: u8 = 0xEB;
pub const OBJ_L4: u8 = 0xEC;
pub const OBJ_LC1: u8 = 0xED;
pub const OBJ_LC2: u8 = 0xEE;
pub const OBJ_LC4: u8 = 0xEF;

// Uniform number arrays.
pub const ARR_NUM_C1: u8 = 0xF0;
pub const ARR_NUM_C2: u8 = 0xF1;
pub const ARR_ARR_NUM_C1C1: u8 = 0xF2;
pub const ARR_ARR_NUM_C2C2: u8 = 0xF3;

/// The fixed dictionary addressed by markers `0x20..0x40`; entry `i` belongs
/// to marker `0x20 + i`. The order is part of the wire format.
pub const SYSTEM_STRINGS: [&str; 32] = [
    "$s",
    "$t",
    "$v",
    "_attachments",
    "_etag",
    "_rid",
    "_self",
    "_ts",
    "attachments/",
    "coordinates",
    "geometry",
    "GeometryCollection",
    "id",
    "url",
    "Value",
    "label",
    "LineString",
    "link",
    "MultiLineString",
    "MultiPoint",
    "MultiPolygon",
    "name",
    "Name",
    "Type",
    "Point",
    "Polygon",
    "properties",
    "type",
    "value",
    "Feature",
    "FeatureCollection",
    "_id",
];

/// Character sets of the 4-bit table strings: nibble `n` stands for `set[n]`.
pub const LOWER_HEX_CHARS: &[u8; 16] = b"0123456789abcdef";
pub const UPPER_HEX_CHARS: &[u8; 16] = b"0123456789ABCDEF";
pub const DATE_TIME_CHARS: &[u8; 16] = b" 0123456789:-.TZ";

/// The type of a fixed-width number payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberType {
    UInt8,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
}

impl NumberType {
    /// Size of the payload in bytes.
    pub fn size(self) -> usize {
        match self {
            NumberType::UInt8 | NumberType::Int8 => 1,
            NumberType::Int16 | NumberType::Float16 => 2,
            NumberType::Int32 | NumberType::UInt32 | NumberType::Float32 => 4,
            NumberType::Int64 | NumberType::UInt64 | NumberType::Float64 => 8,
        }
    }

    /// The item type named by the marker that follows a uniform-array marker.
    /// Only the sized markers (`0xCD..=0xCF`, `0xD7..=0xDC`) may appear there.
    pub fn of_uniform_item(marker: u8) -> Option<NumberType> {
        Some(match marker {
            UINT8 => NumberType::UInt8,
            INT8 => NumberType::Int8,
            INT16 => NumberType::Int16,
            INT32 => NumberType::Int32,
            INT64 => NumberType::Int64,
            UINT32 => NumberType::UInt32,
            FLOAT16 => NumberType::Float16,
            FLOAT32 => NumberType::Float32,
            FLOAT64 => NumberType::Float64,
            _ => return None,
        })
    }
}

/// How a container marker frames its contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No contents at all.
    Empty,
    /// Exactly one element (or one name/value pair) follows, unframed.
    Single,
    /// A byte length of the given width, then the contents.
    Length(usize),
    /// A byte length and then an element count, both of the given width,
    /// then the contents. The length covers only the contents.
    LengthAndCount(usize),
}

/// What a marker byte introduces and how the bytes after it are laid out.
/// Widths are in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The marker is the value (0..=31).
    LiteralInt(u8),
    /// A string from [`SYSTEM_STRINGS`]; no further bytes.
    SystemString(&'static str),
    /// User string with a 1-byte id (`id` is known from the marker).
    UserString1 {
        id: usize,
    },
    /// User string with a 2-byte id: one more byte follows; the id is
    /// `ONE_BYTE_USER_STRING_IDS + next_byte + 256 * high`.
    UserString2 {
        high: usize,
    },
    /// `len` UTF-8 bytes follow.
    ShortString {
        len: usize,
    },
    /// A length prefix of `width` bytes, then that many UTF-8 bytes.
    LengthPrefixedString {
        width: usize,
    },
    /// An absolute buffer offset of `width` bytes naming an earlier string.
    ReferenceString {
        width: usize,
    },
    /// Group count (`width` bytes), padding byte, then the decoded bytes.
    Base64String {
        width: usize,
        url_safe: bool,
    },
    /// 16 bytes, two hex digits per byte, low nibble first.
    GuidString {
        uppercase: bool,
        quoted: bool,
    },
    /// 1-byte character count, then two characters of `chars` per byte,
    /// low nibble first.
    TableString {
        chars: &'static [u8; 16],
    },
    /// Character count (`len_width` bytes), a base character when
    /// `has_base`, then `bits`-bit codes packed least significant bit first.
    PackedString {
        bits: usize,
        len_width: usize,
        has_base: bool,
    },
    /// A number payload of the given type follows.
    Number(NumberType),
    Null,
    False,
    True,
    /// A 16-byte GUID in .NET memory order.
    Guid,
    /// A length prefix of `width` bytes, then that many raw bytes.
    Binary {
        width: usize,
    },
    Array(Framing),
    Object(Framing),
    /// Item type marker, item count (`count_width` bytes), then the items.
    UniformArray {
        count_width: usize,
    },
    /// Inner array marker, item type marker, inner count, outer count (each
    /// count `count_width` bytes), then outer × inner items.
    UniformArrayOfArrays {
        count_width: usize,
    },
    /// Unassigned, reserved or invalid.
    Unknown,
}

/// Describes the form a marker byte introduces.
pub fn classify(marker: u8) -> Form {
    match marker {
        LITERAL_INT_FIRST..LITERAL_INT_END => Form::LiteralInt(marker),
        SYSTEM_STRING_FIRST..SYSTEM_STRING_END => {
            Form::SystemString(SYSTEM_STRINGS[usize::from(marker - SYSTEM_STRING_FIRST)])
        }
        USER_STRING_1_FIRST..USER_STRING_1_END => Form::UserString1 { id: usize::from(marker - USER_STRING_1_FIRST) },
        USER_STRING_2_FIRST..USER_STRING_2_END => Form::UserString2 { high: usize::from(marker - USER_STRING_2_FIRST) },
        BASE64_L1 => Form::Base64String { width: 1, url_safe: false },
        BASE64_L2 => Form::Base64String { width: 2, url_safe: false },
        BASE64_URL_L1 => Form::Base64String { width: 1, url_safe: true },
        BASE64_URL_L2 => Form::Base64String { width: 2, url_safe: true },
        GUID_STRING_LOWER => Form::GuidString { uppercase: false, quoted: false },
        GUID_STRING_UPPER => Form::GuidString { uppercase: true, quoted: false },
        GUID_STRING_QUOTED_LOWER => Form::GuidString { uppercase: false, quoted: true },
        HEX_LOWER_4BIT => Form::TableString { chars: LOWER_HEX_CHARS },
        HEX_UPPER_4BIT => Form::TableString { chars: UPPER_HEX_CHARS },
        DATE_TIME_4BIT => Form::TableString { chars: DATE_TIME_CHARS },
        PACKED_4BIT => packed(4, 1, true),
        PACKED_5BIT => packed(5, 1, true),
        PACKED_6BIT => packed(6, 1, true),
        PACKED_7BIT_L1 => packed(7, 1, false),
        PACKED_7BIT_L2 => packed(7, 2, false),
        SHORT_STRING_FIRST..SHORT_STRING_END => Form::ShortString { len: usize::from(marker - SHORT_STRING_FIRST) },
        STR_L1 => Form::LengthPrefixedString { width: 1 },
        STR_L2 => Form::LengthPrefixedString { width: 2 },
        STR_L4 => Form::LengthPrefixedString { width: 4 },
        STR_R1 => Form::ReferenceString { width: 1 },
        STR_R2 => Form::ReferenceString { width: 2 },
        STR_R3 => Form::ReferenceString { width: 3 },
        STR_R4 => Form::ReferenceString { width: 4 },
        NUMBER_UINT64 => Form::Number(NumberType::UInt64),
        NUMBER_UINT8 | UINT8 => Form::Number(NumberType::UInt8),
        NUMBER_INT16 | INT16 => Form::Number(NumberType::Int16),
        NUMBER_INT32 | INT32 => Form::Number(NumberType::Int32),
        NUMBER_INT64 | INT64 => Form::Number(NumberType::Int64),
        NUMBER_DOUBLE | FLOAT64 => Form::Number(NumberType::Float64),
        FLOAT32 => Form::Number(NumberType::Float32),
        FLOAT16 => Form::Number(NumberType::Float16),
        INT8 => Form::Number(NumberType::Int8),
        UINT32 => Form::Number(NumberType::UInt32),
        NULL => Form::Null,
        FALSE => Form::False,
        TRUE => Form::True,
        GUID => Form::Guid,
        BINARY_L1 => Form::Binary { width: 1 },
        BINARY_L2 => Form::Binary { width: 2 },
        BINARY_L4 => Form::Binary { width: 4 },
        ARR_EMPTY => Form::Array(Framing::Empty),
        ARR_SINGLE => Form::Array(Framing::Single),
        ARR_L1 => Form::Array(Framing::Length(1)),
        ARR_L2 => Form::Array(Framing::Length(2)),
        ARR_L4 => Form::Array(Framing::Length(4)),
        ARR_LC1 => Form::Array(Framing::LengthAndCount(1)),
        ARR_LC2 => Form::Array(Framing::LengthAndCount(2)),
        ARR_LC4 => Form::Array(Framing::LengthAndCount(4)),
        OBJ_EMPTY => Form::Object(Framing::Empty),
        OBJ_SINGLE => Form::Object(Framing::Single),
        OBJ_L1 => Form::Object(Framing::Length(1)),
        OBJ_L2 => Form::Object(Framing::Length(2)),
        OBJ_L4 => Form::Object(Framing::Length(4)),
        OBJ_LC1 => Form::Object(Framing::LengthAndCount(1)),
        OBJ_LC2 => Form::Object(Framing::LengthAndCount(2)),
        OBJ_LC4 => Form::Object(Framing::LengthAndCount(4)),
        ARR_NUM_C1 => Form::UniformArray { count_width: 1 },
        ARR_NUM_C2 => Form::UniformArray { count_width: 2 },
        ARR_ARR_NUM_C1C1 => Form::UniformArrayOfArrays { count_width: 1 },
        ARR_ARR_NUM_C2C2 => Form::UniformArrayOfArrays { count_width: 2 },
        _ => Form::Unknown,
    }
}

fn packed(bits: usize, len_width: usize, has_base: bool) -> Form {
    Form::PackedString { bits, len_width, has_base }
}

/// The inner-array marker an array-of-uniform-arrays must carry for its
/// count width: `ArrNumC1` inside `C1C1`, `ArrNumC2` inside `C2C2`.
pub fn inner_uniform_marker(count_width: usize) -> u8 {
    if count_width == 1 {
        ARR_NUM_C1
    } else {
        ARR_NUM_C2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_classifies_without_panicking() {
        let unknown: Vec<u8> = (0..=255u8).filter(|&m| classify(m) == Form::Unknown).collect();
        let mut expected: Vec<u8> = (0x68..=0x70).collect();
        expected.extend([0xD4, 0xD5, 0xD6]);
        expected.extend(0xF4..=0xFF);
        assert_eq!(unknown, expected);
    }

    #[test]
    fn system_string_table_ends() {
        assert_eq!(classify(0x20), Form::SystemString("$s"));
        assert_eq!(classify(0x2C), Form::SystemString("id"));
        assert_eq!(classify(0x3F), Form::SystemString("_id"));
    }

    #[test]
    fn short_string_lengths() {
        assert_eq!(classify(0x80), Form::ShortString { len: 0 });
        assert_eq!(classify(0xBF), Form::ShortString { len: 63 });
    }
}
