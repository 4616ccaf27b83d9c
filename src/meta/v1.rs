//! Zarr v1 documents (deprecated format): the `meta` key ⇄ [`ArrayMeta`]. The compressor is
//! named by `compression` with options in `compression_opts` (an integer level for zlib and
//! bz2, an object otherwise). v1 chunk keys are those of v2 with the `.` separator.

use super::doc::Doc;
use super::fill::{parse_fill, render_fill};
use super::{ArrayMeta, ChunkGrid, KeyEncoding, Order, V2Fields};
use crate::codec;
use crate::codec::chain::Chain;
use crate::dtype::DType;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// Key of a v1 array's metadata document.
pub const ARRAY_KEY: &str = "meta";
/// Key of a v1 array's attributes document.
pub const ATTRS_KEY: &str = "attrs";

/// Parses a v1 `meta` document.
pub fn parse_array(bytes: &[u8]) -> Result<ArrayMeta> {
    let doc = Doc::parse(ARRAY_KEY, bytes)?;
    let obj = doc.object();
    let field = |key: &str| doc.field(key);
    let bad = |key: &str, what: &str| doc.bad(key, what);
    doc.expect_format(1)?;
    let dims = |key: &str| doc.u64_list(key);
    let dtype = match field("dtype")? {
        value @ (Value::String(_) | Value::Array(_)) => DType::parse_v2_json(value)?,
        _ => return Err(bad("dtype", "a type string or a list of fields")),
    };
    if dtype.is_variable() {
        return Err(bad("dtype", "a fixed-size type"));
    }
    let order = match field("order")?.as_str() {
        Some("C") => Order::C,
        Some("F") => Order::F,
        _ => return Err(bad("order", "\"C\" or \"F\"")),
    };
    let compressors = match obj.get("compression").and_then(Value::as_str) {
        None | Some("none") => Vec::new(),
        Some(name) => {
            let mut config = match obj.get("compression_opts") {
                Some(Value::Object(opts)) => opts.clone(),
                Some(Value::Number(level)) => {
                    Map::from_iter([("level".to_string(), Value::Number(level.clone()))])
                }
                None | Some(Value::Null) => Map::new(),
                Some(_) => return Err(bad("compression_opts", "an integer, an object or null")),
            };
            config.insert("id".into(), name.into());
            vec![codec::from_config(&config, dtype.item_size())?]
        }
    };
    let shape = dims("shape")?;
    let rank = shape.len();
    let meta = ArrayMeta {
        shape,
        chunks: dims("chunks")?,
        grid: ChunkGrid::Regular,
        fill_value: parse_fill(field("fill_value")?, &dtype)?,
        codecs: Chain::from_v2(
            order.transpose(rank),
            Default::default(),
            compressors,
            &dtype,
        ),
        dtype,
        key_encoding: KeyEncoding::v2('.'),
        dimension_names: None,
    };
    meta.validate()?;
    Ok(meta)
}

/// Renders a v1 `meta` document.
pub fn render_array(meta: &ArrayMeta) -> Result<Vec<u8>> {
    let fields = V2Fields::of(meta, "Zarr v1")?;
    let (filters, compressor) = fields.filters_and_compressor("Zarr v1")?;
    if !filters.is_empty() {
        return Err(Error::Unsupported(
            "Zarr v1 metadata cannot hold filters; write this array in format 2 or 3".into(),
        ));
    }
    let (compression, opts) = match compressor {
        None => (Value::from("none"), Value::Null),
        Some(codec) => {
            let mut config = codec.config();
            let id = config.shift_remove("id").unwrap_or(Value::Null);
            let opts = match (id.as_str(), config.get("level")) {
                (Some("zlib" | "bz2"), Some(level)) if config.len() == 1 => level.clone(),
                _ => Value::Object(config),
            };
            (id, opts)
        }
    };
    let fill = render_fill(&meta.fill_value, &meta.dtype)?;
    let doc = serde_json::json!({
        "chunks": meta.chunks,
        "compression": compression,
        "compression_opts": opts,
        "dtype": meta.dtype.to_v2_json(),
        "fill_value": fill,
        "order": match fields.order { Order::C => "C", Order::F => "F" },
        "shape": meta.shape,
        "zarr_format": 1,
    });
    super::json::try_to_pretty(&doc, "the array metadata document")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_example_parses_and_round_trips() {
        let doc = br#"{"chunks": [1000, 1000], "compression": "blosc",
            "compression_opts": {"clevel": 5, "cname": "lz4", "shuffle": 1},
            "dtype": "<f8", "fill_value": null, "order": "C", "shape": [10000, 10000],
            "zarr_format": 1}"#;
        let meta = parse_array(doc).unwrap();
        assert_eq!(meta.codecs.bytes_to_bytes[0].config()["cname"], "lz4");
        let again = parse_array(&render_array(&meta).unwrap()).unwrap();
        assert_eq!(again.shape, meta.shape);
        let zlib = br#"{"chunks": [2], "compression": "zlib", "compression_opts": 1,
            "dtype": "<i4", "fill_value": 42, "order": "C", "shape": [4], "zarr_format": 1}"#;
        let meta = parse_array(zlib).unwrap();
        let rendered: Value = serde_json::from_slice(&render_array(&meta).unwrap()).unwrap();
        assert_eq!(rendered["compression_opts"], 1);
        assert!(parse_array(br#"{"zarr_format": 2}"#).is_err());
    }
}
