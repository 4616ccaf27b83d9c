//! Filters: the array-aware stages numcodecs applies to a chunk before its compressor
//! (v2 `filters`, v3 `numcodecs.*` array-to-array codecs). Each filter is built for the
//! data type it receives — the array's, or the previous filter's output — and knows the
//! type and size of what it produces, so decoded sizes always follow from the chunk's
//! item count and never from stored data.
//!
//! They are the array→array stages of the codec chain ([`super::chain`]): write encodes
//! them in order before the array→bytes codec, read decodes them in reverse after it.
//! Besides numcodecs' filters, the array→array codecs registered in zarr-extensions
//! (`scale_offset`, `cast_value`, `bitround`, `reshape`: [`REGISTERED`]) are filters too,
//! and so is its `packbits` array→bytes codec, run as the last filter before a `bytes`
//! codec with nothing to do; they have no numcodecs form, so only Zarr v3 metadata holds
//! them.

mod bits;
mod cast_value;
mod categorize;
mod exact;
mod num;
mod numeric;
mod packbits;
mod reshape;
mod scale_offset;

use crate::codec::{self, CodecRef};
use crate::dtype::{ByteOrder, DType, DataKind};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::sync::Arc;

pub use categorize::Categorize;

/// One filter, built for the data type it receives.
pub trait Filter: Send + Sync + std::fmt::Debug {
    /// The full configuration, with `id` and every default filled in, as numcodecs'
    /// `get_config()` gives it.
    fn config(&self) -> Map<String, Value>;
    /// The data type of the encoded items.
    fn encoded_dtype(&self) -> DType;
    /// Bytes produced when encoding `len` bytes (a whole number of input items).
    fn encoded_len(&self, len: usize) -> usize;
    /// Encodes `data` (a whole number of input items) into `out`, replacing its contents
    /// (its capacity is reused).
    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()>;
    /// Encodes `data` into a new buffer.
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(data, &mut out)?;
        Ok(out)
    }
    /// Decodes `data` into `out`, which has exactly the decoded size; encoded data of any
    /// size but `encoded_len(out.len())` is an error.
    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()>;
    /// Whether it works item by item (so it commutes with a `transpose`); `delta` and
    /// `packbits` depend on the items' order, and `reshape` changes the shape.
    fn elementwise(&self) -> bool {
        true
    }
    /// Its Zarr v3 codec object (numcodecs' filters as `numcodecs.<id>`).
    fn v3_codec(&self) -> Value {
        let mut config = self.config();
        let id = config.shift_remove("id").unwrap_or_default();
        let id = id.as_str().unwrap_or_default();
        serde_json::json!({"name": format!("numcodecs.{id}"), "configuration": config})
    }
    /// Whether numcodecs has it, so that a v2 `filters` list can hold it.
    fn numcodecs(&self) -> bool {
        true
    }
    /// Whether it is an array→bytes codec of Zarr v3 (the registered `packbits`): it is
    /// then the last filter, and v3 metadata lists it in the `bytes` codec's place.
    fn array_to_bytes(&self) -> bool {
        false
    }
    /// The shape of a chunk after it, given the shape it receives (`reshape` changes it;
    /// an error when the configuration does not fit that shape).
    fn chunk_shape(&self, input: &[u64]) -> Result<Vec<u64>> {
        Ok(input.to_vec())
    }
    /// The rank of the chunks after it when it changes their shape (`reshape`), else
    /// `None`.
    fn reshaped_rank(&self) -> Option<usize> {
        None
    }
}

/// A shared filter.
pub type FilterRef = Arc<dyn Filter>;

/// The ids of the array-to-array filters this build supports (the bytes-to-bytes codecs
/// of [`codec::SUPPORTED`] with a size known from their input — checksums and shuffle —
/// may be filters too).
pub const SUPPORTED: [&str; 7] = [
    "delta",
    "fixedscaleoffset",
    "quantize",
    "bitround",
    "packbits",
    "categorize",
    "astype",
];

/// The array→array codecs registered in zarr-extensions, by their Zarr v3 names.
pub const REGISTERED: [&str; 4] = [
    scale_offset::NAME,
    cast_value::NAME,
    "bitround",
    reshape::NAME,
];

/// The array→bytes codecs registered in zarr-extensions that run as filters.
pub const REGISTERED_ARRAY_TO_BYTES: [&str; 1] = [packbits::NAME];

/// Whether `name` is a Zarr v3 codec that this build runs as a filter: one of
/// [`REGISTERED`] or [`REGISTERED_ARRAY_TO_BYTES`], or `numcodecs.<id>` of a filter.
pub fn is_v3_filter_name(name: &str) -> bool {
    REGISTERED.contains(&name)
        || REGISTERED_ARRAY_TO_BYTES.contains(&name)
        || name
            .strip_prefix("numcodecs.")
            .is_some_and(|id| SUPPORTED.contains(&id))
}

/// Builds a registered codec (one of [`REGISTERED`] or [`REGISTERED_ARRAY_TO_BYTES`]) from
/// its Zarr v3 configuration for data of type `input`.
pub fn from_v3(name: &str, config: &Map<String, Value>, input: &DType) -> Result<FilterRef> {
    Ok(match name {
        packbits::NAME => Arc::new(packbits::PackBits::from_v3(config, input)?),
        scale_offset::NAME => Arc::new(scale_offset::ScaleOffset::from_v3(config, input)?),
        cast_value::NAME => Arc::new(cast_value::CastValue::from_v3(config, input)?),
        "bitround" => Arc::new(bits::BitRound::from_v3(config, input)?),
        reshape::NAME => Arc::new(reshape::Reshape::from_v3(config, input)?),
        other => {
            return Err(Error::CodecUnsupported(format!(
                "array codec {other:?} is not supported"
            )))
        }
    })
}

/// Which forms a filter list may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forms {
    /// numcodecs configurations alone (v1, v2 and 2022-draft documents).
    Numcodecs,
    /// numcodecs configurations and Zarr v3 codec objects (`{"name": "scale_offset",
    /// "configuration": …}`; `numcodecs.<id>` names stand for numcodecs' filters), as a
    /// new array's settings may give them.
    AlsoV3,
}

/// Builds a v2 filter list (`null`, or a list of numcodecs configurations, and Zarr v3
/// codec objects when `forms` allows them) for an array of `dtype`, checking each filter
/// against the type it receives: the leading array filters, and the rest from the first
/// bytes-level filter (checksums, shuffle) on, as bytes→bytes codecs (an array filter among
/// them works on the bytes as its own type).
pub fn chain_from_json(
    filters: &Value,
    dtype: &DType,
    forms: Forms,
) -> Result<(Vec<FilterRef>, Vec<CodecRef>)> {
    let list = match filters {
        Value::Null => return Ok((Vec::new(), Vec::new())),
        Value::Array(list) => list,
        other => {
            return Err(Error::Metadata(format!(
                "filters must be a list or null, not {other}"
            )))
        }
    };
    let mut input = dtype.clone();
    let (mut array, mut bytes) = (Vec::new(), Vec::<CodecRef>::new());
    for (i, config) in list.iter().enumerate() {
        let config = config
            .as_object()
            .ok_or_else(|| Error::Metadata(format!("filters[{i}] is not an object: {config}")))?;
        let built = match v3_form(config) {
            Some((name, v3_config)) if forms == Forms::AlsoV3 => {
                match name.strip_prefix("numcodecs.") {
                    Some(id) => {
                        let mut config = v3_config.clone();
                        config.insert("id".into(), id.into());
                        from_config(&config, &input)?
                    }
                    None => Built::Array(from_v3(name, v3_config, &input)?),
                }
            }
            _ => from_config(config, &input)?,
        };
        match built {
            Built::Array(filter) if bytes.is_empty() => {
                input = filter.encoded_dtype();
                array.push(filter);
            }
            Built::Array(filter) if !filter.numcodecs() => {
                return Err(Error::Metadata(format!(
                    "filters[{i}]: the Zarr v3 codec {} must come before checksums and \
                     shuffle",
                    filter.v3_codec()
                )))
            }
            Built::Array(filter) => {
                input = filter.encoded_dtype();
                bytes.push(Arc::new(ListedAsFilter::Array(filter)));
            }
            Built::Bytes(codec) => {
                input = DType::new(DataKind::UInt(1), ByteOrder::NotApplicable);
                bytes.push(Arc::new(ListedAsFilter::Bytes(codec)));
            }
        }
    }
    Ok((array, bytes))
}

/// The name and configuration of a Zarr v3 codec object (`{"name": …, "configuration":
/// …}` without an `"id"`).
fn v3_form(config: &Map<String, Value>) -> Option<(&str, &Map<String, Value>)> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    if config.contains_key("id") {
        return None;
    }
    let name = config.get("name")?.as_str()?;
    match config.get("configuration") {
        None => Some((name, &EMPTY)),
        Some(Value::Object(c)) => Some((name, c)),
        Some(_) => None,
    }
}

/// The data type after `filters` have encoded data of `dtype`.
pub fn output_dtype(filters: &[FilterRef], dtype: &DType) -> DType {
    output_dtype_of(filters.iter(), dtype)
}

/// The data type after the filters of `filters` have encoded data of `dtype`.
pub fn output_dtype_of<'a>(
    filters: impl DoubleEndedIterator<Item = &'a FilterRef>,
    dtype: &DType,
) -> DType {
    filters
        .last()
        .map_or_else(|| dtype.clone(), |f| f.encoded_dtype())
}

/// What a v2 filter configuration builds.
pub enum Built {
    /// An array filter.
    Array(FilterRef),
    /// A bytes-level codec (checksum, shuffle).
    Bytes(CodecRef),
}

/// Builds one filter from its numcodecs configuration for data of type `input`.
pub fn from_config(config: &Map<String, Value>, input: &DType) -> Result<Built> {
    let id = config.get("id").and_then(Value::as_str).ok_or_else(|| {
        Error::Metadata(format!(
            "filter configuration {} has no string \"id\"",
            Value::Object(config.clone())
        ))
    })?;
    let cfg = Cfg { id, map: config };
    Ok(match id {
        "delta" | "fixedscaleoffset" | "quantize" | "astype" => {
            Built::Array(Arc::new(numeric::Numeric::from_config(&cfg, input)?))
        }
        "bitround" => Built::Array(Arc::new(bits::BitRound::from_config(&cfg, input)?)),
        "packbits" => Built::Array(Arc::new(bits::PackBits::from_config(&cfg, input)?)),
        "categorize" => {
            let filter = Categorize::from_config(config)?;
            filter.check_input(input)?;
            Built::Array(Arc::new(filter))
        }
        _ if codec::SUPPORTED.contains(&id) => {
            let codec = codec::from_config(config, input.item_size())?;
            if codec.encoded_len(0).is_none() {
                return Err(Error::Unsupported(format!(
                    "codec {id:?} as a filter is not supported (filters may be checksums, shuffle and array filters; use it as the compressor)"
                )));
            }
            Built::Bytes(codec)
        }
        other => {
            return Err(Error::CodecUnsupported(format!(
                "filter id {other:?} is not supported"
            )))
        }
    })
}

/// Whether the v2 `filters` entry `config` is a compressor: a codec whose output size
/// depends on the data (zlib, zstd, blosc, ...), which a chain of filters cannot hold.
pub fn is_compressor(config: &Value) -> bool {
    let Some(map) = config.as_object() else {
        return false;
    };
    map.get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| codec::SUPPORTED.contains(&id))
        && codec::from_config(map, 1).is_ok_and(|codec| codec.encoded_len(0).is_none())
}

/// A v2 `filters` entry placed among the bytes→bytes codecs: a bytes-level codec
/// (checksum, shuffle), or an array filter after one (numcodecs allows any order there),
/// which then works on the bytes as its own type. Either has a size known from its input.
#[derive(Debug)]
enum ListedAsFilter {
    Bytes(CodecRef),
    Array(FilterRef),
}

impl codec::Codec for ListedAsFilter {
    fn config(&self) -> Map<String, Value> {
        match self {
            ListedAsFilter::Bytes(c) => c.config(),
            ListedAsFilter::Array(f) => f.config(),
        }
    }
    fn encode_into(&self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        match self {
            ListedAsFilter::Bytes(c) => c.encode_into(data, out),
            ListedAsFilter::Array(f) => f.encode_into(data, out),
        }
    }
    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        match self {
            ListedAsFilter::Bytes(c) => c.decode_into(data, out),
            ListedAsFilter::Array(f) => f.decode_into(data, out),
        }
    }
    fn decoded_len(&self, data: &[u8]) -> Result<usize> {
        match self {
            ListedAsFilter::Bytes(c) => c.decoded_len(data),
            ListedAsFilter::Array(_) => Err(Error::Internal(
                "an array filter's decoded size follows from the chunk, not its data".into(),
            )),
        }
    }
    fn encoded_len(&self, len: usize) -> Option<usize> {
        match self {
            ListedAsFilter::Bytes(c) => c.encoded_len(len),
            ListedAsFilter::Array(f) => Some(f.encoded_len(len)),
        }
    }
    fn v2_filter(&self) -> bool {
        true
    }
}

/// Read access to one filter configuration, with errors naming the filter and key.
pub(crate) struct Cfg<'a> {
    id: &'a str,
    map: &'a Map<String, Value>,
}

impl Cfg<'_> {
    /// The value of a required key.
    fn required(&self, key: &str) -> Result<&Value> {
        match self.map.get(key) {
            None | Some(Value::Null) => Err(Error::Metadata(format!(
                "filter {:?}: missing required key {key:?}",
                self.id
            ))),
            Some(v) => Ok(v),
        }
    }

    /// A data type parameter (a numpy type string), or `None` when absent or null.
    fn dtype(&self, key: &str) -> Result<Option<DType>> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => parse_dtype(s)
                .map(Some)
                .map_err(|e| self.bad(key, &format!("a numeric numpy data type ({e})"))),
            Some(_) => Err(self.bad(key, "a numpy data type string")),
        }
    }

    /// An error saying that `key` must be `what`.
    fn bad(&self, key: &str, what: &str) -> Error {
        Error::Metadata(format!("filter {:?}: {key:?} must be {what}", self.id))
    }

    /// Checks that the type `key` names (`dtype`) is the type the filter receives.
    fn expect_input(&self, key: &str, dtype: &DType, input: &DType) -> Result<()> {
        if dtype != input {
            return Err(Error::Metadata(format!(
                "filter {:?}: {key:?} is {} but the data it receives is {}",
                self.id,
                dtype.to_v2(),
                input.to_v2()
            )));
        }
        Ok(())
    }
}

/// Parses a numpy data type string as filter configurations hold it: `"<f8"`, `"|u1"`,
/// without byte order (`"f8"`, this machine's), or by name (`"float64"`).
pub fn parse_dtype(text: &str) -> Result<DType> {
    if text.starts_with(['<', '>', '|', '=']) {
        return DType::parse_v2(text);
    }
    if let Some(dtype) = crate::dtype::v3_dtype(text) {
        return Ok(dtype);
    }
    DType::parse_v2(&format!("={text}"))
}

/// Whether `dtype` is a float type.
fn is_float(dtype: &DType) -> bool {
    matches!(dtype.kind, DataKind::Float(_))
}

/// The numcodecs-style form of a filter that keeps its configuration as given: `id`, then
/// the configuration's keys.
fn config_with_id(name: &str, config: &Map<String, Value>) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("id".into(), name.into());
    map.extend(config.clone());
    map
}

/// The Zarr v3 codec entry of `name` with `config`; an empty configuration is left out.
fn v3_entry(name: &str, config: &Map<String, Value>) -> Value {
    match config.is_empty() {
        true => serde_json::json!({"name": name}),
        false => serde_json::json!({"name": name, "configuration": config}),
    }
}

#[cfg(test)]
mod tests;

/// Copies `data` into `out` when they have the same size (filters that decode as is).
fn copy_exact(id: &str, data: &[u8], out: &mut [u8]) -> Result<()> {
    if data.len() != out.len() {
        return Err(Error::Codec(format!(
            "{id}: encoded data has {} bytes, expected {}",
            data.len(),
            out.len()
        )));
    }
    out.copy_from_slice(data);
    Ok(())
}
