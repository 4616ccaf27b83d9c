//! Data types: the stored type of an array ([`DType`]: kind, size, byte order, as in the
//! metadata) and the element type the data path moves ([`ElementType`], the C enum).

use crate::error::{Error, Result};

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

/// The kind and size of a stored type. New kinds (strings, structured, void) are added
/// here as variants; everything above the metadata layer sees only this model.
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
    /// numpy datetime64 with its unit (e.g. `"ns"`, `"10s"`), moved as int64.
    DateTime(String),
    /// numpy timedelta64 with its unit, moved as int64.
    TimeDelta(String),
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
}

const ELEMENT_TYPES: [(ElementType, &str, usize); 14] = [
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
];

impl ElementType {
    /// The element type with integer value `code`, if any.
    pub fn from_code(code: i32) -> Option<Self> {
        ELEMENT_TYPES
            .iter()
            .find(|e| e.0 as i32 == code)
            .map(|e| e.0)
    }

    /// The element type named `name`: a Zarr v3 name (`"float32"`) or a numpy string
    /// (`"<f4"`).
    pub fn from_name(name: &str) -> Option<Self> {
        ELEMENT_TYPES
            .iter()
            .find(|e| e.1 == name)
            .map(|e| e.0)
            .or_else(|| DType::parse_v2(name).ok().map(|d| d.element_type()))
    }

    /// The Zarr v3 name (`"float32"`).
    pub fn name(self) -> &'static str {
        ELEMENT_TYPES
            .iter()
            .find(|e| e.0 == self)
            .map(|e| e.1)
            .unwrap_or("")
    }

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        ELEMENT_TYPES
            .iter()
            .find(|e| e.0 == self)
            .map(|e| e.2)
            .unwrap_or(0)
    }

    /// The stored type for this element type in the given byte order.
    pub fn to_dtype(self, order: ByteOrder) -> DType {
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
        };
        DType::new(kind, order)
    }
}

impl DType {
    /// A type of `kind`; one-byte kinds get [`ByteOrder::NotApplicable`] whatever `order` says.
    pub fn new(kind: DataKind, order: ByteOrder) -> Self {
        let mut dtype = DType { kind, order };
        if dtype.item_size() == 1 {
            dtype.order = ByteOrder::NotApplicable;
        }
        dtype
    }

    /// Size of one item in bytes.
    pub fn item_size(&self) -> usize {
        match &self.kind {
            DataKind::Bool => 1,
            DataKind::Int(n) | DataKind::UInt(n) | DataKind::Float(n) | DataKind::Complex(n) => *n,
            DataKind::DateTime(_) | DataKind::TimeDelta(_) => 8,
        }
    }

    /// Size of the unit whose bytes are swapped to change byte order (a complex number
    /// swaps each half), or 1 when nothing is swapped.
    pub fn swap_unit(&self) -> usize {
        match &self.kind {
            DataKind::Complex(n) => n / 2,
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
        }
    }

    /// Parses a numpy type string as v2 metadata writes it (`"<f8"`, `"|b1"`, `"<M8[ns]"`).
    /// One-byte types accept `<`, `>` and `|`; multi-byte types need `<` or `>`.
    pub fn parse_v2(text: &str) -> Result<Self> {
        let unknown = || Error::Metadata(format!("unknown data type {text:?}"));
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
        let body = &rest[1..];
        let kind = match kind_char {
            'M' | 'm' => {
                let unit = body
                    .strip_prefix("8[")
                    .and_then(|u| u.strip_suffix(']'))
                    .filter(|u| valid_time_unit(u))
                    .ok_or_else(unknown)?;
                if kind_char == 'M' {
                    DataKind::DateTime(unit.to_string())
                } else {
                    DataKind::TimeDelta(unit.to_string())
                }
            }
            'S' | 'U' | 'V' | 'O' => {
                return Err(Error::Unsupported(format!(
                    "data type {text:?} is not supported by this version of libzarr"
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
        if order == ByteOrder::NotApplicable && dtype.item_size() > 1 {
            return Err(Error::Metadata(format!(
                "data type {text:?} needs a byte order ('<' or '>')"
            )));
        }
        Ok(dtype)
    }

    /// The numpy type string v2 metadata stores (`"<f8"`, `"|u1"`, `">M8[ns]"`).
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
            DataKind::DateTime(u) => format!("{order}M8[{u}]"),
            DataKind::TimeDelta(u) => format!("{order}m8[{u}]"),
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
    (count.is_empty() || count.parse::<u64>().is_ok_and(|c| c > 0)) && UNITS.contains(&base)
}

/// Reverses the byte order of every `unit`-byte value in `data`.
pub fn swap_bytes(data: &mut [u8], unit: usize) {
    if unit > 1 {
        for value in data.chunks_exact_mut(unit) {
            value.reverse();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_names_round_trip() {
        for name in [
            "|b1", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u4", ">u8", "<f2", ">f4", "<f8",
            "<c8", ">c16", "<M8[ns]", ">m8[10s]", "<M8[D]",
        ] {
            assert_eq!(DType::parse_v2(name).unwrap().to_v2(), name);
        }
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
        for name in ["", "f8", "<f3", "|f8", "<M8", "<M8[xs]", "<i16", "float"] {
            assert!(
                matches!(DType::parse_v2(name), Err(Error::Metadata(_))),
                "{name}"
            );
        }
        assert!(matches!(
            DType::parse_v2("|S12"),
            Err(Error::Unsupported(_))
        ));
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
