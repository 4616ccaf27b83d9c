//! Fill values: parsed from and rendered to metadata JSON. In memory a fill value is one
//! element's bytes in this machine's byte order, or `None` for a JSON `null`.

use crate::dtype::{DType, DataKind};
use crate::error::{try_reserve, try_resize, Error, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use half::f16;
use serde_json::Value;

/// One element's bytes (native byte order; for variable-length types the item's bytes),
/// or `None` when the metadata says `null`.
pub type FillValue = Option<Vec<u8>>;

/// Parses a v2 `fill_value` for `dtype`. Tolerant of every form peers write: numbers,
/// `"NaN"`, `"Infinity"`, `"-Infinity"`, hex bit patterns of floats (`"0x7fc00001"`, the
/// only form of a NaN with a payload), booleans, `[re, im]` pairs, `"NaT"`, base64 for
/// byte strings, raw bytes and records (`""` and `0` meaning zeros), text for strings.
pub fn parse_fill(value: &Value, dtype: &DType) -> Result<FillValue> {
    if value.is_null() {
        return Ok(None);
    }
    let bad = || {
        Error::Metadata(format!(
            "fill_value {value} is not valid for data type {}",
            dtype.to_v2()
        ))
    };
    let bytes = match &dtype.kind {
        DataKind::Bool => {
            let b = match value {
                Value::Bool(b) => *b,
                Value::Number(n) if n.as_u64() == Some(0) || n.as_u64() == Some(1) => {
                    n.as_u64() == Some(1)
                }
                _ => return Err(bad()),
            };
            vec![b as u8]
        }
        DataKind::Int(n) => {
            let v = integer(value).ok_or_else(bad)?;
            let i = i64::try_from(v).map_err(|_| bad())?;
            let bits = 8 * *n as u32;
            if bits < 64 && (i < -(1i64 << (bits - 1)) || i >= 1i64 << (bits - 1)) {
                return Err(bad());
            }
            int_bytes(i as i128, *n)
        }
        DataKind::UInt(n) => {
            let v = integer(value).ok_or_else(bad)?;
            let bits = 8 * *n as u32;
            if v < 0 || (bits < 64 && v >= 1i128 << bits) || v > u64::MAX as i128 {
                return Err(bad());
            }
            int_bytes(v, *n)
        }
        DataKind::Float(n) => float_fill(value, *n).ok_or_else(bad)?,
        DataKind::Complex(n) => {
            let (re, im) = match value {
                Value::Array(pair) if pair.len() == 2 => (&pair[0], &pair[1]),
                other => (other, &Value::Null),
            };
            let mut bytes = float_fill(re, n / 2).ok_or_else(bad)?;
            match im {
                Value::Null => bytes.extend(float_bytes(0.0, n / 2)),
                im => bytes.extend(float_fill(im, n / 2).ok_or_else(bad)?),
            }
            bytes
        }
        DataKind::ExtFloat(t) => {
            let bits = match value.as_str().and_then(|s| hex_bits(s, t.size())) {
                Some(bits) if bits & !(t.mask() as u64) == 0 => bits as u16,
                Some(_) => return Err(bad()),
                None => t
                    .from_f64(float(value).ok_or_else(bad)?)
                    .map_err(|e| Error::Metadata(format!("fill_value {value}: {e}")))?,
            };
            match t.size() {
                2 => bits.to_ne_bytes().to_vec(),
                _ => vec![bits as u8],
            }
        }
        DataKind::NarrowInt { signed, bits } => {
            let v = integer(value).ok_or_else(bad)?;
            let (lo, hi) = if *signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            if v < lo || v > hi {
                return Err(bad());
            }
            vec![v as i8 as u8]
        }
        DataKind::DateTime(_) | DataKind::TimeDelta(_) => {
            let i = match value {
                Value::String(s) if s == "NaT" => i64::MIN,
                _ => i64::try_from(integer(value).ok_or_else(bad)?).map_err(|_| bad())?,
            };
            i.to_ne_bytes().to_vec()
        }
        DataKind::FixedBytes(n) | DataKind::Raw(n) => {
            let mut bytes = base64_or_zero(value, dtype)?;
            let exact = !matches!(dtype.kind, DataKind::FixedBytes(_));
            if bytes.len() > *n || (exact && !bytes.is_empty() && bytes.len() != *n) {
                return Err(Error::Metadata(format!(
                    "fill_value {value} holds {} bytes; data type {} has {n}",
                    bytes.len(),
                    dtype.to_v2()
                )));
            }
            try_resize(&mut bytes, *n, "the fill value")?;
            bytes
        }
        DataKind::Structured(_) => {
            let mut bytes = base64_or_zero(value, dtype)?;
            let n = dtype.item_size();
            if !bytes.is_empty() && bytes.len() != n {
                return Err(Error::Metadata(format!(
                    "fill_value {value} holds {} bytes; the record has {n}",
                    bytes.len()
                )));
            }
            try_resize(&mut bytes, n, "the fill value")?;
            bytes
        }
        DataKind::Unicode(n) => {
            let text = text_of(value).ok_or_else(bad)?;
            let units: Vec<u32> = text.chars().map(u32::from).collect();
            if units.len() > *n {
                return Err(Error::Metadata(format!(
                    "fill_value {value} has {} characters; data type {} holds {n}",
                    units.len(),
                    dtype.to_v2()
                )));
            }
            let mut bytes = Vec::new();
            try_reserve(&mut bytes, n * 4, "the fill value")?;
            bytes.extend(units.iter().flat_map(|u| u.to_ne_bytes()));
            bytes.resize(n * 4, 0);
            bytes
        }
        DataKind::String => text_of(value).ok_or_else(bad)?.into_bytes(),
        DataKind::VlenBytes => base64_or_zero(value, dtype)?,
        DataKind::VlenArray(_) => match value {
            Value::Number(n) if n.as_f64() == Some(0.0) => Vec::new(),
            Value::String(s) if s.is_empty() => Vec::new(),
            _ => return Err(bad()),
        },
    };
    Ok(Some(bytes))
}

/// The bits a hex fill value `"0x…"` of exactly `size` bytes gives.
pub fn hex_bits(text: &str, size: usize) -> Option<u64> {
    let digits = text.strip_prefix("0x")?;
    if digits.len() != size * 2 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

/// Native bytes of a float fill value of `size` bytes: a number, a special name, or a hex
/// bit pattern (kept exactly, NaN payloads included).
fn float_fill(value: &Value, size: usize) -> Option<Vec<u8>> {
    if let Some(bits) = value.as_str().and_then(|s| hex_bits(s, size)) {
        return Some(match size {
            2 => (bits as u16).to_ne_bytes().to_vec(),
            4 => (bits as u32).to_ne_bytes().to_vec(),
            _ => bits.to_ne_bytes().to_vec(),
        });
    }
    Some(float_bytes(float(value)?, size))
}

/// The bits of a native float of `size` bytes (2, 4, 8).
pub fn float_bits(bytes: &[u8], size: usize) -> u64 {
    match size {
        2 => u16::from_ne_bytes(native(bytes)) as u64,
        4 => u32::from_ne_bytes(native(bytes)) as u64,
        _ => u64::from_ne_bytes(native(bytes)),
    }
}

/// Whether the native float of `size` bytes is a NaN other than the one `"NaN"` stands
/// for (sign 0, only the mantissa's top bit set), so that only its bits can say it.
pub fn is_other_nan(bytes: &[u8], size: usize) -> bool {
    let canonical: u64 = match size {
        2 => 0x7e00,
        4 => 0x7fc0_0000,
        _ => 0x7ff8_0000_0000_0000,
    };
    read_float(bytes, size).is_nan() && float_bits(bytes, size) != canonical
}

/// Whether a fill value holds a NaN that only a hex bit pattern can say (a float, a
/// complex part or an extension float whose NaN is not the one `"NaN"` stands for); v1, v2
/// and the 2022 draft write every NaN as `"NaN"`.
pub fn has_other_nan(fill: &FillValue, dtype: &DType) -> bool {
    let Some(bytes) = fill else {
        return false;
    };
    match &dtype.kind {
        DataKind::Float(n) => is_other_nan(bytes, *n),
        DataKind::Complex(n) => {
            is_other_nan(&bytes[..n / 2], n / 2) || is_other_nan(&bytes[n / 2..], n / 2)
        }
        DataKind::ExtFloat(t) => {
            let bits = ext_bits(bytes, t.size()) & t.mask();
            t.is_nan(bits) && Some(bits) != t.format().nan
        }
        _ => false,
    }
}

/// Bytes of a base64 fill value; `""` and `0` (written by some peers) mean zeros, given as
/// an empty vector the caller pads; a list of byte values (the v3 form of raw types) gives
/// those bytes.
fn base64_or_zero(value: &Value, dtype: &DType) -> Result<Vec<u8>> {
    match value {
        Value::Number(n) if n.as_f64() == Some(0.0) => Ok(Vec::new()),
        Value::Array(list) => list
            .iter()
            .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(|| {
                Error::Metadata(format!(
                    "fill_value {value} for data type {} must list bytes in 0..=255",
                    dtype.to_v2()
                ))
            }),
        Value::String(s) => BASE64.decode(s).map_err(|e| {
            Error::Metadata(format!(
                "fill_value {value} for data type {} is not valid base64: {e}",
                dtype.to_v2()
            ))
        }),
        _ => Err(Error::Metadata(format!(
            "fill_value {value} for data type {} must be a base64 string",
            dtype.to_v2()
        ))),
    }
}

/// Text of a string fill value; a number stands for its decimal text, as numpy converts it.
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Renders a fill value as v2 metadata JSON, in the form zarr-python and tensorstore read.
/// The text of a large item (base64 of raw items, a long string) is allocated fallibly.
pub fn render_fill(fill: &FillValue, dtype: &DType) -> Result<Value> {
    match fill {
        None => Ok(Value::Null),
        Some(bytes) => render_item(bytes, dtype),
    }
}

/// Renders one item's native bytes as v2 metadata JSON (see [`render_fill`]).
pub fn render_item(bytes: &[u8], dtype: &DType) -> Result<Value> {
    Ok(match &dtype.kind {
        DataKind::Bool => Value::Bool(bytes[0] != 0),
        DataKind::Int(n) => Value::from(read_int(bytes, *n)),
        DataKind::UInt(n) => Value::from(read_uint(bytes, *n)),
        DataKind::Float(n) => float_json(read_float(bytes, *n)),
        DataKind::ExtFloat(t) => float_json(t.to_f64(ext_bits(bytes, t.size()))),
        DataKind::NarrowInt { .. } => Value::from(bytes[0] as i8),
        DataKind::Complex(n) => {
            let half = n / 2;
            Value::Array(vec![
                float_json(read_float(&bytes[..half], half)),
                float_json(read_float(&bytes[half..], half)),
            ])
        }
        DataKind::DateTime(_) | DataKind::TimeDelta(_) => Value::from(read_int(bytes, 8)),
        DataKind::FixedBytes(_)
        | DataKind::Raw(_)
        | DataKind::Structured(_)
        | DataKind::VlenBytes
        | DataKind::VlenArray(_) => Value::from(base64_text(bytes)?),
        DataKind::Unicode(_) => Value::from(try_unicode_text(bytes)?),
        DataKind::String => {
            let mut text = String::new();
            text.try_reserve(bytes.len())
                .map_err(|_| crate::error::no_memory(bytes.len(), "the fill value's text"))?;
            text.push_str(&String::from_utf8_lossy(bytes));
            Value::from(text)
        }
    })
}

/// Standard base64 of `bytes`, its text allocated fallibly.
fn base64_text(bytes: &[u8]) -> Result<String> {
    let len = base64::encoded_len(bytes.len(), true)
        .ok_or_else(|| Error::Overflow("the fill value's base64 length overflows".into()))?;
    let mut text = String::new();
    text.try_reserve_exact(len)
        .map_err(|_| crate::error::no_memory(len, "the fill value's base64 text"))?;
    BASE64.encode_string(bytes, &mut text);
    Ok(text)
}

/// The bits of a native extension float item of `size` bytes.
pub fn ext_bits(bytes: &[u8], size: usize) -> u16 {
    match size {
        2 => u16::from_ne_bytes(native(bytes)),
        _ => bytes[0] as u16,
    }
}

/// The text of a `U` item in native-order UTF-32, without its NUL padding (invalid code
/// points become U+FFFD).
pub fn unicode_text(bytes: &[u8]) -> String {
    unicode_chars(bytes).collect()
}

/// [`unicode_text`], its text allocated fallibly.
fn try_unicode_text(bytes: &[u8]) -> Result<String> {
    let len = unicode_chars(bytes).map(char::len_utf8).sum();
    let mut text = String::new();
    text.try_reserve_exact(len)
        .map_err(|_| crate::error::no_memory(len, "the text of a U item"))?;
    text.extend(unicode_chars(bytes));
    Ok(text)
}

/// The characters of a `U` item (see [`unicode_text`]).
fn unicode_chars(bytes: &[u8]) -> impl Iterator<Item = char> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .take_while(|&u| u != 0)
        .map(|u| char::from_u32(u).unwrap_or(char::REPLACEMENT_CHARACTER))
}

/// The integer a JSON value holds: an integer, or a float with no fractional part.
fn integer(value: &Value) -> Option<i128> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1.9e19)
                    .map(|f| f as i128)
            }),
        Value::Bool(b) => Some(*b as i128),
        _ => None,
    }
}

fn float(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// A float as metadata JSON: a number, or `"NaN"`, `"Infinity"`, `"-Infinity"`.
pub fn float_json(v: f64) -> Value {
    if v.is_nan() {
        Value::from("NaN")
    } else if v == f64::INFINITY {
        Value::from("Infinity")
    } else if v == f64::NEG_INFINITY {
        Value::from("-Infinity")
    } else {
        Value::from(v)
    }
}

fn int_bytes(v: i128, size: usize) -> Vec<u8> {
    let le = v.to_le_bytes();
    let mut bytes = le[..size].to_vec();
    if cfg!(target_endian = "big") {
        bytes.reverse();
    }
    bytes
}

fn float_bytes(v: f64, size: usize) -> Vec<u8> {
    match size {
        2 => f16::from_f64(v).to_ne_bytes().to_vec(),
        4 => (v as f32).to_ne_bytes().to_vec(),
        _ => v.to_ne_bytes().to_vec(),
    }
}

fn native<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

fn read_int(bytes: &[u8], size: usize) -> i64 {
    match size {
        1 => i8::from_ne_bytes(native(bytes)) as i64,
        2 => i16::from_ne_bytes(native(bytes)) as i64,
        4 => i32::from_ne_bytes(native(bytes)) as i64,
        _ => i64::from_ne_bytes(native(bytes)),
    }
}

fn read_uint(bytes: &[u8], size: usize) -> u64 {
    match size {
        1 => bytes[0] as u64,
        2 => u16::from_ne_bytes(native(bytes)) as u64,
        4 => u32::from_ne_bytes(native(bytes)) as u64,
        _ => u64::from_ne_bytes(native(bytes)),
    }
}

/// The value of a native float of `size` bytes (2, 4, 8).
pub fn read_float(bytes: &[u8], size: usize) -> f64 {
    match size {
        2 => f16::from_ne_bytes(native(bytes)).to_f64(),
        4 => f32::from_ne_bytes(native(bytes)) as f64,
        _ => f64::from_ne_bytes(native(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round(v: Value, dtype: &str) -> Value {
        let d = DType::parse_v2(dtype).unwrap();
        render_fill(&parse_fill(&v, &d).unwrap(), &d).unwrap()
    }

    #[test]
    fn fill_values_round_trip() {
        assert_eq!(round(json!(null), "<f8"), json!(null));
        assert_eq!(round(json!(-5), "<i2"), json!(-5));
        assert_eq!(round(json!(255), "|u1"), json!(255));
        assert_eq!(round(json!(u64::MAX), "<u8"), json!(u64::MAX));
        assert_eq!(round(json!("NaN"), "<f4"), json!("NaN"));
        assert_eq!(round(json!("-Infinity"), ">f8"), json!("-Infinity"));
        assert_eq!(round(json!(1.5), "<f2"), json!(1.5));
        assert_eq!(round(json!(true), "|b1"), json!(true));
        assert_eq!(round(json!([1.0, "NaN"]), "<c16"), json!([1.0, "NaN"]));
        assert_eq!(round(json!("NaT"), "<M8[ns]"), json!(i64::MIN));
        assert_eq!(round(json!(0.0), "<i4"), json!(0));
        assert_eq!(round(json!("YWI="), "|S3"), json!("YWIA"));
        assert_eq!(round(json!(""), "|S2"), json!("AAA="));
        assert_eq!(round(json!(0), "|V2"), json!("AAA="));
        assert_eq!(round(json!("AQI="), "|V2"), json!("AQI="));
        assert_eq!(round(json!("héllo😀"), ">U8"), json!("héllo😀"));
        assert_eq!(round(json!(0), "<U3"), json!("0"));
    }

    #[test]
    fn structured_and_string_fills() {
        let d = DType::parse_v2_json(&json!([["a", "<i2"], ["b", "|u1"]])).unwrap();
        assert_eq!(parse_fill(&json!("AQID"), &d).unwrap(), Some(vec![1, 2, 3]));
        assert_eq!(parse_fill(&json!(""), &d).unwrap(), Some(vec![0, 0, 0]));
        assert!(parse_fill(&json!("AQI="), &d).is_err());
        assert!(parse_fill(&json!("!!"), &d).is_err());
        let u = DType::parse_v2("<U2").unwrap();
        assert!(parse_fill(&json!("abc"), &u).is_err());
        let s = DType::new(DataKind::String, crate::dtype::ByteOrder::NotApplicable);
        assert_eq!(parse_fill(&json!("ab"), &s).unwrap(), Some(b"ab".to_vec()));
        assert_eq!(render_fill(&Some(b"ab".to_vec()), &s).unwrap(), json!("ab"));
    }

    #[test]
    fn bad_fill_values_are_errors() {
        let d = DType::parse_v2("|i1").unwrap();
        for bad in [json!(128), json!(-129), json!("x"), json!(1.5), json!([1])] {
            assert!(parse_fill(&bad, &d).is_err(), "{bad}");
        }
        let u = DType::parse_v2("<u4").unwrap();
        assert!(parse_fill(&json!(-1), &u).is_err());
    }
}
