//! The array builder: creation settings with zarr-python 2's defaults, turned into
//! [`ArrayMeta`] and an [`Array`].

use super::{Array, Mode};
use crate::codec;
use crate::error::{Error, Result};
use crate::filter;
use crate::meta::dtype::{DType, ElementType};
use crate::meta::fill::{parse_fill, FillValue};
use crate::meta::{ArrayMeta, Format, KeyEncoding, Order};
use crate::store::Store;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// How the fill value was given.
#[derive(Debug, Clone)]
enum FillSpec {
    /// zarr-python's default: 0.
    Default,
    /// A metadata JSON value.
    Json(Value),
    /// One element's native bytes of the given element type.
    Native(ElementType, Vec<u8>),
}

/// Settings for a new array. Defaults follow zarr-python 2's `zarr.create`: chunk shape
/// guessed from the shape, fill value 0, C order, `.` separator, blosc lz4 level 5 with
/// byte shuffle.
#[derive(Debug, Clone)]
pub struct ArrayBuilder {
    shape: Vec<u64>,
    dtype: DType,
    chunks: Option<Vec<u64>>,
    fill: FillSpec,
    order: Order,
    separator: Option<char>,
    compressor: Option<Value>,
    filters: Value,
    attributes: Map<String, Value>,
    format: Format,
    dimension_names: Option<Vec<Option<String>>>,
    shard_shape: Option<Vec<u64>>,
}

impl ArrayBuilder {
    /// A builder for an array of `shape` and element type `dtype` (native byte order).
    pub fn new(shape: Vec<u64>, dtype: ElementType) -> Self {
        ArrayBuilder {
            shape,
            dtype: dtype.to_dtype(crate::meta::dtype::ByteOrder::NATIVE),
            chunks: None,
            fill: FillSpec::Default,
            order: Order::C,
            separator: None,
            compressor: None,
            filters: Value::Null,
            attributes: Map::new(),
            format: Format::V2,
            dimension_names: None,
            shard_shape: None,
        }
    }

    /// Sets the stored type from its metadata name (`">f8"`, `"<M8[ns]"`, or a Zarr v3
    /// name such as `"float32"`).
    pub fn dtype_name(&mut self, name: &str) -> Result<&mut Self> {
        self.dtype = match ElementType::from_name(name) {
            Some(e) if !name.starts_with(['<', '>', '|', '=']) => {
                e.to_dtype(crate::meta::dtype::ByteOrder::NATIVE)
            }
            _ => DType::parse_v2(name).map_err(as_invalid_arg)?,
        };
        Ok(self)
    }

    /// Sets the chunk shape.
    pub fn chunks(&mut self, chunks: Vec<u64>) -> &mut Self {
        self.chunks = Some(chunks);
        self
    }

    /// Sets the fill value from metadata JSON (`0`, `"NaN"`, `null`, `[1.0, 2.0]`).
    pub fn fill_value_json(&mut self, value: Value) -> &mut Self {
        self.fill = FillSpec::Json(value);
        self
    }

    /// Sets the fill value from one element's native bytes.
    pub fn fill_value_bytes(&mut self, elem: ElementType, bytes: Vec<u8>) -> &mut Self {
        self.fill = FillSpec::Native(elem, bytes);
        self
    }

    /// Sets the element order inside chunks.
    pub fn order(&mut self, order: Order) -> &mut Self {
        self.order = order;
        self
    }

    /// Sets the chunk key separator (`.` or `/`).
    pub fn separator(&mut self, separator: char) -> &mut Self {
        self.separator = Some(separator);
        self
    }

    /// Sets the compressor configuration (`null` for none).
    pub fn compressor(&mut self, config: Value) -> &mut Self {
        self.compressor = Some(config);
        self
    }

    /// Sets the filter list (`null` or `[]` for none).
    pub fn filters(&mut self, filters: Value) -> &mut Self {
        self.filters = filters;
        self
    }

    /// Sets the attributes written with the array.
    pub fn attributes(&mut self, attributes: Map<String, Value>) -> &mut Self {
        self.attributes = attributes;
        self
    }

    /// Sets the format version: 2 (the default in this release) or 3. Version 3 changes
    /// the defaults that were not set: chunk keys `c/0/1` and zstd level 0 (zarr-python 3's).
    pub fn zarr_format(&mut self, version: u8) -> Result<&mut Self> {
        self.format = match version {
            2 => Format::V2,
            3 => Format::V3,
            _ => {
                return Err(Error::InvalidArg(format!(
                    "Zarr format {version} does not exist (use 2 or 3)"
                )))
            }
        };
        Ok(self)
    }

    /// Stores chunks grouped in shards of `shape` (a multiple of the chunk shape; Zarr v3
    /// only): one object per shard with an index at its end, as zarr-python 3 writes.
    pub fn shard_shape(&mut self, shape: Vec<u64>) -> &mut Self {
        self.shard_shape = Some(shape);
        self
    }

    /// Sets v3 dimension names (`None` for an unnamed dimension); for v2 arrays use the
    /// `_ARRAY_DIMENSIONS` attribute.
    pub fn dimension_names(&mut self, names: Vec<Option<String>>) -> &mut Self {
        self.dimension_names = Some(names);
        self
    }

    /// The metadata these settings describe.
    pub fn metadata(&self) -> Result<ArrayMeta> {
        let item_size = self.dtype.item_size();
        let chunks = self
            .chunks
            .clone()
            .unwrap_or_else(|| guess_chunks(&self.shape, item_size));
        let fill_value: FillValue = match &self.fill {
            FillSpec::Default => parse_fill(&json!(0), &self.dtype)?,
            FillSpec::Json(v) => {
                parse_fill(v, &self.dtype).map_err(|e| Error::InvalidArg(e.to_string()))?
            }
            FillSpec::Native(elem, bytes) => {
                if *elem != self.dtype.element_type() {
                    return Err(Error::DtypeMismatch(format!(
                        "fill value of type {} for an array of {}",
                        elem.name(),
                        self.dtype.element_type().name()
                    )));
                }
                if bytes.len() != item_size {
                    return Err(Error::BufferSize(format!(
                        "fill value has {} bytes, the element type has {item_size}",
                        bytes.len()
                    )));
                }
                Some(bytes.clone())
            }
        };
        let default_compressor = match self.format {
            Format::V3 => json!({"id": "zstd", "level": 0, "checksum": false}),
            _ => json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}),
        };
        let filters = match &self.filters {
            list @ (Value::Null | Value::Array(_)) => {
                filter::chain_from_json(list, &self.dtype).map_err(as_invalid_arg)?
            }
            other => {
                return Err(Error::InvalidArg(format!(
                    "filters {other} are not a list or null"
                )))
            }
        };
        // Zarr v3's `bytes` codec stores items in the array's byte order, as zarr-python
        // writes it, whatever order the filters produce.
        let filters = match self.format {
            Format::V3 => filter::with_byte_order(filters, &self.dtype, self.dtype.order)
                .map_err(as_invalid_arg)?,
            _ => filters,
        };
        // The compressor receives what the last filter produces.
        let codec_item_size = filter::output_dtype(&filters, &self.dtype).item_size();
        let compressors = match self.compressor.as_ref().unwrap_or(&default_compressor) {
            Value::Null => Vec::new(),
            Value::Object(config) => {
                vec![codec::from_config(config, codec_item_size).map_err(as_invalid_arg)?]
            }
            other => {
                return Err(Error::InvalidArg(format!(
                    "compressor {other} is not an object or null"
                )))
            }
        };
        // Zarr v3 has no null fill value: zero stands for "unset".
        let fill_value = match (self.format, fill_value) {
            (Format::V3, None) => Some(vec![0u8; item_size]),
            (_, fill) => fill,
        };
        if self.dimension_names.is_some() && self.format != Format::V3 {
            return Err(Error::InvalidArg(
                "dimension names belong to Zarr v3 metadata; v2 arrays use the _ARRAY_DIMENSIONS attribute".into(),
            ));
        }
        let meta = ArrayMeta {
            shape: self.shape.clone(),
            chunks,
            dtype: self.dtype.clone(),
            fill_value,
            order: self.order,
            filters,
            compressors,
            key_encoding: match self.format {
                Format::V3 => KeyEncoding {
                    prefix: true,
                    separator: self.separator.unwrap_or('/'),
                },
                _ => KeyEncoding::v2(self.separator.unwrap_or('.')),
            },
            dimension_names: self.dimension_names.clone(),
            shard: match &self.shard_shape {
                None => None,
                Some(_) if self.format != Format::V3 => {
                    return Err(Error::InvalidArg("sharding needs Zarr format 3".into()))
                }
                Some(shape) => Some(crate::meta::Sharding {
                    shape: shape.clone(),
                    index_codecs: vec![codec::from_config(
                        json!({"id": "crc32c"}).as_object().expect("an object"),
                        8,
                    )?],
                    index_endian: crate::meta::dtype::ByteOrder::Little,
                    index_at_start: false,
                }),
            },
        };
        meta.validate().map_err(as_invalid_arg)?;
        Ok(meta)
    }

    /// Creates the array at `path` with mode `w`, `w-` or `a`.
    pub fn create(&self, store: Arc<dyn Store>, path: &str, mode: Mode) -> Result<Array> {
        Array::create(
            store,
            path,
            self.metadata()?,
            &self.attributes,
            mode,
            self.format,
        )
    }
}

/// A metadata error in settings the caller gave is an invalid argument; other errors (an
/// unsupported type or codec) keep their kind.
fn as_invalid_arg(e: Error) -> Error {
    match e {
        Error::Metadata(m) => Error::InvalidArg(m),
        other => other,
    }
}

/// zarr-python 2's chunk shape guess: halve dimensions in turn until a chunk is near a
/// target size that grows with the array (between 128 KiB and 64 MiB).
pub fn guess_chunks(shape: &[u64], item_size: usize) -> Vec<u64> {
    const BASE: f64 = 256.0 * 1024.0;
    const MIN: f64 = 128.0 * 1024.0;
    const MAX: f64 = 64.0 * 1024.0 * 1024.0;
    let ndims = shape.len();
    let mut chunks: Vec<f64> = shape.iter().map(|&s| (s.max(1)) as f64).collect();
    if ndims == 0 {
        return Vec::new();
    }
    let typesize = item_size as f64;
    let dset_size = chunks.iter().product::<f64>() * typesize;
    let target = (BASE * 2f64.powf((dset_size / (1024.0 * 1024.0)).log10())).clamp(MIN, MAX);
    let mut idx = 0;
    loop {
        let chunk_bytes = chunks.iter().product::<f64>() * typesize;
        if (chunk_bytes < target || (chunk_bytes - target).abs() / target < 0.5)
            && chunk_bytes < MAX
        {
            break;
        }
        if chunks.iter().product::<f64>() == 1.0 {
            break;
        }
        chunks[idx % ndims] = (chunks[idx % ndims] / 2.0).ceil();
        idx += 1;
    }
    chunks.into_iter().map(|c| c as u64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_guess_matches_zarr_python() {
        // Values from zarr-python 2.18's guess_chunks.
        assert_eq!(guess_chunks(&[10000, 10000], 4), vec![625, 625]);
        assert_eq!(guess_chunks(&[100], 8), vec![100]);
        assert_eq!(guess_chunks(&[0, 5], 1), vec![1, 5]);
        assert_eq!(guess_chunks(&[1024, 1024, 256], 4), vec![128, 128, 32]);
        assert_eq!(guess_chunks(&[7, 1_000_000], 2), vec![1, 250_000]);
        assert_eq!(guess_chunks(&[], 8), Vec::<u64>::new());
    }
}
