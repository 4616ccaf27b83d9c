//! `diff --attrs`: attributes compared by what they mean, each differing key printed with
//! both values. An array's dimension names (v3 `dimension_names` or v2's
//! `_ARRAY_DIMENSIONS`) and its CF missing value (v3's `_FillValue` attribute or a v2
//! `fill_value`) are compared as such, under the names below, whatever their encoding.

use serde_json::{json, Map, Value};
use zarr::node::cf::FILL_ATTRIBUTE;
use zarr::node::DIMENSIONS_KEY;

/// The name under which dimension names are compared.
const DIMENSIONS: &str = "(dimension names)";

/// The name under which the CF missing value is compared.
const MISSING: &str = "(missing value)";

/// Longest value text printed; longer ones are cut with `…`.
const SHOWN_CHARS: usize = 60;

/// Replaces the encodings of dimension names and the missing value in `attrs` by their
/// meaning: `names` and `missing` as the array has them.
pub fn by_meaning(
    attrs: &mut Map<String, Value>,
    names: Option<Vec<Option<String>>>,
    missing: Option<f64>,
) {
    attrs.remove(DIMENSIONS_KEY);
    attrs.remove(FILL_ATTRIBUTE);
    if let Some(names) = names {
        attrs.insert(DIMENSIONS.into(), json!(names));
    }
    if let Some(missing) = missing {
        // NaN is no JSON number: compared as its text.
        let value = serde_json::Number::from_f64(missing)
            .map(Value::Number)
            .unwrap_or_else(|| json!(missing.to_string()));
        attrs.insert(MISSING.into(), value);
    }
}

/// One line per key that differs between `left` and `right` (or is on one side only),
/// prefixed with `shown`, in key order.
pub fn differences(
    shown: &str,
    left: &Map<String, Value>,
    right: &Map<String, Value>,
) -> Vec<String> {
    let mut keys: Vec<&String> = left.keys().chain(right.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| {
            let what = match key.as_str() {
                DIMENSIONS => "dimension names".to_string(),
                MISSING => "missing value".to_string(),
                _ => format!("attribute {key:?}"),
            };
            match (left.get(key), right.get(key)) {
                (Some(l), Some(r)) if l == r => None,
                (Some(l), Some(r)) => {
                    Some(format!("{shown}: {what}: {} != {}", short(l), short(r)))
                }
                (Some(l), None) => Some(format!("{shown}: {what} only in the first: {}", short(l))),
                (None, Some(r)) => {
                    Some(format!("{shown}: {what} only in the second: {}", short(r)))
                }
                (None, None) => None,
            }
        })
        .collect()
}

/// A value's compact JSON, cut to [`SHOWN_CHARS`] characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
