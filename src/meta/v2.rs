//! Zarr v2 documents: `.zarray` ⇄ [`ArrayMeta`], and the `.zgroup` document.

use super::doc::Doc;
use super::fill::{parse_fill, render_fill};
use super::{json, ArrayMeta, ChunkGrid, KeyEncoding, Order, V2Fields};
use crate::codec;
use crate::codec::chain::Chain;
use crate::codec::filter;
use crate::dtype::DType;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// Key of an array's metadata document.
pub const ARRAY_KEY: &str = ".zarray";
/// Key of a group's metadata document.
pub const GROUP_KEY: &str = ".zgroup";
/// Key of a node's attributes document.
pub const ATTRS_KEY: &str = ".zattrs";

/// Parses a `.zarray` document. Every required key is checked for presence and type;
/// unknown keys are ignored.
pub fn parse_array(bytes: &[u8]) -> Result<ArrayMeta> {
    let doc = Doc::parse(ARRAY_KEY, bytes)?;
    let obj = doc.object();
    let field = |key: &str| doc.field(key);
    let bad = |key: &str, what: &str| doc.bad(key, what);
    doc.expect_format(2)?;
    let dims = |key: &str| doc.u64_list(key);
    let shape = dims("shape")?;
    let chunks = dims("chunks")?;
    let mut filter_list: &[Value] = match field("filters")? {
        Value::Null => &[],
        Value::Array(list) => list,
        _ => return Err(bad("filters", "an array or null")),
    };
    let mut object_codec = None;
    let dtype = match field("dtype")? {
        Value::String(s) if s == "|O" => {
            let (first, rest) = filter_list.split_first().ok_or_else(|| {
                bad(
                    "filters",
                    "a list starting with vlen-utf8, vlen-bytes or vlen-array for dtype \"|O\"",
                )
            })?;
            filter_list = rest;
            object_codec = Some(first);
            crate::dtype::object_dtype(first)?
        }
        value @ (Value::String(_) | Value::Array(_)) => {
            DType::parse_v2_json(value).map_err(|e| match e {
                Error::Metadata(m) => Error::Metadata(format!("{ARRAY_KEY}: {m}")),
                other => other,
            })?
        }
        _ => return Err(bad("dtype", "a type string or a list of fields")),
    };
    let order = match field("order")?.as_str() {
        Some("C") => Order::C,
        Some("F") => Order::F,
        _ => return Err(bad("order", "\"C\" or \"F\"")),
    };
    // numcodecs runs the filters and then the compressor as one sequence: a compressor
    // listed as the last filter of an array without one (as kerchunk describes HDF5's
    // deflate) is that array's compressor.
    let mut compressor = field("compressor")?;
    if compressor.is_null() {
        if let Some((last, rest)) = filter_list.split_last() {
            if filter::is_compressor(last) {
                compressor = last;
                filter_list = rest;
            }
        }
    }
    if dtype.is_variable() && !filter_list.is_empty() {
        return Err(Error::CodecUnsupported(format!(
            "{ARRAY_KEY}: filters after the object codec of a variable-length array are not \
             supported"
        )));
    }
    let filters = filter::chain_from_json(
        &Value::Array(filter_list.to_vec()),
        &dtype,
        filter::Forms::Numcodecs,
    )?;
    // The compressor receives what the last filter produces.
    let item_size = match filters.1.is_empty() {
        true => filter::output_dtype(&filters.0, &dtype).item_size(),
        false => 1,
    };
    let compressors = match compressor {
        Value::Null => Vec::new(),
        Value::Object(config) => vec![codec::from_config(config, item_size)?],
        _ => return Err(bad("compressor", "an object or null")),
    };
    let fill_value = parse_fill(field("fill_value")?, &dtype)?;
    let separator = match obj.get("dimension_separator") {
        None | Some(Value::Null) => '.',
        Some(Value::String(s)) if s == "." => '.',
        Some(Value::String(s)) if s == "/" => '/',
        Some(_) => return Err(bad("dimension_separator", "\".\" or \"/\"")),
    };
    let codecs = Chain::from_v2(order.transpose(shape.len()), filters, compressors, &dtype)
        .with_object_codec(object_codec);
    let meta = ArrayMeta {
        shape,
        chunks,
        grid: ChunkGrid::Regular,
        dtype,
        fill_value,
        codecs,
        key_encoding: KeyEncoding::v2(separator),
        dimension_names: None,
    };
    meta.validate()?;
    Ok(meta)
}

/// Renders a `.zarray` document as zarr-python does (sorted keys, 4-space indent), always
/// with `dimension_separator`.
pub fn render_array(meta: &ArrayMeta) -> Result<Vec<u8>> {
    let fields = V2Fields::of(meta, "Zarr v2")?;
    let (filters, compressor) = fields.filters_and_compressor("Zarr v2")?;
    let mut doc = Map::new();
    doc.insert("chunks".into(), meta.chunks.clone().into());
    doc.insert(
        "compressor".into(),
        compressor
            .map(|c| Value::Object(c.config()))
            .unwrap_or(Value::Null),
    );
    doc.insert(
        "dimension_separator".into(),
        meta.key_encoding.separator.to_string().into(),
    );
    doc.insert("dtype".into(), meta.dtype.to_v2_json());
    doc.insert(
        "fill_value".into(),
        render_fill(&meta.fill_value, &meta.dtype)?,
    );
    doc.insert("filters".into(), {
        let filters: Vec<Value> = meta
            .codecs
            .object_codec(&meta.dtype)
            .into_iter()
            .chain(filters.into_iter().map(Value::Object))
            .collect();
        if filters.is_empty() {
            Value::Null
        } else {
            Value::Array(filters)
        }
    });
    doc.insert(
        "order".into(),
        match fields.order {
            Order::C => "C",
            Order::F => "F",
        }
        .into(),
    );
    doc.insert("shape".into(), meta.shape.clone().into());
    doc.insert("zarr_format".into(), 2.into());
    json::try_to_pretty(&Value::Object(doc), "the array metadata document")
}

/// The `.zgroup` document.
pub fn render_group() -> Vec<u8> {
    to_pretty_json(&serde_json::json!({ "zarr_format": 2 }))
}

/// Checks a `.zgroup` document.
pub fn parse_group(bytes: &[u8]) -> Result<()> {
    let doc: Value = json::parse(bytes)
        .map_err(|e| Error::Metadata(format!(".zgroup is not valid JSON: {e}")))?;
    match doc.get("zarr_format").and_then(Value::as_u64) {
        Some(2) => Ok(()),
        _ => Err(Error::Metadata(".zgroup: \"zarr_format\" must be 2".into())),
    }
}

/// Parses an attributes document (a JSON object).
pub fn parse_attributes(bytes: &[u8]) -> Result<Map<String, Value>> {
    match json::parse(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Error::Metadata(".zattrs is not a JSON object".into())),
        Err(e) => Err(Error::Metadata(format!(".zattrs is not valid JSON: {e}"))),
    }
}

/// Renders a JSON value with 4-space indentation, as zarr-python's `json.dumps(indent=4)`.
pub fn to_pretty_json(value: &Value) -> Vec<u8> {
    json::to_pretty(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "zarr_format": 2, "shape": [10, 20], "chunks": [5, 7], "dtype": "<f8",
            "compressor": {"id": "zlib", "level": 1}, "fill_value": "NaN", "order": "C",
            "filters": null, "extra_key": {"ignored": true}
        })
    }

    #[test]
    fn parses_and_renders() {
        let meta = parse_array(doc().to_string().as_bytes()).unwrap();
        assert_eq!(meta.key_encoding.separator, '.');
        assert_eq!(meta.chunk_grid(), vec![2, 3]);
        let again = parse_array(&render_array(&meta).unwrap()).unwrap();
        assert_eq!(again.shape, meta.shape);
        let rendered: Value = serde_json::from_slice(&render_array(&meta).unwrap()).unwrap();
        assert_eq!(rendered["dimension_separator"], ".");
        assert_eq!(rendered["fill_value"], "NaN");
        assert_eq!(rendered["filters"], Value::Null);
    }

    #[test]
    fn a_compressor_listed_as_the_last_filter_is_the_compressor() {
        let mut kerchunk = doc();
        kerchunk["compressor"] = Value::Null;
        kerchunk["filters"] =
            json!([{"id": "shuffle", "elementsize": 8}, {"id": "zlib", "level": 4}]);
        let meta = parse_array(kerchunk.to_string().as_bytes()).unwrap();
        let rendered: Value = serde_json::from_slice(&render_array(&meta).unwrap()).unwrap();
        assert_eq!(rendered["compressor"], json!({"id": "zlib", "level": 4}));
        assert_eq!(
            rendered["filters"],
            json!([{"id": "shuffle", "elementsize": 8}])
        );
        // Anywhere else a compressor among the filters stays refused.
        kerchunk["filters"] =
            json!([{"id": "zlib", "level": 4}, {"id": "shuffle", "elementsize": 8}]);
        assert!(matches!(
            parse_array(kerchunk.to_string().as_bytes()),
            Err(Error::Unsupported(_))
        ));
        kerchunk["compressor"] = json!({"id": "zstd"});
        kerchunk["filters"] = json!([{"id": "zlib", "level": 4}]);
        assert!(parse_array(kerchunk.to_string().as_bytes()).is_err());
    }

    #[test]
    fn every_missing_or_mistyped_key_is_named() {
        for key in [
            "zarr_format",
            "shape",
            "chunks",
            "dtype",
            "compressor",
            "fill_value",
            "order",
            "filters",
        ] {
            let mut d = doc();
            d.as_object_mut().unwrap().remove(key);
            let err = parse_array(d.to_string().as_bytes())
                .unwrap_err()
                .to_string();
            assert!(err.contains(key), "{key}: {err}");
            let mut d = doc();
            d[key] = json!({"wrong": "type"});
            let err = parse_array(d.to_string().as_bytes())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(key) || err.contains("fill_value") || err.contains("id"),
                "{key}: {err}"
            );
        }
        let mut d = doc();
        d["shape"] = json!([-1, 2]);
        assert!(parse_array(d.to_string().as_bytes())
            .unwrap_err()
            .to_string()
            .contains("shape"));
        let mut d = doc();
        d["chunks"] = json!([0, 2]);
        assert!(parse_array(d.to_string().as_bytes())
            .unwrap_err()
            .to_string()
            .contains("chunks[0]"));
        let mut d = doc();
        d["shape"] = json!([u64::MAX, u64::MAX]);
        assert!(parse_array(d.to_string().as_bytes())
            .unwrap_err()
            .to_string()
            .contains("shape"));
        let mut d = doc();
        d["dtype"] = json!("<q9");
        assert!(parse_array(d.to_string().as_bytes())
            .unwrap_err()
            .to_string()
            .contains("<q9"));
        let mut d = doc();
        d["compressor"] = json!({"id": "snappy-nope"});
        assert!(matches!(
            parse_array(d.to_string().as_bytes()),
            Err(Error::CodecUnsupported(_))
        ));
    }
}
