//! Metadata: the one internal model of an array ([`ArrayMeta`]) and the per-version
//! documents that parse into and render from it.

pub mod consolidated;
pub mod doc;
pub mod draft;
pub mod fill;
pub mod grid;
pub mod json;
pub mod v1;
pub mod v2;
pub mod v3;

use crate::codec::chain::{Chain, ShardingCodec};
use crate::dtype::{ByteOrder, DType};
use crate::error::{checked_product, to_usize, Error, Result};
use crate::store::join_key;
use fill::FillValue;
pub use grid::{ChunkGrid, DimEdges};

/// The block size of the default compressor's blosc (1 MiB): blosc compresses each block
/// alone, and its own choice at that level (32 KiB) cost a tenth of the ratio measured.
/// A chunk smaller than a block is one block.
const DEFAULT_BLOSC_BLOCK_BYTES: u64 = 1 << 20;

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
            Format::Draft(scheme) => draft::parse_array(bytes, scheme),
        }
    }

    /// The key and document of a new group at `path` (v3 and the draft embed
    /// `attributes`; v1 has no groups).
    pub fn render_group(
        self,
        path: &str,
        attributes: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(String, Vec<u8>)> {
        match self {
            Format::V1 => Err(Error::Unsupported("Zarr format 1 has no groups".into())),
            Format::V2 => Ok((join_key(path, v2::GROUP_KEY), v2::render_group())),
            Format::V3 => Ok((join_key(path, v3::NODE_KEY), v3::render_group(attributes))),
            Format::Draft(s) => Ok((
                s.doc_key(path, draft::Kind::Group),
                draft::render_group(attributes),
            )),
        }
    }

    /// Renders an array metadata document of this format; v3 and the draft embed
    /// `attributes`. The document is parsed back before it is returned: one that libzarr
    /// could not read again is an internal error, so it is never stored.
    pub fn render_array(
        self,
        meta: &ArrayMeta,
        attributes: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<u8>> {
        let document = match self {
            Format::V1 => v1::render_array(meta),
            Format::V2 => v2::render_array(meta),
            Format::V3 => v3::render_array(meta, attributes),
            Format::Draft(s) => draft::render_array(meta, attributes, s),
        }?;
        // Reading back holds the document's text and fill value a second time: the memory
        // for them is tried first, since the JSON parser allocates infallibly.
        let mut headroom = Vec::new();
        crate::error::try_reserve(
            &mut headroom,
            document.len().saturating_add(meta.item_size()),
            "reading the rendered metadata back",
        )?;
        drop(headroom);
        self.parse_array(&document).map_err(|e| match e {
            Error::NoMemory(_) => e,
            e => Error::Internal(format!(
                "the Zarr format {} metadata rendered for this array does not read back: {e}",
                self.number()
            )),
        })?;
        Ok(document)
    }

    /// The 2022 draft's key scheme, when this is the draft layout.
    pub fn draft_scheme(self) -> Option<draft::Scheme> {
        match self {
            Format::Draft(scheme) => Some(scheme),
            _ => None,
        }
    }

    /// Refuses creating groups in format 1, which has none.
    pub fn check_group_creatable(self) -> Result<()> {
        match self {
            Format::V1 => Err(Error::InvalidArg("Zarr format 1 has no groups".into())),
            _ => Ok(()),
        }
    }

    /// Whether attributes live inside the node's `zarr.json` (v3), rather than in a
    /// document of their own (v1, v2) or the draft's node documents.
    pub fn embeds_attributes(self) -> bool {
        self == Format::V3
    }

    /// Whether a new node's document carries its attributes (v3 and the draft), so they are
    /// written with it rather than after it.
    pub fn creates_with_attributes(self) -> bool {
        matches!(self, Format::V3 | Format::Draft(_))
    }

    /// Whether the metadata holds dimension names and sharding (v3 only).
    pub fn is_v3(self) -> bool {
        self == Format::V3
    }

    /// Whether a fill value must be set (v3 and the draft have no null fill value: zero
    /// stands for "unset").
    pub fn requires_fill(self) -> bool {
        matches!(self, Format::V3 | Format::Draft(_))
    }

    /// The compressor new arrays get by default. Zarr v2 and v3: blosc with zstd level 1
    /// (blosc's `clevel` 1), byte shuffle and blocks of 1 MiB, chosen by measurement on
    /// float and integer fields (docs/guide/codecs.md): about the ratio of netCDF's shuffle
    /// and zlib at over ten times its speed, where zstd alone left floats' bytes
    /// interleaved. zarr-python 2 and 3 and tensorstore read it in both formats. The 2022
    /// draft layouts keep zarr-python 2's blosc lz4.
    pub fn default_compressor(self) -> serde_json::Value {
        match self {
            Format::V2 | Format::V3 => serde_json::json!({
                "id": "blosc", "cname": "zstd", "clevel": 1, "shuffle": 1,
                "blocksize": DEFAULT_BLOSC_BLOCK_BYTES
            }),
            _ => {
                serde_json::json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})
            }
        }
    }

    /// The chunk key encoding of new arrays, with `separator` or the format's default.
    pub fn key_encoding(self, separator: Option<char>) -> KeyEncoding {
        match self {
            Format::V3 => KeyEncoding::v3_default(separator.unwrap_or('/')),
            Format::Draft(scheme) => scheme.key_encoding(separator.unwrap_or('/')),
            _ => KeyEncoding::v2(separator.unwrap_or('.')),
        }
    }

    /// The format copies of a node of this format are written in (v1 → v2).
    pub fn for_copies(self) -> Format {
        match self {
            Format::V1 => Format::V2,
            format => format,
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

/// A codec's JSON configuration.
type Config = serde_json::Map<String, serde_json::Value>;

/// An array's codec chain as the v1, v2 and 2022-draft documents hold it: a chunk order,
/// array filters, then bytes-level filters and one compressor.
pub(crate) struct V2Fields<'a> {
    /// `order` (`chunk_memory_layout`).
    pub order: Order,
    /// The array filters' configurations.
    pub array_filters: Vec<Config>,
    /// The bytes→bytes codecs.
    pub bytes: &'a [crate::codec::CodecRef],
}

impl<'a> V2Fields<'a> {
    /// The fields of `meta`'s chain, or why `format` (its name) cannot hold it.
    pub fn of(meta: &'a ArrayMeta, format: &str) -> Result<Self> {
        use crate::codec::chain::{ArrayToArray, ArrayToBytes};
        meta.check_regular_for(format)?;
        let chain = &meta.codecs;
        let cannot = |what: &str| {
            Err(Error::Unsupported(format!(
                "{format} metadata cannot hold {what}; write this array in Zarr format 3"
            )))
        };
        if chain.sharding().is_some() {
            return cannot("sharding");
        }
        let order = match chain.order(meta.rank()) {
            Some(order) => order,
            None => {
                let p = chain.permutation(meta.rank());
                return cannot(&format!("the chunk order {p:?} (neither C nor F)"));
            }
        };
        let mut seen_filter = false;
        for codec in &chain.array_to_array {
            match codec {
                ArrayToArray::Filter(f) if !f.numcodecs() => {
                    return cannot(&format!("the Zarr v3 codec {}", f.v3_codec()))
                }
                ArrayToArray::Filter(_) => seen_filter = true,
                ArrayToArray::Transpose(_) if seen_filter => {
                    return cannot("a transpose after an array filter")
                }
                ArrayToArray::Transpose(_) => {}
            }
        }
        if let ArrayToBytes::Bytes(order) = chain.array_to_bytes {
            let encoded = crate::codec::filter::output_dtype_of(chain.filters(), &meta.dtype);
            if encoded.swap_unit() > 1
                && order != ByteOrder::NotApplicable
                && encoded.order != order
            {
                return cannot("a bytes codec that changes the byte order after the filters");
            }
        }
        Ok(V2Fields {
            order,
            array_filters: chain.filters().map(|f| f.config()).collect(),
            bytes: &chain.bytes_to_bytes,
        })
    }

    /// The v2 `filters` (array filters, then bytes-level ones: checksums, shuffle) and
    /// `compressor` (the last bytes→bytes codec when it is a compressor), or why `format`
    /// cannot hold them (more than one compressor).
    pub fn filters_and_compressor(
        &self,
        format: &str,
    ) -> Result<(Vec<Config>, Option<&'a crate::codec::CodecRef>)> {
        let compressor = self.bytes.last().filter(|c| !c.v2_filter());
        let in_filters = &self.bytes[..self.bytes.len() - usize::from(compressor.is_some())];
        if in_filters.iter().any(|c| c.encoded_len(0).is_none()) {
            return Err(Error::Unsupported(format!(
                "{format} metadata holds one compressor; this array has a chain of them"
            )));
        }
        let mut filters = self.array_filters.clone();
        filters.extend(in_filters.iter().map(|c| c.config()));
        Ok((filters, compressor))
    }
}

pub use crate::codec::chain::Order;

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

/// Largest decoded variable-length chunk accepted (2 GiB): a stored chunk that would decode
/// to more is refused before the memory is used.
pub const MAX_VLEN_CHUNK_BYTES: usize = 1 << 31;

/// Everything about an array that its metadata says, independent of the format version.
#[derive(Debug, Clone)]
pub struct ArrayMeta {
    /// Array shape.
    pub shape: Vec<u64>,
    /// Shape of the chunk grid's chunks, each one stored object (a shard when sharded; same
    /// rank, every entry ≥ 1); for a rectilinear grid, the largest edge of each dimension.
    pub chunks: Vec<u64>,
    /// Whether the chunks are all of shape `chunks` or have per-dimension edges.
    pub grid: ChunkGrid,
    /// Stored data type (its byte order: that of the items the codec chain receives).
    pub dtype: DType,
    /// Value of elements never written.
    pub fill_value: FillValue,
    /// The codec chain encoding each chunk.
    pub codecs: Chain,
    /// How chunk indices become keys.
    pub key_encoding: KeyEncoding,
    /// Dimension names of v3 metadata (`None` entries are unnamed dimensions).
    pub dimension_names: Option<Vec<Option<String>>>,
}

/// One level of sharding: shards of `shape` whose units (inner chunks, or inner shards
/// when shards nest) the `codec` encodes.
#[derive(Debug, Clone, Copy)]
pub struct ShardLevel<'a> {
    /// Shape of this level's shards.
    pub shape: &'a [u64],
    /// The sharding codec of this level.
    pub codec: &'a ShardingCodec,
}

impl<'a> ShardLevel<'a> {
    /// Chunks (of shape `chunks`, the innermost unit) per shard along each dimension.
    pub fn chunks_per_shard(&self, chunks: &[u64]) -> Vec<u64> {
        self.shape.iter().zip(chunks).map(|(s, c)| s / c).collect()
    }

    /// Shape of the units this shard's index lists.
    pub fn unit_shape(&self) -> &'a [u64] {
        &self.codec.chunk_shape
    }

    /// Units per shard along each dimension.
    pub fn units_per_shard(&self) -> Vec<u64> {
        self.chunks_per_shard(self.unit_shape())
    }

    /// The nested level, when the units are shards themselves.
    pub fn inner(&self) -> Option<ShardLevel<'a>> {
        self.codec.codecs.sharding().map(|codec| ShardLevel {
            shape: &self.codec.chunk_shape,
            codec,
        })
    }

    /// This level and the nested ones, outermost first.
    pub fn levels(&self) -> Vec<ShardLevel<'a>> {
        let mut levels = vec![*self];
        while let Some(inner) = levels[levels.len() - 1].inner() {
            levels.push(inner);
        }
        levels
    }
}

/// How chunk indices become store keys: v3's `default` encoding (`c/1/2`, or `c` for 0-d
/// arrays) or the v2 form (`1.2`, or `0` for 0-d arrays), with `.` or `/` between indices;
/// or the 2022 draft's (`c1/2`; 0-d `c`, or `c0` as zarr-python 2.18 writes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyEncoding {
    /// Keys start with `c` (v3 `default`).
    pub prefix: bool,
    /// Separator between indices (`.` or `/`).
    pub separator: char,
    /// The first index follows the `c` directly (the 2022 draft's `c0/1`).
    pub joined: bool,
    /// A 0-d array's one chunk has the index 0 (`c0`: zarr-python 2.18's draft keys, which
    /// name it as if the array had one dimension), not the empty index (`c`, `0`).
    pub zero_d_index: bool,
}

impl KeyEncoding {
    /// The v2 encoding with `separator`.
    pub fn v2(separator: char) -> Self {
        KeyEncoding {
            prefix: false,
            separator,
            joined: false,
            zero_d_index: false,
        }
    }

    /// v3's `default` encoding with `separator` (`c/0/1`; 0-d: `c`).
    pub fn v3_default(separator: char) -> Self {
        KeyEncoding {
            prefix: true,
            separator,
            joined: false,
            zero_d_index: false,
        }
    }

    /// The 2022 draft's encoding (`c0/1`, `c0.1`) with `separator`; a 0-d array's chunk is
    /// `c0` when `zero_d_index`, else `c`.
    pub fn draft(separator: char, zero_d_index: bool) -> Self {
        KeyEncoding {
            prefix: true,
            separator,
            joined: true,
            zero_d_index,
        }
    }
}

/// Most distinct chunk shapes of an unsharded rectilinear grid checked against a
/// `reshape` (every combination of the distinct edges of each dimension).
const MAX_RESHAPED_SHAPES: usize = 4096;

/// Checks that every filter that shapes chunks (`reshape`) fits the chunks it receives
/// (after the transposes before it): every chunk shape of an unsharded rectilinear grid,
/// else `meta.chunks` for the top-level chain and each shard's inner chunk shape for the
/// chain inside it.
fn check_chunk_shapes(meta: &ArrayMeta) -> Result<()> {
    if !(meta.chunks_vary() && meta.codecs.reshapes()) {
        return check_chain_shapes(&meta.codecs, &meta.chunks);
    }
    let edges: Vec<Vec<u64>> = (0..meta.rank())
        .map(|d| {
            let mut e: Vec<u64> = meta.edge_runs(d).into_iter().map(|(e, _)| e).collect();
            e.sort_unstable();
            e.dedup();
            e
        })
        .collect();
    let count = edges
        .iter()
        .try_fold(1usize, |n, e| n.checked_mul(e.len()))
        .filter(|&n| n <= MAX_RESHAPED_SHAPES)
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "a reshape codec on a rectilinear chunk grid of more than \
                 {MAX_RESHAPED_SHAPES} distinct chunk shapes"
            ))
        })?;
    let mut shape = vec![0u64; meta.rank()];
    for flat in 0..count {
        let mut rest = flat;
        for (d, e) in edges.iter().enumerate().rev() {
            shape[d] = e[rest % e.len()];
            rest /= e.len();
        }
        meta.codecs.encoded_shape(&shape)?;
    }
    Ok(())
}

/// Checks `chain`'s filters against chunks of `shape`, and a sharding codec's inner chain
/// against its inner chunk shape.
fn check_chain_shapes(chain: &Chain, shape: &[u64]) -> Result<()> {
    chain.encoded_shape(shape)?;
    match &chain.array_to_bytes {
        crate::codec::chain::ArrayToBytes::Sharding(s) => {
            check_chain_shapes(&s.codecs, &s.chunk_shape)
        }
        _ => Ok(()),
    }
}

impl ArrayMeta {
    /// Checks that the fill value passes the registered array codecs (`cast_value`,
    /// `scale_offset`, …) both ways, as zarr-extensions asks of `cast_value`: a fill
    /// value they cannot encode or decode would fail every partial chunk.
    fn check_fill_through_codecs(&self) -> Result<()> {
        let chains = std::iter::successors(Some(&self.codecs), |c| match &c.array_to_bytes {
            crate::codec::chain::ArrayToBytes::Sharding(s) => Some(&s.codecs),
            _ => None,
        });
        let filters: Vec<_> = chains.flat_map(|c| c.filters()).collect();
        let (Some(fill), false) = (&self.fill_value, self.dtype.is_variable()) else {
            return Ok(());
        };
        if filters.iter().all(|f| f.numcodecs()) {
            return Ok(());
        }
        let mut item = fill.clone();
        for f in filters {
            let failed = |e: Error| {
                Error::Metadata(format!(
                    "the fill value cannot pass codec {}: {e}",
                    f.v3_codec()
                ))
            };
            let encoded = f.encode(&item).map_err(failed)?;
            let mut back = vec![0u8; item.len()];
            f.decode_into(&encoded, &mut back).map_err(failed)?;
            item = encoded;
        }
        Ok(())
    }

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
        self.validate_grid()?;
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
        for (d, &c) in self.inner_chunks().iter().enumerate() {
            if c == 0 {
                return Err(Error::Metadata(format!("inner chunk shape[{d}] is 0")));
            }
        }
        self.codecs.check(&self.dtype, self.rank())?;
        check_chunk_shapes(self)?;
        self.check_fill_through_codecs()?;
        let chunk_bytes = checked_product(self.inner_chunks().iter().copied(), "chunks")
            .ok()
            .and_then(|n| n.checked_mul(item))
            .filter(|&n| n <= MAX_CHUNK_BYTES)
            .ok_or_else(|| {
                Error::Metadata(format!(
                    "chunks {:?} make chunks larger than {MAX_CHUNK_BYTES} bytes",
                    self.inner_chunks()
                ))
            })?;
        let mut size = to_usize(chunk_bytes, "chunk size")?;
        // Filters may widen items (delta or astype to a larger type): what they make must
        // stay within the same bound, as it is allocated when decoding.
        for filter in self.chain().filters() {
            size = filter.encoded_len(size);
            if size as u64 > MAX_CHUNK_BYTES + 4 {
                return Err(Error::Metadata(format!(
                    "filter {} makes chunks of {:?} larger than {MAX_CHUNK_BYTES} bytes",
                    serde_json::Value::Object(filter.config()),
                    self.inner_chunks()
                )));
            }
        }
        if self.key_encoding.separator != '.' && self.key_encoding.separator != '/' {
            return Err(Error::Metadata(format!(
                "chunk key separator {:?} must be \".\" or \"/\"",
                self.key_encoding.separator
            )));
        }
        for shard in self.sharding().iter().flat_map(|s| s.levels()) {
            let unit = shard.unit_shape();
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
            checked_product(shard.units_per_shard(), "chunks per shard")
                .ok()
                .filter(|&n| n <= 1 << 24)
                .ok_or_else(|| {
                    Error::Metadata(format!(
                        "shard shape {:?} holds too many chunks",
                        shard.shape
                    ))
                })?;
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

    /// The shape of the chunks the codecs encode one by one: the innermost chunks when
    /// sharded, else `chunks`.
    pub fn inner_chunks(&self) -> &[u64] {
        let mut shape = &self.chunks;
        let mut chain = &self.codecs;
        while let Some(s) = chain.sharding() {
            shape = &s.chunk_shape;
            chain = &s.codecs;
        }
        shape
    }

    /// The chain encoding the innermost chunks.
    pub fn chain(&self) -> &Chain {
        self.codecs.innermost()
    }

    /// The outermost sharding level, when sharded.
    pub fn sharding(&self) -> Option<ShardLevel<'_>> {
        self.codecs.sharding().map(|codec| ShardLevel {
            shape: &self.chunks,
            codec,
        })
    }

    /// Element strides of a decoded inner chunk, per array dimension: C order, or the
    /// order its transposes make.
    pub fn chunk_strides(&self) -> Vec<usize> {
        self.chain().chunk_strides(self.inner_chunks())
    }

    /// The order of elements inside decoded chunks: F when the transposes reverse the
    /// dimensions (of a rank above 1), else C (also for other permutations, which
    /// [`Chain::permutation`] gives).
    pub fn order(&self) -> Order {
        self.chain().order(self.rank()).unwrap_or(Order::C)
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
        self.inner_chunks().iter().product::<u64>() as usize
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
        let chain = self.chain();
        chain.max_compressed_len(chain.filtered_len(decoded)) as u64
    }

    /// The most bytes a valid stored object (a chunk, or a shard: each of its chunks at its
    /// largest encoding plus index entries and checksums, and room for nested indexes) can
    /// take.
    pub fn max_stored_len(&self) -> u64 {
        let Some(sharding) = self.sharding() else {
            return self.max_encoded_chunk_len();
        };
        let chunks = sharding
            .chunks_per_shard(self.inner_chunks())
            .iter()
            .fold(1u64, |acc, &n| acc.saturating_mul(n));
        chunks
            .saturating_mul(self.max_encoded_chunk_len().saturating_add(32))
            .saturating_add(1 << 20)
    }

    /// Shape of the stored objects (`chunks`: the shard shape when sharded).
    pub fn storage_shape(&self) -> &[u64] {
        &self.chunks
    }

    /// Number of stored objects (chunks, or shards) along each dimension.
    pub fn chunk_grid(&self) -> Vec<u64> {
        match &self.grid {
            ChunkGrid::Regular => self
                .shape
                .iter()
                .zip(self.storage_shape())
                .map(|(&s, &c)| s.div_ceil(c))
                .collect(),
            ChunkGrid::Rectilinear(dims) => self
                .shape
                .iter()
                .zip(dims.iter())
                .map(|(&s, dim)| dim.chunks_along(s))
                .collect(),
        }
    }

    /// The chunk of the grid (a shard when sharded) holding index `i` of dimension `d`.
    pub fn chunk_of(&self, d: usize, i: u64) -> u64 {
        match &self.grid {
            ChunkGrid::Regular => i / self.chunks[d],
            ChunkGrid::Rectilinear(dims) => dims[d].chunk_of(i),
        }
    }

    /// The first index and the edge length of chunk `c` of the grid along dimension `d`
    /// (the edge may reach past the shape).
    pub fn chunk_span(&self, d: usize, c: u64) -> (u64, u64) {
        match &self.grid {
            ChunkGrid::Regular => (c * self.chunks[d], self.chunks[d]),
            ChunkGrid::Rectilinear(dims) => dims[d].chunk_span(c),
        }
    }

    /// The grid's edges along dimension `d` as `(edge, count)` runs, for the chunks holding
    /// elements of the array.
    pub fn edge_runs(&self, d: usize) -> Vec<(u64, u64)> {
        match &self.grid {
            ChunkGrid::Regular => DimEdges::Regular(self.chunks[d]).runs_within(self.shape[d]),
            ChunkGrid::Rectilinear(dims) => dims[d].runs_within(self.shape[d]),
        }
    }

    /// The shape of the chunk the codecs encode at `index` (inner chunk grid): that chunk's
    /// edges on an unsharded rectilinear grid, else `inner_chunks`.
    pub fn chunk_shape_at(&self, index: &[u64]) -> Vec<u64> {
        match &self.grid {
            ChunkGrid::Rectilinear(dims) if self.sharding().is_none() => dims
                .iter()
                .zip(index)
                .map(|(dim, &c)| dim.chunk_span(c).1)
                .collect(),
            _ => self.inner_chunks().to_vec(),
        }
    }

    /// Whether the chunks the codecs encode differ in shape: an unsharded rectilinear grid
    /// (shards of one hold a regular grid of inner chunks).
    pub fn chunks_vary(&self) -> bool {
        self.is_rectilinear() && self.sharding().is_none()
    }

    /// The top-level shard holding the inner chunk at `at` (when sharded).
    pub fn shard_of_chunk(&self, at: &[u64]) -> Vec<u64> {
        let inner = self.inner_chunks();
        (0..at.len())
            .map(|d| match &self.grid {
                ChunkGrid::Regular => at[d] / (self.chunks[d] / inner[d]),
                ChunkGrid::Rectilinear(dims) => dims[d].chunk_of(at[d] * inner[d]),
            })
            .collect()
    }

    /// The first inner chunk (inner chunk grid) and the shape (elements) of the top-level
    /// shard at `index` (when sharded).
    pub fn shard_bounds(&self, index: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let inner = self.inner_chunks();
        (0..index.len())
            .map(|d| {
                let (start, edge) = self.chunk_span(d, index[d]);
                (start / inner[d], edge)
            })
            .unzip()
    }

    /// Whether the grid is rectilinear.
    pub fn is_rectilinear(&self) -> bool {
        matches!(self.grid, ChunkGrid::Rectilinear(_))
    }

    /// A rectilinear grid of `dims` (its `chunks` become their largest edges).
    pub fn set_rectilinear(&mut self, dims: Vec<DimEdges>) {
        self.chunks = dims.iter().map(DimEdges::max_edge).collect();
        self.grid = ChunkGrid::Rectilinear(std::sync::Arc::new(dims));
    }

    /// Changes the shape to `shape` (of the same rank); a rectilinear grid's explicit edges
    /// follow it: one edge is added for what lies beyond their sum, and edges wholly beyond
    /// a smaller shape are dropped.
    pub fn set_shape(&mut self, shape: &[u64]) -> Result<()> {
        if let ChunkGrid::Rectilinear(dims) = &self.grid {
            let resized = dims
                .iter()
                .zip(shape)
                .map(|(dim, &extent)| dim.resized(extent))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| Error::Overflow("the chunk grid's edges overflow 64 bits".into()))?;
            self.set_rectilinear(resized);
        }
        self.shape = shape.to_vec();
        Ok(())
    }

    /// Checks a rectilinear grid: its rank, that its edges reach the shape and that
    /// `chunks` holds their largest edges; what it does not support yet is refused.
    fn validate_grid(&self) -> Result<()> {
        let ChunkGrid::Rectilinear(dims) = &self.grid else {
            return Ok(());
        };
        if dims.len() != self.rank() {
            return Err(Error::Metadata(format!(
                "the rectilinear chunk grid has {} dimensions but shape has {}",
                dims.len(),
                self.rank()
            )));
        }
        let entries: usize = dims.iter().map(|d| d.runs().map_or(1, <[_]>::len)).sum();
        if entries > grid::MAX_GRID_ENTRIES {
            return Err(Error::Metadata(format!(
                "the rectilinear chunk grid has more than {} runs of edges",
                grid::MAX_GRID_ENTRIES
            )));
        }
        for (d, (dim, &extent)) in dims.iter().zip(&self.shape).enumerate() {
            grid::check_reaches(dim, d, extent)?;
            if self.chunks[d] != dim.max_edge() {
                return Err(Error::Internal(format!(
                    "chunks[{d}] is not the rectilinear grid's largest edge"
                )));
            }
        }
        // Shards follow the grid; their inner chunks stay one regular grid when every edge
        // is a multiple of the inner chunk shape (zarr-python's rule).
        if let Some(sharding) = self.sharding() {
            let unit = sharding.unit_shape();
            for (d, dim) in dims.iter().enumerate() {
                let edges: Vec<u64> = match dim {
                    DimEdges::Regular(m) => vec![*m],
                    DimEdges::Runs(runs) => runs.iter().map(|r| r.edge).collect(),
                };
                if let Some(e) = edges
                    .iter()
                    .find(|&&e| unit.get(d).is_none_or(|&u| e % u != 0))
                {
                    return Err(Error::Metadata(format!(
                        "shard edge {e} of dimension {d} is not a multiple of the inner chunk \
                         shape {unit:?}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Refuses a rectilinear grid in the metadata of `format` (its name), which only Zarr
    /// format 3 can hold.
    pub(crate) fn check_regular_for(&self, format: &str) -> Result<()> {
        match self.grid {
            ChunkGrid::Regular => Ok(()),
            ChunkGrid::Rectilinear(_) => Err(Error::Unsupported(format!(
                "{format} metadata cannot hold a rectilinear chunk grid; write this array in \
                 Zarr format 3"
            ))),
        }
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
        let mut key = String::new();
        self.push_chunk_key(index, &mut key);
        key
    }

    /// Appends the key of a chunk relative to the array to `out` (no allocation once `out`
    /// has room).
    pub fn push_chunk_key(&self, index: &[u64], out: &mut String) {
        use std::fmt::Write;
        let KeyEncoding {
            prefix,
            separator,
            joined,
            zero_d_index,
        } = self.key_encoding;
        if index.is_empty() {
            out.push(if prefix { 'c' } else { '0' });
            if zero_d_index {
                out.push('0');
            }
            return;
        }
        if prefix {
            out.push('c');
            if !joined {
                out.push(separator);
            }
        }
        for (d, i) in index.iter().enumerate() {
            if d > 0 {
                out.push(separator);
            }
            let _ = write!(out, "{i}");
        }
    }

    /// The store key of a chunk of the array whose chunk keys are joined to `base`, written
    /// into `out` (its contents replaced, its capacity reused).
    pub fn chunk_key_into(&self, base: &str, index: &[u64], out: &mut String) {
        out.clear();
        if !base.is_empty() {
            out.push_str(base);
            out.push('/');
        }
        self.push_chunk_key(index, out);
    }

    /// The chunk index a relative key names, if it is a chunk key of this array.
    pub fn parse_chunk_key(&self, key: &str) -> Option<Vec<u64>> {
        let KeyEncoding {
            prefix,
            separator,
            joined,
            ..
        } = self.key_encoding;
        if self.shape.is_empty() {
            let mut own = String::new();
            self.push_chunk_key(&[], &mut own);
            return (key == own).then(Vec::new);
        }
        let body = if prefix {
            let rest = key.strip_prefix('c')?;
            if joined {
                rest
            } else {
                rest.strip_prefix(separator)?
            }
        } else {
            key
        };
        let index: Vec<u64> = body
            .split(separator)
            .map(|p| p.parse().ok().filter(|_| !p.starts_with('+')))
            .collect::<Option<_>>()?;
        (index.len() == self.rank()).then_some(index)
    }
}
