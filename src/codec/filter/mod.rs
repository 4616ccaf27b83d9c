//! Filters: the array-aware stages numcodecs applies to a chunk before its compressor
//! (v2 `filters`, v3 `numcodecs.*` array-to-array codecs). Each filter is built for the
//! data type it receives — the array's, or the previous filter's output — and knows the
//! type and size of what it produces, so decoded sizes always follow from the chunk's
//! item count and never from stored data.
//!
//! Write: filters encode in order, then the compressors. Read: the compressors decode,
//! then the filters in reverse order.

mod bits;
mod categorize;
mod num;
mod numeric;

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
    /// Encodes `data` (a whole number of input items).
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>>;
    /// Decodes `data` into `out`, which has exactly the decoded size; encoded data of any
    /// size but `encoded_len(out.len())` is an error.
    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()>;
    /// Whether Zarr v3 places it before the `bytes` codec (array-to-array) rather than
    /// after it (bytes-to-bytes: checksums and shuffle).
    fn array_to_array(&self) -> bool {
        true
    }
    /// Whether it stands for no metadata entry: the byte-order change of Zarr v3's `bytes`
    /// codec after array-to-array filters whose output has the other byte order.
    fn implicit(&self) -> bool {
        false
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

/// Builds a v2 filter list (`null`, or a list of numcodecs configurations) for an array of
/// `dtype`, checking each filter against the type it receives.
pub fn chain_from_json(filters: &Value, dtype: &DType) -> Result<Vec<FilterRef>> {
    match filters {
        Value::Null => Ok(Vec::new()),
        Value::Array(list) => {
            let mut input = dtype.clone();
            let mut out = Vec::with_capacity(list.len());
            for (i, config) in list.iter().enumerate() {
                let config = config.as_object().ok_or_else(|| {
                    Error::Metadata(format!("filters[{i}] is not an object: {config}"))
                })?;
                let filter = from_config(config, &input)?;
                input = filter.encoded_dtype();
                out.push(filter);
            }
            Ok(out)
        }
        other => Err(Error::Metadata(format!(
            "filters must be a list or null, not {other}"
        ))),
    }
}

/// For Zarr v3: adds to `filters` the byte-order change the `bytes` codec makes when the
/// array-to-array filters (those before any checksum or shuffle) produce multi-byte items
/// in the other order than `order`.
pub fn with_byte_order(
    mut filters: Vec<FilterRef>,
    dtype: &DType,
    order: ByteOrder,
) -> Result<Vec<FilterRef>> {
    let at = filters
        .iter()
        .position(|f| !f.array_to_array())
        .unwrap_or(filters.len());
    let out = output_dtype(&filters[..at], dtype);
    if at > 0 && out.item_size() > 1 && out.order != order && order != ByteOrder::NotApplicable {
        filters.insert(at, Arc::new(numeric::Numeric::byte_order(&out, order)?));
    }
    Ok(filters)
}

/// The data type after every filter of `filters` has encoded data of `dtype`.
pub fn output_dtype(filters: &[FilterRef], dtype: &DType) -> DType {
    filters
        .last()
        .map_or_else(|| dtype.clone(), |f| f.encoded_dtype())
}

/// Builds one filter from its numcodecs configuration for data of type `input`.
pub fn from_config(config: &Map<String, Value>, input: &DType) -> Result<FilterRef> {
    let id = config.get("id").and_then(Value::as_str).ok_or_else(|| {
        Error::Metadata(format!(
            "filter configuration {} has no string \"id\"",
            Value::Object(config.clone())
        ))
    })?;
    let cfg = Cfg { id, map: config };
    Ok(match id {
        "delta" | "fixedscaleoffset" | "quantize" | "astype" => {
            Arc::new(numeric::Numeric::from_config(&cfg, input)?)
        }
        "bitround" => Arc::new(bits::BitRound::from_config(&cfg, input)?),
        "packbits" => Arc::new(bits::PackBits::from_config(&cfg, input)?),
        "categorize" => {
            let filter = Categorize::from_config(config)?;
            filter.check_input(input)?;
            Arc::new(filter)
        }
        _ if codec::SUPPORTED.contains(&id) => {
            let codec = codec::from_config(config, input.item_size())?;
            if codec.encoded_len(0).is_none() {
                return Err(Error::Unsupported(format!(
                    "codec {id:?} as a filter is not supported (filters may be checksums, shuffle and array filters; use it as the compressor)"
                )));
            }
            Arc::new(BytesFilter { codec })
        }
        other => {
            return Err(Error::CodecUnsupported(format!(
                "filter id {other:?} is not supported"
            )))
        }
    })
}

/// A bytes-to-bytes codec with a size known from its input (checksums, shuffle) used as a
/// filter; its output is bytes (`|u1`), as numcodecs returns.
#[derive(Debug)]
struct BytesFilter {
    codec: CodecRef,
}

impl Filter for BytesFilter {
    fn config(&self) -> Map<String, Value> {
        self.codec.config()
    }
    fn encoded_dtype(&self) -> DType {
        DType::new(DataKind::UInt(1), ByteOrder::NotApplicable)
    }
    fn encoded_len(&self, len: usize) -> usize {
        self.codec.encoded_len(len).expect("checked when built")
    }
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        self.codec.encode(data)
    }
    fn decode_into(&self, data: &[u8], out: &mut [u8]) -> Result<()> {
        self.codec.decode_into(data, out)
    }
    fn array_to_array(&self) -> bool {
        false
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
