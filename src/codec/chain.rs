//! The codec chain of an array, shaped as Zarr v3 describes it: array→array codecs
//! (`transpose`, the numcodecs filters), exactly one array→bytes codec (`bytes` with its
//! byte order, the variable-length item codecs, or `sharding_indexed` with a chain of its
//! own), then bytes→bytes codecs (compressors, checksums, shuffle) in order. Every format's
//! metadata maps onto it when parsed (v2 `order`/`filters`/`compressor`, v1 `compression`).
//!
//! A decoded chunk is held in the byte order of the array's data type; a `transpose` is a
//! layout, not a copy: it gives the element strides of the decoded chunk
//! ([`Chain::chunk_strides`]). Data passes through the stages in a worker's [`Scratch`]
//! buffers, reused from chunk to chunk.

use super::filter::{self, FilterRef};
use super::typed::TypedCodec;
use super::CodecRef;
use crate::dtype::{swap_bytes, ByteOrder, DType};
use crate::error::{try_resize, Error, Result};

/// One codec chain.
#[derive(Debug, Clone)]
pub struct Chain {
    /// Array→array codecs, in encoding order.
    pub array_to_array: Vec<ArrayToArray>,
    /// The one array→bytes codec.
    pub array_to_bytes: ArrayToBytes,
    /// Bytes→bytes codecs, in encoding order.
    pub bytes_to_bytes: Vec<CodecRef>,
}

/// An array→array codec.
#[derive(Debug, Clone)]
pub enum ArrayToArray {
    /// Chunks hold array dimension `p[k]` as their `k`-th dimension (v3 `transpose`; v2
    /// order F is the reversed permutation).
    Transpose(Vec<usize>),
    /// A numcodecs filter, built for the type it receives.
    Filter(FilterRef),
}

/// The array→bytes codec.
#[derive(Debug, Clone)]
pub enum ArrayToBytes {
    /// Fixed-size items in this byte order (`NotApplicable` for one-byte items).
    Bytes(ByteOrder),
    /// Variable-length items (`vlen-utf8`, `vlen-bytes`, `vlen-array`: the array's type
    /// says which).
    Vlen,
    /// Strings as numcodecs' `json2` object codec stores them: the chunk as one JSON list
    /// (nested by the chunk's shape), then `"|O"` and the shape. The configuration is kept
    /// as stored. Zarr v2 (and zarr-python 2.18's draft layout) only.
    JsonItems(serde_json::Map<String, serde_json::Value>),
    /// Shards of inner chunks with an index (`sharding_indexed`).
    Sharding(Box<ShardingCodec>),
}

/// The `sharding_indexed` codec: a shard holds the encoded inner chunks of `chunk_shape`
/// and an index of (offset, size) pairs.
#[derive(Debug, Clone)]
pub struct ShardingCodec {
    /// Shape of the inner chunks (dividing the shard's shape).
    pub chunk_shape: Vec<u64>,
    /// The chain encoding each inner chunk (itself sharded when shards nest).
    pub codecs: Chain,
    /// Bytes→bytes codecs applied to the index after its `bytes` codec (`crc32c`).
    pub index_codecs: Vec<CodecRef>,
    /// Byte order of the index's 64-bit integers.
    pub index_endian: ByteOrder,
    /// The index is stored before the chunks (else after them).
    pub index_at_start: bool,
}

/// A chunk as the chain's codec of typed chunks receives it.
struct TypedChunk<'c> {
    codec: &'c dyn TypedCodec,
    /// The items it receives: the last filter's output in the bytes codec's byte order.
    item: DType,
    /// The chunk's shape in stored dimension order.
    shape: Vec<u64>,
}

/// A worker's reusable buffers for the stages of a chain.
#[derive(Debug, Default)]
pub struct Scratch {
    a: Vec<u8>,
    b: Vec<u8>,
    c: Vec<u8>,
}

/// Where the data of the current stage lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Input,
    A,
    B,
    C,
}

impl Scratch {
    /// Bytes the buffers hold on to.
    pub fn capacity(&self) -> usize {
        self.a.capacity() + self.b.capacity() + self.c.capacity()
    }

    fn get(&self, slot: Slot) -> &[u8] {
        match slot {
            Slot::A => &self.a,
            Slot::B => &self.b,
            Slot::C => &self.c,
            Slot::Input => unreachable!("the input is not a scratch buffer"),
        }
    }

    /// The stage input at `src` (`input` when `Slot::Input`) and the buffer `dst`.
    fn pair<'s>(
        &'s mut self,
        input: &'s [u8],
        src: Slot,
        dst: Slot,
    ) -> (&'s [u8], &'s mut Vec<u8>) {
        let Scratch { a, b, c } = self;
        let (src, dst) = match (src, dst) {
            (Slot::Input, Slot::A) => (input, a),
            (Slot::Input, Slot::B) => (input, b),
            (Slot::Input, Slot::C) => (input, c),
            (Slot::A, Slot::B) => (&a[..], b),
            (Slot::A, Slot::C) => (&a[..], c),
            (Slot::B, Slot::A) => (&b[..], a),
            (Slot::B, Slot::C) => (&b[..], c),
            (Slot::C, Slot::A) => (&c[..], a),
            (Slot::C, Slot::B) => (&c[..], b),
            _ => unreachable!("a stage reads and writes different buffers"),
        };
        (src, dst)
    }
}

impl Chain {
    /// The chain the v1 and v2 fields describe: `transpose` (reversed dimensions for order
    /// F, `None` for C), the `filters` as parsed by [`filter::chain_from_json`] (leading
    /// array filters and the bytes-level rest), then the compressors, for items of `dtype`.
    pub fn from_v2(
        transpose: Option<Vec<usize>>,
        filters: (Vec<FilterRef>, Vec<CodecRef>),
        compressors: Vec<CodecRef>,
        dtype: &DType,
    ) -> Self {
        let (array_filters, bytes_filters) = filters;
        let encoded = filter::output_dtype(&array_filters, dtype);
        let array_to_bytes = if dtype.is_variable() {
            ArrayToBytes::Vlen
        } else {
            ArrayToBytes::Bytes(encoded.order)
        };
        Chain {
            array_to_array: transpose
                .map(ArrayToArray::Transpose)
                .into_iter()
                .chain(array_filters.into_iter().map(ArrayToArray::Filter))
                .collect(),
            array_to_bytes,
            bytes_to_bytes: bytes_filters.into_iter().chain(compressors).collect(),
        }
    }

    /// The chain of a v2 object array whose object codec (its first filter) is `config`
    /// (`None` for other arrays): `json2` stores the items as JSON, the vlen codecs in their
    /// own framing.
    pub fn with_object_codec(mut self, config: Option<&serde_json::Value>) -> Self {
        if let Some(map) = config
            .and_then(serde_json::Value::as_object)
            .filter(|m| m.get("id") == Some(&"json2".into()))
        {
            self.array_to_bytes = ArrayToBytes::JsonItems(map.clone());
        }
        self
    }

    /// The object codec configuration v2 metadata lists first among the filters of an array
    /// of `dtype` (`None` for fixed-size items).
    pub fn object_codec(&self, dtype: &DType) -> Option<serde_json::Value> {
        match &self.array_to_bytes {
            ArrayToBytes::JsonItems(config) => Some(config.clone().into()),
            _ => crate::dtype::object_codec(dtype),
        }
    }

    /// The numcodecs filters among the array→array codecs, in encoding order.
    pub fn filters(&self) -> impl DoubleEndedIterator<Item = &FilterRef> + Clone {
        self.array_to_array.iter().filter_map(|c| match c {
            ArrayToArray::Filter(f) => Some(f),
            ArrayToArray::Transpose(_) => None,
        })
    }

    /// Whether the chain has array filters.
    pub fn has_filters(&self) -> bool {
        self.filters().next().is_some()
    }

    /// The dimension order of the decoded chunk over every `transpose` (for `rank`
    /// dimensions): stored dimension `k` is array dimension `p[k]`.
    pub fn permutation(&self, rank: usize) -> Vec<usize> {
        let mut perm: Vec<usize> = (0..rank).collect();
        for codec in &self.array_to_array {
            if let ArrayToArray::Transpose(step) = codec {
                perm = step.iter().map(|&k| perm[k]).collect();
            }
        }
        perm
    }

    /// The order of a decoded chunk of `rank` dimensions when it is C or F (the reversed
    /// permutation; below two dimensions, F when a transpose says so), `None` for other
    /// permutations.
    pub fn order(&self, rank: usize) -> Option<Order> {
        let perm = self.permutation(rank);
        let transposed = self
            .array_to_array
            .iter()
            .any(|c| matches!(c, ArrayToArray::Transpose(_)));
        if rank < 2 {
            Some(if transposed { Order::F } else { Order::C })
        } else if perm.iter().copied().eq(0..rank) {
            Some(Order::C)
        } else if perm.iter().rev().copied().eq(0..rank) {
            Some(Order::F)
        } else {
            None
        }
    }

    /// Element strides of a decoded chunk of `shape`, per array dimension.
    pub fn chunk_strides(&self, shape: &[u64]) -> Vec<usize> {
        let perm = self.permutation(shape.len());
        let stored: Vec<u64> = perm.iter().map(|&d| shape[d]).collect();
        let stored_strides = Order::C.strides(&stored);
        let mut strides = vec![0usize; perm.len()];
        for (k, &d) in perm.iter().enumerate() {
            strides[d] = stored_strides[k];
        }
        strides
    }

    /// The sharding codec, when this chain's array→bytes codec is one.
    pub fn sharding(&self) -> Option<&ShardingCodec> {
        match &self.array_to_bytes {
            ArrayToBytes::Sharding(s) => Some(s),
            _ => None,
        }
    }

    /// The chain that encodes the innermost chunks (this one unless sharded).
    pub fn innermost(&self) -> &Chain {
        let mut chain = self;
        while let Some(s) = chain.sharding() {
            chain = &s.codecs;
        }
        chain
    }

    /// The chain that encodes the innermost chunks, to change it.
    pub fn innermost_mut(&mut self) -> &mut Chain {
        match self.array_to_bytes {
            ArrayToBytes::Sharding(ref mut s) => s.codecs.innermost_mut(),
            _ => self,
        }
    }

    /// The configurations of the filters and bytes→bytes codecs, with the byte order the
    /// `bytes` codec writes: what decides how a chunk's items are encoded.
    pub fn encoding(&self) -> (Vec<serde_json::Map<String, serde_json::Value>>, ByteOrder) {
        let object_codec = match &self.array_to_bytes {
            ArrayToBytes::JsonItems(config) => Some(config.clone()),
            _ => None,
        };
        let configs = object_codec
            .into_iter()
            .chain(self.filters().map(|f| f.config()))
            .chain(self.bytes_to_bytes.iter().map(|c| c.config()))
            .collect();
        (configs, self.bytes_order())
    }

    /// Whether stored chunks are the decoded items as they are (no filter, no bytes→bytes
    /// codec, fixed-size items in the type's byte order), so a part of a chunk can be read
    /// without the rest.
    pub fn is_plain(&self, dtype: &DType) -> bool {
        self.bytes_to_bytes.is_empty()
            && !self.has_filters()
            && matches!(self.array_to_bytes, ArrayToBytes::Bytes(o) if !swaps(dtype, o))
    }

    /// The byte order the `bytes` codec writes (`NotApplicable` for other array→bytes
    /// codecs).
    pub fn bytes_order(&self) -> ByteOrder {
        match self.array_to_bytes {
            ArrayToBytes::Bytes(order) => order,
            _ => ByteOrder::NotApplicable,
        }
    }

    /// The unit the `bytes` codec swaps items by, when it writes them in the other byte
    /// order than the filters (or, without filters, the type `dtype`) give them; no type is
    /// copied, as this runs per chunk.
    fn swap_unit(&self, dtype: &DType) -> Option<usize> {
        let swap = |d: &DType| swaps(d, self.bytes_order()).then(|| d.swap_unit());
        match self.filters().last() {
            Some(f) => swap(&f.encoded_dtype()),
            None => swap(dtype),
        }
    }

    /// Bytes the array filters make of `len` decoded bytes.
    pub fn filtered_len(&self, len: usize) -> usize {
        self.filters().fold(len, |size, f| f.encoded_len(size))
    }

    /// The most bytes the bytes→bytes codecs can make of `len` bytes.
    pub fn max_compressed_len(&self, len: usize) -> usize {
        self.bytes_to_bytes
            .iter()
            .fold(len, |size, c| super::max_compressed_len(c.as_ref(), size))
    }

    /// Checks the chain's structure for items of `dtype` in chunks of `rank` dimensions:
    /// permutations, a transpose only after filters that work item by item, the
    /// array→bytes codec fitting the type, and a sharding codec alone in its chain so that
    /// shards are read in parts.
    pub fn check(&self, dtype: &DType, rank: usize) -> Result<()> {
        let mut order_dependent: Option<&FilterRef> = None;
        for codec in &self.array_to_array {
            match codec {
                ArrayToArray::Transpose(p) => {
                    if !is_permutation(p, rank) {
                        return Err(Error::Metadata(format!(
                            "transpose order {p:?} is not a permutation of the {rank} dimensions"
                        )));
                    }
                    if let Some(f) = order_dependent {
                        return Err(Error::Unsupported(format!(
                            "a transpose after filter {} (which depends on the item order) is \
                             not supported",
                            serde_json::Value::Object(f.config())
                        )));
                    }
                }
                ArrayToArray::Filter(f) if !f.elementwise() => order_dependent = Some(f),
                ArrayToArray::Filter(_) => {}
            }
        }
        let encoded = filter::output_dtype_of(self.filters(), dtype);
        if let Some(c) = self
            .bytes_to_bytes
            .iter()
            .skip(1)
            .find(|c| c.typed().is_some())
        {
            return Err(super::typed::misplaced(
                c.config().get("id").and_then(|v| v.as_str()).unwrap_or("?"),
            ));
        }
        if let Some(typed) = self.typed_codec() {
            if !matches!(self.array_to_bytes, ArrayToBytes::Bytes(_)) || dtype.is_variable() {
                return Err(Error::CodecUnsupported(format!(
                    "codec {} encodes fixed-size numbers, not {}",
                    serde_json::Value::Object(self.bytes_to_bytes[0].config()),
                    dtype.element_type().name()
                )));
            }
            // A `reshape` before it gives its chunks another rank.
            let rank = self
                .filters()
                .fold(rank, |r, f| f.reshaped_rank().unwrap_or(r));
            typed.check(&encoded, rank)?;
        }
        match &self.array_to_bytes {
            ArrayToBytes::Vlen if !dtype.is_variable() => Err(Error::Metadata(format!(
                "a variable-length codec cannot encode items of {}",
                dtype.to_v2()
            ))),
            ArrayToBytes::Vlen if self.has_filters() => Err(Error::CodecUnsupported(
                "filters before a variable-length codec are not supported".into(),
            )),
            ArrayToBytes::JsonItems(_) if dtype.kind != crate::dtype::DataKind::String => {
                Err(Error::CodecUnsupported(format!(
                    "the json2 object codec is supported for strings, not {}",
                    dtype.element_type().name()
                )))
            }
            ArrayToBytes::JsonItems(_) if self.has_filters() => Err(Error::CodecUnsupported(
                "filters before the json2 object codec are not supported".into(),
            )),
            ArrayToBytes::JsonItems(config)
                if !config.get("encoding").is_none_or(|e| {
                    e.as_str().is_some_and(|e| {
                        matches!(e.to_ascii_lowercase().as_str(), "utf-8" | "utf8")
                    })
                }) =>
            {
                Err(Error::CodecUnsupported(format!(
                    "the json2 object codec with encoding {} (only UTF-8 is supported)",
                    config["encoding"]
                )))
            }
            ArrayToBytes::Bytes(_) if dtype.is_variable() => Err(Error::Metadata(format!(
                "variable-length items ({}) need a vlen codec, not bytes",
                dtype.element_type().name()
            ))),
            ArrayToBytes::Bytes(ByteOrder::NotApplicable) if encoded.swap_unit() > 1 => {
                Err(Error::Metadata(
                    "the bytes codec needs an endian (\"little\" or \"big\") for multi-byte items"
                        .into(),
                ))
            }
            ArrayToBytes::Sharding(_)
                if !self.array_to_array.is_empty() || !self.bytes_to_bytes.is_empty() =>
            {
                Err(Error::Unsupported(
                    "sharding_indexed with other codecs beside it in the same list is not \
                     supported (shards are read in parts only when it is alone)"
                        .into(),
                ))
            }
            ArrayToBytes::Sharding(s) => {
                if s.chunk_shape.len() != rank {
                    return Err(Error::Metadata(format!(
                        "sharding_indexed chunk_shape {:?} has {} dimensions, the array {rank}",
                        s.chunk_shape,
                        s.chunk_shape.len()
                    )));
                }
                s.codecs.check(dtype, rank)
            }
            _ => Ok(()),
        }
    }

    /// The codec of typed chunks (zfp, pcodec), first among the bytes→bytes codecs.
    pub fn typed_codec(&self) -> Option<&dyn TypedCodec> {
        self.bytes_to_bytes.first().and_then(|c| c.typed())
    }

    /// Whether a filter changes the shape of chunks (`reshape`).
    pub fn reshapes(&self) -> bool {
        self.filters().any(|f| f.reshaped_rank().is_some())
    }

    /// The shape of a chunk of `shape` (array dimension order) as the array→bytes codec
    /// receives it: through every transpose and filter (`reshape`), in chain order; an
    /// error when a `reshape` does not fit it.
    pub fn encoded_shape(&self, shape: &[u64]) -> Result<Vec<u64>> {
        let mut shape = shape.to_vec();
        for codec in &self.array_to_array {
            shape = match codec {
                ArrayToArray::Transpose(p) => p
                    .iter()
                    .map(|&k| {
                        shape.get(k).copied().ok_or_else(|| {
                            Error::Metadata(format!(
                                "transpose order {p:?} does not fit a chunk of {shape:?}"
                            ))
                        })
                    })
                    .collect::<Result<_>>()?,
                ArrayToArray::Filter(f) => f.chunk_shape(&shape)?,
            };
        }
        Ok(shape)
    }

    /// What the codec of typed chunks needs to know of a chunk of `shape` (array
    /// dimension order) with items of `dtype`; `None` without such a codec.
    fn typed_chunk(&self, dtype: &DType, shape: &[u64]) -> Result<Option<TypedChunk<'_>>> {
        let Some(codec) = self.typed_codec() else {
            return Ok(None);
        };
        let mut item = filter::output_dtype_of(self.filters(), dtype);
        if self.bytes_order() != ByteOrder::NotApplicable {
            item.order = self.bytes_order();
        }
        let shape = self.encoded_shape(shape)?;
        Ok(Some(TypedChunk { codec, item, shape }))
    }

    /// Decodes a stored chunk of `shape` into `out` (its exact decoded size, items in
    /// `dtype`'s byte order). Every intermediate size follows from `out.len()` and the
    /// codecs, never from the stored bytes alone; data moves through `scratch` between
    /// stages.
    pub fn decode_into(
        &self,
        dtype: &DType,
        shape: &[u64],
        raw: &[u8],
        out: &mut [u8],
        scratch: &mut Scratch,
    ) -> Result<()> {
        let filtered = self.filtered_len(out.len());
        let swap = self.swap_unit(dtype);
        let typed = self.typed_chunk(dtype, shape)?;
        let typed = typed.as_ref();
        if !self.has_filters() {
            self.decode_bytes_into(raw, out, scratch, &[Slot::B, Slot::C], typed)?;
            if let Some(unit) = swap {
                swap_bytes(out, unit);
            }
            return Ok(());
        }
        try_resize(&mut scratch.a, filtered, "a filtered chunk")?;
        let mut target = std::mem::take(&mut scratch.a);
        let result = self.decode_bytes_into(raw, &mut target, scratch, &[Slot::B, Slot::C], typed);
        scratch.a = target;
        result?;
        if let Some(unit) = swap {
            swap_bytes(&mut scratch.a, unit);
        }
        // The filters in reverse: each size is what the filters before it make of `out`.
        let mut cur = Slot::A;
        for i in (0..self.filters().count()).rev() {
            let filter = self.filters().nth(i).expect("counted");
            if i == 0 {
                filter.decode_into(scratch.get(cur), out)?;
            } else {
                let len = self
                    .filters()
                    .take(i)
                    .fold(out.len(), |s, f| f.encoded_len(s));
                let next = if cur == Slot::A { Slot::B } else { Slot::A };
                let (src, dst) = scratch.pair(&[], cur, next);
                try_resize(dst, len, "a filtered chunk")?;
                filter.decode_into(src, dst)?;
                cur = next;
            }
        }
        Ok(())
    }

    /// Undoes the bytes→bytes codecs of `raw` into `out` (exactly the size the array→bytes
    /// codec made), passing intermediate stages through the scratch buffers `free`; the
    /// first codec decodes a typed chunk when it is one.
    fn decode_bytes_into(
        &self,
        raw: &[u8],
        out: &mut [u8],
        scratch: &mut Scratch,
        free: &[Slot; 2],
        typed: Option<&TypedChunk<'_>>,
    ) -> Result<()> {
        let codecs = &self.bytes_to_bytes;
        let Some(first) = codecs.first() else {
            if raw.len() != out.len() {
                return Err(Error::Codec(format!(
                    "uncompressed chunk has {} bytes, expected {}",
                    raw.len(),
                    out.len()
                )));
            }
            out.copy_from_slice(raw);
            return Ok(());
        };
        // Outer codecs (all but the first) undo their layer into a scratch buffer: of the
        // size the codecs before them make of `out` when that follows from it (checksums,
        // shuffle), else of the size their own data gives, bounded by the most the codecs
        // before them can make.
        let mut cur = Slot::Input;
        for i in (1..codecs.len()).rev() {
            let (size, bound) =
                codecs[..i]
                    .iter()
                    .fold((Some(out.len()), out.len()), |(size, bound), c| {
                        (
                            size.and_then(|s| c.encoded_len(s)),
                            super::max_compressed_len(c.as_ref(), bound),
                        )
                    });
            let next = if cur == free[0] { free[1] } else { free[0] };
            let (src, dst) = scratch.pair(raw, cur, next);
            match size {
                Some(len) => {
                    try_resize(dst, len, "a decoded chunk")?;
                    codecs[i].decode_into(src, dst)?;
                }
                None => codecs[i].decode_bounded(src, bound, dst)?,
            }
            cur = next;
        }
        let src = if cur == Slot::Input {
            raw
        } else {
            scratch.get(cur)
        };
        match typed {
            Some(t) => t.codec.decode_typed(src, &t.item, &t.shape, out),
            None => first.decode_into(src, out),
        }
    }

    /// Undoes the bytes→bytes codecs of a chunk whose decoded size is not known (variable
    /// -length items), failing past `limit` bytes at any stage; the result lives in
    /// `scratch` (or is `raw` itself without such codecs).
    pub fn decode_bytes_bounded<'a>(
        &self,
        raw: &'a [u8],
        limit: usize,
        scratch: &'a mut Scratch,
    ) -> Result<&'a [u8]> {
        let cur = self.undo_bytes_bounded(raw, limit, scratch)?;
        Ok(if cur == Slot::Input {
            raw
        } else {
            scratch.get(cur)
        })
    }

    /// As [`Chain::decode_bytes_bounded`], giving the result as an owned buffer (`raw`
    /// itself without bytes→bytes codecs; else taken out of `scratch`).
    pub fn decode_bytes_owned(
        &self,
        raw: Vec<u8>,
        limit: usize,
        scratch: &mut Scratch,
    ) -> Result<Vec<u8>> {
        Ok(match self.undo_bytes_bounded(&raw, limit, scratch)? {
            Slot::Input => raw,
            Slot::A => std::mem::take(&mut scratch.a),
            Slot::B => std::mem::take(&mut scratch.b),
            Slot::C => std::mem::take(&mut scratch.c),
        })
    }

    /// Undoes the bytes→bytes codecs of `raw` (bounded by `limit` at every stage) into
    /// `scratch`, giving where the result is.
    fn undo_bytes_bounded(&self, raw: &[u8], limit: usize, scratch: &mut Scratch) -> Result<Slot> {
        let mut cur = Slot::Input;
        for (i, codec) in self.bytes_to_bytes.iter().enumerate().rev() {
            let bound = self.bytes_to_bytes[..i]
                .iter()
                .fold(limit, |b, c| super::max_compressed_len(c.as_ref(), b));
            let next = if cur == Slot::A { Slot::B } else { Slot::A };
            let (src, dst) = scratch.pair(raw, cur, next);
            codec.decode_bounded(src, bound, dst)?;
            cur = next;
        }
        Ok(cur)
    }

    /// Encodes a decoded chunk of `shape` (items in `dtype`'s byte order; byte-swapped in
    /// place when the `bytes` codec writes the other order). The result is `data` itself
    /// when the chain changes nothing, else it lives in `scratch`.
    pub fn encode<'a>(
        &self,
        dtype: &DType,
        shape: &[u64],
        data: &'a mut [u8],
        scratch: &'a mut Scratch,
    ) -> Result<&'a [u8]> {
        let mut cur = Slot::Input;
        for f in self.filters() {
            let next = if cur == Slot::A { Slot::B } else { Slot::A };
            let (src, dst) = scratch.pair(data, cur, next);
            f.encode_into(src, dst)?;
            cur = next;
        }
        if let Some(unit) = self.swap_unit(dtype) {
            match cur {
                Slot::Input => swap_bytes(data, unit),
                Slot::A => swap_bytes(&mut scratch.a, unit),
                _ => swap_bytes(&mut scratch.b, unit),
            }
        }
        let typed = self.typed_chunk(dtype, shape)?;
        self.encode_bytes_from(&*data, cur, scratch, typed.as_ref())
    }

    /// Whether [`Chain::encode`] leaves its input as it is (no array→array codecs, no
    /// byte swap), so that [`Chain::encode_shared`] may encode a caller's bytes.
    pub fn encodes_without_change(&self, dtype: &DType) -> bool {
        !self.has_filters() && self.swap_unit(dtype).is_none()
    }

    /// Encodes `data` as [`Chain::encode`] does, without changing it: for chains that
    /// [`Chain::encodes_without_change`] (an internal error otherwise).
    pub fn encode_shared<'a>(
        &self,
        dtype: &DType,
        shape: &[u64],
        data: &'a [u8],
        scratch: &'a mut Scratch,
    ) -> Result<&'a [u8]> {
        if !self.encodes_without_change(dtype) {
            return Err(Error::Internal(
                "a chain that changes its input encoded shared bytes".into(),
            ));
        }
        let typed = self.typed_chunk(dtype, shape)?;
        self.encode_bytes_from(data, Slot::Input, scratch, typed.as_ref())
    }

    /// Applies the bytes→bytes codecs to `data` (the array→bytes codec's output); the
    /// result is `data` itself without such codecs, else it lives in `scratch`.
    pub fn encode_bytes<'a>(&self, data: &'a [u8], scratch: &'a mut Scratch) -> Result<&'a [u8]> {
        self.encode_bytes_from(data, Slot::Input, scratch, None)
    }

    fn encode_bytes_from<'a>(
        &self,
        data: &'a [u8],
        start: Slot,
        scratch: &'a mut Scratch,
        typed: Option<&TypedChunk<'_>>,
    ) -> Result<&'a [u8]> {
        let mut cur = start;
        for (i, codec) in self.bytes_to_bytes.iter().enumerate() {
            let next = if cur == Slot::A { Slot::B } else { Slot::A };
            let (src, dst) = scratch.pair(data, cur, next);
            match typed {
                Some(t) if i == 0 => t.codec.encode_typed(src, &t.item, &t.shape, dst)?,
                _ => codec.encode_into(src, dst)?,
            }
            cur = next;
        }
        Ok(if cur == Slot::Input {
            data
        } else {
            scratch.get(cur)
        })
    }
}

/// Whether items of `dtype` need swapping to be written in `order`.
fn swaps(dtype: &DType, order: ByteOrder) -> bool {
    order != ByteOrder::NotApplicable
        && dtype.order != ByteOrder::NotApplicable
        && dtype.order != order
        && dtype.swap_unit() > 1
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
    /// The `transpose` this order is for chunks of `rank` dimensions: none for C, the
    /// reversed dimensions for F.
    pub fn transpose(self, rank: usize) -> Option<Vec<usize>> {
        (self == Order::F).then(|| (0..rank).rev().collect())
    }

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

/// Whether `list` holds each of `0..rank` once.
pub fn is_permutation(list: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    list.len() == rank
        && list
            .iter()
            .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true))
}
