//! Zarr v3.0 documents: `zarr.json` of arrays and groups ⇄ [`ArrayMeta`] and attributes.
//! A codec list maps one to one onto the codec chain ([`Chain`]): `transpose` and
//! `numcodecs.*` filters, then `bytes`, a vlen codec or `sharding_indexed` (whose own list
//! is parsed the same way), then the bytes-to-bytes codecs (`blosc`, `gzip`, `zstd`,
//! `crc32c`, `numcodecs.*`).

use super::fill::FillValue;
use super::{doc, json, ArrayMeta, ChunkGrid, DimEdges, KeyEncoding};
use crate::codec;
use crate::codec::chain::{ArrayToArray, ArrayToBytes, Chain, ShardingCodec};
use crate::codec::filter;
use crate::dtype::{ByteOrder, DType, DataKind};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// Key of every v3 node's metadata document.
pub const NODE_KEY: &str = "zarr.json";

/// What a `zarr.json` describes.
#[derive(Debug, Clone)]
pub enum Node {
    /// An array, with its attributes.
    Array(Box<ArrayMeta>, Map<String, Value>),
    /// A group, with its attributes.
    Group(Map<String, Value>),
}

const ARRAY_FIELDS: [&str; 11] = [
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "dimension_names",
    "storage_transformers",
];
const GROUP_FIELDS: [&str; 4] = [
    "zarr_format",
    "node_type",
    "attributes",
    "consolidated_metadata",
];

fn bad(key: &str, what: &str) -> Error {
    Error::Metadata(format!("zarr.json: {key:?} must be {what}"))
}

/// Parses a `zarr.json` document.
pub fn parse(bytes: &[u8]) -> Result<Node> {
    let doc = json::parse(bytes)
        .map_err(|e| Error::Metadata(format!("zarr.json is not valid JSON: {e}")))?;
    let obj = doc
        .as_object()
        .ok_or_else(|| Error::Metadata("zarr.json is not a JSON object".into()))?;
    if obj.get("zarr_format").and_then(Value::as_u64) != Some(3) {
        return Err(bad("zarr_format", "3"));
    }
    let node_type = obj.get("node_type").and_then(Value::as_str);
    let known: &[&str] = match node_type {
        Some("array") => &ARRAY_FIELDS,
        Some("group") => &GROUP_FIELDS,
        _ => return Err(bad("node_type", "\"array\" or \"group\"")),
    };
    for (key, value) in obj {
        let optional = value.get("must_understand") == Some(&Value::Bool(false));
        if !known.contains(&key.as_str()) && !optional {
            return Err(Error::Unsupported(format!(
                "zarr.json has the extension {key:?}, which libzarr does not understand"
            )));
        }
    }
    let attributes = match obj.get("attributes") {
        None => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(bad("attributes", "an object")),
    };
    if node_type == Some("group") {
        return Ok(Node::Group(attributes));
    }
    Ok(Node::Array(Box::new(parse_array(obj)?), attributes))
}

fn parse_array(obj: &Map<String, Value>) -> Result<ArrayMeta> {
    let field = |key: &str| {
        obj.get(key)
            .ok_or_else(|| Error::Metadata(format!("zarr.json: missing required key {key:?}")))
    };
    let shape = u64_list(field("shape")?, "shape")?;
    if let Some(transformers) = obj.get("storage_transformers") {
        if transformers.as_array().is_none_or(|t| !t.is_empty()) {
            return Err(Error::Unsupported(
                "zarr.json: storage transformers are not supported".into(),
            ));
        }
    }
    let kind = parse_data_type(field("data_type")?)?;
    let grid = field("chunk_grid")?;
    let (chunks, rectilinear) = match grid.get("name").and_then(Value::as_str) {
        Some("regular") => {
            let chunks = u64_list(
                grid.get("configuration")
                    .and_then(|c| c.get("chunk_shape"))
                    .ok_or_else(|| bad("chunk_grid", "regular with a chunk_shape"))?,
                "chunk_grid.configuration.chunk_shape",
            )?;
            (chunks, None)
        }
        Some("rectilinear") => {
            let config = grid.get("configuration").unwrap_or(&Value::Null);
            let dims = super::grid::parse_rectilinear(config, &shape)?;
            (dims.iter().map(DimEdges::max_edge).collect(), Some(dims))
        }
        _ => {
            return Err(Error::Unsupported(format!(
                "zarr.json: chunk grid {grid} is not supported (only \"regular\" and \
                 \"rectilinear\")"
            )))
        }
    };
    let key_encoding = parse_key_encoding(obj.get("chunk_key_encoding"))?;
    let codecs = field("codecs")?
        .as_array()
        .ok_or_else(|| bad("codecs", "a list of codec objects"))?;
    let (codecs, dtype) = parse_chain(codecs, &kind, shape.len())?;
    let fill_value = parse_fill(field("fill_value")?, &dtype)?;
    let dimension_names = match obj.get("dimension_names") {
        None | Some(Value::Null) => None,
        Some(Value::Array(names)) => Some(
            names
                .iter()
                .map(|n| match n {
                    Value::Null => Ok(None),
                    Value::String(s) => Ok(Some(s.clone())),
                    _ => Err(bad("dimension_names", "a list of strings or nulls")),
                })
                .collect::<Result<_>>()?,
        ),
        Some(_) => return Err(bad("dimension_names", "a list of strings or nulls")),
    };
    let mut meta = ArrayMeta {
        shape,
        chunks,
        grid: ChunkGrid::Regular,
        dtype,
        fill_value,
        codecs,
        key_encoding,
        dimension_names,
    };
    if let Some(dims) = rectilinear {
        meta.set_rectilinear(dims);
    }
    meta.validate()?;
    Ok(meta)
}

/// Reads a `sharding_indexed` configuration for items of `kind` in `rank` dimensions: the
/// codec, and the array's stored type its inner chain gives. The index codecs must keep the
/// index at a fixed size (`bytes`, then `crc32c`), so that it can be found by its position.
fn parse_sharding(
    config: &Map<String, Value>,
    kind: &DataKind,
    rank: usize,
) -> Result<(ShardingCodec, DType)> {
    let chunk_shape = u64_list(
        config.get("chunk_shape").unwrap_or(&Value::Null),
        "sharding_indexed chunk_shape",
    )?;
    let codecs = config
        .get("codecs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("sharding_indexed codecs", "a list of codec objects"))?;
    let (codecs, dtype) = parse_chain(codecs, kind, rank)?;
    let default_index = vec![
        json!({"name": "bytes", "configuration": {"endian": "little"}}),
        json!({"name": "crc32c"}),
    ];
    let index_codecs = match config.get("index_codecs") {
        None => default_index,
        Some(Value::Array(list)) => list.clone(),
        Some(_) => {
            return Err(bad(
                "sharding_indexed index_codecs",
                "a list of codec objects",
            ))
        }
    };
    let (index, _) = parse_chain(&index_codecs, &DataKind::UInt(8), 1)?;
    let index_endian = match index.array_to_bytes {
        ArrayToBytes::Bytes(order) if index.array_to_array.is_empty() => order,
        _ => return Err(bad("sharding_indexed index_codecs", "a bytes codec first")),
    };
    if let Some(codec) = index
        .bytes_to_bytes
        .iter()
        .find(|c| c.config().get("id").and_then(Value::as_str) != Some("crc32c"))
    {
        return Err(Error::Unsupported(format!(
            "shard index codec {} is not supported (the index must keep a fixed size: bytes, crc32c)",
            Value::Object(codec.config())
        )));
    }
    let index_at_start = match config.get("index_location").and_then(Value::as_str) {
        None | Some("end") => false,
        Some("start") => true,
        Some(_) => {
            return Err(bad(
                "sharding_indexed index_location",
                "\"start\" or \"end\"",
            ))
        }
    };
    let codec = ShardingCodec {
        chunk_shape,
        codecs,
        index_codecs: index.bytes_to_bytes,
        index_endian,
        index_at_start,
    };
    Ok((codec, dtype))
}

fn u64_list(value: &Value, key: &str) -> Result<Vec<u64>> {
    doc::u64_list(value).ok_or_else(|| bad(key, "a list of non-negative integers"))
}

fn parse_data_type(value: &Value) -> Result<DataKind> {
    crate::dtype::v3::parse(value)
}

/// The v3 `data_type` value of a stored type (see [`crate::dtype::v3::to_json`]).
pub fn data_type_json(kind: &DataKind) -> Result<Value> {
    crate::dtype::v3::to_json(kind)
}

fn parse_key_encoding(value: Option<&Value>) -> Result<KeyEncoding> {
    let Some(value) = value else {
        return Ok(KeyEncoding::v3_default('/'));
    };
    let name = value.get("name").and_then(Value::as_str);
    let separator = value
        .get("configuration")
        .and_then(|c| c.get("separator"))
        .and_then(Value::as_str);
    let (prefix, default) = match name {
        Some("default") => (true, '/'),
        Some("v2") => (false, '.'),
        _ => {
            return Err(Error::Unsupported(format!(
                "zarr.json: chunk key encoding {value} is not supported"
            )))
        }
    };
    let separator = match separator {
        None => default,
        Some(".") => '.',
        Some("/") => '/',
        Some(_) => return Err(bad("chunk_key_encoding", "with separator \".\" or \"/\"")),
    };
    Ok(match prefix {
        true => KeyEncoding::v3_default(separator),
        false => KeyEncoding::v2(separator),
    })
}

/// An array→array codec as listed, before it is built for the type it receives.
enum Listed<'a> {
    Transpose(Vec<usize>),
    Filter(Map<String, Value>, &'a str),
    /// A codec registered in zarr-extensions (`scale_offset`, `cast_value`, …).
    Registered(Map<String, Value>, &'a str),
}

/// Parses a codec list for items of `kind` in `rank` dimensions into a chain, with the
/// array's stored type: its byte order is what the first filter receives (its `dtype` when
/// it names one, else this machine's), or without filters the `bytes` codec's.
fn parse_chain(codecs: &[Value], kind: &DataKind, rank: usize) -> Result<(Chain, DType)> {
    let mut listed = Vec::new();
    let mut array_to_bytes = None;
    let mut inner_dtype = None;
    let mut bytes_configs = Vec::new();
    let variable = DType::new(kind.clone(), ByteOrder::Little).is_variable();
    // A bare name stands for a codec without configuration (`"bytes"`), as the
    // zarr-extensions examples write it.
    let expanded: Vec<Value>;
    let codecs = if codecs.iter().any(Value::is_string) {
        expanded = codecs
            .iter()
            .map(|c| match c {
                Value::String(name) => json!({ "name": name }),
                c => c.clone(),
            })
            .collect();
        &expanded[..]
    } else {
        codecs
    };
    for codec in codecs {
        let name = codec
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("codecs", "a list of objects with a \"name\" (or names)"))?;
        let empty = Map::new();
        let config = codec
            .get("configuration")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let filter_id = name
            .strip_prefix("numcodecs.")
            .filter(|id| filter::SUPPORTED.contains(id));
        let first = array_to_bytes.is_none();
        match name {
            "transpose" if first => {
                // "C" and "F" are the identity and the reversal, as the v3 drafts before
                // the final spec wrote them (tensorstore still accepts them).
                let step: Vec<usize> = match config.get("order").unwrap_or(&Value::Null) {
                    Value::String(s) if s == "C" => (0..rank).collect(),
                    Value::String(s) if s == "F" => (0..rank).rev().collect(),
                    order => u64_list(order, "transpose order")?
                        .into_iter()
                        .map(|k| usize::try_from(k).unwrap_or(usize::MAX))
                        .collect(),
                };
                if !crate::codec::chain::is_permutation(&step, rank) {
                    return Err(bad(
                        "transpose order",
                        &format!("a permutation of 0..{rank}"),
                    ));
                }
                listed.push(Listed::Transpose(step));
            }
            "vlen-utf8" | "vlen-bytes" if first && variable => {
                array_to_bytes = Some(ArrayToBytes::Vlen);
            }
            "bytes" if first && !variable => {
                array_to_bytes = Some(ArrayToBytes::Bytes(
                    match config.get("endian").and_then(Value::as_str) {
                        Some("big") => ByteOrder::Big,
                        Some("little") => ByteOrder::Little,
                        None => ByteOrder::NotApplicable,
                        _ => {
                            return Err(bad(
                                "codecs",
                                "a bytes codec with endian \"little\" or \"big\"",
                            ))
                        }
                    },
                ));
            }
            "sharding_indexed" if first => {
                let config = codec
                    .get("configuration")
                    .and_then(Value::as_object)
                    .ok_or_else(|| bad("sharding_indexed", "configured"))?;
                let (sharding, dtype) = parse_sharding(config, kind, rank)?;
                array_to_bytes = Some(ArrayToBytes::Sharding(Box::new(sharding)));
                inner_dtype = Some(dtype);
            }
            // Codecs of typed chunks stand in the bytes codec's place: the chain hands them
            // the items in little-endian order.
            "zfp" | "numcodecs.zfpy" | "pcodec" | "numcodecs.pcodec" if first && !variable => {
                array_to_bytes = Some(ArrayToBytes::Bytes(ByteOrder::Little));
                bytes_configs.push(to_v2_config(name, config)?);
            }
            "packbits" if first && !variable => {
                if codec.get("configuration").is_some_and(|c| !c.is_object()) {
                    return Err(bad(name, "configured with an object"));
                }
                // Run as the last filter, before a bytes codec with nothing to swap.
                listed.push(Listed::Registered(config.clone(), name));
                array_to_bytes = Some(ArrayToBytes::Bytes(ByteOrder::NotApplicable));
            }
            _ if first && filter::REGISTERED.contains(&name) => {
                if codec.get("configuration").is_some_and(|c| !c.is_object()) {
                    return Err(bad(name, "configured with an object"));
                }
                listed.push(Listed::Registered(config.clone(), name));
            }
            _ if first && filter_id.is_some() => {
                let mut config = config.clone();
                let id = filter_id.expect("some");
                config.insert("id".into(), id.into());
                listed.push(Listed::Filter(config, id));
            }
            _ if !first
                && (filter::REGISTERED.contains(&name)
                    || filter::REGISTERED_ARRAY_TO_BYTES.contains(&name)) =>
            {
                return Err(bad(
                    "codecs",
                    &format!("a list with {name:?} before the array-to-bytes codec"),
                ))
            }
            "zfp" | "numcodecs.zfpy" | "pcodec" | "numcodecs.pcodec" if !first => {
                return Err(bad(
                    "codecs",
                    &format!(
                        "a list with {name:?} in the array-to-bytes codec's place (it encodes \
                         numbers, not the bytes of another array-to-bytes codec)"
                    ),
                ))
            }
            _ if !first => bytes_configs.push(to_v2_config(name, config)?),
            _ => {
                return Err(Error::CodecUnsupported(format!(
                    "codec {name:?} is not supported before the bytes codec"
                )))
            }
        }
    }
    let array_to_bytes = array_to_bytes.ok_or_else(|| {
        if variable {
            bad("codecs", "a list with one vlen-utf8 or vlen-bytes codec")
        } else {
            bad("codecs", "a list with one \"bytes\" codec")
        }
    })?;
    // A numcodecs filter's `dtype` says the order it receives; a registered codec's
    // items are in this machine's order.
    let first_filter = listed.iter().find_map(|l| match l {
        Listed::Filter(config, _) => Some(Some(config)),
        Listed::Registered(..) => Some(None),
        Listed::Transpose(_) => None,
    });
    let input = match (&inner_dtype, first_filter, &array_to_bytes) {
        (Some(dtype), _, _) => dtype.clone(),
        (None, Some(config), _) => {
            let order = config
                .and_then(|c| c.get("dtype").or_else(|| c.get("decode_dtype")))
                .and_then(Value::as_str)
                .and_then(|t| filter::parse_dtype(t).ok())
                .map_or(ByteOrder::NATIVE, |t| t.order);
            DType::new(kind.clone(), order)
        }
        // A record's fields are stored in the bytes codec's order (little when it has
        // none, as zarr-python 3 wrote records before the struct type required one).
        (None, None, ArrayToBytes::Bytes(order)) => DType::new(kind.clone(), *order)
            .with_field_order(match order {
                ByteOrder::NotApplicable => ByteOrder::Little,
                order => *order,
            }),
        (None, None, _) => DType::new(kind.clone(), ByteOrder::NotApplicable),
    };
    let mut current = input.clone();
    let mut array_to_array = Vec::with_capacity(listed.len());
    for item in listed {
        array_to_array.push(match item {
            Listed::Transpose(p) => ArrayToArray::Transpose(p),
            Listed::Registered(config, name) => {
                let f = filter::from_v3(name, &config, &current)?;
                current = f.encoded_dtype();
                ArrayToArray::Filter(f)
            }
            Listed::Filter(config, id) => match filter::from_config(&config, &current)? {
                filter::Built::Array(f) => {
                    current = f.encoded_dtype();
                    ArrayToArray::Filter(f)
                }
                filter::Built::Bytes(_) => {
                    return Err(Error::Unsupported(format!(
                        "numcodecs.{id} is a bytes-to-bytes codec: list it after the bytes codec"
                    )))
                }
            },
        });
    }
    let bytes_to_bytes = bytes_configs
        .iter()
        .map(|c| codec::from_config(c, current.item_size()))
        .collect::<Result<_>>()?;
    let chain = Chain {
        array_to_array,
        array_to_bytes,
        bytes_to_bytes,
    };
    chain.check(&input, rank)?;
    check_transposes(&chain)?;
    Ok((chain, input))
}

/// Refuses a transpose beside a filter that depends on the items' order (`delta`,
/// `packbits`): which order such a filter sees in Zarr v3 is not settled between
/// implementations.
fn check_transposes(chain: &Chain) -> Result<()> {
    let transposed = chain
        .array_to_array
        .iter()
        .any(|c| matches!(c, ArrayToArray::Transpose(p) if !p.iter().copied().eq(0..p.len())));
    match chain.filters().find(|f| !f.elementwise()) {
        Some(f) if transposed => Err(Error::Unsupported(format!(
            "Zarr v3 metadata with a transpose and filter {} (which depends on the items' \
             order) is not supported",
            Value::Object(f.config())
        ))),
        _ => Ok(()),
    }
}

/// The numcodecs-style configuration of a bytes-to-bytes codec written in Zarr v3's form
/// (`{"name": "gzip", "configuration": {"level": 5}}`), or `None` when `codec` has an `"id"`
/// or no `"name"` (it is in numcodecs' form already, or in none).
pub fn bytes_codec_as_v2(codec: &Map<String, Value>) -> Option<Result<Map<String, Value>>> {
    if codec.contains_key("id") {
        return None;
    }
    let name = codec.get("name")?.as_str()?;
    let empty = Map::new();
    Some(match codec.get("configuration") {
        None | Some(Value::Null) => to_v2_config(name, &empty),
        Some(Value::Object(config)) => to_v2_config(name, config),
        Some(_) => Err(bad("configuration", "an object")),
    })
}

/// The numcodecs-style configuration of a v3 bytes-to-bytes codec.
fn to_v2_config(name: &str, config: &Map<String, Value>) -> Result<Map<String, Value>> {
    let mut out = config.clone();
    let id = match name {
        "blosc" => {
            if let Some(shuffle) = config.get("shuffle") {
                let code = match shuffle.as_str() {
                    Some("noshuffle") => 0,
                    Some("shuffle") => 1,
                    Some("bitshuffle") => 2,
                    _ => {
                        return Err(bad(
                            "blosc shuffle",
                            "\"noshuffle\", \"shuffle\" or \"bitshuffle\"",
                        ))
                    }
                };
                out.insert("shuffle".into(), code.into());
            }
            "blosc"
        }
        "gzip" | "zstd" | "crc32c" | "zfp" | "pcodec" => name,
        _ => match name.strip_prefix("numcodecs.") {
            Some(id) => id,
            None => {
                return Err(Error::CodecUnsupported(format!(
                    "codec {name:?} is not supported"
                )))
            }
        },
    };
    out.insert("id".into(), id.into());
    Ok(out)
}

/// The v3 form of a codec from its numcodecs-style configuration.
fn to_v3_codec(mut config: Map<String, Value>, item_size: usize) -> Value {
    let id = config
        .shift_remove("id")
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    match id.as_str() {
        "blosc" => {
            // Variable-length items reach blosc as bytes (item size 0 here): typesize 1.
            let typesize = config
                .get("typesize")
                .and_then(Value::as_u64)
                .unwrap_or(item_size.max(1) as u64);
            let shuffle = match config.get("shuffle").and_then(Value::as_i64) {
                Some(0) => "noshuffle",
                Some(2) => "bitshuffle",
                Some(-1) if typesize == 1 => "bitshuffle",
                _ => "shuffle",
            };
            config.insert("shuffle".into(), shuffle.into());
            config.insert("typesize".into(), typesize.into());
            json!({"name": "blosc", "configuration": config})
        }
        "gzip" => json!({"name": "gzip", "configuration": config}),
        "zstd" => {
            config.entry("checksum").or_insert(false.into());
            json!({"name": "zstd", "configuration": config})
        }
        "crc32c" => json!({"name": "crc32c"}),
        "zfp" => json!({"name": "zfp", "configuration": config}),
        other => json!({"name": format!("numcodecs.{other}"), "configuration": config}),
    }
}

/// Parses a v3 fill value: numbers, `"NaN"`, `"Infinity"`, `"-Infinity"`, hex bit patterns
/// `"0x…"` for floats, `[re, im]` pairs, `"NaT"` for times, byte lists or base64 for raw
/// types, and for records an object of field values (`struct`) or base64 of the packed
/// record (zarr-python 3's `structured`).
pub fn parse_fill(value: &Value, dtype: &DType) -> Result<FillValue> {
    let invalid = |why: Option<String>| {
        Error::Metadata(format!(
            "zarr.json: fill_value {value} is not valid for data type {}{}",
            crate::dtype::v3::to_json(&dtype.kind)
                .map(|v| v.to_string())
                .unwrap_or_else(|_| dtype.to_v2()),
            why.map(|w| format!(": {w}")).unwrap_or_default()
        ))
    };
    match &dtype.kind {
        DataKind::Complex(_) if value.as_array().is_none_or(|p| p.len() != 2) => Err(invalid(
            Some("complex fill values are [real, imaginary] pairs".into()),
        )),
        DataKind::Raw(n) if value.is_array() => {
            let bytes: Vec<u8> = value
                .as_array()
                .into_iter()
                .flatten()
                .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect::<Option<_>>()
                .filter(|b: &Vec<u8>| b.len() == *n)
                .ok_or_else(|| invalid(Some(format!("expected {n} integers in 0..=255"))))?;
            Ok(Some(bytes))
        }
        DataKind::Structured(fields) if value.is_object() => {
            let map = value.as_object().expect("an object");
            let mut bytes = crate::error::try_zeroed(dtype.item_size(), "the fill value")?;
            for f in fields {
                let v = map.get(&f.name).ok_or_else(|| {
                    invalid(Some(format!("field {:?} has no fill value", f.name)))
                })?;
                let mut one = parse_fill(v, &native(&f.dtype))?.unwrap_or_default();
                swap_to_or_from_native(&mut one, &f.dtype);
                bytes[f.offset..f.offset + one.len()].copy_from_slice(&one);
            }
            if let Some(extra) = map.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
                return Err(invalid(Some(format!("the record has no field {extra:?}"))));
            }
            Ok(Some(bytes))
        }
        _ if value.is_null() => Err(Error::Metadata(
            "zarr.json: fill_value must not be null".into(),
        )),
        _ => super::fill::parse_fill(value, dtype).map_err(|e| match e {
            Error::NoMemory(_) => e,
            e => invalid(Some(e.to_string())),
        }),
    }
}

/// Swaps one item of `dtype` between its stored byte order and this machine's (each field
/// of a record on its own).
fn swap_to_or_from_native(bytes: &mut [u8], dtype: &DType) {
    if matches!(dtype.kind, DataKind::Structured(_)) {
        for leaf in dtype.leaf_fields() {
            if leaf.dtype.needs_swap() {
                crate::dtype::swap_bytes(
                    &mut bytes[leaf.offset..leaf.offset + leaf.size()],
                    leaf.dtype.swap_unit(),
                );
            }
        }
    } else if dtype.needs_swap() {
        crate::dtype::swap_bytes(bytes, dtype.swap_unit());
    }
}

/// `dtype` in this machine's byte order (records: every field).
fn native(dtype: &DType) -> DType {
    match dtype.kind {
        DataKind::Structured(_) => dtype.with_field_order(ByteOrder::NATIVE),
        _ => DType::new(dtype.kind.clone(), ByteOrder::NATIVE),
    }
}

/// Renders a v3 fill value (a null fill value is written as zero, which v3 requires).
fn render_fill(meta: &ArrayMeta) -> Result<Value> {
    match &meta.fill_value {
        Some(bytes) => render_value(bytes, &meta.dtype),
        None => render_value(
            &crate::error::try_zeroed(meta.item_size(), "the fill value")?,
            &meta.dtype,
        ),
    }
}

/// One item's v3 JSON form: floats with a NaN other than `"NaN"`'s as their hex bits,
/// `"NaT"` for times, raw items (`raw_bytes`) and records as base64 of their stored bytes
/// (zarr-python 3's forms, which tensorstore reads too). Large items' text is allocated
/// fallibly.
pub fn render_value(bytes: &[u8], dtype: &DType) -> Result<Value> {
    use super::fill::{ext_bits, float_bits, is_other_nan};
    let hex = |bits: u64, size: usize| Value::from(format!("0x{bits:0width$x}", width = size * 2));
    let float = |b: &[u8], size: usize| {
        if is_other_nan(b, size) {
            hex(float_bits(b, size), size)
        } else {
            super::fill::float_json(super::fill::read_float(b, size))
        }
    };
    Ok(match &dtype.kind {
        DataKind::Float(n) => float(bytes, *n),
        DataKind::Complex(n) => {
            let half = n / 2;
            json!([float(&bytes[..half], half), float(&bytes[half..], half)])
        }
        DataKind::ExtFloat(t) => {
            let bits = ext_bits(bytes, t.size()) & t.mask();
            if t.is_nan(bits) && Some(bits) != t.format().nan {
                hex(bits as u64, t.size())
            } else {
                super::fill::float_json(t.to_f64(bits))
            }
        }
        DataKind::DateTime(_) | DataKind::TimeDelta(_)
            if i64::from_ne_bytes(bytes[..8].try_into().expect("8 bytes")) == i64::MIN =>
        {
            "NaT".into()
        }
        _ => super::fill::render_item(bytes, dtype)?,
    })
}

/// The v3 codec list of `chain` for items of `dtype`.
fn render_chain(chain: &Chain, dtype: &DType) -> Result<Vec<Value>> {
    check_transposes(chain)?;
    let mut codecs = Vec::new();
    for codec in &chain.array_to_array {
        match codec {
            ArrayToArray::Transpose(p) if p.iter().copied().eq(0..p.len()) => {}
            ArrayToArray::Transpose(p) => {
                codecs.push(json!({"name": "transpose", "configuration": {"order": p}}));
            }
            ArrayToArray::Filter(f) if f.array_to_bytes() => {}
            ArrayToArray::Filter(f) => codecs.push(f.v3_codec()),
        }
    }
    // What the array→bytes codec receives: the output of the last array filter.
    let encoded = filter::output_dtype_of(chain.filters(), dtype);
    // A codec of typed chunks is the array→bytes codec in Zarr v3's list.
    let typed = chain.typed_codec().is_some();
    // A filter that is a v3 array→bytes codec (packbits) stands in the bytes codec's place.
    let packing = chain.filters().position(|f| f.array_to_bytes());
    if let Some(i) = packing {
        if typed
            || i + 1 != chain.filters().count()
            || !matches!(chain.array_to_bytes, ArrayToBytes::Bytes(_))
        {
            return Err(Error::Unsupported(
                "the packbits codec must be the last array codec, in place of the bytes codec"
                    .into(),
            ));
        }
    }
    codecs.push(match &chain.array_to_bytes {
        ArrayToBytes::Bytes(_) if typed => {
            to_v3_codec(chain.bytes_to_bytes[0].config(), encoded.item_size())
        }
        ArrayToBytes::Bytes(_) if packing.is_some() => chain
            .filters()
            .last()
            .map(|f| f.v3_codec())
            .unwrap_or_default(),
        ArrayToBytes::Vlen if dtype.kind == DataKind::String => {
            json!({"name": "vlen-utf8", "configuration": {}})
        }
        ArrayToBytes::Vlen => json!({"name": "vlen-bytes", "configuration": {}}),
        ArrayToBytes::JsonItems(_) => {
            return Err(Error::Unsupported(
                "the json2 object codec has no Zarr v3 form (copy the array to re-encode its \
                 strings as vlen-utf8)"
                    .into(),
            ))
        }
        ArrayToBytes::Bytes(_) if matches!(encoded.kind, DataKind::Structured(_)) => {
            match crate::dtype::v3::record_order(&encoded)? {
                ByteOrder::Big => json!({"name": "bytes", "configuration": {"endian": "big"}}),
                ByteOrder::Little => {
                    json!({"name": "bytes", "configuration": {"endian": "little"}})
                }
                ByteOrder::NotApplicable => json!({"name": "bytes"}),
            }
        }
        ArrayToBytes::Bytes(_) if encoded.swap_unit() <= 1 => json!({"name": "bytes"}),
        ArrayToBytes::Bytes(order) => {
            let endian = if *order == ByteOrder::Big {
                "big"
            } else {
                "little"
            };
            json!({"name": "bytes", "configuration": {"endian": endian}})
        }
        ArrayToBytes::Sharding(s) => render_sharding(s, dtype)?,
    });
    for codec in chain.bytes_to_bytes.iter().skip(usize::from(typed)) {
        codecs.push(to_v3_codec(codec.config(), encoded.item_size()));
    }
    Ok(codecs)
}

/// The `sharding_indexed` codec `shard` for items of `dtype`.
fn render_sharding(shard: &ShardingCodec, dtype: &DType) -> Result<Value> {
    let endian = if shard.index_endian == ByteOrder::Big {
        "big"
    } else {
        "little"
    };
    let mut index_codecs = vec![json!({"name": "bytes", "configuration": {"endian": endian}})];
    index_codecs.extend(
        shard
            .index_codecs
            .iter()
            .map(|c| to_v3_codec(c.config(), 8)),
    );
    Ok(json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": shard.chunk_shape,
        "codecs": render_chain(&shard.codecs, dtype)?,
        "index_codecs": index_codecs,
        "index_location": if shard.index_at_start { "start" } else { "end" },
    }}))
}

/// Renders an array's `zarr.json` with `attributes`.
pub fn render_array(meta: &ArrayMeta, attributes: &Map<String, Value>) -> Result<Vec<u8>> {
    let codecs = render_chain(&meta.codecs, &meta.dtype)?;
    let grid = match &meta.grid {
        ChunkGrid::Regular => {
            json!({"name": "regular", "configuration": {"chunk_shape": meta.chunks}})
        }
        ChunkGrid::Rectilinear(dims) => super::grid::render_rectilinear(dims),
    };
    let key_encoding = if meta.key_encoding.prefix {
        json!({"name": "default", "configuration": {"separator": meta.key_encoding.separator.to_string()}})
    } else {
        json!({"name": "v2", "configuration": {"separator": meta.key_encoding.separator.to_string()}})
    };
    let mut doc = Map::new();
    doc.insert("zarr_format".into(), 3.into());
    doc.insert("node_type".into(), "array".into());
    doc.insert("shape".into(), meta.shape.clone().into());
    doc.insert("data_type".into(), data_type_json(&meta.dtype.kind)?);
    doc.insert("chunk_grid".into(), grid);
    doc.insert("chunk_key_encoding".into(), key_encoding);
    doc.insert("fill_value".into(), render_fill(meta)?);
    doc.insert("codecs".into(), codecs.into());
    doc.insert("attributes".into(), Value::Object(attributes.clone()));
    if let Some(names) = &meta.dimension_names {
        doc.insert(
            "dimension_names".into(),
            names
                .iter()
                .map(|n| n.clone().map(Value::from).unwrap_or(Value::Null))
                .collect(),
        );
    }
    json::try_to_pretty(&Value::Object(doc), "the array metadata document")
}

/// Renders a group's `zarr.json` with `attributes`.
pub fn render_group(attributes: &Map<String, Value>) -> Vec<u8> {
    json::to_pretty(&json!({"zarr_format": 3, "node_type": "group", "attributes": attributes}))
}

/// Replaces the attributes of a `zarr.json` document, keeping every other field.
pub fn with_attributes(bytes: &[u8], attributes: &Map<String, Value>) -> Result<Vec<u8>> {
    let mut doc = json::parse(bytes)
        .map_err(|e| Error::Metadata(format!("zarr.json is not valid JSON: {e}")))?;
    let obj = doc
        .as_object_mut()
        .ok_or_else(|| Error::Metadata("zarr.json is not a JSON object".into()))?;
    obj.insert("attributes".into(), Value::Object(attributes.clone()));
    json::try_to_pretty(&doc, "the metadata document")
}
