//! Metadata: the one internal model of an array ([`ArrayMeta`]) and the per-version
//! documents that parse into and render from it.

pub mod doc;
pub mod draft;
pub mod fill;
pub mod json;
pub mod v1;
pub mod v2;
pub mod v3;

use crate::codec::filter::FilterRef;
use crate::codec::CodecRef;
use crate::dtype::DType;
use crate::error::{checked_product, to_usize, Error, Result};
use crate::store::join_key;
use fill::FillValue;

/// A metadata format version, with its document keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Zarr storage specification version 1 (`meta`, `attrs`).
    V1,
    /// Zarr storage specification version 2 (`.zarray`, `.zattrs`).
    V2,
    /// Zarr core specification version 3.0 (`zarr.json`, attributes inside it).
    V3,
    /// The 2022 draft of v3 (`zarr.json` entry point, `meta/…` documents, `data/…` chunks)
    /// in one of its key schemes.
    Draft(draft::Scheme),
}

/// The format number of the 2022 draft layout with the draft's own keys (`meta/…`).
pub const DRAFT_NUMBER: i32 = 30;
/// The format number of the 2022 draft layout with zarr-python 2.18's keys (`meta/root/…`).
pub const DRAFT_ZARR_PYTHON_NUMBER: i32 = 31;

impl Format {
    /// The format's version number (the draft layouts: [`DRAFT_NUMBER`] and
    /// [`DRAFT_ZARR_PYTHON_NUMBER`]).
    pub fn number(self) -> i32 {
        match self {
            Format::V1 => 1,
            Format::V2 => 2,
            Format::V3 => 3,
            Format::Draft(draft::Scheme::Draft) => DRAFT_NUMBER,
            Format::Draft(draft::Scheme::ZarrPython) => DRAFT_ZARR_PYTHON_NUMBER,
        }
    }

    /// The key of the metadata document of the array at `path`.
    pub fn array_key(self, path: &str) -> String {
        match self {
            Format::V1 => join_key(path, v1::ARRAY_KEY),
            Format::V2 => join_key(path, v2::ARRAY_KEY),
            Format::V3 => join_key(path, v3::NODE_KEY),
            Format::Draft(s) => s.doc_key(path, draft::Kind::Array),
        }
    }

    /// The key of the attributes document of the array at `path` (the array's own
    /// document in v3 and the draft).
    pub fn attrs_key(self, path: &str) -> String {
        match self {
            Format::V1 => join_key(path, v1::ATTRS_KEY),
            Format::V2 => join_key(path, v2::ATTRS_KEY),
            _ => self.array_key(path),
        }
    }

    /// The key of the attributes document of the group at `path`.
    pub fn group_attrs_key(self, path: &str) -> String {
        match self {
            Format::Draft(s) => s.doc_key(path, draft::Kind::Group),
            _ => self.attrs_key(path),
        }
    }

    /// The key chunk keys of the array at `path` are joined to (the path itself, or the
    /// draft's `data/…` form).
    pub fn data_base(self, path: &str) -> String {
        match self {
            Format::Draft(s) => s.data_base(path),
            _ => path.to_string(),
        }
    }

    /// Parses an array metadata document of this format.
    pub fn parse_array(self, bytes: &[u8]) -> Result<ArrayMeta> {
        match self {
            Format::V1 => v1::parse_array(bytes),
            Format::V2 => v2::parse_array(bytes),
            Format::V3 => match v3::parse(bytes)? {
                v3::Node::Array(meta, _) => Ok(*meta),
                v3::Node::Group(_) => Err(Error::NodeType(
                    "zarr.json describes a group, not an array".into(),
                )),
            },
            Format::Draft(_) => draft::parse_array(bytes),
        }
    }

    /// Renders an array metadata document of this format; v3 and the draft embed
    /// `attributes`.
    pub fn render_array(
        self,
        meta: &ArrayMeta,
        attributes: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<u8>> {
        match self {
            Format::V1 | Format::V2 | Format::Draft(_) if meta.transpose.is_some() => {
                Err(Error::Unsupported(format!(
                    "only Zarr v3 metadata can hold the chunk order {:?} (a transpose that is \
                     neither C nor F order)",
                    meta.transpose.as_deref().unwrap_or_default()
                )))
            }
            Format::V1 => Ok(v1::render_array(meta)),
            Format::V2 if meta.compressors.len() > 1 => Err(Error::Unsupported(
                "Zarr v2 metadata holds one compressor; this array has a chain".into(),
            )),
            Format::V2 => Ok(v2::render_array(meta)),
            Format::V3 => v3::render_array(meta, attributes),
            Format::Draft(s) => draft::render_array(meta, attributes, s),
        }
    }

    /// The format with version `number` (2, 3, or a draft layout's number).
    pub fn from_number(number: i64) -> Result<Self> {
        match number {
            1 => Ok(Format::V1),
            2 => Ok(Format::V2),
            3 => Ok(Format::V3),
            30 => Ok(Format::Draft(draft::Scheme::Draft)),
            31 => Ok(Format::Draft(draft::Scheme::ZarrPython)),
            _ => Err(Error::InvalidArg(format!(
                "Zarr format {number} does not exist (use 2, 3, {DRAFT_NUMBER} for the 2022 \
                 draft layout or {DRAFT_ZARR_PYTHON_NUMBER} for zarr-python 2.18's variant)"
            ))),
        }
    }
}

/// Memory layout of the elements inside a chunk or a caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row-major: the last dimension varies fastest.
    C,
    /// Column-major: the first dimension varies fastest.
    F,
}

impl Order {
    /// Element strides of a dense array of `shape` in this order.
    pub fn strides(self, shape: &[u64]) -> Vec<usize> {
        let mut strides = vec![0usize; shape.len()];
        let mut acc = 1usize;
        let dims: Vec<usize> = match self {
            Order::C => (0..shape.len()).rev().collect(),
            Order::F => (0..shape.len()).collect(),
        };
        for d in dims {
            strides[d] = acc;
            acc = acc.saturating_mul(shape[d] as usize);
        }
        strides
    }
}

/// The product of `values`, 0 when any is 0 (so zero extents never overflow).
fn product_or_zero(values: &[u64]) -> u64 {
    if values.contains(&0) {
        0
    } else {
        values.iter().product()
    }
}

/// Largest decoded chunk libzarr accepts (16 GiB): larger chunks are refused when the
/// metadata is read, before anything is allocated.
pub const MAX_CHUNK_BYTES: u64 = 1 << 34;

/// The most bytes `codec` can make of `len` bytes: its exact size when that follows from
/// `len` (checksums, shuffle), else what incompressible data grows to at worst (every
/// compressor here adds far less than an eighth plus 64 KiB).
pub fn max_compressed_len(codec: &dyn crate::codec::Codec, len: usize) -> usize {
    codec
        .encoded_len(len)
        .unwrap_or_else(|| len.saturating_add(len / 8).saturating_add(1 << 16))
}

/// Whether `list` holds each of `0..rank` once.
pub(crate) fn is_permutation(list: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    list.len() == rank
        && list
            .iter()
            .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true))
}

/// Largest decoded variable-length chunk accepted (2 GiB): a stored chunk that would decode
/// to more is refused before the memory is used.
pub const MAX_VLEN_CHUNK_BYTES: usize = 1 << 31;

/// Everything about an array that its metadata says, independent of the format version.
#[derive(Debug, Clone)]
pub struct ArrayMeta {
    /// Array shape.
    pub shape: Vec<u64>,
    /// Chunk shape (same rank, every entry ≥ 1).
    pub chunks: Vec<u64>,
    /// Stored data type.
    pub dtype: DType,
    /// Value of elements never written.
    pub fill_value: FillValue,
    /// Layout of elements inside each chunk (C when `transpose` is set).
    pub order: Order,
    /// A v3 `transpose` that is neither C nor F order: chunks hold array dimension `p[k]`
    /// as their `k`-th dimension (in C order), for the permutation `p`.
    pub transpose: Option<Vec<usize>>,
    /// Filters applied before the compressors, each built for the type the previous one
    /// produces (the first for `dtype`).
    pub filters: Vec<FilterRef>,
    /// Bytes-to-bytes codecs, applied in order when encoding (v2: at most one, the
    /// compressor).
    pub compressors: Vec<CodecRef>,
    /// How chunk indices become keys.
    pub key_encoding: KeyEncoding,
    /// Dimension names of v3 metadata (`None` entries are unnamed dimensions).
    pub dimension_names: Option<Vec<Option<String>>>,
    /// When set, chunks (`chunks` above, the unit of encoding) are stored grouped in
    /// shards (v3 `sharding_indexed`).
    pub shard: Option<Sharding>,
}

/// How inner chunks are grouped into shards: one stored object per shard holding the
/// encoded inner chunks and an index of (offset, size) pairs.
#[derive(Debug, Clone)]
pub struct Sharding {
    /// Shard shape, a multiple of the inner chunk shape in every dimension.
    pub shape: Vec<u64>,
    /// Bytes-to-bytes codecs applied to the index (commonly `crc32c`).
    pub index_codecs: Vec<CodecRef>,
    /// Byte order of the index's 64-bit integers.
    pub index_endian: crate::dtype::ByteOrder,
    /// The index is stored before the chunks (else after them).
    pub index_at_start: bool,
    /// Nested sharding: the units of this shard are themselves shards of this layout
    /// (whose shape divides this one); `None` when the units are the chunks.
    pub inner: Option<Box<Sharding>>,
}

impl Sharding {
    /// Chunks (of shape `chunks`, the innermost unit) per shard along each dimension.
    pub fn chunks_per_shard(&self, chunks: &[u64]) -> Vec<u64> {
        self.shape.iter().zip(chunks).map(|(s, c)| s / c).collect()
    }

    /// Shape of the units this shard's index lists: the inner shard shape when nested,
    /// else `chunks`.
    pub fn unit_shape<'a>(&'a self, chunks: &'a [u64]) -> &'a [u64] {
        self.inner.as_ref().map_or(chunks, |s| s.shape.as_slice())
    }

    /// Units (inner shards when nested, else chunks) per shard along each dimension.
    pub fn units_per_shard(&self, chunks: &[u64]) -> Vec<u64> {
        self.chunks_per_shard(self.unit_shape(chunks))
    }

    /// This level and the nested ones, outermost first.
    pub fn levels(&self) -> Vec<&Sharding> {
        let mut levels = vec![self];
        while let Some(inner) = &levels[levels.len() - 1].inner {
            levels.push(inner);
        }
        levels
    }
}

/// How chunk indices become store keys: v3's `default` encoding (`c/1/2`, or `c` for 0-d
/// arrays) or the v2 form (`1.2`, or `0` for 0-d arrays), with `.` or `/` between indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyEncoding {
    /// Keys start with `c` (v3 `default`).
    pub prefix: bool,
    /// Separator between indices (`.` or `/`).
    pub separator: char,
    /// The first index follows the `c` directly (the 2022 draft's `c0/1`).
    pub joined: bool,
}

impl KeyEncoding {
    /// The v2 encoding with `separator`.
    pub fn v2(separator: char) -> Self {
        KeyEncoding {
            prefix: false,
            separator,
            joined: false,
        }
    }

    /// The 2022 draft's encoding (`c0/1`, `c0.1`; 0-d: `c`) with `separator`.
    pub fn draft(separator: char) -> Self {
        KeyEncoding {
            prefix: true,
            separator,
            joined: true,
        }
    }
}

impl ArrayMeta {
    /// Checks the invariants every format relies on; errors name the field.
    pub fn validate(&self) -> Result<()> {
        if self.chunks.len() != self.shape.len() {
            return Err(Error::Metadata(format!(
                "chunks has {} dimensions but shape has {}",
                self.chunks.len(),
                self.shape.len()
            )));
        }
        if let Some(d) = self.chunks.iter().position(|&c| c == 0) {
            return Err(Error::Metadata(format!("chunks[{d}] is 0")));
        }
        let item = self.dtype.item_size() as u64;
        // A zero extent anywhere means no elements, whatever the other extents are.
        let shape = if self.shape.contains(&0) {
            vec![0]
        } else {
            self.shape.clone()
        };
        let elements = checked_product(shape.iter().copied(), "shape").map_err(|_| {
            Error::Metadata(format!(
                "shape {:?} has more elements than 64 bits count",
                self.shape
            ))
        })?;
        elements.checked_mul(item).ok_or_else(|| {
            Error::Metadata(format!(
                "shape {:?} is larger than 64 bits of bytes",
                self.shape
            ))
        })?;
        let chunk_bytes = checked_product(self.chunks.iter().copied(), "chunks")
            .ok()
            .and_then(|n| n.checked_mul(item))
            .filter(|&n| n <= MAX_CHUNK_BYTES)
            .ok_or_else(|| {
                Error::Metadata(format!(
                    "chunks {:?} make chunks larger than {MAX_CHUNK_BYTES} bytes",
                    self.chunks
                ))
            })?;
        let mut size = to_usize(chunk_bytes, "chunk size")?;
        // Filters may widen items (delta or astype to a larger type): what they make must
        // stay within the same bound, as it is allocated when decoding.
        for filter in &self.filters {
            size = filter.encoded_len(size);
            if size as u64 > MAX_CHUNK_BYTES + 4 {
                return Err(Error::Metadata(format!(
                    "filter {} makes chunks of {:?} larger than {MAX_CHUNK_BYTES} bytes",
                    serde_json::Value::Object(filter.config()),
                    self.chunks
                )));
            }
        }
        if self.key_encoding.separator != '.' && self.key_encoding.separator != '/' {
            return Err(Error::Metadata(format!(
                "chunk key separator {:?} must be \".\" or \"/\"",
                self.key_encoding.separator
            )));
        }
        for shard in self.shard.iter().flat_map(|s| s.levels()) {
            let unit = shard.unit_shape(&self.chunks);
            let divides = shard.shape.len() == self.rank()
                && shard
                    .shape
                    .iter()
                    .zip(unit)
                    .all(|(&s, &c)| s > 0 && c > 0 && s % c == 0);
            if !divides {
                return Err(Error::Metadata(format!(
                    "shard shape {:?} is not a multiple of its inner shape {:?}",
                    shard.shape, unit
                )));
            }
            checked_product(shard.units_per_shard(&self.chunks), "chunks per shard")
                .ok()
                .filter(|&n| n <= 1 << 24)
                .ok_or_else(|| {
                    Error::Metadata(format!(
                        "shard shape {:?} holds too many chunks",
                        shard.shape
                    ))
                })?;
        }
        if let Some(perm) = &self.transpose {
            if !is_permutation(perm, self.rank()) {
                return Err(Error::Metadata(format!(
                    "transpose order {perm:?} is not a permutation of the {} dimensions",
                    self.rank()
                )));
            }
        }
        if let Some(names) = &self.dimension_names {
            if names.len() != self.rank() {
                return Err(Error::Metadata(format!(
                    "dimension_names has {} entries but shape has {}",
                    names.len(),
                    self.rank()
                )));
            }
        }
        Ok(())
    }

    /// Element strides of a decoded chunk, per array dimension: its order's, or those of the
    /// permuted chunk a `transpose` makes.
    pub fn chunk_strides(&self) -> Vec<usize> {
        let Some(perm) = &self.transpose else {
            return self.order.strides(&self.chunks);
        };
        let stored: Vec<u64> = perm.iter().map(|&d| self.chunks[d]).collect();
        let stored_strides = Order::C.strides(&stored);
        let mut strides = vec![0usize; perm.len()];
        for (k, &d) in perm.iter().enumerate() {
            strides[d] = stored_strides[k];
        }
        strides
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Size of one element in bytes.
    pub fn item_size(&self) -> usize {
        self.dtype.item_size()
    }

    /// Number of elements in one chunk.
    pub fn chunk_elements(&self) -> usize {
        self.chunks.iter().product::<u64>() as usize
    }

    /// Bytes of one decoded chunk.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_elements() * self.item_size()
    }

    /// The most bytes any valid encoding of one chunk can take: the size the filters make
    /// of a chunk (of [`MAX_VLEN_CHUNK_BYTES`] for variable-length items), grown by each
    /// compressor as incompressible data would grow it at worst (every codec here adds far
    /// less than an eighth plus 64 KiB). Reads refuse longer stored chunks without reading
    /// them.
    pub fn max_encoded_chunk_len(&self) -> u64 {
        let decoded = if self.dtype.is_variable() {
            MAX_VLEN_CHUNK_BYTES
        } else {
            self.chunk_bytes()
        };
        let filtered = self
            .filters
            .iter()
            .fold(decoded, |size, filter| filter.encoded_len(size)) as u64;
        self.compressors
            .iter()
            .fold(filtered as usize, |size, codec| {
                max_compressed_len(codec.as_ref(), size)
            }) as u64
    }

    /// The most bytes a valid stored object (a chunk, or a shard: each of its chunks at its
    /// largest encoding plus index entries and checksums, and room for nested indexes) can
    /// take.
    pub fn max_stored_len(&self) -> u64 {
        let Some(sharding) = &self.shard else {
            return self.max_encoded_chunk_len();
        };
        let chunks = sharding
            .chunks_per_shard(&self.chunks)
            .iter()
            .fold(1u64, |acc, &n| acc.saturating_mul(n));
        chunks
            .saturating_mul(self.max_encoded_chunk_len().saturating_add(32))
            .saturating_add(1 << 20)
    }

    /// Shape of the stored objects: the shard shape when sharded, else the chunk shape.
    pub fn storage_shape(&self) -> &[u64] {
        self.shard
            .as_ref()
            .map(|s| s.shape.as_slice())
            .unwrap_or(&self.chunks)
    }

    /// Number of stored objects (chunks, or shards) along each dimension.
    pub fn chunk_grid(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(self.storage_shape())
            .map(|(&s, &c)| s.div_ceil(c))
            .collect()
    }

    /// Total number of chunks in the grid.
    pub fn num_chunks(&self) -> u64 {
        product_or_zero(&self.chunk_grid())
    }

    /// Total bytes of the array's elements.
    pub fn nbytes(&self) -> u64 {
        product_or_zero(&self.shape) * self.item_size() as u64
    }

    /// The key of a chunk relative to the array (`"0.1"`, `"c/0/1"`; 0-d: `"0"` or `"c"`).
    pub fn chunk_key(&self, index: &[u64]) -> String {
        let KeyEncoding {
            prefix,
            separator,
            joined,
        } = self.key_encoding;
        let indices = index
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(&separator.to_string());
        match (prefix, index.is_empty()) {
            (true, true) => "c".to_string(),
            (true, false) if joined => format!("c{indices}"),
            (true, false) => format!("c{separator}{indices}"),
            (false, true) => "0".to_string(),
            (false, false) => indices,
        }
    }

    /// The chunk index a relative key names, if it is a chunk key of this array.
    pub fn parse_chunk_key(&self, key: &str) -> Option<Vec<u64>> {
        let KeyEncoding {
            prefix,
            separator,
            joined,
        } = self.key_encoding;
        let body = if prefix {
            if key == "c" {
                return self.shape.is_empty().then(Vec::new);
            }
            let rest = key.strip_prefix('c')?;
            if joined {
                rest
            } else {
                rest.strip_prefix(separator)?
            }
        } else {
            if self.shape.is_empty() {
                return (key == "0").then(Vec::new);
            }
            key
        };
        let index: Vec<u64> = body
            .split(separator)
            .map(|p| p.parse().ok().filter(|_| !p.starts_with('+')))
            .collect::<Option<_>>()?;
        (index.len() == self.rank()).then_some(index)
    }
}
