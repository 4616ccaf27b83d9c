//! CF missing values (`_FillValue`) in the encodings xarray, netCDF-C (NCZarr) and CF
//! readers expect: a `fill_value` equal to it and (Zarr v2 and v3; format 1 and the 2022
//! draft keep the fill value alone) a `_FillValue` attribute beside it. Zarr v3 writes the
//! attribute as xarray does (a float as base64 of its 8 little-endian `f64` bytes, an
//! integer as a JSON number). Zarr v2 writes it as NCZarr reads it (xarray takes a v2
//! array's missing value from `fill_value`): a JSON number, or `"NaN"`, `"Infinity"`,
//! `"-Infinity"`, with its type recorded in NCZarr's `_NCZARR_ATTR` (`{"types":
//! {"_FillValue": "<f4"}}`), without which NCZarr takes a float32 array's `-999.0` for a
//! double and its `-999` for a short, and masks nothing.

use crate::dtype::{DType, DataKind};
use crate::error::{Error, Result};
use crate::meta::fill::{read_float, FillValue};
use crate::meta::{ArrayMeta, Format};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use half::f16;
use serde_json::{Map, Value};

/// The attribute CF readers take the missing value from.
pub const FILL_ATTRIBUTE: &str = "_FillValue";

/// The attribute NCZarr keeps attribute types in (`{"types": {"_FillValue": "<f4"}}`).
pub const NCZARR_TYPES: &str = "_NCZARR_ATTR";

/// A missing value encoded for one array: the fill value's bytes and the `_FillValue`
/// attribute beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The Zarr fill value (native bytes of one element).
    pub fill: Vec<u8>,
    /// The `_FillValue` attribute to write (Zarr v2 and v3; the other formats keep the
    /// missing value in the fill value alone).
    pub attribute: Option<Value>,
    /// The attribute's type as NCZarr names it, recorded in [`NCZARR_TYPES`] (Zarr v2 only;
    /// `None` for a type netCDF lacks, as float16).
    nczarr_type: Option<&'static str>,
    /// The value stored when it is the nearest one of a float type, not the value given.
    pub rounded: Option<f64>,
}

impl Encoded {
    /// Tells the user (a notice on standard error, see [`crate::error::notice`]) when the
    /// missing value `value` given for `array`, of `dtype`, is stored as the nearest value
    /// of its float type.
    pub fn notice_rounding(&self, value: f64, dtype: &DType, array: &str) {
        if let Some(nearest) = self.rounded {
            crate::error::notice(&format!(
                "array {array:?}: missing value {value:?} is not exactly a {}: stored as the \
                 nearest one, {nearest:?}",
                dtype.element_type().name()
            ));
        }
    }

    /// Writes the missing value into an array's `attributes`: the `_FillValue` attribute
    /// (removed where the format has none) and, in Zarr v2, its type among NCZarr's
    /// recorded ones (kept beside any others). Elsewhere (in Zarr v3 xarray would show
    /// `_NCZARR_ATTR` as an attribute) a recorded `_FillValue` type, as of a copied v2
    /// array, goes.
    pub fn apply(&self, attributes: &mut Map<String, Value>) {
        match &self.attribute {
            Some(attribute) => attributes.insert(FILL_ATTRIBUTE.into(), attribute.clone()),
            None => attributes.shift_remove(FILL_ATTRIBUTE),
        };
        let key = attributes
            .keys()
            .find(|k| k.eq_ignore_ascii_case(NCZARR_TYPES))
            .cloned();
        match (self.nczarr_type, key) {
            (Some(ty), key) => {
                let record = attributes
                    .entry(key.unwrap_or_else(|| NCZARR_TYPES.into()))
                    .or_insert_with(|| Value::Object(Map::new()));
                if !record.is_object() {
                    *record = Value::Object(Map::new());
                }
                let types = record
                    .as_object_mut()
                    .expect("an object")
                    .entry("types")
                    .or_insert_with(|| Value::Object(Map::new()));
                if !types.is_object() {
                    *types = Value::Object(Map::new());
                }
                let types = types.as_object_mut().expect("an object");
                types.insert(FILL_ATTRIBUTE.into(), Value::from(ty));
            }
            (None, Some(key)) => {
                let Some(record) = attributes.get_mut(&key).and_then(Value::as_object_mut) else {
                    return;
                };
                if let Some(types) = record.get_mut("types").and_then(Value::as_object_mut) {
                    types.shift_remove(FILL_ATTRIBUTE);
                    if types.is_empty() {
                        record.shift_remove("types");
                    }
                }
                if record.is_empty() {
                    attributes.shift_remove(&key);
                }
            }
            (None, None) => {}
        }
    }
}

/// Encodes `value` as the CF missing value of an array of `dtype` in `format`; `array`
/// names it in errors. A float type takes the nearest value it holds, as netCDF stores a
/// double `_FillValue` given for a float variable ([`Encoded::rounded`] says when that is
/// not `value`); a finite value beyond the type's range is refused. Integer types take
/// only values they hold exactly (not NaN, a fraction or a value out of range); types
/// without numbers take none.
pub fn encode(value: f64, dtype: &DType, format: Format, array: &str) -> Result<Encoded> {
    let bad = |why: &str| {
        Error::InvalidArg(format!(
            "array {array:?}: missing value {value} {why} {}",
            dtype.element_type().name()
        ))
    };
    let integral = value.is_finite() && value.fract() == 0.0;
    let (fill, nearest) = match dtype.kind {
        DataKind::Float(2) => {
            let v = f16::from_f64(value);
            (v.to_ne_bytes().to_vec(), v.to_f64())
        }
        DataKind::Float(4) => ((value as f32).to_ne_bytes().to_vec(), value as f32 as f64),
        DataKind::Float(8) => (value.to_ne_bytes().to_vec(), value),
        DataKind::Float(_) => return Err(bad("cannot be the missing value of an array of")),
        DataKind::Int(n) => {
            let half = 2f64.powi(8 * n as i32 - 1);
            if !integral || value < -half || value >= half {
                return Err(bad("is not a value of"));
            }
            ((value as i64).to_ne_bytes()[ne_range(n)].to_vec(), value)
        }
        DataKind::UInt(n) => {
            if !integral || value < 0.0 || value >= 2f64.powi(8 * n as i32) {
                return Err(bad("is not a value of"));
            }
            ((value as u64).to_ne_bytes()[ne_range(n)].to_vec(), value)
        }
        _ => return Err(bad("cannot be the missing value of an array of")),
    };
    if value.is_finite() && nearest.is_infinite() {
        return Err(bad("is beyond the range of"));
    }
    let mut encoded = encode_bytes(fill, dtype, format, array)?;
    if nearest != value && !value.is_nan() {
        encoded.rounded = Some(nearest);
    }
    Ok(encoded)
}

/// Encodes one element's native bytes `fill` as the CF missing value (exact for 64-bit
/// integers, which a double may not hold); refuses types without numbers and a wrong size.
pub fn encode_bytes(fill: Vec<u8>, dtype: &DType, format: Format, array: &str) -> Result<Encoded> {
    let v3 = format.is_v3();
    let v2 = format == Format::V2;
    let attribute = match fill_as_number(&Some(fill.clone()), dtype) {
        Some(_) if fill.len() != dtype.item_size() => None,
        Some(Number::Float(v)) if v3 => {
            // Every NaN is written as the canonical one, as numpy does.
            let v = if v.is_nan() { f64::NAN } else { v };
            Some(Value::from(BASE64.encode(v.to_le_bytes())))
        }
        Some(Number::Float(v)) if v.is_nan() => Some(Value::from("NaN")),
        Some(Number::Float(v)) if v.is_infinite() => {
            Some(Value::from(if v > 0.0 { "Infinity" } else { "-Infinity" }))
        }
        Some(Number::Float(v)) => Some(Value::from(v)),
        Some(Number::Int(v)) => Some(Value::from(v)),
        Some(Number::UInt(v)) => Some(Value::from(v)),
        None => None,
    };
    let attribute = attribute.ok_or_else(|| {
        Error::InvalidArg(format!(
            "array {array:?}: a missing value of {} bytes cannot be one of {}",
            fill.len(),
            dtype.element_type().name()
        ))
    })?;
    Ok(Encoded {
        fill,
        attribute: (v2 || v3).then_some(attribute),
        nczarr_type: if v2 { nczarr_type(dtype) } else { None },
        rounded: None,
    })
}

/// NCZarr's name of a numeric type, as its `_NCZARR_ATTR` records attribute types (`None`
/// for a type netCDF lacks).
fn nczarr_type(dtype: &DType) -> Option<&'static str> {
    Some(match dtype.kind {
        DataKind::Float(4) => "<f4",
        DataKind::Float(8) => "<f8",
        DataKind::Int(1) => "<i1",
        DataKind::Int(2) => "<i2",
        DataKind::Int(4) => "<i4",
        DataKind::Int(8) => "<i8",
        DataKind::UInt(1) => "<u1",
        DataKind::UInt(2) => "<u2",
        DataKind::UInt(4) => "<u4",
        DataKind::UInt(8) => "<u8",
        _ => return None,
    })
}

/// Refuses a `_FillValue` attribute (`key`) that an array of a numeric `dtype` cannot take
/// for its missing value: text that is no number's encoding, a fraction or a value out of
/// range for an integer type, a finite value beyond a float type's range. The error names
/// the array and the attribute. Other keys and other types pass.
pub fn check_attribute(key: &str, value: &Value, dtype: &DType, array: &str) -> Result<()> {
    if key != FILL_ATTRIBUTE {
        return Ok(());
    }
    let fits = match (&dtype.kind, value) {
        (DataKind::Int(n @ 1..=8), Value::Number(v)) if v.is_i64() || v.is_u64() => {
            let v = v.as_i64().map_or(i128::MAX, i128::from);
            let half = 1i128 << (8 * n - 1);
            -half <= v && v < half
        }
        (DataKind::UInt(n @ 1..=8), Value::Number(v)) if v.is_i64() || v.is_u64() => {
            let v = v.as_u64().map_or(-1, i128::from);
            0 <= v && v < 1i128 << (8 * n)
        }
        (DataKind::Int(1..=8) | DataKind::UInt(1..=8), _) => false,
        (DataKind::Float(n @ (2 | 4 | 8)), _) => match attribute_as_f64(value, dtype) {
            Some(v) if *n == 2 => !v.is_finite() || f16::from_f64(v).is_finite(),
            Some(v) if *n == 4 => !v.is_finite() || (v as f32).is_finite(),
            Some(_) => true,
            None => false,
        },
        _ => return Ok(()),
    };
    if fits {
        return Ok(());
    }
    Err(Error::InvalidArg(format!(
        "array {array:?}: attribute {FILL_ATTRIBUTE} {value} is not a missing value of {}",
        dtype.element_type().name()
    )))
}

/// A number of an array's type.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    Float(f64),
    Int(i64),
    UInt(u64),
}

impl Number {
    /// The value as a double, `None` when a 64-bit integer has none exactly.
    fn as_f64(self) -> Option<f64> {
        match self {
            Number::Float(v) => Some(v),
            Number::Int(v) => (v as f64 as i128 == v as i128).then_some(v as f64),
            Number::UInt(v) => (v as f64 as u128 == v as u128).then_some(v as f64),
        }
    }
}

/// The bytes of an `n`-byte integer inside a native 8-byte one.
fn ne_range(n: usize) -> std::ops::Range<usize> {
    if cfg!(target_endian = "big") {
        8 - n..8
    } else {
        0..n
    }
}

/// The CF missing value of an array, whichever way the store holds it: a `_FillValue`
/// attribute (xarray's base64 form, a number, or `"NaN"`-like text, as xarray, NCZarr and
/// libzarr write it), else, outside Zarr v3, a non-null `fill_value` (which xarray and
/// NCZarr read as the missing value). `None` when there is none; an error when an integer
/// missing value is not exactly a double or the attribute is malformed.
pub fn decode(
    meta: &ArrayMeta,
    attributes: &Map<String, Value>,
    format: Format,
    array: &str,
) -> Result<Option<f64>> {
    let v2_fill = (!format.is_v3())
        .then(|| fill_as_number(&meta.fill_value, &meta.dtype))
        .flatten();
    // An integer attribute is taken exactly, as a fill value is.
    let attr_int = match attributes.get(FILL_ATTRIBUTE) {
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Number::Int)
            .or_else(|| n.as_u64().map(Number::UInt)),
        _ => None,
    };
    let value = match (v2_fill.or(attr_int), attributes.get(FILL_ATTRIBUTE)) {
        (Some(v), _) => v.as_f64().ok_or_else(|| {
            Error::DtypeMismatch(format!(
                "array {array:?}: missing value {v:?} is not exactly a double"
            ))
        })?,
        (None, Some(attr)) => attribute_as_f64(attr, &meta.dtype).ok_or_else(|| {
            Error::Metadata(format!(
                "array {array:?}: attribute {FILL_ATTRIBUTE} {attr} is not a missing value \
                 of {}",
                meta.dtype.element_type().name()
            ))
        })?,
        (None, None) => return Ok(None),
    };
    Ok(Some(value))
}

/// A numeric fill value (`None` for `null`, a non-numeric type or a wrong size).
fn fill_as_number(fill: &FillValue, dtype: &DType) -> Option<Number> {
    let bytes = fill.as_ref().filter(|b| b.len() == dtype.item_size())?;
    let mut b = [0u8; 8];
    match dtype.kind {
        DataKind::Float(n @ (2 | 4 | 8)) => Some(Number::Float(read_float(bytes, n))),
        DataKind::Int(n @ 1..=8) => {
            b[ne_range(n)].copy_from_slice(bytes);
            // Sign-extended from n bytes.
            let shift = 64 - 8 * n as u32;
            Some(Number::Int((i64::from_ne_bytes(b) << shift) >> shift))
        }
        DataKind::UInt(n @ 1..=8) => {
            b[ne_range(n)].copy_from_slice(bytes);
            Some(Number::UInt(u64::from_ne_bytes(b)))
        }
        _ => None,
    }
}

/// A `_FillValue` attribute's value: base64 of 8 little-endian double bytes (xarray's v3
/// form for floats), a number, or `"NaN"`, `"Infinity"`, `"-Infinity"`.
fn attribute_as_f64(attr: &Value, dtype: &DType) -> Option<f64> {
    let float = matches!(dtype.kind, DataKind::Float(_));
    let value = match attr {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) if float => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            // Eight bytes are 12 base64 characters: longer text is not decoded at all.
            text if text.len() == 12 => {
                let mut bytes = [0u8; 8];
                (BASE64.decode_slice(text, &mut bytes).ok()? == 8).then_some(())?;
                f64::from_le_bytes(bytes)
            }
            _ => return None,
        },
        // NCZarr may write a one-element list.
        Value::Array(list) if list.len() == 1 => return attribute_as_f64(&list[0], dtype),
        _ => return None,
    };
    (float || value.fract() == 0.0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dtype(v2: &str) -> DType {
        DType::parse_v2(v2).unwrap()
    }

    #[test]
    fn encodes_what_xarray_writes() {
        // (type, value, v3 attribute, v2 attribute, NCZarr's type of the v2 one)
        let cases = [
            ("<f8", -9999.0, json!("AAAAAICHw8A="), json!(-9999.0), "<f8"),
            (">f4", -9999.0, json!("AAAAAICHw8A="), json!(-9999.0), "<f4"),
            (
                "<f4",
                0.1f32 as f64,
                json!("AAAAoJmZuT8="),
                json!(0.10000000149011612),
                "<f4",
            ),
            ("<f8", f64::NAN, json!("AAAAAAAA+H8="), json!("NaN"), "<f8"),
            ("<f4", f64::NAN, json!("AAAAAAAA+H8="), json!("NaN"), "<f4"),
            (
                "<f4",
                f64::INFINITY,
                json!("AAAAAAAA8H8="),
                json!("Infinity"),
                "<f4",
            ),
            (
                "<f8",
                f64::NEG_INFINITY,
                json!("AAAAAAAA8P8="),
                json!("-Infinity"),
                "<f8",
            ),
            ("<i2", -9.0, json!(-9), json!(-9), "<i2"),
            ("|i1", -9.0, json!(-9), json!(-9), "<i1"),
            (
                "<i4",
                -2147483648.0,
                json!(-2147483648i64),
                json!(-2147483648i64),
                "<i4",
            ),
            (
                "<i8",
                i64::MIN as f64,
                json!(i64::MIN),
                json!(i64::MIN),
                "<i8",
            ),
            ("|u1", 255.0, json!(255), json!(255), "<u1"),
            ("<u2", 65535.0, json!(65535), json!(65535), "<u2"),
            ("<u4", 7.0, json!(7), json!(7), "<u4"),
            (
                "<u8",
                18446744073709549568u64 as f64,
                json!(18446744073709549568u64),
                json!(18446744073709549568u64),
                "<u8",
            ),
        ];
        for (t, v, attr3, attr2, ty) in cases {
            let d = dtype(t);
            let e3 = encode(v, &d, Format::V3, "a").unwrap();
            assert_eq!(e3.attribute, Some(attr3), "{t} {v}");
            assert_eq!(e3.nczarr_type, None);
            let e2 = encode(v, &d, Format::V2, "a").unwrap();
            assert_eq!(e2.attribute, Some(attr2), "{t} {v}");
            assert_eq!(e2.nczarr_type, Some(ty), "{t}");
            assert_eq!(e2.fill, e3.fill);
            assert_eq!(encode(v, &d, Format::V1, "a").unwrap().attribute, None);
            let got = fill_as_number(&Some(e2.fill), &d)
                .unwrap()
                .as_f64()
                .unwrap();
            assert!(got == v || (got.is_nan() && v.is_nan()), "{t} {v} {got}");
        }
    }

    #[test]
    fn applies_the_attribute_and_its_nczarr_type() {
        let f4 = dtype("<f4");
        let v2 = encode(-999.0, &f4, Format::V2, "a").unwrap();
        // Other recorded types stay; a lower-case record (as NCZarr writes) is the one used.
        let mut attrs = json!({"units": "K", "_nczarr_attr": {"types": {"units": "|S1"}}});
        let attrs_map = attrs.as_object_mut().unwrap();
        v2.apply(attrs_map);
        assert_eq!(
            attrs,
            json!({"units": "K", "_FillValue": -999.0,
                   "_nczarr_attr": {"types": {"units": "|S1", "_FillValue": "<f4"}}})
        );
        // A record that is no object is replaced.
        let mut attrs = Map::new();
        attrs.insert(NCZARR_TYPES.into(), json!(3));
        v2.apply(&mut attrs);
        assert_eq!(
            Value::Object(attrs.clone()),
            json!({"_FillValue": -999.0, "_NCZARR_ATTR": {"types": {"_FillValue": "<f4"}}})
        );
        // Zarr v3 drops the record of `_FillValue`'s type, and the record once it is empty.
        let v3 = encode(-999.0, &f4, Format::V3, "a").unwrap();
        v3.apply(&mut attrs);
        assert_eq!(
            Value::Object(attrs.clone()),
            json!({"_FillValue": "AAAAAAA4j8A="})
        );
        let mut attrs = json!({"_NCZARR_ATTR": {"types": {"_FillValue": "<f4", "a": "<i2"}}});
        v3.apply(attrs.as_object_mut().unwrap());
        assert_eq!(
            attrs,
            json!({"_FillValue": "AAAAAAA4j8A=", "_NCZARR_ATTR": {"types": {"a": "<i2"}}})
        );
        // Format 1 keeps the fill value alone.
        let v1 = encode(-999.0, &f4, Format::V1, "a").unwrap();
        let mut attrs =
            json!({"_FillValue": 1.0, "_NCZARR_ATTR": {"types": {"_FillValue": "<f4"}}});
        v1.apply(attrs.as_object_mut().unwrap());
        assert_eq!(attrs, json!({}));
        // float16 has no netCDF type: the attribute goes untyped.
        let f2 = encode(-1.0, &dtype("<f2"), Format::V2, "a").unwrap();
        let mut attrs = Map::new();
        f2.apply(&mut attrs);
        assert_eq!(Value::Object(attrs), json!({"_FillValue": -1.0}));
    }

    #[test]
    fn checks_a_fill_value_attribute() {
        let ok = [
            ("<f4", json!(-999.0)),
            ("<f4", json!("NaN")),
            ("<f4", json!("AAAAAAA4j8A=")),
            ("<f4", json!([-999])),
            ("|u1", json!(255)),
            ("<i8", json!(i64::MIN)),
            ("<u8", json!(u64::MAX)),
            ("|S4", json!("zz")),
        ];
        for (t, v) in ok {
            check_attribute(FILL_ATTRIBUTE, &v, &dtype(t), "a").unwrap();
        }
        let bad = [
            ("<i2", json!("zz")),
            ("<f4", json!("zz")),
            ("|u1", json!(300)),
            ("|u1", json!(-1)),
            ("<i4", json!(2.5)),
            ("<i8", json!(u64::MAX)),
            ("<f4", json!(1e40)),
        ];
        for (t, v) in bad {
            let err = check_attribute(FILL_ATTRIBUTE, &v, &dtype(t), "grid/t").unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains("\"grid/t\"") && text.contains(FILL_ATTRIBUTE),
                "{text}"
            );
        }
        check_attribute("units", &json!(1e40), &dtype("<f4"), "a").unwrap();
    }

    #[test]
    fn refuses_what_the_type_cannot_hold() {
        let cases = [
            ("<i2", f64::NAN),
            ("<i2", 32768.0),
            ("<i2", 0.5),
            ("|u1", -1.0),
            ("|u1", 256.0),
            ("<i8", -(i64::MIN as f64)),
            ("<u8", 1.8446744073709552e19),
            ("<i4", f64::INFINITY),
            ("<f4", 1e40),
            ("<f4", -f64::MAX),
            ("<f2", 1e6),
            ("|b1", 0.0),
            ("|S4", 0.0),
            ("<M8[ns]", 0.0),
        ];
        for (t, v) in cases {
            let err = encode(v, &dtype(t), Format::V3, "grid/t2m").unwrap_err();
            assert!(matches!(err, Error::InvalidArg(_)), "{t} {v}");
            assert!(err.to_string().contains("\"grid/t2m\""), "{err}");
        }
    }

    #[test]
    fn floats_take_the_nearest_value() {
        let f4 = dtype("<f4");
        let near = encode(1e20, &f4, Format::V3, "a").unwrap();
        assert_eq!(near.fill, 1e20f32.to_ne_bytes().to_vec());
        assert_eq!(near.rounded, Some(1e20f32 as f64));
        let exact = encode(1e20f32 as f64, &f4, Format::V2, "a").unwrap();
        assert_eq!(exact.fill, 1e20f32.to_ne_bytes().to_vec());
        assert_eq!(exact.rounded, None);
        assert_eq!(
            encode(f64::NAN, &f4, Format::V3, "a").unwrap().rounded,
            None
        );
        let inf = encode(f64::NEG_INFINITY, &f4, Format::V3, "a").unwrap();
        assert_eq!(inf.fill, f32::NEG_INFINITY.to_ne_bytes().to_vec());
        let f2 = encode(0.1, &dtype("<f2"), Format::V3, "a").unwrap();
        assert_eq!(f2.fill, f16::from_f64(0.1).to_ne_bytes().to_vec());
        assert_eq!(f2.rounded, Some(f16::from_f64(0.1).to_f64()));
    }

    #[test]
    fn decodes_every_form() {
        let f = dtype("<f4");
        let i = dtype("<i8");
        let cases: [(&DType, Value, Option<f64>); 8] = [
            (&f, json!("AAAAAICHw8A="), Some(-9999.0)),
            (&f, json!(-9999.0), Some(-9999.0)),
            (&f, json!([-9999.0]), Some(-9999.0)),
            (&f, json!("Infinity"), Some(f64::INFINITY)),
            (&i, json!(-9), Some(-9.0)),
            (&i, json!("AAAAAICHw8A="), None),
            (&i, json!(1.5), None),
            (&f, json!("AAAA"), None),
        ];
        for (d, attr, want) in cases {
            assert_eq!(attribute_as_f64(&attr, d), want, "{attr}");
        }
        assert!(attribute_as_f64(&json!("NaN"), &f).unwrap().is_nan());
    }
}
