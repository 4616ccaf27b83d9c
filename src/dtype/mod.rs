//! Data types: the stored type of an array ([`DType`]: kind, size, byte order, as in the
//! metadata) and the element type the data path moves ([`ElementType`], the C enum).

use crate::error::{Error, Result};
use serde_json::Value;

pub mod minifloat;
pub mod v3;

pub use minifloat::ExtFloat;

/// Byte order of a stored multi-byte type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Least significant byte first (`<`).
    Little,
    /// Most significant byte first (`>`).
    Big,
    /// Not applicable: one-byte types (`|`).
    NotApplicable,
}

impl ByteOrder {
    /// The byte order of this machine.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "little") {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
}

/// The kind and size of a stored type; everything above the metadata layer sees only
/// this model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataKind {
    /// One byte, 0 or 1.
    Bool,
    /// Signed integer of the given size in bytes (1, 2, 4, 8).
    Int(usize),
    /// Unsigned integer of the given size in bytes (1, 2, 4, 8).
    UInt(usize),
    /// IEEE float of the given size in bytes (2, 4, 8).
    Float(usize),
    /// Complex of two floats, total size in bytes (8, 16).
    Complex(usize),
    /// An extension floating-point type (`bfloat16`, float8, float6, float4), moved as its
    /// bits.
    ExtFloat(ExtFloat),
    /// An integer of 2 or 4 bits (`int2`, `int4`, `uint2`, `uint4`) stored in the low bits of
    /// one byte; moved as one byte, sign-extended when signed.
    NarrowInt {
        /// Whether the integer is signed.
        signed: bool,
        /// Bits of the value (2 or 4).
        bits: u32,
    },
    /// numpy datetime64 with its unit (e.g. `"ns"`, `"10s"`), moved as int64.
    DateTime(String),
    /// numpy timedelta64 with its unit, moved as int64.
    TimeDelta(String),
    /// Fixed-width byte string of this many bytes (v2 `S<n>`), NUL-padded.
    FixedBytes(usize),
    /// Fixed-width unicode string of this many UTF-32 code units (v2 `U<n>`), NUL-padded.
    Unicode(usize),
    /// Opaque bytes of this size (v2 `V<n>`, v3 `r<8n>` and `raw_bytes`).
    Raw(usize),
    /// A record of named fields (v2 structured type), packed without padding.
    Structured(Vec<Field>),
    /// Variable-length UTF-8 string (v2 `|O` with `vlen-utf8`, v3 `string`).
    String,
    /// Variable-length byte string (v2 `|O` with `vlen-bytes`, v3 `bytes`).
    VlenBytes,
    /// Variable-length one-dimensional array of a numeric type (v2 `|O` with `vlen-array`).
    VlenArray(Box<DType>),
}

/// One field of a structured type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Field name, unique within its record.
    pub name: String,
    /// Type of one element of the field (possibly itself structured).
    pub dtype: DType,
    /// Sub-array shape (empty for a scalar field).
    pub shape: Vec<u64>,
    /// Byte offset of the field inside the record.
    pub offset: usize,
}

impl Field {
    /// Size of the field in bytes (element size times the sub-array's element count).
    pub fn size(&self) -> usize {
        self.shape.iter().fold(self.dtype.item_size(), |acc, &n| {
            acc.saturating_mul(n as usize)
        })
    }
}

/// A stored data type: kind plus byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DType {
    /// What the bytes mean.
    pub kind: DataKind,
    /// How multi-byte values are ordered.
    pub order: ByteOrder,
}

/// The element types of the data path, with the frozen integer values of `zarr_dtype_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ElementType {
    /// bool, 1 byte.
    Bool = 1,
    /// int8.
    Int8 = 2,
    /// int16.
    Int16 = 3,
    /// int32.
    Int32 = 4,
    /// int64 (also datetime64 and timedelta64).
    Int64 = 5,
    /// uint8.
    UInt8 = 6,
    /// uint16.
    UInt16 = 7,
    /// uint32.
    UInt32 = 8,
    /// uint64.
    UInt64 = 9,
    /// IEEE half precision, moved as its 16 bits.
    Float16 = 10,
    /// float32.
    Float32 = 11,
    /// float64.
    Float64 = 12,
    /// Two float32 (real, imaginary).
    Complex64 = 13,
    /// Two float64 (real, imaginary).
    Complex128 = 14,
    /// Raw item bytes of the array's item size: fixed-width strings (`S`, `U`), void (`V`,
    /// `r*`) and structured records.
    Raw = 15,
    /// Variable-length UTF-8 strings (read and written through the vlen calls).
    String = 16,
    /// Variable-length bytes or arrays (read and written through the vlen calls).
    Bytes = 17,
    /// bfloat16, moved as its 16 bits.
    BFloat16 = 18,
    /// float8_e4m3 (IEEE-like), moved as its byte.
    Float8E4M3 = 19,
    /// float8_e4m3fn, moved as its byte.
    Float8E4M3FN = 20,
    /// float8_e4m3fnuz, moved as its byte.
    Float8E4M3FNUZ = 21,
    /// float8_e4m3b11fnuz, moved as its byte.
    Float8E4M3B11FNUZ = 22,
    /// float8_e5m2, moved as its byte.
    Float8E5M2 = 23,
    /// float8_e5m2fnuz, moved as its byte.
    Float8E5M2FNUZ = 24,
    /// float8_e3m4, moved as its byte.
    Float8E3M4 = 25,
    /// float8_e8m0fnu, moved as its byte.
    Float8E8M0FNU = 26,
    /// float6_e2m3fn, one byte, value in the low 6 bits.
    Float6E2M3FN = 27,
    /// float6_e3m2fn, one byte, value in the low 6 bits.
    Float6E3M2FN = 28,
    /// float4_e2m1fn, one byte, value in the low 4 bits.
    Float4E2M1FN = 29,
    /// int2, one byte, sign-extended (-2..=1).
    Int2 = 30,
    /// int4, one byte, sign-extended (-8..=7).
    Int4 = 31,
    /// uint2, one byte (0..=3).
    UInt2 = 32,
    /// uint4, one byte (0..=15).
    UInt4 = 33,
}

/// The element type of each extension floating-point type.
const EXT_FLOAT_ELEMENTS: [(ExtFloat, ElementType); 12] = [
    (ExtFloat::BFloat16, ElementType::BFloat16),
    (ExtFloat::Float8E4M3, ElementType::Float8E4M3),
    (ExtFloat::Float8E4M3FN, ElementType::Float8E4M3FN),
    (ExtFloat::Float8E4M3FNUZ, ElementType::Float8E4M3FNUZ),
    (ExtFloat::Float8E4M3B11FNUZ, ElementType::Float8E4M3B11FNUZ),
    (ExtFloat::Float8E5M2, ElementType::Float8E5M2),
    (ExtFloat::Float8E5M2FNUZ, ElementType::Float8E5M2FNUZ),
    (ExtFloat::Float8E3M4, ElementType::Float8E3M4),
    (ExtFloat::Float8E8M0FNU, ElementType::Float8E8M0FNU),
    (ExtFloat::Float6E2M3FN, ElementType::Float6E2M3FN),
    (ExtFloat::Float6E3M2FN, ElementType::Float6E3M2FN),
    (ExtFloat::Float4E2M1FN, ElementType::Float4E2M1FN),
];

/// The element types of the narrow integers: (signed, bits, element type, name).
const NARROW_INTS: [(bool, u32, ElementType, &str); 4] = [
    (true, 2, ElementType::Int2, "int2"),
    (true, 4, ElementType::Int4, "int4"),
    (false, 2, ElementType::UInt2, "uint2"),
    (false, 4, ElementType::UInt4, "uint4"),
];

const ELEMENT_TYPES: [(ElementType, &str, usize); 33] = [
    (ElementType::Bool, "bool", 1),
    (ElementType::Int8, "int8", 1),
    (ElementType::Int16, "int16", 2),
    (ElementType::Int32, "int32", 4),
    (ElementType::Int64, "int64", 8),
    (ElementType::UInt8, "uint8", 1),
    (ElementType::UInt16, "uint16", 2),
    (ElementType::UInt32, "uint32", 4),
    (ElementType::UInt64, "uint64", 8),
    (ElementType::Float16, "float16", 2),
    (ElementType::Float32, "float32", 4),
    (ElementType::Float64, "float64", 8),
    (ElementType::Complex64, "complex64", 8),
    (ElementType::Complex128, "complex128", 16),
    (ElementType::Raw, "raw", 0),
    (ElementType::String, "string", 0),
    (ElementType::Bytes, "bytes", 0),
    (ElementType::BFloat16, "bfloat16", 2),
    (ElementType::Float8E4M3, "float8_e4m3", 1),
    (ElementType::Float8E4M3FN, "float8_e4m3fn", 1),
    (ElementType::Float8E4M3FNUZ, "float8_e4m3fnuz", 1),
    (ElementType::Float8E4M3B11FNUZ, "float8_e4m3b11fnuz", 1),
    (ElementType::Float8E5M2, "float8_e5m2", 1),
    (ElementType::Float8E5M2FNUZ, "float8_e5m2fnuz", 1),
    (ElementType::Float8E3M4, "float8_e3m4", 1),
    (ElementType::Float8E8M0FNU, "float8_e8m0fnu", 1),
    (ElementType::Float6E2M3FN, "float6_e2m3fn", 1),
    (ElementType::Float6E3M2FN, "float6_e3m2fn", 1),
    (ElementType::Float4E2M1FN, "float4_e2m1fn", 1),
    (ElementType::Int2, "int2", 1),
    (ElementType::Int4, "int4", 1),
    (ElementType::UInt2, "uint2", 1),
    (ElementType::UInt4, "uint4", 1),
];

impl ElementType {
    /// The element type with integer value `code`, if any.
    pub fn from_code(code: i32) -> Option<Self> {
        ELEMENT_TYPES
            .iter()
            .find(|e| e.0 as i32 == code)
            .map(|e| e.0)
    }

    /// The element type named `name`: one of its own names (`"float32"`, `"raw"`), or the
    /// element type of any stored type name [`by_name`] accepts (`"<f4"`,
    /// `"|S8"`, a structured field list).
    pub fn from_name(name: &str) -> Option<Self> {
        ELEMENT_TYPES
            .iter()
            .find(|e| e.1 == name)
            .map(|e| e.0)
            .or_else(|| by_name(name).ok().map(|d| d.element_type()))
    }

    /// The Zarr v3 name (`"float32"`).
    pub fn name(self) -> &'static str {
        ELEMENT_TYPES
            .iter()
            .find(|e| e.0 == self)
            .map(|e| e.1)
            .unwrap_or("")
    }

    /// Size of one element in bytes (0 for the raw and variable-length types, whose size
    /// depends on the array).
    pub fn size(self) -> usize {
        ELEMENT_TYPES
            .iter()
            .find(|e| e.0 == self)
            .map(|e| e.2)
            .unwrap_or(0)
    }

    /// The stored type for this element type in the given byte order; `None` for
    /// [`ElementType::Raw`], whose size only a type name gives.
    pub fn to_dtype(self, order: ByteOrder) -> Option<DType> {
        let kind = match self {
            ElementType::Bool => DataKind::Bool,
            ElementType::Int8 => DataKind::Int(1),
            ElementType::Int16 => DataKind::Int(2),
            ElementType::Int32 => DataKind::Int(4),
            ElementType::Int64 => DataKind::Int(8),
            ElementType::UInt8 => DataKind::UInt(1),
            ElementType::UInt16 => DataKind::UInt(2),
            ElementType::UInt32 => DataKind::UInt(4),
            ElementType::UInt64 => DataKind::UInt(8),
            ElementType::Float16 => DataKind::Float(2),
            ElementType::Float32 => DataKind::Float(4),
            ElementType::Float64 => DataKind::Float(8),
            ElementType::Complex64 => DataKind::Complex(8),
            ElementType::Complex128 => DataKind::Complex(16),
            ElementType::String => DataKind::String,
            ElementType::Bytes => DataKind::VlenBytes,
            ElementType::Raw => return None,
            other => {
                if let Some((t, _)) = EXT_FLOAT_ELEMENTS.iter().find(|(_, e)| *e == other) {
                    DataKind::ExtFloat(*t)
                } else {
                    let (signed, bits, _, _) = NARROW_INTS
                        .iter()
                        .find(|n| n.2 == other)
                        .copied()
                        .expect("every element type has a kind");
                    DataKind::NarrowInt { signed, bits }
                }
            }
        };
        Some(DType::new(kind, order))
    }
}

impl DType {
    /// A type of `kind`; kinds without a byte order (one-byte numbers, byte strings, raw
    /// bytes, records, variable-length types) get [`ByteOrder::NotApplicable`] whatever
    /// `order` says.
    pub fn new(kind: DataKind, order: ByteOrder) -> Self {
        let mut dtype = DType { kind, order };
        if dtype.swap_unit() <= 1 {
            dtype.order = ByteOrder::NotApplicable;
        }
        dtype
    }

    /// Size of one item in bytes (0 for variable-length types, which have no fixed size).
    pub fn item_size(&self) -> usize {
        match &self.kind {
            DataKind::Bool => 1,
            DataKind::Int(n) | DataKind::UInt(n) | DataKind::Float(n) | DataKind::Complex(n) => *n,
            DataKind::ExtFloat(t) => t.size(),
            DataKind::NarrowInt { .. } => 1,
            DataKind::DateTime(_) | DataKind::TimeDelta(_) => 8,
            DataKind::FixedBytes(n) | DataKind::Raw(n) => *n,
            DataKind::Unicode(n) => n.saturating_mul(4),
            // Fields are packed in order: the record ends where its last field does.
            DataKind::Structured(fields) => fields.last().map_or(0, |f| f.offset + f.size()),
            DataKind::String | DataKind::VlenBytes | DataKind::VlenArray(_) => 0,
        }
    }

    /// Whether items have variable length (strings, bytes and arrays of `|O` arrays).
    pub fn is_variable(&self) -> bool {
        matches!(
            self.kind,
            DataKind::String | DataKind::VlenBytes | DataKind::VlenArray(_)
        )
    }

    /// Size of the unit whose bytes are swapped to change byte order (a complex number
    /// swaps each half, a unicode string each code unit), or 1 when nothing is swapped
    /// (byte strings, raw bytes and records, whose fields keep their stored order).
    pub fn swap_unit(&self) -> usize {
        match &self.kind {
            DataKind::Complex(n) => n / 2,
            DataKind::Unicode(_) => 4,
            DataKind::FixedBytes(_)
            | DataKind::Raw(_)
            | DataKind::Structured(_)
            | DataKind::String
            | DataKind::VlenBytes
            | DataKind::VlenArray(_) => 1,
            _ => self.item_size(),
        }
    }

    /// Whether stored bytes differ in order from this machine's.
    pub fn needs_swap(&self) -> bool {
        self.order != ByteOrder::NotApplicable
            && self.order != ByteOrder::NATIVE
            && self.swap_unit() > 1
    }

    /// The element type the data path moves for this stored type.
    pub fn element_type(&self) -> ElementType {
        match &self.kind {
            DataKind::Bool => ElementType::Bool,
            DataKind::Int(1) => ElementType::Int8,
            DataKind::Int(2) => ElementType::Int16,
            DataKind::Int(4) => ElementType::Int32,
            DataKind::Int(_) | DataKind::DateTime(_) | DataKind::TimeDelta(_) => ElementType::Int64,
            DataKind::UInt(1) => ElementType::UInt8,
            DataKind::UInt(2) => ElementType::UInt16,
            DataKind::UInt(4) => ElementType::UInt32,
            DataKind::UInt(_) => ElementType::UInt64,
            DataKind::Float(2) => ElementType::Float16,
            DataKind::Float(4) => ElementType::Float32,
            DataKind::Float(_) => ElementType::Float64,
            DataKind::Complex(8) => ElementType::Complex64,
            DataKind::Complex(_) => ElementType::Complex128,
            DataKind::FixedBytes(_)
            | DataKind::Unicode(_)
            | DataKind::Raw(_)
            | DataKind::Structured(_) => ElementType::Raw,
            DataKind::String => ElementType::String,
            DataKind::VlenBytes | DataKind::VlenArray(_) => ElementType::Bytes,
            DataKind::ExtFloat(t) => {
                EXT_FLOAT_ELEMENTS
                    .iter()
                    .find(|(k, _)| k == t)
                    .expect("every extension float has an element type")
                    .1
            }
            DataKind::NarrowInt { signed, bits } => {
                NARROW_INTS
                    .iter()
                    .find(|n| n.0 == *signed && n.1 == *bits)
                    .expect("every narrow integer has an element type")
                    .2
            }
        }
    }

    /// Bits of one value when narrower than its byte (float6, float4, int2, int4, uint2,
    /// uint4), with whether it is a signed integer; `None` otherwise.
    pub fn narrow_bits(&self) -> Option<(u32, bool)> {
        match &self.kind {
            DataKind::NarrowInt { signed, bits } => Some((*bits, *signed)),
            DataKind::ExtFloat(t) if t.format().bits < 8 => Some((t.format().bits, false)),
            _ => None,
        }
    }

    /// Parses a numpy type string as v2 metadata writes it (`"<f8"`, `"|b1"`, `"<M8[ns]"`).
    /// One-byte types accept `<`, `>` and `|`; multi-byte types need `<` or `>`.
    pub fn parse_v2(text: &str) -> Result<Self> {
        let unknown = || Error::Metadata(format!("unknown data type {text:?}"));
        // tensorstore writes the extension types by their plain names (`"bfloat16"`,
        // little-endian).
        if let Some(kind) = extension_kind(text) {
            return Ok(DType::new(kind, ByteOrder::Little));
        }
        let mut chars = text.chars();
        let order = match chars.next() {
            Some('<') => ByteOrder::Little,
            Some('>') => ByteOrder::Big,
            Some('|') => ByteOrder::NotApplicable,
            Some('=') => ByteOrder::NATIVE,
            _ => return Err(unknown()),
        };
        let rest = chars.as_str();
        let kind_char = rest.chars().next().ok_or_else(unknown)?;
        let body = &rest[kind_char.len_utf8()..];
        let kind = match kind_char {
            'M' | 'm' => {
                // `<M8` without a unit is numpy's generic unit.
                let unit = match body {
                    "8" => "generic",
                    _ => body
                        .strip_prefix("8[")
                        .and_then(|u| u.strip_suffix(']'))
                        .filter(|u| valid_time_unit(u))
                        .ok_or_else(unknown)?,
                };
                if kind_char == 'M' {
                    DataKind::DateTime(unit.to_string())
                } else {
                    DataKind::TimeDelta(unit.to_string())
                }
            }
            'S' | 'U' | 'V' => {
                let size: usize = body.parse().map_err(|_| unknown())?;
                // A unicode item holds 4 bytes per character: the limit counts bytes.
                let max = if kind_char == 'U' {
                    MAX_ITEM_SIZE / 4
                } else {
                    MAX_ITEM_SIZE
                };
                if size == 0 || size > max {
                    return Err(Error::Metadata(format!(
                        "data type {text:?}: the length must be in 1..={max} (items of at \
                         most {MAX_ITEM_SIZE} bytes)"
                    )));
                }
                match kind_char {
                    'S' => DataKind::FixedBytes(size),
                    'U' => DataKind::Unicode(size),
                    _ => DataKind::Raw(size),
                }
            }
            'O' => {
                return Err(Error::Metadata(format!(
                    "object data type {text:?} needs a vlen-utf8, vlen-bytes or vlen-array \
                     filter saying what its items are"
                )))
            }
            _ => {
                let size: usize = body.parse().map_err(|_| unknown())?;
                match (kind_char, size) {
                    ('b', 1) => DataKind::Bool,
                    ('i', 1 | 2 | 4 | 8) => DataKind::Int(size),
                    ('u', 1 | 2 | 4 | 8) => DataKind::UInt(size),
                    ('f', 2 | 4 | 8) => DataKind::Float(size),
                    ('c', 8 | 16) => DataKind::Complex(size),
                    _ => return Err(unknown()),
                }
            }
        };
        let dtype = DType::new(kind, order);
        if order == ByteOrder::NotApplicable && dtype.swap_unit() > 1 {
            return Err(Error::Metadata(format!(
                "data type {text:?} needs a byte order ('<' or '>')"
            )));
        }
        Ok(dtype)
    }

    /// Parses a v2 `dtype` value: a type string, or a structured type as a list of
    /// `[name, type]` / `[name, type, shape]` entries (types possibly nested).
    pub fn parse_v2_json(value: &serde_json::Value) -> Result<Self> {
        let mut fields_left = MAX_FIELDS;
        parse_v2_value(value, 0, &mut fields_left)
    }

    /// The v2 `dtype` value: a type string, or the field list of a structured type.
    pub fn to_v2_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            DataKind::Structured(fields) => Value::Array(
                fields
                    .iter()
                    .map(|f| {
                        let mut entry = vec![Value::from(f.name.clone()), f.dtype.to_v2_json()];
                        if !f.shape.is_empty() {
                            entry.push(f.shape.clone().into());
                        }
                        Value::Array(entry)
                    })
                    .collect(),
            ),
            _ => Value::from(self.to_v2()),
        }
    }

    /// This type with every multi-byte field of a record (nested ones included) stored in
    /// `order`; other types unchanged.
    pub fn with_field_order(&self, order: ByteOrder) -> DType {
        let DataKind::Structured(fields) = &self.kind else {
            return self.clone();
        };
        let fields = fields
            .iter()
            .map(|f| Field {
                dtype: match f.dtype.kind {
                    DataKind::Structured(_) => f.dtype.with_field_order(order),
                    _ => DType::new(f.dtype.kind.clone(), order),
                },
                ..f.clone()
            })
            .collect();
        DType::new(DataKind::Structured(fields), ByteOrder::NotApplicable)
    }

    /// The fields of a structured type flattened to their leaves: nested names joined with
    /// `.`, offsets from the start of the record. Empty for other types.
    pub fn leaf_fields(&self) -> Vec<Field> {
        let mut out = Vec::new();
        collect_leaves(self, "", 0, &mut out);
        out
    }

    /// The numpy type string v2 metadata stores (`"<f8"`, `"|u1"`, `">M8[ns]"`, `"|O"` for
    /// variable-length types; the compact JSON field list for structured types).
    pub fn to_v2(&self) -> String {
        let order = match self.order {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        };
        match &self.kind {
            DataKind::Bool => format!("{order}b1"),
            DataKind::Int(n) => format!("{order}i{n}"),
            DataKind::UInt(n) => format!("{order}u{n}"),
            DataKind::Float(n) => format!("{order}f{n}"),
            DataKind::Complex(n) => format!("{order}c{n}"),
            DataKind::ExtFloat(t) => t.name().into(),
            DataKind::NarrowInt { .. } => self.element_type().name().into(),
            DataKind::DateTime(u) if u == "generic" => format!("{order}M8"),
            DataKind::TimeDelta(u) if u == "generic" => format!("{order}m8"),
            DataKind::DateTime(u) => format!("{order}M8[{u}]"),
            DataKind::TimeDelta(u) => format!("{order}m8[{u}]"),
            DataKind::FixedBytes(n) => format!("|S{n}"),
            DataKind::Unicode(n) => format!("{order}U{n}"),
            DataKind::Raw(n) => format!("|V{n}"),
            DataKind::Structured(_) => self.to_v2_json().to_string(),
            DataKind::String | DataKind::VlenBytes | DataKind::VlenArray(_) => "|O".into(),
        }
    }
}

/// Largest item of a fixed-size type libzarr accepts (1 GiB).
pub const MAX_ITEM_SIZE: usize = 1 << 30;

/// Deepest nesting of structured types accepted.
const MAX_NESTING: usize = 32;

/// Most fields a structured type may have, counted over every nesting level.
pub const MAX_FIELDS: usize = 65_536;

/// Parses a v2 `dtype` value whose structured types may have at most `fields_left` fields
/// in all (decremented as fields are met), `depth` levels below the top.
fn parse_v2_value(
    value: &serde_json::Value,
    depth: usize,
    fields_left: &mut usize,
) -> Result<DType> {
    use serde_json::Value;
    let list = match value {
        Value::String(s) => return DType::parse_v2(s),
        Value::Array(list) => list,
        other => {
            return Err(Error::Metadata(format!(
                "dtype {other} is neither a type string nor a list of fields"
            )))
        }
    };
    if depth >= MAX_NESTING {
        return Err(Error::Metadata(format!(
            "structured dtype nests deeper than {MAX_NESTING} levels"
        )));
    }
    if list.is_empty() {
        return Err(Error::Metadata("structured dtype has no fields".into()));
    }
    if list.len() > *fields_left {
        return Err(Error::Metadata(format!(
            "structured dtype has more than {MAX_FIELDS} fields"
        )));
    }
    *fields_left -= list.len();
    let mut fields: Vec<Field> = Vec::with_capacity(list.len());
    let mut names = std::collections::HashSet::with_capacity(list.len());
    let mut offset = 0usize;
    for entry in list {
        let bad = || {
            Error::Metadata(format!(
                "structured dtype field {entry} is not [name, type] or [name, type, shape]"
            ))
        };
        let parts = entry
            .as_array()
            .filter(|p| (2..=3).contains(&p.len()))
            .ok_or_else(bad)?;
        let name = parts[0].as_str().ok_or_else(bad)?;
        if !names.insert(name) {
            return Err(Error::Metadata(format!(
                "structured dtype has two fields named {name:?}"
            )));
        }
        let dtype = parse_v2_value(&parts[1], depth + 1, fields_left).map_err(|e| match e {
            Error::Metadata(m) => Error::Metadata(format!("field {name:?}: {m}")),
            other => other,
        })?;
        if dtype.is_variable() {
            return Err(Error::Metadata(format!(
                "field {name:?}: variable-length types cannot be record fields"
            )));
        }
        let shape = match parts.get(2) {
            None => Vec::new(),
            Some(Value::Array(dims)) => dims
                .iter()
                .map(|d| d.as_u64().ok_or_else(bad))
                .collect::<Result<Vec<u64>>>()?,
            Some(Value::Number(n)) => vec![n.as_u64().ok_or_else(bad)?],
            Some(_) => return Err(bad()),
        };
        let field = Field {
            name: name.to_string(),
            dtype,
            shape,
            offset,
        };
        let size = field
            .shape
            .iter()
            .try_fold(field.dtype.item_size() as u64, |acc, &n| acc.checked_mul(n))
            .filter(|&s| s <= MAX_ITEM_SIZE as u64)
            .ok_or_else(|| {
                Error::Metadata(format!(
                    "field {:?} is larger than {MAX_ITEM_SIZE} bytes",
                    field.name
                ))
            })?;
        offset += size as usize;
        if offset > MAX_ITEM_SIZE {
            return Err(Error::Metadata(format!(
                "structured dtype is larger than {MAX_ITEM_SIZE} bytes"
            )));
        }
        fields.push(field);
    }
    Ok(DType::new(
        DataKind::Structured(fields),
        ByteOrder::NotApplicable,
    ))
}

fn collect_leaves(dtype: &DType, prefix: &str, base: usize, out: &mut Vec<Field>) {
    let DataKind::Structured(fields) = &dtype.kind else {
        return;
    };
    for f in fields {
        let name = if prefix.is_empty() {
            f.name.clone()
        } else {
            format!("{prefix}.{}", f.name)
        };
        if matches!(f.dtype.kind, DataKind::Structured(_)) && f.shape.is_empty() {
            collect_leaves(&f.dtype, &name, base + f.offset, out);
        } else {
            out.push(Field {
                name,
                dtype: f.dtype.clone(),
                shape: f.shape.clone(),
                offset: base + f.offset,
            });
        }
    }
}

/// numpy time units, optionally preceded by a positive count (`"10s"`).
fn valid_time_unit(unit: &str) -> bool {
    const UNITS: [&str; 13] = [
        "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as",
    ];
    let digits = unit.bytes().take_while(u8::is_ascii_digit).count();
    let (count, base) = unit.split_at(digits);
    (count.is_empty()
        || count
            .parse::<u64>()
            .is_ok_and(|c| c > 0 && c <= i32::MAX as u64))
        && UNITS.contains(&base)
}

/// Reverses the byte order of every `unit`-byte value in `data`.
pub fn swap_bytes(data: &mut [u8], unit: usize) {
    if unit > 1 {
        for value in data.chunks_exact_mut(unit) {
            value.reverse();
        }
    }
}

/// Swaps, in `records` (whole items of the structured type `dtype`), every leaf field (and
/// each element of its sub-array) whose byte order is not this machine's. Swapping is its
/// own inverse: it turns records as stored into records in native order, and back.
/// Types other than records are left as they are (the data path converts them).
pub fn swap_record_fields(dtype: &DType, records: &mut [u8]) {
    let DataKind::Structured(_) = dtype.kind else {
        return;
    };
    let record = dtype.item_size();
    let swapped: Vec<(usize, usize, usize)> = dtype
        .leaf_fields()
        .iter()
        .filter(|f| f.dtype.needs_swap())
        .map(|f| (f.offset, f.size(), f.dtype.swap_unit()))
        .collect();
    if record == 0 || swapped.is_empty() {
        return;
    }
    for item in records.chunks_exact_mut(record) {
        for &(offset, size, unit) in &swapped {
            swap_bytes(&mut item[offset..offset + size], unit);
        }
    }
}

/// The registered Zarr v3 names of the numeric and boolean types.
pub const V3_NAMES: [(&str, DataKind); 14] = [
    ("bool", DataKind::Bool),
    ("int8", DataKind::Int(1)),
    ("int16", DataKind::Int(2)),
    ("int32", DataKind::Int(4)),
    ("int64", DataKind::Int(8)),
    ("uint8", DataKind::UInt(1)),
    ("uint16", DataKind::UInt(2)),
    ("uint32", DataKind::UInt(4)),
    ("uint64", DataKind::UInt(8)),
    ("float16", DataKind::Float(2)),
    ("float32", DataKind::Float(4)),
    ("float64", DataKind::Float(8)),
    ("complex64", DataKind::Complex(8)),
    ("complex128", DataKind::Complex(16)),
];

/// The kind an extension type's name stands for (`"bfloat16"`, `"float8_e4m3fn"`,
/// `"int4"`).
fn extension_kind(name: &str) -> Option<DataKind> {
    if let Some(t) = ExtFloat::from_name(name) {
        return Some(DataKind::ExtFloat(t));
    }
    NARROW_INTS
        .iter()
        .find(|n| n.3 == name)
        .map(|&(signed, bits, _, _)| DataKind::NarrowInt { signed, bits })
}

/// The kind a plain v3 data type name stands for (`"float32"`, `"r16"`, `"string"`).
fn v3_kind_of(name: &str) -> Option<DataKind> {
    if let Some((_, kind)) = V3_NAMES.iter().find(|(n, _)| *n == name) {
        return Some(kind.clone());
    }
    if let Some(kind) = extension_kind(name) {
        return Some(kind);
    }
    match name {
        "string" => Some(DataKind::String),
        "bytes" | "variable_length_bytes" => Some(DataKind::VlenBytes),
        // zarr-extensions' aliases of the core complex types (real, then imaginary part).
        "complex_float32" => Some(DataKind::Complex(8)),
        "complex_float64" => Some(DataKind::Complex(16)),
        _ => {
            let bits: usize = name.strip_prefix('r')?.parse().ok()?;
            (bits > 0 && bits.is_multiple_of(8) && bits / 8 <= MAX_ITEM_SIZE)
                .then_some(DataKind::Raw(bits / 8))
        }
    }
}

/// The stored kind a plain v3 data type name (`"int32"`, `"r16"`) stands for.
pub fn v3_kind(name: &str) -> Result<DataKind> {
    v3_kind_of(name).ok_or_else(|| {
        Error::Unsupported(format!(
            "zarr.json: data type {name:?} is not supported by this version of libzarr"
        ))
    })
}

/// The type a plain v3 data type name stands for, in native byte order.
pub fn v3_dtype(name: &str) -> Option<DType> {
    v3_kind_of(name).map(|kind| DType::new(kind, ByteOrder::NATIVE))
}

/// The stored type a name stands for: a numpy type string (`">f8"`, `"|S8"`, `"<U4"`), a
/// Zarr v3 name (`"float32"`, `"bfloat16"`, `"r16"`, `"string"`, `"bytes"`; native byte
/// order), a Zarr v3 `data_type` object (`{"name": "numpy.datetime64", "configuration":
/// {"unit": "s", "scale_factor": 10}}`, a `struct`; native byte order), a structured type as
/// its v2 JSON field list, or an object codec configuration (`{"id": "vlen-array", "dtype":
/// "<i4"}`). A numpy type string without its byte order (`"f8"`, `"M8[s]"`) is in native
/// order, as numpy reads it.
pub fn by_name(name: &str) -> Result<DType> {
    let text = name.trim_start();
    if text.starts_with(['[', '{']) {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::Metadata(format!("data type {name:?}: {e}")))?;
        return if value.get("name").is_some() {
            let kind = v3::parse(&value)?;
            Ok(DType::new(kind, ByteOrder::NATIVE).with_field_order(ByteOrder::NATIVE))
        } else if value.is_object() {
            object_dtype(&value)
        } else {
            DType::parse_v2_json(&value)
        };
    }
    if let Some(dtype) = v3_dtype(name) {
        return Ok(dtype);
    }
    match DType::parse_v2(name) {
        Err(e) if name.starts_with(|c: char| c.is_ascii_alphabetic()) => {
            let order = if cfg!(target_endian = "little") {
                '<'
            } else {
                '>'
            };
            // The native name's own error when it says more than "unknown".
            DType::parse_v2(&format!("{order}{name}")).map_err(|again| match &again {
                Error::Metadata(m) if m.starts_with("unknown data type") => e,
                _ => again,
            })
        }
        result => result,
    }
}

/// The variable-length type an object array's first filter (its object codec) names
/// (`json2` holds strings here; the chain keeps its configuration).
pub fn object_dtype(config: &Value) -> Result<DType> {
    let id = config.get("id").and_then(Value::as_str).unwrap_or("");
    let kind = match id {
        "vlen-utf8" | "json2" => DataKind::String,
        "vlen-bytes" => DataKind::VlenBytes,
        "vlen-array" => {
            let inner = config
                .get("dtype")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Error::Metadata(format!(
                        "vlen-array filter {config} has no \"dtype\" string"
                    ))
                })
                .and_then(DType::parse_v2)?;
            if inner.item_size() == 0 || inner.element_type() == ElementType::Raw {
                return Err(Error::Metadata(format!(
                    "vlen-array items must be numbers, not {}",
                    inner.to_v2()
                )));
            }
            DataKind::VlenArray(Box::new(inner))
        }
        _ => {
            return Err(Error::CodecUnsupported(format!(
                "object dtype \"|O\" with first filter {config}: only vlen-utf8, \
                 vlen-bytes, vlen-array and json2 (strings) are supported"
            )))
        }
    };
    Ok(DType::new(kind, ByteOrder::NotApplicable))
}

/// The object codec (first filter) a variable-length type is stored with in v2.
pub fn object_codec(dtype: &DType) -> Option<Value> {
    match &dtype.kind {
        DataKind::String => Some(serde_json::json!({"id": "vlen-utf8"})),
        DataKind::VlenBytes => Some(serde_json::json!({"id": "vlen-bytes"})),
        DataKind::VlenArray(inner) => {
            Some(serde_json::json!({"id": "vlen-array", "dtype": inner.to_v2()}))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_names_round_trip() {
        for name in [
            "|b1", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u4", ">u8", "<f2", ">f4", "<f8",
            "<c8", ">c16", "<M8[ns]", ">m8[10s]", "<M8[D]", "<M8", ">m8", "|S12", "<U3", ">U1",
            "|V7",
        ] {
            assert_eq!(DType::parse_v2(name).unwrap().to_v2(), name);
        }
    }

    #[test]
    fn numpy_names_without_a_byte_order_are_native() {
        let native = if cfg!(target_endian = "little") {
            "<"
        } else {
            ">"
        };
        for (short, full) in [
            ("f8", format!("{native}f8")),
            ("i2", format!("{native}i2")),
            ("M8[s]", format!("{native}M8[s]")),
            ("u1", "|u1".into()),
            ("b1", "|b1".into()),
        ] {
            assert_eq!(by_name(short).unwrap().to_v2(), full, "{short}");
        }
        let err = by_name("f3").unwrap_err().to_string();
        assert!(err.contains("\"f3\""), "{err}");
        // The native name's error when it says why.
        let err = by_name("U999999999").unwrap_err().to_string();
        assert!(err.contains("the length must be"), "{err}");
        assert!(by_name("xyz").is_err());
    }

    #[test]
    fn one_byte_types_accept_any_order_and_write_pipe() {
        for name in ["<u1", ">u1", "|u1"] {
            assert_eq!(DType::parse_v2(name).unwrap().to_v2(), "|u1");
        }
        assert_eq!(DType::parse_v2(">b1").unwrap().to_v2(), "|b1");
    }

    #[test]
    fn bad_types_are_errors() {
        for name in ["", "f8", "<f3", "|f8", "<M8[", "<M8[xs]", "<i16", "float"] {
            assert!(
                matches!(DType::parse_v2(name), Err(Error::Metadata(_))),
                "{name}"
            );
        }
        assert!(matches!(DType::parse_v2("|O"), Err(Error::Metadata(_))));
        assert!(matches!(DType::parse_v2("|S0"), Err(Error::Metadata(_))));
    }

    #[test]
    fn structured_types_parse_flatten_and_render() {
        let json: serde_json::Value = serde_json::from_str(
            r#"[["a", "<i4"], ["b", ">f8", [2, 3]], ["c", [["x", "|u1"], ["y", "<U2"]]]]"#,
        )
        .unwrap();
        let d = DType::parse_v2_json(&json).unwrap();
        assert_eq!(d.item_size(), 4 + 48 + 9);
        assert_eq!(d.element_type(), ElementType::Raw);
        assert!(!d.needs_swap());
        assert_eq!(d.to_v2_json(), json);
        let leaves: Vec<(String, usize, String)> = d
            .leaf_fields()
            .into_iter()
            .map(|f| (f.name, f.offset, f.dtype.to_v2()))
            .collect();
        assert_eq!(
            leaves,
            [
                ("a".into(), 0, "<i4".into()),
                ("b".into(), 4, ">f8".into()),
                ("c.x".into(), 52, "|u1".into()),
                ("c.y".into(), 53, "<U2".into()),
            ]
        );
        for bad in [
            r#"[]"#,
            r#"[["a"]]"#,
            r#"[["a","<i4"],["a","<i2"]]"#,
            r#"[["a","|O"]]"#,
            r#"[[1,"<i4"]]"#,
        ] {
            let v: serde_json::Value = serde_json::from_str(bad).unwrap();
            assert!(
                matches!(DType::parse_v2_json(&v), Err(Error::Metadata(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn element_type_names_and_codes() {
        assert_eq!(
            ElementType::from_name("float32"),
            Some(ElementType::Float32)
        );
        assert_eq!(ElementType::from_name(">f4"), Some(ElementType::Float32));
        assert_eq!(ElementType::from_code(14), Some(ElementType::Complex128));
        assert_eq!(ElementType::from_code(0), None);
        assert_eq!(ElementType::Complex64.size(), 8);
    }
}
