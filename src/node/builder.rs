//! The array builder: creation settings with zarr-python 2's defaults, turned into
//! [`ArrayMeta`] and an [`Array`].

use super::{cf, Array, Mode, DIMENSIONS_KEY};
use crate::codec;
use crate::codec::chain::{ArrayToBytes, Chain, ShardingCodec};
use crate::codec::filter;
use crate::dtype::{ByteOrder, DType, DataKind, ElementType};
use crate::error::{Error, Result};
use crate::meta::fill::{parse_fill, FillValue};
use crate::meta::{ArrayMeta, ChunkGrid, DimEdges, Format, KeyEncoding, Order};
use crate::store::Store;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// How the fill value was given.
#[derive(Debug, Clone)]
enum FillSpec {
    /// No fill value given: in v2, NaN for floats and `null` (no missing value) for other
    /// types, strings included, as xarray writes (xarray masks a v2 fill value, so `""`
    /// would turn empty strings into missing ones); in v3, 0 (or `""`), which xarray does
    /// not mask.
    Default,
    /// A metadata JSON value.
    Json(Value),
    /// One element's native bytes of the given element type.
    Native(ElementType, Vec<u8>),
    /// A CF missing value (see [`ArrayBuilder::missing_value`]).
    Missing(f64),
}

/// Settings for a new array. The format is that of the group above the new array (Zarr v3
/// at the top of a store) unless [`ArrayBuilder::zarr_format`] chooses. Other defaults:
/// chunk shape guessed from the shape (zarr-python's guess), C order, the fill value xarray
/// writes (v2: NaN for floats, `null` for other types, strings included; v3: 0, or `""` for
/// strings); v3: chunk keys `c/0/1`; v2: `.` separator; both: blosc zstd level 1 with byte
/// shuffle in 1 MiB blocks ([`Format::default_compressor`](crate::meta::Format::default_compressor)).
#[derive(Debug, Clone)]
pub struct ArrayBuilder {
    shape: Vec<u64>,
    dtype: DType,
    chunks: Option<Vec<u64>>,
    /// Explicit chunk edges per dimension (a rectilinear grid when any is set).
    edges: Vec<Option<DimEdges>>,
    fill: FillSpec,
    order: Order,
    permutation: Option<Vec<usize>>,
    separator: Option<char>,
    compressor: Option<Value>,
    filters: Value,
    attributes: Map<String, Value>,
    format: Option<Format>,
    dimension_names: Option<Vec<Option<String>>>,
    shard_shape: Vec<Vec<u64>>,
    v2_chunk_keys: bool,
    shard_index: ShardIndex,
}

/// Where a shard's index lies and whether a checksum protects it.
#[derive(Debug, Clone, Copy)]
struct ShardIndex {
    at_start: bool,
    checksum: bool,
}

impl ArrayBuilder {
    /// A builder for an array of `shape` and element type `dtype` (native byte order).
    /// [`ElementType::Raw`] has no size of its own: it starts as `|V1` until
    /// [`ArrayBuilder::dtype_name`] or [`ArrayBuilder::dtype`] sets the real type.
    pub fn new(shape: Vec<u64>, dtype: ElementType) -> Self {
        ArrayBuilder {
            shape,
            dtype: dtype
                .to_dtype(ByteOrder::NATIVE)
                .unwrap_or_else(|| DType::new(DataKind::Raw(1), ByteOrder::NotApplicable)),
            chunks: None,
            edges: Vec::new(),
            fill: FillSpec::Default,
            order: Order::C,
            permutation: None,
            separator: None,
            compressor: None,
            filters: Value::Null,
            attributes: Map::new(),
            format: None,
            dimension_names: None,
            shard_shape: Vec::new(),
            v2_chunk_keys: false,
            shard_index: ShardIndex {
                at_start: false,
                checksum: true,
            },
        }
    }

    /// Sets the stored type from its name: a numpy type string (`">f8"`, `"<M8[ns]"`,
    /// `"|S8"`, `"<U4"`, `"|V16"`), a Zarr v3 name (`"float32"`, `"r16"`, `"string"`,
    /// `"bytes"`), a structured type as its v2 JSON field list (`[["x", "<f4"], …]`), or an
    /// object codec configuration (`{"id": "vlen-array", "dtype": "<i4"}`).
    pub fn dtype_name(&mut self, name: &str) -> Result<&mut Self> {
        self.dtype = crate::dtype::by_name(name).map_err(as_invalid_arg)?;
        Ok(self)
    }

    /// Sets the stored type.
    pub fn dtype(&mut self, dtype: DType) -> &mut Self {
        self.dtype = dtype;
        self
    }

    /// Sets the chunk shape.
    pub fn chunks(&mut self, chunks: Vec<u64>) -> &mut Self {
        self.chunks = Some(chunks);
        self
    }

    /// Gives dimension `dim` the chunk edge lengths `edges` (each ≥ 1, summing to at least
    /// the extent): the array gets a rectilinear chunk grid (Zarr v3 only), whose other
    /// dimensions keep one chunk length (the chunk shape's). When sharded, the edges are the
    /// shards' (each a multiple of the inner chunk shape).
    pub fn chunk_edges(&mut self, dim: usize, edges: &[u64]) -> Result<&mut Self> {
        if dim >= self.shape.len() {
            return Err(Error::InvalidArg(format!(
                "dimension {dim} is not below the rank {}",
                self.shape.len()
            )));
        }
        if edges.len() > crate::meta::grid::MAX_GRID_ENTRIES {
            return Err(Error::InvalidArg(format!(
                "more than {} chunk edges",
                crate::meta::grid::MAX_GRID_ENTRIES
            )));
        }
        let dim_edges = DimEdges::from_runs(edges.iter().map(|&e| (e, 1))).ok_or_else(|| {
            Error::InvalidArg(format!(
                "chunk edges of dimension {dim} must be a non-empty list of lengths ≥ 1 whose \
                 sum fits 64 bits"
            ))
        })?;
        self.edges.resize(self.shape.len(), None);
        self.edges[dim] = Some(dim_edges);
        Ok(self)
    }

    /// Gives every dimension its edges (a rectilinear chunk grid, Zarr v3 only).
    pub fn chunk_grid(&mut self, dims: Vec<DimEdges>) -> &mut Self {
        self.edges = dims.into_iter().map(Some).collect();
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

    /// Makes `value` the array's CF missing value (`_FillValue`), written so that xarray,
    /// netCDF-C and CF readers mask it: the fill value in v2; in v3 the fill value and
    /// xarray's `_FillValue` attribute beside it. Replaces any fill value set before. A
    /// float type takes the nearest value it holds (see [`cf::encode`]); creation refuses a
    /// value beyond its range or one an integer type cannot hold exactly.
    pub fn missing_value(&mut self, value: f64) -> &mut Self {
        self.fill = FillSpec::Missing(value);
        self
    }

    /// Sets the element order inside chunks.
    pub fn order(&mut self, order: Order) -> &mut Self {
        self.order = order;
        self.permutation = None;
        self
    }

    /// Sets any order of the dimensions inside chunks (a v3 `transpose`): chunk dimension
    /// `k` is array dimension `permutation[k]`. v1 and v2 hold only C and F order.
    pub fn chunk_permutation(&mut self, permutation: Vec<usize>) -> &mut Self {
        self.permutation = Some(permutation);
        self
    }

    /// Sets the chunk key separator (`.` or `/`).
    pub fn separator(&mut self, separator: char) -> &mut Self {
        self.separator = Some(separator);
        self
    }

    /// Goes back to the chunk key encoding's own separator.
    pub fn default_separator(&mut self) -> &mut Self {
        self.separator = None;
        self
    }

    /// Sets the compressor configuration (`null` for none), or a list of them: Zarr v3's
    /// bytes → bytes codecs in the order they encode (`[{"id": "zstd"}, {"id": "crc32c"}]`;
    /// v2 holds one). Each is in numcodecs' form or in Zarr v3's
    /// (`{"name": "zstd", "configuration": {"level": 3}}`), for any format.
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

    /// Sets the format version: 2 or 3 (see [`ArrayBuilder`] for the default and the
    /// defaults each version brings), or [`DRAFT_NUMBER`](crate::meta::DRAFT_NUMBER) and
    /// [`DRAFT_ZARR_PYTHON_NUMBER`](crate::meta::DRAFT_ZARR_PYTHON_NUMBER) for the 2022 draft
    /// layout with its own keys or zarr-python 2.18's (chunk keys `c0/1`).
    pub fn zarr_format(&mut self, version: i32) -> Result<&mut Self> {
        self.format = Some(Format::from_number(version.into())?);
        Ok(self)
    }

    /// Stores chunks grouped in shards of `shape` (a multiple of the chunk shape; Zarr v3
    /// only): one object per shard with an index at its end, as zarr-python 3 writes.
    pub fn shard_shape(&mut self, shape: Vec<u64>) -> &mut Self {
        self.shard_shape = vec![shape];
        self
    }

    /// Nests one more level of sharding inside the shards set so far (nested
    /// `sharding_indexed`): the shards' units become inner shards of `shape`, which must
    /// divide the enclosing shard shape and be a multiple of the chunk shape.
    pub fn inner_shard_shape(&mut self, shape: Vec<u64>) -> &mut Self {
        self.shard_shape.push(shape);
        self
    }

    /// Zarr v3 arrays with the `v2` chunk key encoding (keys `0.1`, or `0/1` with the `/`
    /// separator, without the `c` prefix), as zarr-python 3 writes when asked; the default is
    /// the `default` encoding (`c/0/1`). Arrays of other formats keep their own keys.
    pub fn v2_chunk_keys(&mut self, v2: bool) -> &mut Self {
        self.v2_chunk_keys = v2;
        self
    }

    /// Where the index of every shard lies (at its start, or at its end as zarr-python
    /// writes by default) and whether a `crc32c` checksum follows it (the default).
    pub fn shard_index(&mut self, at_start: bool, checksum: bool) -> &mut Self {
        self.shard_index = ShardIndex { at_start, checksum };
        self
    }

    /// Sets the dimension names, one per dimension: in v3 metadata (`None` for an unnamed
    /// dimension), in other formats the `_ARRAY_DIMENSIONS` attribute xarray reads, where
    /// every dimension needs a name.
    pub fn dimension_names(&mut self, names: Vec<Option<String>>) -> &mut Self {
        self.dimension_names = Some(names);
        self
    }

    /// The metadata these settings describe, in the chosen format (v3 when none was chosen).
    pub fn metadata(&self) -> Result<ArrayMeta> {
        self.metadata_as(self.format.unwrap_or(Format::V3))
    }

    /// The metadata these settings describe in `format`.
    fn metadata_as(&self, format: Format) -> Result<ArrayMeta> {
        let item_size = self.dtype.item_size();
        // numpy's object items are pointers: zarr-python guesses with 8 bytes.
        let guess_size = if self.dtype.is_variable() {
            8
        } else {
            item_size
        };
        let chunks = self
            .chunks
            .clone()
            .unwrap_or_else(|| guess_chunks(&self.shape, guess_size));
        let fill_value: FillValue = match &self.fill {
            FillSpec::Default if !format.requires_fill() => match self.dtype.kind {
                DataKind::Float(_) => parse_fill(&json!("NaN"), &self.dtype)?,
                _ => None,
            },
            FillSpec::Default => match self.dtype.kind {
                DataKind::String | DataKind::Unicode(_) => parse_fill(&json!(""), &self.dtype)?,
                _ => parse_fill(&json!(0), &self.dtype)?,
            },
            FillSpec::Missing(v) => Some(cf::encode(*v, &self.dtype, format, "new array")?.fill),
            // A record's fill value may be an object of field values (the v3 struct form).
            FillSpec::Json(v @ Value::Object(_)) => {
                crate::meta::v3::parse_fill(v, &self.dtype).map_err(invalid_fill)?
            }
            FillSpec::Json(v) => parse_fill(v, &self.dtype).map_err(invalid_fill)?,
            FillSpec::Native(elem, bytes) => {
                if *elem != self.dtype.element_type() {
                    return Err(Error::DtypeMismatch(format!(
                        "fill value of type {} for an array of {}",
                        elem.name(),
                        self.dtype.element_type().name()
                    )));
                }
                if self.dtype.kind == DataKind::String {
                    std::str::from_utf8(bytes).map_err(|e| {
                        Error::InvalidArg(format!("fill value is not valid UTF-8: {e}"))
                    })?;
                } else if bytes.len() != item_size && !self.dtype.is_variable() {
                    return Err(Error::BufferSize(format!(
                        "fill value has {} bytes, the element type has {item_size}",
                        bytes.len()
                    )));
                }
                Some(bytes.clone())
            }
        };
        let default_compressor = format.default_compressor();
        let filters = match &self.filters {
            list @ (Value::Null | Value::Array(_)) => {
                filter::chain_from_json(list, &self.dtype, filter::Forms::AlsoV3)
                    .map_err(as_invalid_arg)?
            }
            other => {
                return Err(Error::InvalidArg(format!(
                    "filters {other} are not a list or null"
                )))
            }
        };
        // The compressor receives what the last filter produces.
        let encoded = match filters.1.is_empty() {
            true => filter::output_dtype(&filters.0, &self.dtype),
            false => DType::new(DataKind::UInt(1), ByteOrder::NotApplicable),
        };
        let codec_item_size = encoded.item_size();
        let compressor = |config: &Value| match config {
            Value::Object(config) => match crate::meta::v3::bytes_codec_as_v2(config) {
                Some(v2) => v2.and_then(|v2| codec::from_config(&v2, codec_item_size)),
                None => codec::from_config(config, codec_item_size),
            }
            .map_err(as_invalid_arg),
            other => Err(Error::InvalidArg(format!(
                "compressor {other} is not an object, a list of objects or null"
            ))),
        };
        let compressors = match self.compressor.as_ref().unwrap_or(&default_compressor) {
            Value::Null => Vec::new(),
            Value::Array(list) => list.iter().map(compressor).collect::<Result<_>>()?,
            config => vec![compressor(config)?],
        };
        if compressors.len() > 1 && !format.is_v3() {
            return Err(Error::InvalidArg(format!(
                "Zarr format {} holds one compressor; a list of {} needs Zarr v3",
                format.number(),
                compressors.len()
            )));
        }
        if format != Format::V3 && crate::meta::fill::has_other_nan(&fill_value, &self.dtype) {
            return Err(Error::InvalidArg(format!(
                "fill value is a NaN with a payload, which only Zarr v3 metadata can hold (as \
                 hex bits); format {} writes every NaN as \"NaN\"",
                format.number()
            )));
        }
        if let (Some((bits, signed)), Some(bytes)) = (self.dtype.narrow_bits(), &fill_value) {
            let v = bytes[0];
            let canonical = if signed {
                (((v << (8 - bits)) as i8) >> (8 - bits)) as u8 == v
            } else {
                v >> bits == 0
            };
            if !canonical {
                return Err(Error::InvalidArg(format!(
                    "fill value byte {v:#04x} is not a {} value",
                    self.dtype.element_type().name()
                )));
            }
        }
        // Zarr v3 has no null fill value: zero stands for "unset".
        let fill_value = match fill_value {
            None if format.requires_fill() => {
                Some(crate::error::try_zeroed(item_size, "the fill value")?)
            }
            fill => fill,
        };
        if let Some(names) = &self.dimension_names {
            if names.len() != self.shape.len() {
                return Err(Error::InvalidArg(format!(
                    "{} dimension names for an array of rank {}",
                    names.len(),
                    self.shape.len()
                )));
            }
            if !format.is_v3() && names.iter().any(Option::is_none) {
                return Err(Error::InvalidArg(format!(
                    "a Zarr v{} array keeps its dimension names in {DIMENSIONS_KEY}, where \
                     every dimension needs a name",
                    format.number()
                )));
            }
        }
        let rank = self.shape.len();
        let transpose = match &self.permutation {
            Some(p) => {
                let mut seen = p.clone();
                seen.sort_unstable();
                if !seen.iter().copied().eq(0..rank) {
                    return Err(Error::InvalidArg(format!(
                        "chunk permutation {p:?} is not a permutation of the {rank} dimensions"
                    )));
                }
                (!p.iter().copied().eq(0..rank)).then(|| p.clone())
            }
            None => self.order.transpose(rank),
        };
        let mut codecs = Chain::from_v2(transpose, filters, compressors, &self.dtype);
        // Zarr v3's `bytes` codec stores items in the array's byte order, as zarr-python
        // writes it, whatever order the filters produce.
        if format.is_v3()
            && !self.dtype.is_variable()
            && self.dtype.order != ByteOrder::NotApplicable
        {
            codecs.array_to_bytes = ArrayToBytes::Bytes(self.dtype.order);
        }
        // Sharding levels wrap the chain from the innermost out.
        if !self.shard_shape.is_empty() && !format.is_v3() {
            return Err(Error::InvalidArg("sharding needs Zarr format 3".into()));
        }
        let key_encoding = match (self.v2_chunk_keys, format.is_v3()) {
            (false, _) => format.key_encoding(self.separator),
            (true, true) => KeyEncoding::v2(self.separator.unwrap_or('.')),
            (true, false) => {
                return Err(Error::InvalidArg(format!(
                    "the v2 chunk key encoding is a Zarr v3 setting; format {} has its own keys",
                    format.number()
                )))
            }
        };
        let mut chunks = chunks;
        for shape in self.shard_shape.iter().rev() {
            let sharding = ShardingCodec {
                chunk_shape: std::mem::replace(&mut chunks, shape.clone()),
                codecs,
                index_codecs: match self.shard_index.checksum {
                    true => vec![codec::from_config(
                        json!({"id": "crc32c"}).as_object().expect("an object"),
                        8,
                    )?],
                    false => Vec::new(),
                },
                index_endian: ByteOrder::Little,
                index_at_start: self.shard_index.at_start,
            };
            codecs = Chain {
                array_to_array: Vec::new(),
                array_to_bytes: ArrayToBytes::Sharding(Box::new(sharding)),
                bytes_to_bytes: Vec::new(),
            };
        }
        let mut meta = ArrayMeta {
            shape: self.shape.clone(),
            chunks,
            grid: ChunkGrid::Regular,
            dtype: self.dtype.clone(),
            fill_value,
            codecs,
            key_encoding,
            dimension_names: self.dimension_names.clone().filter(|_| format.is_v3()),
        };
        if self.edges.iter().any(Option::is_some) {
            if self.edges.len() != meta.rank() || meta.chunks.len() != meta.rank() {
                return Err(Error::InvalidArg(format!(
                    "chunk edges for {} dimensions but the shape has {}",
                    self.edges.len(),
                    meta.rank()
                )));
            }
            let dims = self
                .edges
                .iter()
                .zip(&meta.chunks)
                .map(|(e, &c)| e.clone().unwrap_or(DimEdges::Regular(c)))
                .collect();
            meta.set_rectilinear(dims);
        }
        meta.validate().map_err(as_invalid_arg)?;
        Ok(meta)
    }

    /// Creates the array at `path` with mode `w`, `w-` or `a`.
    pub fn create(&self, store: Arc<dyn Store>, path: &str, mode: Mode) -> Result<Array> {
        let format = match self.format {
            Some(format) => format,
            None => super::inherited_format(store.as_ref(), &crate::store::node_path(path)?)?,
        };
        let mut attributes = self.attributes.clone();
        let missing = match self.fill {
            FillSpec::Missing(v) => {
                let encoded = cf::encode(v, &self.dtype, format, path)?;
                encoded.apply(&mut attributes);
                Some((v, encoded))
            }
            _ => None,
        };
        // Outside v3, dimension names are xarray's attribute (metadata_as checks them).
        if let (Some(names), false) = (&self.dimension_names, format.is_v3()) {
            let names = names.iter().flatten().map(|n| Value::from(n.as_str()));
            attributes.insert(DIMENSIONS_KEY.into(), Value::Array(names.collect()));
        }
        // xarray needs the (empty) dimension list of a v2 scalar.
        if format == Format::V2 && self.shape.is_empty() {
            attributes
                .entry(DIMENSIONS_KEY)
                .or_insert_with(|| Value::Array(Vec::new()));
        }
        let array = Array::create(
            store,
            path,
            self.metadata_as(format)?,
            &attributes,
            mode,
            format,
        )?;
        if let Some((v, encoded)) = missing {
            encoded.notice_rounding(v, &self.dtype, path);
        }
        Ok(array)
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

/// A fill value the caller gave that does not parse is an invalid argument; memory that
/// cannot be had for it stays [`Error::NoMemory`].
fn invalid_fill(e: Error) -> Error {
    match e {
        Error::NoMemory(_) => e,
        e => Error::InvalidArg(e.to_string()),
    }
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
