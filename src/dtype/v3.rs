//! Zarr v3 `data_type` values ⇄ [`DataKind`]: the core names, `r<N>`, the registered
//! extensions (`bfloat16`, float8/6/4, `int2`/`int4`/`uint2`/`uint4`, `numpy.datetime64`,
//! `numpy.timedelta64`, `struct` and its legacy alias `structured`, `fixed_length_utf32`,
//! `string`, `bytes`) and zarr-python 3's own names (`null_terminated_bytes`, `raw_bytes`,
//! `variable_length_bytes`).

use super::{v3_kind_of, ByteOrder, DType, DataKind, Field, MAX_FIELDS, MAX_ITEM_SIZE};
use crate::error::{Error, Result};
use serde_json::{json, Value};

/// Data types named by a `length_bytes` configuration, as zarr-python 3 writes them.
const SIZED_TYPES: [&str; 3] = ["null_terminated_bytes", "fixed_length_utf32", "raw_bytes"];

/// Deepest nesting of `struct` types accepted.
const MAX_NESTING: usize = 32;

fn bad(what: &str) -> Error {
    Error::Metadata(format!("zarr.json: \"data_type\" must be {what}"))
}

/// Parses a v3 `data_type` value. The fields of a record get little-endian order here;
/// the array's `bytes` codec decides their real order ([`DType::with_field_order`]).
pub fn parse(value: &Value) -> Result<DataKind> {
    let mut fields_left = MAX_FIELDS;
    parse_at(value, 0, &mut fields_left)
}

fn parse_at(value: &Value, depth: usize, fields_left: &mut usize) -> Result<DataKind> {
    let name = value
        .as_str()
        .or_else(|| value.get("name").and_then(Value::as_str))
        .ok_or_else(|| bad("a string or an object with a \"name\""))?;
    let config = value.get("configuration");
    if SIZED_TYPES.contains(&name) {
        let size = config
            .and_then(|c| c.get("length_bytes"))
            .and_then(Value::as_u64)
            .filter(|&n| n > 0 && n <= MAX_ITEM_SIZE as u64)
            .ok_or_else(|| bad("configured with a positive \"length_bytes\""))?
            as usize;
        return match name {
            "null_terminated_bytes" => Ok(DataKind::FixedBytes(size)),
            "raw_bytes" => Ok(DataKind::Raw(size)),
            _ if size.is_multiple_of(4) => Ok(DataKind::Unicode(size / 4)),
            _ => Err(bad("fixed_length_utf32 with length_bytes a multiple of 4")),
        };
    }
    match name {
        "numpy.datetime64" | "numpy.timedelta64" => {
            let unit = time_unit(config)?;
            Ok(if name == "numpy.datetime64" {
                DataKind::DateTime(unit)
            } else {
                DataKind::TimeDelta(unit)
            })
        }
        "struct" | "structured" => {
            if depth >= MAX_NESTING {
                return Err(Error::Metadata(format!(
                    "zarr.json: struct data type nests deeper than {MAX_NESTING} levels"
                )));
            }
            let list = config
                .and_then(|c| c.get("fields"))
                .and_then(Value::as_array)
                .filter(|l| !l.is_empty())
                .ok_or_else(|| bad("a struct configured with a non-empty list of \"fields\""))?;
            if list.len() > *fields_left {
                return Err(Error::Metadata(format!(
                    "zarr.json: struct data type has more than {MAX_FIELDS} fields"
                )));
            }
            *fields_left -= list.len();
            let mut fields: Vec<Field> = Vec::with_capacity(list.len());
            let mut offset = 0usize;
            for entry in list {
                // `{"name": …, "data_type": …}` (struct), or `[name, type]` (structured).
                let (field_name, field_type) = match entry {
                    Value::Object(o) => (o.get("name").and_then(Value::as_str), o.get("data_type")),
                    Value::Array(pair) if pair.len() == 2 => (pair[0].as_str(), pair.get(1)),
                    _ => (None, None),
                };
                let (Some(field_name), Some(field_type)) = (field_name, field_type) else {
                    return Err(Error::Metadata(format!(
                        "zarr.json: struct field {entry} is not {{\"name\": …, \"data_type\": …}} \
                         or [name, data_type]"
                    )));
                };
                if field_name.is_empty() || fields.iter().any(|f| f.name == field_name) {
                    return Err(Error::Metadata(format!(
                        "zarr.json: struct field name {field_name:?} is empty or repeated"
                    )));
                }
                let kind = parse_at(field_type, depth + 1, fields_left).map_err(|e| match e {
                    Error::Metadata(m) | Error::Unsupported(m) => {
                        Error::Metadata(format!("struct field {field_name:?}: {m}"))
                    }
                    other => other,
                })?;
                let dtype = DType::new(kind, ByteOrder::Little);
                if dtype.is_variable() {
                    return Err(Error::Metadata(format!(
                        "zarr.json: struct field {field_name:?}: variable-length types cannot \
                         be record fields"
                    )));
                }
                let size = dtype.item_size();
                fields.push(Field {
                    name: field_name.to_string(),
                    dtype,
                    shape: Vec::new(),
                    offset,
                });
                offset = offset
                    .checked_add(size)
                    .filter(|&o| o <= MAX_ITEM_SIZE)
                    .ok_or_else(|| {
                        Error::Metadata(format!(
                            "zarr.json: struct data type is larger than {MAX_ITEM_SIZE} bytes"
                        ))
                    })?;
            }
            Ok(DataKind::Structured(fields))
        }
        _ if name.starts_with("complex_") && v3_kind_of(name).is_none() => {
            Err(Error::Unsupported(format!(
                "zarr.json: data type {name:?} is not supported: libzarr's complex types are \
                 pairs of float32 or float64 (complex_float32, complex_float64)"
            )))
        }
        _ => v3_kind_of(name).ok_or_else(|| {
            Error::Unsupported(format!(
                "zarr.json: data type {name:?} is not supported by this version of libzarr"
            ))
        }),
    }
}

/// The numpy unit (`"ns"`, `"10s"`, `"generic"`) of a `numpy.datetime64` or
/// `numpy.timedelta64` configuration (`"μs"` read as `"us"`).
fn time_unit(config: Option<&Value>) -> Result<String> {
    let config = config
        .and_then(Value::as_object)
        .filter(|c| c.len() == 2)
        .ok_or_else(|| bad("a time type configured with exactly \"unit\" and \"scale_factor\""))?;
    let unit = match config.get("unit").and_then(Value::as_str) {
        Some("μs") => "us",
        Some(u)
            if u == "generic"
                || super::valid_time_unit(u) && !u.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            u
        }
        _ => {
            return Err(bad(
                "a time type with a numpy unit (\"s\", \"ms\", \"ns\", …)",
            ))
        }
    };
    let scale = config
        .get("scale_factor")
        .and_then(Value::as_u64)
        .filter(|s| (1..=i32::MAX as u64).contains(s))
        .ok_or_else(|| bad("a time type with a scale_factor in 1..=2147483647"))?;
    Ok(match (unit, scale) {
        ("generic", 1) => "generic".into(),
        ("generic", _) => return Err(bad("a generic time type with scale_factor 1")),
        (u, 1) => u.into(),
        (u, s) => format!("{s}{u}"),
    })
}

/// Splits a numpy time unit (`"10s"`) into unit and scale factor.
fn split_time_unit(unit: &str) -> (&str, u64) {
    let digits = unit.bytes().take_while(u8::is_ascii_digit).count();
    let (count, base) = unit.split_at(digits);
    (base, count.parse().unwrap_or(1))
}

/// The v3 `data_type` value of a stored type: core names (`"float32"`), registered
/// extensions (`"bfloat16"`, `{"name": "numpy.datetime64", …}`, `"string"`, `"bytes"`,
/// `fixed_length_utf32`, `raw_bytes`), and zarr-python 3's `null_terminated_bytes` for
/// fixed-width byte strings and `structured` for records (`[name, type]` pairs: the form
/// every zarr-python 3 reads; the registry's newer `struct` is read too). Opaque items are
/// written as `raw_bytes` (with a base64 fill value), which zarr-python 3 and tensorstore
/// both read; the core `r<N>` form, which zarr-python 3 does not read, is read only.
pub fn to_json(kind: &DataKind) -> Result<Value> {
    if let Some((name, _)) = super::V3_NAMES.iter().find(|(_, k)| k == kind) {
        return Ok(Value::from(*name));
    }
    let sized = |name: &str, n: usize| json!({"name": name, "configuration": {"length_bytes": n}});
    let time = |name: &str, unit: &str| {
        let (unit, scale) = split_time_unit(unit);
        json!({"name": name, "configuration": {"unit": unit, "scale_factor": scale}})
    };
    match kind {
        DataKind::Raw(n) => Ok(sized("raw_bytes", *n)),
        DataKind::String => Ok("string".into()),
        DataKind::VlenBytes => Ok("bytes".into()),
        DataKind::FixedBytes(n) => Ok(sized("null_terminated_bytes", *n)),
        DataKind::Unicode(n) => Ok(sized("fixed_length_utf32", n * 4)),
        DataKind::ExtFloat(t) => Ok(t.name().into()),
        DataKind::NarrowInt { .. } => Ok(DType::new(kind.clone(), ByteOrder::NotApplicable)
            .element_type()
            .name()
            .into()),
        DataKind::DateTime(u) => Ok(time("numpy.datetime64", u)),
        DataKind::TimeDelta(u) => Ok(time("numpy.timedelta64", u)),
        DataKind::Structured(fields) => {
            let list = fields
                .iter()
                .map(|f| {
                    if !f.shape.is_empty() {
                        return Err(Error::Unsupported(format!(
                            "record field {:?} is a sub-array of shape {:?}, which the Zarr v3 \
                             struct data type cannot hold; write this array in format 2",
                            f.name, f.shape
                        )));
                    }
                    Ok(json!([f.name, to_json(&f.dtype.kind)?]))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(json!({"name": "structured", "configuration": {"fields": list}}))
        }
        _ => Err(Error::Unsupported(format!(
            "data type {} has no Zarr v3 form in this version of libzarr",
            DType::new(kind.clone(), ByteOrder::NotApplicable).to_v2()
        ))),
    }
}

/// The one byte order of a record's multi-byte fields, which a v3 `bytes` codec states
/// (`NotApplicable` when every field is one byte wide); an error when fields differ.
pub fn record_order(dtype: &DType) -> Result<ByteOrder> {
    let mut found = ByteOrder::NotApplicable;
    for leaf in dtype.leaf_fields() {
        if leaf.dtype.swap_unit() <= 1 && !matches!(leaf.dtype.kind, DataKind::Structured(_)) {
            continue;
        }
        let order = leaf.dtype.order;
        if order == ByteOrder::NotApplicable {
            continue;
        }
        if found != ByteOrder::NotApplicable && found != order {
            return Err(Error::Unsupported(format!(
                "record {} mixes byte orders; a Zarr v3 struct stores every field in the one \
                 order of its bytes codec",
                dtype.to_v2()
            )));
        }
        found = order;
    }
    Ok(found)
}
