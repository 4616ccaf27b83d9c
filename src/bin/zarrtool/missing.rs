//! An array's CF missing value as JSON, as `info` and `header` show it and a netCDF export
//! writes it.

use serde_json::{Map, Value};
use zarr::dtype::DataKind;
use zarr::node::{cf, Array};
use zarr::Result;

/// The CF missing value of an array as JSON: an integer type's exactly (from the v2 fill
/// value, else the `_FillValue` attribute), a float as a number or `"NaN"`, `"Infinity"`,
/// `"-Infinity"`; null when there is none.
pub fn missing_value(array: &Array, attributes: &Map<String, Value>) -> Result<Value> {
    let meta = array.metadata();
    let integer = matches!(meta.dtype.kind, DataKind::Int(_) | DataKind::UInt(_));
    if integer {
        let fill = match array.format().is_v3() {
            false => zarr::meta::fill::render_fill(&meta.fill_value, &meta.dtype)?,
            true => Value::Null,
        };
        let attribute = match attributes.get(cf::FILL_ATTRIBUTE) {
            Some(Value::Array(list)) if list.len() == 1 => list[0].clone(),
            Some(value) => value.clone(),
            None => Value::Null,
        };
        for exact in [fill, attribute] {
            if exact.is_i64() || exact.is_u64() {
                return Ok(exact);
            }
        }
    }
    Ok(match array.missing_value()? {
        None => Value::Null,
        Some(v) if integer => Value::from(v as i64),
        Some(v) => float_json(v, matches!(meta.dtype.kind, DataKind::Float(4))),
    })
}

/// A float as JSON: the shortest decimal of its type, or `"NaN"`, `"Infinity"`,
/// `"-Infinity"`.
pub fn float_json(v: f64, single: bool) -> Value {
    if !v.is_finite() {
        return zarr::meta::fill::float_json(v);
    }
    let shortest = if single {
        (v as f32).to_string().parse().unwrap_or(v)
    } else {
        v
    };
    Value::from(shortest)
}
